/**
 * Request attributes of a chat span: the request parameters the conventions name, and
 * `server.address` / `server.port` from an endpoint's URL (never its path, query or credentials).
 *
 * @module
 */

type Attrs = Record<string, string | number | boolean | string[]>;

const NUMBER_PARAMS: readonly (readonly [string, string])[] = [
  ["temperature", "gen_ai.request.temperature"],
  ["top_p", "gen_ai.request.top_p"],
  ["top_k", "gen_ai.request.top_k"],
  ["frequency_penalty", "gen_ai.request.frequency_penalty"],
  ["presence_penalty", "gen_ai.request.presence_penalty"],
  ["seed", "gen_ai.request.seed"],
];

/** `gen_ai.request.*` from an OpenAI chat-completions request body. */
export function requestAttributes(payload: Record<string, unknown>, streaming: boolean): Attrs {
  const out: Attrs = {};
  for (const [key, name] of NUMBER_PARAMS) {
    const value = payload[key];
    if (typeof value === "number" && Number.isFinite(value)) out[name] = value;
  }
  const maxTokens = payload.max_completion_tokens ?? payload.max_tokens;
  if (typeof maxTokens === "number" && Number.isFinite(maxTokens)) {
    out["gen_ai.request.max_tokens"] = maxTokens;
  }
  const n = payload.n;
  // The conventions record the choice count only when it is not 1.
  if (typeof n === "number" && Number.isInteger(n) && n !== 1) {
    out["gen_ai.request.choice.count"] = n;
  }
  const stop = payload.stop;
  if (typeof stop === "string") out["gen_ai.request.stop_sequences"] = [stop];
  else if (Array.isArray(stop) && stop.every((s) => typeof s === "string")) {
    out["gen_ai.request.stop_sequences"] = stop as string[];
  }
  const format = (payload.response_format as { type?: unknown } | undefined)?.type;
  if (format === "json_object" || format === "json_schema") out["gen_ai.output.type"] = "json";
  else if (format === "text") out["gen_ai.output.type"] = "text";
  if (streaming) out["gen_ai.request.stream"] = true;
  return out;
}

const DEFAULT_PORTS: Record<string, number> = { "http:": 80, "https:": 443 };

/**
 * `server.address` and `server.port` of an endpoint that has a `url` (or `baseURL`): the host
 * name and the port (the scheme's default when the URL gives none). Empty for an in-process
 * endpoint.
 */
export function serverAttributes(endpoint: unknown): Attrs {
  const e = endpoint as { url?: unknown; baseURL?: unknown } | null;
  let raw: unknown;
  try {
    raw = e?.url ?? e?.baseURL;
  } catch {
    return {};
  }
  if (typeof raw !== "string" || !raw) return {};
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return {};
  }
  const address = url.hostname.replace(/^\[(.*)\]$/, "$1");
  if (!address) return {};
  const port = url.port ? Number(url.port) : DEFAULT_PORTS[url.protocol];
  const out: Attrs = { "server.address": address };
  if (port !== undefined) out["server.port"] = port;
  return out;
}
