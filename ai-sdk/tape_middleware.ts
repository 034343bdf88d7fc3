/**
 * `tapeMiddleware`: records an AI SDK language model's calls to a JSONL tape and replays them
 * without the provider.
 *
 * @module
 */

import type {
  CallParams,
  GenerateResult,
  LanguageModelMiddleware,
  MiddlewareSpecificationVersion,
  ModelInfo,
  StreamResult,
} from "./_spec.ts";
import {
  errorRecord,
  type PreparedRequest,
  recordStream,
  Tape,
  type TapeEntry,
  type TapeOptions,
} from "../tape/_tape.ts";
import { abortable, delay } from "../core/_async.ts";
import { TapeRecordedError } from "../tape/tape_errors.ts";

/** Options of {@linkcode tapeMiddleware}. */
export interface TapeMiddlewareOptions<
  V extends MiddlewareSpecificationVersion = "v3",
> extends TapeOptions {
  /** The middleware specification to declare: `"v3"` for `ai@6` (default), `"v4"` for `ai@7`. */
  specificationVersion?: V;
}

/** The middleware, plus what a test asks of its tape. */
export interface TapeMiddleware<V extends MiddlewareSpecificationVersion = "v3">
  extends LanguageModelMiddleware<V> {
  /** The tape file. */
  readonly path: string;
  /** `"record"` or `"replay"`. */
  readonly mode: "record" | "replay";
  /** How many model calls went through the middleware. */
  readonly calls: number;
  /** Resolves once every finished call is on disk (record); writes the header if none was. */
  flush(): Promise<void>;
  /**
   * Replay: rejects with `TapeUnconsumedError` when fewer calls were made than the tape holds.
   * Record: the same as `flush()`.
   */
  assertConsumed(): Promise<void>;
}

/** Call options that are not part of the request: transport and cancellation. */
const SKIPPED = ["abortSignal", "headers"];

/**
 * Makes an AI SDK language-model middleware that records every `doGenerate`/`doStream` of the
 * wrapped model to a JSONL tape (`mode: "record"`), or answers from the tape without calling the
 * model at all (`mode: "replay"`). Use it as the innermost middleware, next to the model, so the
 * tape holds what the provider was asked.
 *
 * The tape has the format of `tapeEndpoint`'s, with `source: "ai-sdk"`: a header line, then per
 * call `index`, `call` (`"generate"` or `"stream"`), `fingerprint` (SHA-256 of the canonical JSON
 * of `{ call, request }`), the redacted `request` — `model` (`{ provider, modelId }`) and the
 * call options (`prompt`, `tools`, `toolChoice`, `temperature`, `maxOutputTokens`, `seed`,
 * `responseFormat`, `providerOptions`, …) without `abortSignal` and `headers` — and the answer:
 * the generate result (without `request`, `response.headers` and `response.body`), or the stream
 * parts with their times (`chunks`, `end`). Dates (`response.timestamp`, a `response-metadata`
 * part's `timestamp`) are restored on replay; an `error` part's error replays as
 * `{ name, message }`.
 *
 * Redaction, `content: "drop"` (applied to `prompt`), ordered strict matching, the typed errors
 * (`TapeMismatchError`, `TapeExhaustedError`, `TapeUnconsumedError`, `TapeFormatError`,
 * `TapeRecordedError`) and `timing` work as for `tapeEndpoint`; the call's `abortSignal` ends
 * every wait.
 *
 * @param options The tape file, the mode, and the redaction and timing options.
 * @returns The middleware, for `wrapLanguageModel({ model, middleware })`.
 * @throws {TypeError} When an option is invalid.
 *
 * @example Record a model's answer, then replay it without the model
 * ```ts
 * import { tapeMiddleware } from "@hookscope/core/ai-sdk";
 * import assert from "node:assert/strict";
 *
 * let text = "";
 * const files = {
 *   readText: () => Promise.resolve(text),
 *   writeText: (_path: string, t: string) => { text = t; return Promise.resolve(); },
 * };
 * const model = { provider: "mock", modelId: "m" };
 * const params = { prompt: [{ role: "user", content: [{ type: "text", text: "hi" }] }] };
 * const answer = { content: [{ type: "text", text: "hello" }], warnings: [] };
 * const doStream = () => Promise.reject(new Error("unused"));
 *
 * const recorder = tapeMiddleware({ path: "t.jsonl", mode: "record", files });
 * await recorder.wrapGenerate({ doGenerate: () => Promise.resolve(answer), doStream, params, model });
 *
 * const replay = tapeMiddleware({ path: "t.jsonl", mode: "replay", files });
 * const doGenerate = () => Promise.reject(new Error("the model is not called"));
 * assert.deepEqual(await replay.wrapGenerate({ doGenerate, doStream, params, model }), answer);
 * await replay.assertConsumed();
 * ```
 */
export function tapeMiddleware<V extends MiddlewareSpecificationVersion = "v3">(
  options: TapeMiddlewareOptions<V>,
): TapeMiddleware<V> {
  const specificationVersion = (options?.specificationVersion ?? "v3") as V;
  if (specificationVersion !== "v3" && specificationVersion !== "v4") {
    throw new TypeError(`Cannot create tape: specificationVersion must be "v3" or "v4"`);
  }
  const tape = new Tape(options, { source: "ai-sdk", messagesField: "prompt", skip: SKIPPED });
  const requestOf = (params: CallParams, model: ModelInfo): Record<string, unknown> => ({
    ...params,
    model: { provider: model.provider, modelId: model.modelId },
  });
  const signalOf = (params: CallParams): AbortSignal | undefined => {
    const signal = params.abortSignal;
    return typeof AbortSignal !== "undefined" && signal instanceof AbortSignal ? signal : undefined;
  };

  const middleware: TapeMiddleware<V> = {
    specificationVersion,
    get path(): string {
      return tape.path;
    },
    get mode(): "record" | "replay" {
      return tape.mode;
    },
    get calls(): number {
      return tape.calls;
    },
    flush: () => tape.flush(),
    assertConsumed: () => tape.assertConsumed(),
    transformParams: <P extends CallParams>(o: { params: P }): PromiseLike<P> =>
      Promise.resolve(o.params),

    async wrapGenerate<G extends GenerateResult, P extends CallParams>(o: {
      doGenerate: () => PromiseLike<G>;
      params: P;
      model: ModelInfo;
    }): Promise<G> {
      const index = tape.claim();
      const signal = signalOf(o.params);
      const prepared = await tape.prepareFor(
        index,
        "generate",
        requestOf(o.params, o.model),
        signal,
      );
      const base = {
        index,
        call: "generate",
        fingerprint: prepared.fingerprint,
        request: prepared.request,
      };
      if (tape.mode === "record") {
        let result: G;
        try {
          result = await o.doGenerate();
        } catch (error) {
          await tape.commit({ ...base, error: errorRecord(error, (v) => tape.clean(v)) });
          throw error;
        }
        await tape.commit({ ...base, response: tape.clean(storedResult(result)) });
        return result;
      }
      const entry = await abortable(tape.match(index, "generate", prepared), signal);
      if (entry.error) throw new TapeRecordedError(entry.error.name, entry.error.message);
      return revive(structuredClone(entry.response)) as G;
    },

    async wrapStream<S extends StreamResult, P extends CallParams>(o: {
      doStream: () => PromiseLike<S>;
      params: P;
      model: ModelInfo;
    }): Promise<S> {
      const index = tape.claim();
      const started = Date.now();
      const signal = signalOf(o.params);
      const prepared = await tape.prepareFor(
        index,
        "stream",
        requestOf(o.params, o.model),
        signal,
      );
      if (tape.mode === "record") {
        let result: S;
        try {
          result = await o.doStream();
        } catch (error) {
          await tape.commit({
            index,
            call: "stream",
            fingerprint: prepared.fingerprint,
            request: prepared.request,
            error: errorRecord(error, (v) => tape.clean(v)),
          });
          throw error;
        }
        return { ...result, stream: recordParts(tape, index, started, prepared, result.stream) };
      }
      const entry = await abortable(tape.match(index, "stream", prepared), signal);
      if (entry.error && entry.chunks === undefined) {
        throw new TapeRecordedError(entry.error.name, entry.error.message);
      }
      return { stream: replayParts(tape, entry, signal) } as unknown as S;
    },
  };
  return middleware;
}

/** The generate result as stored: without the raw request, response headers and body. */
function storedResult(result: GenerateResult): unknown {
  const { request: _request, ...rest } = result;
  const response = rest.response;
  if (response !== null && typeof response === "object") {
    const { headers: _headers, body: _body, ...kept } = response as Record<string, unknown>;
    return { ...rest, response: kept };
  }
  return rest;
}

/** Restores the dates of a stored result or part. */
function revive(value: unknown): unknown {
  if (value === null || typeof value !== "object") return value;
  const record = value as Record<string, unknown>;
  const date = (v: unknown): unknown => typeof v === "string" ? new Date(v) : v;
  if (record.type === "response-metadata" && "timestamp" in record) {
    record.timestamp = date(record.timestamp);
  }
  const response = record.response as Record<string, unknown> | undefined;
  if (response !== null && typeof response === "object" && "timestamp" in response) {
    response.timestamp = date(response.timestamp);
  }
  return record;
}

function recordParts(
  tape: Tape,
  index: number,
  started: number,
  prepared: PreparedRequest,
  stream: ReadableStream<unknown>,
): ReadableStream<unknown> {
  return recordStream(
    tape,
    index,
    started,
    Promise.resolve(prepared),
    Promise.resolve(stream.getReader()),
  );
}

function replayParts(
  tape: Tape,
  entry: TapeEntry,
  signal: AbortSignal | undefined,
): ReadableStream<unknown> {
  const chunks = entry.chunks ?? [];
  let at = 0;
  let started = -1;
  return new ReadableStream<unknown>({
    async pull(controller) {
      if (started < 0) started = Date.now();
      signal?.throwIfAborted();
      if (at < chunks.length) {
        const next = chunks[at++];
        if (tape.timing === "recorded") {
          await delay(next.ms - (Date.now() - started), signal);
        }
        controller.enqueue(revive(structuredClone(next.chunk)));
        return;
      }
      if (entry.error) throw new TapeRecordedError(entry.error.name, entry.error.message);
      controller.close();
    },
  }, { highWaterMark: 0 });
}
