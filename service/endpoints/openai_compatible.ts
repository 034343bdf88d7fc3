/**
 * `OpenAICompatibleEndpoint`: chat completions over `fetch`, with Server-Sent Events streaming
 * parsed into typed chunks, limits on waiting and size, and credentials kept out of every error.
 *
 * @module
 */

import type { EventSourceMessage } from "eventsource-parser";
import { anySignal } from "../../core/_abort.ts";
import { redactSecrets } from "../../core/redact.ts";
import { isRecord, messageOf, type MessageOfOptions } from "../../core/_util.ts";
import type {
  ConversationItem,
  Endpoint,
  EndpointCallOptions,
  ModelAnswer,
  StreamChunk,
} from "../endpoint.ts";
import { iterableToStream } from "../endpoint.ts";
import { EndpointError, EndpointParseError } from "../endpoint_error.ts";
import { createChunkMapper } from "./_openai_chunks.ts";
import { openAIAnswer } from "./_openai_answer.ts";
import { toOpenAIMessages } from "./openai_messages.ts";
import { invalidHeaderValue, secretsOf } from "./_secrets.ts";
import { SseEventStream, type SseFailure } from "./_sse_stream.ts";
import { Watchdog, type WatchdogKind } from "./_watchdog.ts";

/** Options of {@linkcode OpenAICompatibleEndpoint}. */
export interface OpenAICompatibleEndpointOptions {
  /** The API root, e.g. `https://api.openai.com/v1`; requests go to `{baseURL}/chat/completions`. */
  baseURL: string;
  /**
   * Sent as `Authorization: Bearer <apiKey>` (replacing an `Authorization` given in `headers`);
   * never appears in errors or logs. Surrounding whitespace is stripped; a key with a line break
   * or another control character inside is refused at construction.
   */
  apiKey?: string;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
  /**
   * Extra request headers. Every value is treated as a credential and redacted from errors
   * (credential names such as `api-key`, `x-goog-api-key`, `cookie` at any length, others from 8
   * characters on).
   */
  headers?: Record<string, string>;
  /** A name for logs (default `"openai_compatible"`). */
  name?: string;
  /**
   * The longest wait for useful data from the server, in milliseconds (default 60 000;
   * `Infinity` turns it off): for the response to start, then for the next Server-Sent Event
   * with data (streams) or the next non-whitespace byte (non-streamed bodies). SSE comments
   * such as `: ping`, events without data and whitespace do not reset it, so a server that only
   * sends keep-alives still ends here. Time spent by a slow consumer does not count. Past it the
   * call fails with an {@linkcode EndpointError} of kind `"idle"`.
   */
  idleTimeoutMs?: number;
  /**
   * The overall deadline of one call, body and stream included, in milliseconds (default
   * 600 000, ten minutes; `Infinity` turns it off). It ends a server that keeps sending data
   * slowly forever. A `HookEvent`'s deadline and the caller's signal apply as well. Past it the
   * call fails with an {@linkcode EndpointError} of kind `"timeout"`.
   */
  timeoutMs?: number;
  /**
   * The largest non-streamed response body read, in bytes (default 33 554 432, 32 MiB). A larger
   * body is cancelled while it arrives and the call fails with kind `"too_large"`.
   */
  maxResponseBytes?: number;
}

/** Default of {@linkcode OpenAICompatibleEndpointOptions.idleTimeoutMs}. */
export const DEFAULT_IDLE_TIMEOUT_MS = 60_000;
/** Default of {@linkcode OpenAICompatibleEndpointOptions.timeoutMs} (ten minutes). */
export const DEFAULT_TIMEOUT_MS = 600_000;
/** Default of {@linkcode OpenAICompatibleEndpointOptions.maxResponseBytes} (32 MiB). */
export const DEFAULT_MAX_RESPONSE_BYTES = 33_554_432;

const EXCERPT = 500;
/** At most this much of an error response body is read (enough for the excerpt after redaction). */
const MAX_ERROR_BODY_BYTES = 8192;
/** The longest line or unfinished event the SSE parser buffers (a guard against endless lines). */
const MAX_SSE_BUFFER_CHARS = 4 * 1024 * 1024;
/** Error texts carry the cause's message (a fetch failure says why the socket failed). */
const WITH_CAUSE: MessageOfOptions = Object.freeze({ withCause: true });

/**
 * An OpenAI-compatible chat-completions endpoint.
 *
 * `call()` POSTs the payload and resolves to the typed answer ({@linkcode ModelAnswer}: the first
 * choice's text and tool calls with parsed arguments, usage, finish reason, response id and
 * model, and the JSON body as `raw`). `renderMessages()` writes a conversation as OpenAI chat
 * messages ({@linkcode toOpenAIMessages}). `stream()` sends `stream: true` and
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
 * Every call ends: the idle limit (`idleTimeoutMs`, 60 s) counts only useful data, so a server
 * that sends nothing but SSE keep-alive comments, empty events or whitespace fails with kind
 * `"idle"`, and the overall limit (`timeoutMs`, 10 min by default) ends one that keeps dripping
 * data with kind `"timeout"`.
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
  /** The idle limit in milliseconds. */
  readonly idleTimeoutMs: number;
  /** The overall deadline of a call in milliseconds (`Infinity`: none). */
  readonly timeoutMs: number;
  /** The cap on a non-streamed body in bytes. */
  readonly maxResponseBytes: number;
  #apiKey: string | undefined;
  #fetch: typeof fetch | undefined;
  #headers: Record<string, string>;
  #secrets: string[];

  /**
   * Makes the endpoint; an invalid `baseURL`, header name or value, API key or limit throws a
   * `TypeError` whose message never contains the value. A payload that is not JSON-serializable
   * (a `BigInt`, a cycle) rejects a call with a `TypeError` and sends nothing.
   */
  constructor(options: OpenAICompatibleEndpointOptions) {
    if (options === null || typeof options !== "object") {
      throw new TypeError(`Cannot create endpoint: options must be an object`);
    }
    const { baseURL, apiKey, headers } = options;
    if (typeof baseURL !== "string" || !canParse(baseURL)) {
      throw new TypeError(
        `Cannot create endpoint: baseURL must be an absolute URL; got ${
          typeof baseURL === "string" ? JSON.stringify(redactURL(baseURL)) : `(${typeof baseURL})`
        }`,
      );
    }
    if (apiKey !== undefined && typeof apiKey !== "string") {
      throw new TypeError(`Cannot create endpoint: apiKey must be a string`);
    }
    if (typeof apiKey === "string") {
      const why = invalidHeaderValue(apiKey);
      if (why) {
        throw new TypeError(`Cannot create endpoint: invalid apiKey (${why})`);
      }
    }
    if (options.fetch !== undefined && typeof options.fetch !== "function") {
      throw new TypeError(`Cannot create endpoint: fetch must be a function`);
    }
    if (headers !== undefined && (headers === null || typeof headers !== "object")) {
      throw new TypeError(`Cannot create endpoint: headers must be an object`);
    }
    for (const [name, value] of Object.entries(headers ?? {})) {
      if (typeof value !== "string") {
        throw new TypeError(
          `Cannot create endpoint: invalid headers (header ${
            JSON.stringify(name)
          } must be a string)`,
        );
      }
      const why = invalidHeaderValue(value);
      if (why) {
        throw new TypeError(
          `Cannot create endpoint: invalid headers (header ${JSON.stringify(name)}: ${why})`,
        );
      }
    }
    try {
      new Headers(headers);
    } catch {
      // Checked now, not at the first request; the runtime's message may quote the value.
      throw new TypeError(
        `Cannot create endpoint: invalid headers (a header name is not a valid token)`,
      );
    }
    this.idleTimeoutMs = limit("idleTimeoutMs", options.idleTimeoutMs, DEFAULT_IDLE_TIMEOUT_MS)!;
    this.timeoutMs = limit("timeoutMs", options.timeoutMs, DEFAULT_TIMEOUT_MS)!;
    this.maxResponseBytes = limit(
      "maxResponseBytes",
      options.maxResponseBytes,
      DEFAULT_MAX_RESPONSE_BYTES,
    )!;
    this.name = options.name ?? "openai_compatible";
    this.baseURL = baseURL.replace(/\/+$/, "");
    this.#apiKey = apiKey?.trim();
    this.#fetch = options.fetch;
    this.#headers = { ...headers };
    this.#secrets = [...secretsOf(apiKey, this.#headers), ...urlSecrets(baseURL)];
  }

  /** The chat-completions URL. */
  get url(): string {
    return `${this.baseURL}/chat/completions`;
  }

  /** Removes this endpoint's credentials (in any encoding) from `text`. */
  redact(text: string): string {
    return redactSecrets(text, this.#secrets);
  }

  /** The conversation as OpenAI chat messages ({@linkcode toOpenAIMessages}). */
  renderMessages(conversation: readonly ConversationItem[]): unknown[] {
    return toOpenAIMessages(conversation);
  }

  /**
   * POSTs the payload (without `stream`) and resolves to its typed answer (the JSON body as
   * `raw`); a body that is not JSON rejects with {@linkcode EndpointParseError}, and one without
   * `choices[0].message` with a `TypeError`. A connection
   * that breaks while the body arrives rejects with {@linkcode EndpointError} (with the status),
   * and an abort meanwhile with the signal's reason. The idle, overall and size limits apply.
   */
  async call(
    payload: Record<string, unknown>,
    options: EndpointCallOptions,
  ): Promise<ModelAnswer> {
    const body = { ...payload };
    delete body.stream;
    delete body.stream_options;
    const call = this.#start(options.signal);
    try {
      const response = await this.#post(body, call, "application/json");
      const text = await this.#readLimited(response, call);
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        throw new EndpointParseError("Cannot parse endpoint response: invalid JSON", {
          status: response.status,
          bodyExcerpt: this.#excerpt(text),
          url: this.#safeURL(),
        });
      }
      return openAIAnswer(json);
    } finally {
      call.watchdog.stop();
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
    // Our own controller (inside #start), so that a consumer's cancel also aborts a fetch still
    // connecting.
    let call: CallState | undefined;
    return iterableToStream(this.#events(body, options.signal, (c) => call = c), (reason) => {
      call?.controller.abort(reason ?? new DOMException("Stream cancelled", "AbortError"));
    });
  }

  async *#events(
    body: Record<string, unknown>,
    outer: AbortSignal,
    started: (call: CallState) => void,
  ): AsyncGenerator<StreamChunk> {
    const call = this.#start(outer);
    started(call);
    let events: ReadableStreamDefaultReader<EventSourceMessage> | undefined;
    try {
      const response = await this.#post(body, call, "text/event-stream");
      const url = this.#safeURL();
      const status = response.status;
      if (!response.body) {
        throw new EndpointError("Endpoint returned no body for a stream", { status, url });
      }
      const sse = new SseEventStream({
        maxEventChars: MAX_SSE_BUFFER_CHARS,
        headChars: MAX_ERROR_BODY_BYTES,
        fail: (failure, head) => this.#sseFailure(failure, head, status, url),
      });
      events = this.#watched(response.body, call, status).pipeThrough(sse).getReader();
      const mapper = createChunkMapper();
      while (true) {
        let next: ReadableStreamReadResult<EventSourceMessage>;
        try {
          next = await events.read();
        } catch (cause) {
          throw this.#failure(cause, call, status);
        }
        if (call.signal.aborted) throw this.#failure(call.signal.reason, call, status);
        if (next.done) break;
        const data = next.value.data.trim();
        // Only an event with data is progress: comments and empty events are keep-alives.
        if (data === "") continue;
        call.watchdog.progress();
        if (data === "[DONE]") break;
        let json: unknown;
        try {
          json = JSON.parse(data);
        } catch {
          throw new EndpointParseError("Cannot parse stream event: invalid JSON", {
            status,
            bodyExcerpt: this.#excerpt(data),
            url,
          });
        }
        if (!isRecord(json)) {
          throw new EndpointParseError("Cannot parse stream event: expected a JSON object", {
            status,
            bodyExcerpt: this.#excerpt(data),
            url,
          });
        }
        if (json.error) {
          throw new EndpointError(
            `Endpoint reported an error in the stream: ${this.#excerpt(saidOf(json.error))}`,
            { status, bodyExcerpt: this.#excerpt(data), url },
          );
        }
        yield* mapper.push(json);
      }
      yield* mapper.end();
    } finally {
      call.watchdog.stop();
      await events?.cancel().catch(() => {});
    }
  }

  /** Starts the limits of one call: a controller the watchdog aborts, joined with the caller's. */
  #start(outer: AbortSignal): CallState {
    const controller = new AbortController();
    const signal = anySignal([outer, controller.signal]);
    const state: CallState = {
      outer,
      controller,
      signal,
      watchdog: new Watchdog(this.idleTimeoutMs, this.timeoutMs, (kind) => {
        controller.abort(this.#limitError(kind));
      }),
    };
    return state;
  }

  /** The body as a stream that runs the idle clock while it waits for the server. */
  #watched(
    body: ReadableStream<Uint8Array>,
    call: CallState,
    status: number,
  ): ReadableStream<Uint8Array> {
    const reader = body.getReader();
    const onAbort = () => reader.cancel(call.signal.reason).catch(() => {});
    call.signal.addEventListener("abort", onAbort, { once: true });
    return new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        call.watchdog.wait();
        let next: ReadableStreamReadResult<Uint8Array>;
        try {
          next = await reader.read();
        } catch (cause) {
          call.signal.removeEventListener("abort", onAbort);
          throw this.#failure(cause, call, status);
        } finally {
          call.watchdog.received();
        }
        if (call.signal.aborted) {
          call.signal.removeEventListener("abort", onAbort);
          throw this.#failure(call.signal.reason, call, status);
        }
        if (next.done) {
          call.signal.removeEventListener("abort", onAbort);
          controller.close();
        } else controller.enqueue(next.value);
      },
      cancel: async (reason) => {
        call.signal.removeEventListener("abort", onAbort);
        await reader.cancel(reason).catch(() => {});
      },
    }, { highWaterMark: 0 });
  }

  /** Reads a non-streamed body up to `maxResponseBytes`, then cancels it. */
  async #readLimited(response: Response, call: CallState): Promise<string> {
    const status = response.status;
    const declared = Number(response.headers.get("content-length"));
    if (Number.isFinite(declared) && declared > this.maxResponseBytes) {
      await response.body?.cancel().catch(() => {});
      throw this.#tooLarge(status, `declares ${declared} bytes`);
    }
    const body = response.body;
    if (!body) return "";
    const reader = this.#watched(body, call, status).getReader();
    const decoder = new TextDecoder();
    const parts: string[] = [];
    let read = 0;
    try {
      while (true) {
        const next = await reader.read();
        if (next.done) break;
        read += next.value.byteLength;
        if (read > this.maxResponseBytes) throw this.#tooLarge(status, "grew past the limit");
        if (hasNonBlank(next.value)) call.watchdog.progress();
        parts.push(decoder.decode(next.value, { stream: true }));
      }
      parts.push(decoder.decode());
    } finally {
      await reader.cancel().catch(() => {});
    }
    return parts.join("");
  }

  async #post(body: unknown, call: CallState, accept: string): Promise<Response> {
    let text: string;
    try {
      text = JSON.stringify(body);
    } catch (cause) {
      // Bad input, not an unreachable endpoint: nothing is sent.
      throw new TypeError(
        `Cannot send request: the payload is not JSON-serializable (${this.#message(cause)})`,
      );
    }
    const doFetch = this.#fetch ?? globalThis.fetch;
    let response: Response;
    call.watchdog.wait();
    try {
      // Headers, not a record: names are case-insensitive, so `apiKey` replaces a user-given
      // `Authorization` instead of sending both. Built inside the guard: a runtime's message
      // about a bad value quotes it.
      const headers = new Headers({ "content-type": "application/json", accept });
      for (const [name, value] of Object.entries(this.#headers)) headers.set(name, value);
      if (this.#apiKey) headers.set("authorization", `Bearer ${this.#apiKey}`);
      response = await doFetch(this.url, {
        method: "POST",
        headers,
        body: text,
        signal: call.signal,
      });
    } catch (cause) {
      throw this.#failure(cause, call, null);
    } finally {
      call.watchdog.received();
    }
    call.watchdog.progress();
    if (!response.ok) {
      const excerpt = await readPrefix(response, MAX_ERROR_BODY_BYTES, call);
      if (call.signal.aborted) throw this.#failure(call.signal.reason, call, response.status);
      throw new EndpointError(
        `Endpoint request failed with status ${response.status}${
          response.statusText ? ` (${this.redact(response.statusText)})` : ""
        }`,
        {
          kind: "http",
          status: response.status,
          bodyExcerpt: this.#excerpt(excerpt),
          url: this.#safeURL(),
        },
      );
    }
    return response;
  }

  /**
   * What a failure while waiting on the server becomes: the caller's abort reason, this call's
   * limit error, or a redacted network {@linkcode EndpointError}.
   */
  #failure(cause: unknown, call: CallState, status: number | null): unknown {
    if (call.outer.aborted) return call.outer.reason;
    if (call.controller.signal.aborted) {
      const reason = call.controller.signal.reason;
      if (reason instanceof EndpointError) return reason;
      return reason;
    }
    if (cause instanceof EndpointError) return cause;
    const message = status === null
      ? `Cannot reach endpoint: ${this.#message(cause)}`
      : `Response broke before it finished: ${this.#message(cause)}`;
    return new EndpointError(message, {
      kind: "network",
      status,
      url: this.#safeURL(),
      cause: this.#cleanCause(cause),
    });
  }

  #limitError(kind: WatchdogKind): EndpointError {
    const message = kind === "idle"
      ? `Endpoint sent nothing for ${this.idleTimeoutMs} ms (idleTimeoutMs; keep-alives and whitespace do not count)`
      : `Endpoint call took longer than ${this.timeoutMs} ms (timeoutMs)`;
    return new EndpointError(message, { kind, url: this.#safeURL() });
  }

  #tooLarge(status: number, how: string): EndpointError {
    return new EndpointError(
      `Endpoint response body ${how} of ${this.maxResponseBytes} bytes (maxResponseBytes)`,
      { kind: "too_large", status, url: this.#safeURL() },
    );
  }

  #sseFailure(failure: SseFailure, head: string, status: number, url: string): EndpointError {
    if (failure === "overflow") {
      return new EndpointParseError(
        `Cannot parse stream: an event grew past ${MAX_SSE_BUFFER_CHARS} characters without ending`,
        { status, bodyExcerpt: this.#excerpt(head), url },
      );
    }
    let json: unknown;
    try {
      json = JSON.parse(head);
    } catch {
      json = undefined;
    }
    if (isRecord(json) && json.error) {
      return new EndpointError(`Endpoint reported an error: ${this.#excerpt(saidOf(json.error))}`, {
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

  #safeURL(): string {
    try {
      const url = new URL(this.url);
      return `${url.origin}${url.pathname}`;
    } catch {
      return "";
    }
  }

  /** A redacted message of any thrown value (with its cause's message). */
  #message(error: unknown): string {
    return this.redact(messageOf(error, WITH_CAUSE));
  }

  /** The cause to keep: the original when it holds no credential, else a redacted copy. */
  #cleanCause(cause: unknown): unknown {
    if (!(cause instanceof Error)) {
      return cause === undefined ? undefined : this.redact(String(cause));
    }
    const text = `${cause.message}\n${cause.stack ?? ""}\n${messageOf(cause, WITH_CAUSE)}`;
    if (this.redact(text) === text) return cause;
    const copy = new Error(this.#message(cause));
    copy.name = cause.name;
    copy.stack = `${copy.name}: ${copy.message}`;
    return copy;
  }

  /** The redacted start of `text`: redact first, so a key cut by the excerpt cannot survive. */
  #excerpt(text: string): string {
    return this.redact(text.slice(0, 64 * 1024)).slice(0, EXCERPT);
  }
}

/**
 * Makes the OpenAI-compatible endpoint a model calls (`new IModel({ model, endpoint })`); the
 * same as `new OpenAICompatibleEndpoint(options)`.
 *
 * @example
 * ```ts
 * import { IModel, openAICompatible } from "@hookscope/core/service";
 * import assert from "node:assert/strict";
 *
 * const model = new IModel({ model: "m", endpoint: openAICompatible({ baseURL: "http://127.0.0.1:1/v1" }) });
 * assert.equal(model.endpoint.name, "openai_compatible");
 * ```
 */
export function openAICompatible(
  options: OpenAICompatibleEndpointOptions,
): OpenAICompatibleEndpoint {
  return new OpenAICompatibleEndpoint(options);
}

/** One call's limits. */
interface CallState {
  /** The caller's signal. */
  outer: AbortSignal;
  /** Aborted by the watchdog (with an EndpointError) or by a consumer's cancel. */
  controller: AbortController;
  /** `outer` and `controller` joined: what fetch and the body reads see. */
  signal: AbortSignal;
  watchdog: Watchdog;
}

/** Reads at most `maxBytes` of a response body as text, then cancels the rest. */
async function readPrefix(response: Response, maxBytes: number, call: CallState): Promise<string> {
  const body = response.body;
  if (!body) return "";
  const reader = body.getReader();
  const onAbort = () => reader.cancel().catch(() => {});
  call.signal.addEventListener("abort", onAbort, { once: true });
  const decoder = new TextDecoder();
  let text = "";
  let read = 0;
  try {
    while (read < maxBytes) {
      call.watchdog.wait();
      const next = await reader.read();
      call.watchdog.received();
      if (next.done) break;
      call.watchdog.progress(); // bounded by maxBytes, so every byte counts
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
    call.watchdog.received();
    call.signal.removeEventListener("abort", onAbort);
    reader.cancel().catch(() => {});
  }
  return text;
}

/** Whether `bytes` hold anything but JSON whitespace (space, tab, CR, LF). */
function hasNonBlank(bytes: Uint8Array): boolean {
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09) return true;
  }
  return false;
}

/** The server's own words of a JSON `error` member. */
function saidOf(error: unknown): string {
  const message = (error as { message?: unknown }).message;
  return typeof message === "string" ? message : JSON.stringify(error);
}

/** Checks a limit option: a positive number (`Infinity` allowed), or the default when absent. */
function limit(name: string, value: unknown, fallback: number | undefined): number | undefined {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || Number.isNaN(value) || value <= 0) {
    throw new TypeError(
      `Cannot create endpoint: ${name} must be a positive number; got ${
        typeof value === "number" ? String(value) : `(${typeof value})`
      }`,
    );
  }
  return value;
}

/** Credentials inside a URL: user name, password, and query values. */
function urlSecrets(raw: string): string[] {
  try {
    const url = new URL(raw);
    const out = [decodeURIComponent(url.username), decodeURIComponent(url.password)];
    for (const value of url.searchParams.values()) if (value.length >= 8) out.push(value);
    return out.filter((v) => v !== "");
  } catch {
    return [];
  }
}

/** A URL without user name, password or query, for messages. */
function redactURL(raw: string): string {
  return raw.replace(/\/\/[^/@]*@/, "//[redacted]@").replace(/\?.*$/, "?[redacted]");
}

function canParse(value: string): boolean {
  try {
    new URL(value);
    return true;
  } catch {
    return false;
  }
}
