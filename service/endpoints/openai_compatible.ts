/**
 * `OpenAICompatibleEndpoint`: chat completions over `fetch`, with Server-Sent Events streaming
 * parsed into typed chunks.
 *
 * @module
 */

import { createParser, type EventSourceMessage } from "eventsource-parser";
import { anySignal } from "../../core/_abort.ts";
import type { Endpoint, EndpointCallOptions, StreamChunk, ToolCallChunk } from "../endpoint.ts";
import { iterableToStream } from "../endpoint.ts";
import { EndpointError, EndpointParseError } from "../endpoint_error.ts";

/** Options of {@linkcode OpenAICompatibleEndpoint}. */
export interface OpenAICompatibleEndpointOptions {
  /** The API root, e.g. `https://api.openai.com/v1`; requests go to `{baseURL}/chat/completions`. */
  baseURL: string;
  /**
   * Sent as `Authorization: Bearer <apiKey>` (replacing an `Authorization` given in `headers`);
   * never appears in errors or logs.
   */
  apiKey?: string;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
  /** Extra request headers; credential headers (`api-key`, …) are redacted from errors too. */
  headers?: Record<string, string>;
  /** A name for logs (default `"openai_compatible"`). */
  name?: string;
}

const EXCERPT = 500;
/** At most this much of an error response body is read (enough for the excerpt after redaction). */
const MAX_ERROR_BODY_BYTES = 8192;
/** The longest line or unfinished event the SSE parser buffers (a guard against endless lines). */
const MAX_SSE_BUFFER_CHARS = 4 * 1024 * 1024;

/**
 * An OpenAI-compatible chat-completions endpoint.
 *
 * `call()` POSTs the payload and resolves to the parsed JSON. `stream()` sends `stream: true` and
 * `stream_options: { include_usage: true }` and yields typed chunks: `text` deltas, complete
 * `tool_call`s (assembled from their deltas, emitted at the finish reason or at `[DONE]`),
 * `usage`, and a final `done`. A tool-call delta without an `index` (some compatible servers omit
 * it) continues the call with the same id, starts a new call when its id is new, and otherwise
 * continues the previous delta's call; it never merges two calls with different ids. With several
 * choices (`n > 1`) tool calls are assembled per choice, each choice's calls are emitted at its
 * own finish reason, and text and tool-call chunks of a choice other than the first carry its
 * index as `choice`. HTTP failures become {@linkcode EndpointError} (status and a body
 * excerpt); malformed JSON in a data line errors the stream with {@linkcode EndpointParseError}.
 * The abort signal reaches `fetch`, and cancelling the stream closes the connection.
 *
 * The API key never reaches an error, nor do the values of credential headers given in
 * `headers` (`authorization`, `proxy-authorization`, `api-key`, `x-api-key`, and the token after
 * a `Bearer`/`Basic`/`Token` scheme): every message and body excerpt has them replaced by
 * `[redacted]` (before the excerpt is cut, so no partial key survives at its end), and parse
 * errors carry no `cause` (a runtime's `SyntaxError` quotes the start of the unparseable text).
 * Of an HTTP error response only the first 8 KiB are read, then the body is cancelled, so a huge
 * or endless error body neither grows memory nor holds the request open.
 *
 * A stream body that holds no Server-Sent Events at all (a server that ignored `stream: true`,
 * an HTML page sent with status 200) errors with {@linkcode EndpointParseError}, or with
 * {@linkcode EndpointError} and the server's message when the body is a JSON `{ error }`, instead
 * of ending as an empty completion. A line or event that grows past 4 Mi characters without
 * ending errors with `EndpointParseError` and closes the connection, instead of buffering forever.
 *
 * @example Against an in-process fetch
 * ```ts
 * import { OpenAICompatibleEndpoint } from "@hookscope/core/service";
 * import assert from "node:assert/strict";
 *
 * const sse = [
 *   `data: {"choices":[{"index":0,"delta":{"content":"Hel"}}]}`,
 *   `data: {"choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":"stop"}]}`,
 *   `data: [DONE]`,
 * ].join("\n\n") + "\n\n";
 * const endpoint = new OpenAICompatibleEndpoint({
 *   baseURL: "http://example.test/v1",
 *   apiKey: "sk-test",
 *   fetch: (_url, init) => {
 *     assert.equal(new Headers(init?.headers).get("authorization"), "Bearer sk-test");
 *     return Promise.resolve(new Response(sse, { headers: { "content-type": "text/event-stream" } }));
 *   },
 * });
 * const chunks = [];
 * for await (const chunk of endpoint.stream({ model: "m", messages: [] }, { signal: new AbortController().signal })) {
 *   chunks.push(chunk);
 * }
 * assert.deepEqual(chunks, [
 *   { type: "text", text: "Hel" },
 *   { type: "text", text: "lo" },
 *   { type: "done", finishReason: "stop" },
 * ]);
 * ```
 */
export class OpenAICompatibleEndpoint implements Endpoint {
  /** A short name for logs. */
  readonly name: string;
  /** The API root, without a trailing slash. */
  readonly baseURL: string;
  #apiKey: string | undefined;
  #fetch: typeof fetch | undefined;
  #headers: Record<string, string>;
  #secrets: string[];

  /**
   * Makes the endpoint; an invalid `baseURL` or header name/value throws a `TypeError`. A payload
   * that is not JSON-serializable (a `BigInt`, a cycle) rejects a call with a `TypeError` and
   * sends nothing.
   */
  constructor(options: OpenAICompatibleEndpointOptions) {
    if (options === null || typeof options !== "object") {
      throw new TypeError(`Cannot create endpoint: options must be an object`);
    }
    const { baseURL, apiKey, headers } = options;
    if (typeof baseURL !== "string" || !canParse(baseURL)) {
      throw new TypeError(
        `Cannot create endpoint: baseURL must be an absolute URL; got ${
          typeof baseURL === "string" ? JSON.stringify(baseURL) : `(${typeof baseURL})`
        }`,
      );
    }
    if (apiKey !== undefined && typeof apiKey !== "string") {
      throw new TypeError(`Cannot create endpoint: apiKey must be a string`);
    }
    if (options.fetch !== undefined && typeof options.fetch !== "function") {
      throw new TypeError(`Cannot create endpoint: fetch must be a function`);
    }
    if (headers !== undefined && (headers === null || typeof headers !== "object")) {
      throw new TypeError(`Cannot create endpoint: headers must be an object`);
    }
    try {
      new Headers(headers);
    } catch (cause) {
      // Checked now, not at the first request: a bad name or value (a newline, …) is bad input.
      throw new TypeError(`Cannot create endpoint: invalid headers (${messageOf(cause)})`);
    }
    this.name = options.name ?? "openai_compatible";
    this.baseURL = baseURL.replace(/\/+$/, "");
    this.#apiKey = apiKey;
    this.#fetch = options.fetch;
    this.#headers = { ...headers };
    this.#secrets = secretsOf(apiKey, this.#headers);
  }

  /** The chat-completions URL. */
  get url(): string {
    return `${this.baseURL}/chat/completions`;
  }

  /**
   * POSTs the payload (without `stream`) and resolves to the parsed JSON response. A connection
   * that breaks while the body arrives rejects with {@linkcode EndpointError} (with the status),
   * and an abort meanwhile with the signal's reason.
   */
  async call(payload: Record<string, unknown>, options: EndpointCallOptions): Promise<unknown> {
    const body = { ...payload };
    delete body.stream;
    delete body.stream_options;
    const signal = options.signal;
    const response = await this.#post(body, signal, "application/json");
    let text: string;
    try {
      text = await response.text();
    } catch (cause) {
      throw this.#readFailure("Response", cause, signal, response.status);
    }
    try {
      return JSON.parse(text);
    } catch {
      throw new EndpointParseError("Cannot parse endpoint response: invalid JSON", {
        status: response.status,
        bodyExcerpt: this.#excerpt(text),
        url: this.#safeURL(),
      });
    }
  }

  /** Streams the completion as typed chunks; see the class documentation. */
  stream(
    payload: Record<string, unknown>,
    options: EndpointCallOptions,
  ): ReadableStream<StreamChunk> {
    const streamOptions = payload.stream_options;
    const body = {
      ...payload,
      stream: true,
      stream_options: {
        ...(streamOptions && typeof streamOptions === "object" ? streamOptions : {}),
        include_usage: true,
      },
    };
    // Our own controller, so that a consumer's cancel also aborts a fetch still connecting.
    const local = new AbortController();
    const signal = anySignal([options.signal, local.signal]);
    return iterableToStream(this.#events(body, signal), (reason) => {
      local.abort(reason ?? new DOMException("Stream cancelled", "AbortError"));
    });
  }

  async *#events(body: Record<string, unknown>, signal: AbortSignal): AsyncGenerator<StreamChunk> {
    const response = await this.#post(body, signal, "text/event-stream");
    const url = this.#safeURL();
    const status = response.status;
    const reader = response.body?.getReader();
    if (!reader) {
      throw new EndpointError("Endpoint returned no body for a stream", { status, url });
    }
    const queue: EventSourceMessage[] = [];
    let overflow = false;
    // Until the first event or comment, keep the start of the body: a server that ignored
    // `stream: true` (or an HTML error page sent with 200) yields no SSE at all.
    let sawSSE = false;
    let head = "";
    const parser = createParser({
      onEvent: (event) => {
        sawSSE = true;
        queue.push(event);
      },
      onComment: () => {
        sawSSE = true;
      },
      onError: (error) => {
        if (error.type === "max-buffer-size-exceeded") overflow = true;
      },
      maxBufferSize: MAX_SSE_BUFFER_CHARS,
    });
    const feed = (text: string): void => {
      if (!sawSSE && head.length < MAX_ERROR_BODY_BYTES) head += text;
      if (overflow) return;
      parser.feed(text);
      if (overflow) {
        throw new EndpointParseError(
          `Cannot parse stream: an event grew past ${MAX_SSE_BUFFER_CHARS} characters without ending`,
          { status, bodyExcerpt: this.#excerpt(head), url },
        );
      }
    };
    const decoder = new TextDecoder();
    // Tool calls being assembled, per choice (several with `n > 1`).
    const tools = new Map<number, ChoiceCalls>();
    let finishReason: string | null = null;
    const flushTools = function* (choice?: number): Generator<StreamChunk> {
      const keys = choice === undefined ? [...tools.keys()].sort((a, b) => a - b) : [choice];
      for (const key of keys) {
        const pending = tools.get(key);
        if (!pending) continue;
        tools.delete(key);
        yield* [...pending.calls.values()].sort((a, b) => a.index - b.index);
      }
    };
    try {
      read: while (true) {
        let next: ReadableStreamReadResult<Uint8Array>;
        try {
          next = await reader.read();
        } catch (cause) {
          throw this.#readFailure("Stream", cause, signal, status);
        }
        if (next.done) {
          feed(decoder.decode());
          feed("\n\n");
          if (!sawSSE && head.trim() !== "") throw this.#notSSE(head, status, url);
        } else {
          feed(decoder.decode(next.value, { stream: true }));
        }
        while (queue.length > 0) {
          const event = queue.shift()!;
          const data = event.data;
          if (data.trim() === "[DONE]") break read;
          if (data.trim() === "") continue;
          let json: Record<string, unknown>;
          try {
            json = JSON.parse(data);
          } catch {
            throw new EndpointParseError("Cannot parse stream event: invalid JSON", {
              status,
              bodyExcerpt: this.#excerpt(data),
              url,
            });
          }
          if (!isObject(json)) {
            throw new EndpointParseError("Cannot parse stream event: expected a JSON object", {
              status,
              bodyExcerpt: this.#excerpt(data),
              url,
            });
          }
          if (json.error) {
            const error = json.error as { message?: unknown };
            const said = typeof error.message === "string"
              ? error.message
              : JSON.stringify(json.error);
            throw new EndpointError(
              `Endpoint reported an error in the stream: ${this.#excerpt(said)}`,
              { status, bodyExcerpt: this.#excerpt(data), url },
            );
          }
          const choices = Array.isArray(json.choices) ? json.choices : [];
          for (const choice of choices as Record<string, unknown>[]) {
            if (!isObject(choice)) continue;
            const at = typeof choice.index === "number" && Number.isInteger(choice.index) &&
                choice.index > 0
              ? choice.index
              : 0;
            const delta = (isObject(choice.delta) ? choice.delta : {}) as Record<string, unknown>;
            if (typeof delta.content === "string" && delta.content !== "") {
              yield at === 0
                ? { type: "text", text: delta.content }
                : { type: "text", text: delta.content, choice: at };
            }
            if (Array.isArray(delta.tool_calls)) {
              let pending = tools.get(at);
              if (!pending) tools.set(at, pending = { calls: new Map(), last: -1, next: 0 });
              for (const part of delta.tool_calls as Record<string, unknown>[]) {
                if (isObject(part)) addToolDelta(pending, part, at);
              }
            }
            if (typeof choice.finish_reason === "string" && choice.finish_reason) {
              finishReason = choice.finish_reason;
              yield* flushTools(at);
            }
          }
          const usage = json.usage;
          if (isObject(usage)) {
            const promptTokens = num(usage.prompt_tokens);
            const completionTokens = num(usage.completion_tokens);
            yield {
              type: "usage",
              promptTokens,
              completionTokens,
              totalTokens: usage.total_tokens === undefined
                ? promptTokens + completionTokens
                : num(usage.total_tokens),
            };
          }
        }
        if (next.done) break;
      }
      yield* flushTools();
      yield { type: "done", finishReason };
    } finally {
      await reader.cancel().catch(() => {});
    }
  }

  async #post(body: unknown, signal: AbortSignal, accept: string): Promise<Response> {
    // Headers, not a record: names are case-insensitive, so `apiKey` replaces a user-given
    // `Authorization` instead of sending both.
    const headers = new Headers({ "content-type": "application/json", accept });
    for (const [name, value] of Object.entries(this.#headers)) headers.set(name, value);
    if (this.#apiKey) headers.set("authorization", `Bearer ${this.#apiKey}`);
    let text: string;
    try {
      text = JSON.stringify(body);
    } catch (cause) {
      // Bad input, not an unreachable endpoint: nothing is sent.
      throw new TypeError(
        `Cannot send request: the payload is not JSON-serializable (${
          this.#scrub(messageOf(cause))
        })`,
      );
    }
    const doFetch = this.#fetch ?? globalThis.fetch;
    let response: Response;
    try {
      response = await doFetch(this.url, { method: "POST", headers, body: text, signal });
    } catch (cause) {
      if (signal.aborted) throw signal.reason;
      throw new EndpointError(`Cannot reach endpoint: ${this.#scrub(messageOf(cause))}`, {
        url: this.#safeURL(),
        cause,
      });
    }
    if (!response.ok) {
      const text = await readPrefix(response, MAX_ERROR_BODY_BYTES);
      if (signal.aborted) throw signal.reason;
      throw new EndpointError(
        `Endpoint request failed with status ${response.status}${
          response.statusText ? ` (${response.statusText})` : ""
        }`,
        {
          status: response.status,
          bodyExcerpt: this.#excerpt(text),
          url: this.#safeURL(),
        },
      );
    }
    return response;
  }

  #safeURL(): string {
    try {
      const url = new URL(this.url);
      return `${url.origin}${url.pathname}`;
    } catch {
      return "";
    }
  }

  #scrub(text: string): string {
    for (const secret of this.#secrets) text = text.split(secret).join("[redacted]");
    return text;
  }

  /** What a failed body read throws: the abort reason, or an {@linkcode EndpointError}. */
  #readFailure(what: string, cause: unknown, signal: AbortSignal, status: number): unknown {
    if (signal.aborted) return signal.reason;
    return new EndpointError(
      `${what} broke before it finished: ${this.#scrub(messageOf(cause))}`,
      { status, url: this.#safeURL(), cause },
    );
  }

  /** The error for a stream body without any Server-Sent Events (JSON error bodies say why). */
  #notSSE(head: string, status: number, url: string): EndpointError {
    let json: unknown;
    try {
      json = JSON.parse(head);
    } catch {
      json = undefined;
    }
    if (isObject(json) && json.error) {
      const error = json.error as { message?: unknown };
      const said = typeof error.message === "string" ? error.message : JSON.stringify(json.error);
      return new EndpointError(`Endpoint reported an error: ${this.#excerpt(said)}`, {
        status,
        bodyExcerpt: this.#excerpt(head),
        url,
      });
    }
    return new EndpointParseError(
      "Cannot parse stream: the response holds no Server-Sent Events",
      { status, bodyExcerpt: this.#excerpt(head), url },
    );
  }

  /** The redacted start of `text`: redact first, so a key cut by the excerpt cannot survive. */
  #excerpt(text: string): string {
    return this.#scrub(text).slice(0, EXCERPT);
  }
}

/** Reads at most `maxBytes` of a response body as text, then cancels the rest. */
async function readPrefix(response: Response, maxBytes: number): Promise<string> {
  const body = response.body;
  if (!body) return "";
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let read = 0;
  try {
    while (read < maxBytes) {
      const next = await reader.read();
      if (next.done) break;
      const bytes = next.value.byteLength > maxBytes - read
        ? next.value.subarray(0, maxBytes - read)
        : next.value;
      read += bytes.byteLength;
      text += decoder.decode(bytes, { stream: true });
    }
    text += decoder.decode();
  } catch {
    // the body is only an excerpt for the error
  } finally {
    reader.cancel().catch(() => {});
  }
  return text;
}

/** The tool calls of one choice being assembled from their deltas. */
interface ChoiceCalls {
  calls: Map<number, ToolCallChunk>;
  /** The index the previous delta touched (-1: none yet). */
  last: number;
  /** One past the highest index seen. */
  next: number;
}

/**
 * Adds one tool-call delta. Some OpenAI-compatible servers omit `index`: such a delta continues
 * the call with the same id, starts a new call when its id is new, and otherwise continues the
 * call the previous delta touched.
 */
function addToolDelta(pending: ChoiceCalls, part: Record<string, unknown>, choice: number): void {
  let index: number;
  if (typeof part.index === "number" && Number.isInteger(part.index) && part.index >= 0) {
    index = part.index;
  } else if (typeof part.id === "string" && part.id !== "") {
    index = pending.next;
    for (const call of pending.calls.values()) if (call.id === part.id) index = call.index;
  } else {
    index = pending.last >= 0 ? pending.last : pending.next;
  }
  pending.last = index;
  if (index >= pending.next) pending.next = index + 1;
  let call = pending.calls.get(index);
  if (!call) {
    call = choice === 0
      ? { type: "tool_call", index, id: "", name: "", arguments: "" }
      : { type: "tool_call", index, id: "", name: "", arguments: "", choice };
    pending.calls.set(index, call);
  }
  if (typeof part.id === "string" && part.id) call.id = part.id;
  const fn = isObject(part.function) ? part.function : {};
  if (typeof fn.name === "string" && fn.name && !call.name) call.name = fn.name;
  if (typeof fn.arguments === "string") call.arguments += fn.arguments;
}

/** Header names whose values are credentials (Azure OpenAI and gateways use `api-key` styles). */
const SECRET_HEADERS = new Set(["authorization", "proxy-authorization", "api-key", "x-api-key"]);

/** The strings errors must never show: the key and credential header values (and their tokens). */
function secretsOf(apiKey: string | undefined, headers: Record<string, string>): string[] {
  const secrets = new Set<string>();
  if (apiKey) secrets.add(apiKey);
  for (const [name, value] of Object.entries(headers)) {
    if (!SECRET_HEADERS.has(name.toLowerCase()) || typeof value !== "string") continue;
    const trimmed = value.trim();
    if (trimmed) secrets.add(trimmed);
    const token = trimmed.replace(/^(bearer|basic|token)\s+/i, "");
    if (token) secrets.add(token);
  }
  // Longest first, so a token inside a longer header value cannot leave a fragment behind.
  return [...secrets].sort((a, b) => b.length - a.length);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function num(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}

function messageOf(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : "";
    return `${error.message}${cause}`;
  }
  return String(error);
}

function canParse(value: string): boolean {
  try {
    new URL(value);
    return true;
  } catch {
    return false;
  }
}
