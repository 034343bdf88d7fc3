/**
 * `hookscope hook --server URL`: forwards one event read on stdin to a running `hookscope serve`
 * and prints its answer. It loads the wire helpers and nothing else: no session, store or policy,
 * and on Deno no Node compatibility module (`node:process`, `node:util`, … each cost a forwarding
 * hook more start-up time than the forward itself), so a command hook that forwards starts about
 * as fast as the runtime does.
 *
 * @module
 */

import {
  ANSWER_HEADER,
  ANSWER_HEADER_VALUE,
  asciiJson,
  failedAnswer,
  MAX_EVENT_BYTES,
  readLimited,
} from "./_claude_wire.ts";
import { UsageError } from "./_output.ts";

/** What a forward needs. */
export interface ForwardOptions {
  /** The `serve` URL (its path defaults to `/claude/hooks`). */
  readonly server: string;
  /** The environment variable holding the bearer token. */
  readonly tokenEnv?: string;
  /** Longest wait for stdin and for the server, in milliseconds. */
  readonly timeoutMs: number;
}

/** Where a forward reads and writes. */
export interface ForwardIO {
  /** The event's bytes. */
  stdin(): AsyncIterable<Uint8Array>;
  /** An environment variable. */
  env(name: string): string | undefined;
  /** A line on stdout. */
  out(text: string): void;
  /** A line on stderr. */
  err(text: string): void;
}

interface DenoLike {
  readonly stdin: { read(buffer: Uint8Array): Promise<number | null> };
  readonly stdout: { writeSync(bytes: Uint8Array): number };
  readonly stderr: { writeSync(bytes: Uint8Array): number };
  readonly env: { get(name: string): string | undefined };
}

function writeAll(stream: { writeSync(bytes: Uint8Array): number }, text: string): void {
  let bytes = new TextEncoder().encode(`${text}\n`);
  while (bytes.length > 0) bytes = bytes.subarray(stream.writeSync(bytes));
}

/**
 * The process's stdin, environment and output: Deno's own (no Node compatibility layer) on
 * Deno, `node:process` elsewhere.
 */
export async function processForwardIO(): Promise<ForwardIO> {
  const deno = (globalThis as { Deno?: DenoLike }).Deno;
  if (typeof deno?.stdin?.read === "function") {
    return {
      // Plain reads: a web stream over stdin costs a forwarding hook more than the event.
      stdin: async function* () {
        for (;;) {
          const buffer = new Uint8Array(65_536);
          const n = await deno.stdin.read(buffer);
          if (n === null) return;
          yield buffer.subarray(0, n);
        }
      },
      env: (name) => deno.env.get(name),
      out: (text) => writeAll(deno.stdout, text),
      err: (text) => writeAll(deno.stderr, text),
    };
  }
  const { default: process } = await import("node:process");
  return {
    stdin: () => process.stdin as AsyncIterable<Uint8Array>,
    env: (name) => process.env[name],
    out: (text) => void process.stdout.write(`${text}\n`),
    err: (text) => void process.stderr.write(`${text}\n`),
  };
}

/**
 * The options of `hook` arguments made only of `--server URL`, `--token-env NAME` and
 * `--timeout-ms N` (each at most once, `--flag value` or `--flag=value`); `null` for anything
 * else (the full parser then answers, with its help and usage errors).
 */
export function forwardArgs(args: readonly string[]): ForwardOptions | null {
  const values: Record<string, string> = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const eq = arg.indexOf("=");
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    if (name !== "--server" && name !== "--token-env" && name !== "--timeout-ms") return null;
    const value = eq > 0 ? arg.slice(eq + 1) : args[++i];
    if (value === undefined || Object.hasOwn(values, name)) return null;
    values[name] = value;
  }
  if (values["--server"] === undefined) return null;
  const timeoutMs = Number(values["--timeout-ms"] ?? 20_000);
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 600_000) return null;
  return {
    server: values["--server"],
    timeoutMs,
    ...(values["--token-env"] === undefined ? {} : { tokenEnv: values["--token-env"] }),
  };
}

/**
 * Reads one event on stdin, POSTs it to `serve` and prints the answer; returns the exit code. A
 * failure (no complete event, the server unreachable or answering an error, no answer in time)
 * fails closed as `hook` does: a `PreToolUse` is denied and a `UserPromptSubmit` blocked, with
 * the reason; input that is not even an event exits 2 with the reason on stderr. An answer counts
 * only when it is `serve`'s (HTTP 200 with its `x-hookscope-answer` header, one JSON object).
 */
export async function forwardHook(options: ForwardOptions, io: ForwardIO): Promise<number> {
  let url: URL;
  try {
    url = new URL(options.server);
  } catch {
    throw new UsageError(
      `hookscope hook: --server must be a URL; got ${JSON.stringify(options.server)}`,
    );
  }
  if (url.pathname === "/" || url.pathname === "") url.pathname = "/claude/hooks";
  const headers: Record<string, string> = { "content-type": "application/json" };
  const token = options.tokenEnv === undefined ? undefined : io.env(options.tokenEnv);
  if (token) headers.authorization = `Bearer ${token}`;
  let event: unknown = null;
  const fail = (reason: string): number => {
    const { output, blocks } = failedAnswer(event, `hookscope hook: ${reason}`);
    io.err(`hookscope hook: ${reason}`);
    if (blocks && Object.keys(output).length === 0) return 2;
    if (Object.keys(output).length) io.out(asciiJson(output));
    return blocks ? 0 : 1;
  };
  let text: string;
  try {
    text = await readLimited(io.stdin(), MAX_EVENT_BYTES, options.timeoutMs);
    event = JSON.parse(text);
  } catch (error) {
    return fail(`cannot read the event: ${(error as Error)?.message ?? error}`);
  }
  if (options.tokenEnv !== undefined && !token) {
    // Read when the hook runs: the event gets its fail-closed answer.
    return fail(`the environment variable ${options.tokenEnv} is empty`);
  }
  try {
    // The event is sent as it was read: serve parses and checks it.
    const response = await fetch(url, {
      method: "POST",
      headers,
      body: text,
      signal: AbortSignal.timeout(options.timeoutMs),
    });
    const body = await response.text();
    if (!response.ok) {
      return fail(`the server answered HTTP ${response.status}: ${body.slice(0, 200)}`);
    }
    // Only serve's own answer counts: anything else at that address fails closed.
    if (response.headers.get(ANSWER_HEADER) !== ANSWER_HEADER_VALUE) {
      return fail(`no answer of hookscope serve from ${url.origin} (HTTP ${response.status})`);
    }
    let output: unknown;
    try {
      output = JSON.parse(body);
    } catch {
      output = undefined;
    }
    if (output === null || typeof output !== "object" || Array.isArray(output)) {
      return fail(`the answer from ${url.origin} is not one JSON object`);
    }
    io.out(asciiJson(output));
    return 0;
  } catch (error) {
    return fail(`cannot reach ${url.origin}: ${(error as Error)?.message ?? error}`);
  }
}
