/**
 * `tapeEndpoint`: records an endpoint's calls to a JSONL tape and replays them without a server.
 *
 * @module
 */

import type {
  ConversationItem,
  Endpoint,
  EndpointCallOptions,
  ModelAnswer,
  StreamChunk,
} from "../service/endpoint.ts";
import { toModelAnswer } from "../service/endpoints/_answer.ts";
import {
  errorRecord,
  type PreparedRequest,
  recordStream,
  Tape,
  type TapeEntry,
  type TapeFiles,
  type TapeOptions,
} from "./_tape.ts";
import { abortable, delay } from "../core/_async.ts";
import { TapeRecordedError } from "./tape_errors.ts";

export type { TapeFiles, TapeOptions };

/** Options of {@linkcode tapeEndpoint}. */
export interface TapeEndpointOptions extends TapeOptions {
  /** The endpoint to record (required with `mode: "record"`, unused in replay). */
  endpoint?: Endpoint;
}

/** An {@linkcode Endpoint} that records to or replays from a tape. */
export interface TapeEndpoint extends Endpoint {
  /** The tape file. */
  readonly path: string;
  /** `"record"` or `"replay"`. */
  readonly mode: "record" | "replay";
  /** How many calls were made through this endpoint. */
  readonly calls: number;
  /** Resolves once every finished call is on disk (record); writes the header if none was. */
  flush(): Promise<void>;
  /**
   * Replay: rejects with `TapeUnconsumedError` when fewer calls were made than the tape holds.
   * Record: the same as `flush()`.
   */
  assertConsumed(): Promise<void>;
}

/**
 * Makes an endpoint that records each call of `endpoint` to a JSONL tape (`mode: "record"`) or
 * answers from the tape without any server (`mode: "replay"`).
 *
 * The tape's first line is a header `{"content":…,"hookscopeTape":1,"source":"endpoint"}`; each
 * further line is one call, in call order: `index`, `call` (`"call"` or `"stream"`),
 * `fingerprint` (lowercase hex SHA-256 of the canonical JSON, sorted keys and no spaces, of
 * `{ call, request }`), the redacted `request` (the payload exactly as the model sent it: model,
 * messages, tools, `tool_choice`, sampling parameters, `stream`; there are no headers, keys or
 * timestamps in a payload), and the answer: `response` (non-streamed), or `chunks` (each
 * `{ ms, chunk }`, `ms` after the call started) and `end` (`"done"`, `"error"`, `"cancelled"`),
 * or `error` (`{ name, message }`). Keys are sorted, so a re-recorded tape diffs well.
 *
 * Redaction: every string of the request and the answer passes through the wrapped endpoint's
 * `redact()` (the API key, header values and URL credentials of an
 * {@linkcode OpenAICompatibleEndpoint}, in any encoding), then `secrets`, then key shapes
 * (`sk-…`, GitHub, Slack, AWS, Google keys, bearer tokens, PEM private keys, `user:pass@` in
 * URLs); the string values of credential-looking keys (`apiKey`, `authorization`, …) become
 * `[redacted]`. With `content: "drop"` the values inside each message are stored as `[dropped]`
 * (roles, types, ids and names stay), so the fingerprint covers the model, the tools, the
 * sampling parameters and the conversation's shape, not its text. The answer a recorded call
 * returns is the real one; a replay returns the redacted one.
 *
 * Replay is strict and ordered: the n-th call must match the n-th entry, else it fails with
 * {@linkcode TapeMismatchError} (the differing fields and a line diff of the two requests). A
 * call beyond the tape fails with {@linkcode TapeExhaustedError}; `assertConsumed()` fails with
 * {@linkcode TapeUnconsumedError} when entries were left unused. A missing, malformed or newer
 * tape fails every call with {@linkcode TapeFormatError}; a recorded failure is raised again as
 * {@linkcode TapeRecordedError}. Chunks are replayed at once, or with `timing: "recorded"` at
 * their recorded times; the caller's signal ends every wait, and a cancelled recording replays
 * its chunks and then ends.
 *
 * @param options The tape file, the mode, the endpoint to record and the redaction options.
 * @returns The endpoint, for `new IModel({ model, endpoint })`.
 * @throws {TypeError} When an option is invalid, or `endpoint` is missing when recording.
 *
 * @example Record an in-process endpoint, then replay it
 * ```ts
 * import { FunctionEndpoint, IModel, type ModelAnswer } from "@hookscope/core/service";
 * import { tapeEndpoint } from "@hookscope/core/tape";
 * import assert from "node:assert/strict";
 *
 * let text = "";
 * const files = {
 *   readText: () => Promise.resolve(text),
 *   writeText: (_path: string, t: string) => { text = t; return Promise.resolve(); },
 * };
 * const live = new FunctionEndpoint({ call: () => ({ answer: 42 }) });
 * const recording = tapeEndpoint({ path: "t.jsonl", mode: "record", endpoint: live, files });
 * await new IModel({ model: "m", endpoint: recording }).invoke({ messages: ["q"] });
 *
 * const replay = tapeEndpoint({ path: "t.jsonl", mode: "replay", files });
 * const event = await new IModel({ model: "m", endpoint: replay }).invoke({ messages: ["q"] });
 * assert.deepEqual((event.response as ModelAnswer).raw, { answer: 42 });
 * await replay.assertConsumed();
 * ```
 */
export function tapeEndpoint(options: TapeEndpointOptions): TapeEndpoint {
  const inner = options?.endpoint;
  if (options?.mode === "record") {
    if (
      inner === null || typeof inner !== "object" || typeof inner.call !== "function" ||
      typeof inner.stream !== "function"
    ) {
      throw new TypeError(`Cannot create tape endpoint: recording needs an endpoint`);
    }
  }
  const redact = (inner as { redact?: unknown } | undefined)?.redact;
  const tape = new Tape(options, {
    source: "endpoint",
    messagesField: "messages",
    endpointRedact: typeof redact === "function"
      ? (text) => String(redact.call(inner, text))
      : undefined,
  });
  return new TapeEndpointImpl(tape, inner, options.endpoint?.name);
}

class TapeEndpointImpl implements TapeEndpoint {
  readonly name: string;
  readonly #tape: Tape;
  readonly #inner: Endpoint | undefined;

  constructor(tape: Tape, inner: Endpoint | undefined, innerName: string | undefined) {
    this.#tape = tape;
    this.#inner = inner;
    this.name = `tape(${innerName ?? tape.mode})`;
    // The inner endpoint's message form, when it has its own (a replay has no inner endpoint:
    // the model then sends the default OpenAI form).
    if (typeof inner?.renderMessages === "function") {
      this.renderMessages = (conversation) => inner.renderMessages!(conversation);
    }
  }

  renderMessages?: (conversation: readonly ConversationItem[]) => unknown[];

  get path(): string {
    return this.#tape.path;
  }

  get mode(): "record" | "replay" {
    return this.#tape.mode;
  }

  get calls(): number {
    return this.#tape.calls;
  }

  flush(): Promise<void> {
    return this.#tape.flush();
  }

  assertConsumed(): Promise<void> {
    return this.#tape.assertConsumed();
  }

  async call(
    payload: Record<string, unknown>,
    options: EndpointCallOptions,
  ): Promise<ModelAnswer> {
    const tape = this.#tape;
    const index = tape.claim();
    const prepared = await tape.prepareFor(index, "call", payload, options.signal);
    const base = {
      index,
      call: "call",
      fingerprint: prepared.fingerprint,
      request: prepared.request,
    };
    if (tape.mode === "record") {
      let response: ModelAnswer;
      try {
        response = toModelAnswer(await this.#inner!.call(payload, options));
      } catch (error) {
        await tape.commit({ ...base, error: errorRecord(error, (v) => tape.clean(v)) });
        throw error;
      }
      await tape.commit({ ...base, response: tape.clean(response) });
      return response;
    }
    const entry = await abortable(tape.match(index, "call", prepared), options.signal);
    if (entry.error) throw new TapeRecordedError(entry.error.name, entry.error.message);
    // A tape holds typed answers (`raw` inside); one recorded before typed answers holds the
    // provider's body, read as an answer the same way.
    return toModelAnswer(structuredClone(entry.response));
  }

  stream(
    payload: Record<string, unknown>,
    options: EndpointCallOptions,
  ): ReadableStream<StreamChunk> {
    const tape = this.#tape;
    const index = tape.claim();
    const started = Date.now();
    const prepared = tape.prepare("stream", payload);
    // A rejection is handled by the first pull; never unhandled meanwhile.
    prepared.catch(() => {});
    return tape.mode === "record"
      ? this.#record(index, started, prepared, payload, options)
      : replayStream(tape, index, prepared, options.signal);
  }

  #record(
    index: number,
    started: number,
    preparing: Promise<PreparedRequest>,
    payload: Record<string, unknown>,
    options: EndpointCallOptions,
  ): ReadableStream<StreamChunk> {
    return recordStream<StreamChunk>(this.#tape, index, started, preparing, async () => {
      await abortable(preparing, options.signal);
      return this.#inner!.stream(payload, options).getReader();
    });
  }
}

function replayStream(
  tape: Tape,
  index: number,
  preparing: Promise<PreparedRequest>,
  signal: AbortSignal,
): ReadableStream<StreamChunk> {
  let entry: TapeEntry | undefined;
  let at = 0;
  let started = 0;
  return new ReadableStream<StreamChunk>({
    pull: async (controller) => {
      if (!entry) {
        const prepared = await abortable(preparing, signal);
        entry = await abortable(tape.match(index, "stream", prepared), signal);
        started = Date.now();
      }
      signal.throwIfAborted();
      const chunks = entry.chunks ?? [];
      if (at < chunks.length) {
        const next = chunks[at++];
        if (tape.timing === "recorded") await delay(next.ms - (Date.now() - started), signal);
        controller.enqueue(structuredClone(next.chunk) as StreamChunk);
        return;
      }
      if (entry.error) throw new TapeRecordedError(entry.error.name, entry.error.message);
      controller.close();
    },
  }, { highWaterMark: 0 });
}
