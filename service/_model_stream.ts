// IModel's streaming (private): per-chunk processing and the consumer-facing ReadableStream.

import type { APICalling } from "./api_calling.ts";
import type { StreamChunk } from "./endpoint.ts";
import type { HookRegistry, StreamChunkType } from "./hook_registry.ts";
import type { ModelCallOptions } from "./model_options.ts";
import { callChunkHandler, INTERNALS } from "./_dispatch.ts";
import { isThenable } from "../core/_util.ts";
import { anySignal } from "../core/_abort.ts";
import { internals, type StreamRun } from "./_stream_run.ts";

/** What chunk processing needs from a model. */
export interface ChunkProcessorModel {
  readonly hookRegistry: HookRegistry;
  readonly exitHook: boolean;
  readonly transformChunk: ((chunk: StreamChunk) => unknown) | null;
}

/**
 * One chunk through the registry handler for its type (which wins) or `transformChunk`:
 * the replacement, or `null` to keep the chunk. Synchronous when the handler is.
 */
export function processChunk(
  model: ChunkProcessorModel,
  chunk: StreamChunk,
  signal: AbortSignal,
): unknown {
  const key = chunk !== null && typeof chunk === "object"
    ? (chunk as { type?: unknown }).type
    : undefined;
  if (typeof key === "string") {
    const handler = INTERNALS.get(model.hookRegistry)?.stream.get(key);
    if (handler !== undefined) {
      return callChunkHandler(handler, chunk, key as StreamChunkType, model.exitHook, signal);
    }
  }
  const fn = model.transformChunk;
  if (fn) {
    const out = fn(chunk);
    return isThenable(out) ? Promise.resolve(out).then((v) => v ?? null) : out ?? null;
  }
  return null;
}

/** What the stream needs from its model. */
export interface StreamHost {
  /** Creates the event (with `stream: true` in the request). */
  createEvent(request: Record<string, unknown>, options?: ModelCallOptions): Promise<APICalling>;
  /** Processes one chunk (see {@linkcode processChunk}). */
  process(chunk: StreamChunk, signal: AbortSignal): unknown;
  /** Tells observers the call started. */
  started(event: APICalling): void;
  /** Tells observers about a delivered chunk. */
  delivered(event: APICalling, chunk: StreamChunk): void;
  /** Tells observers the call ended. */
  ended(event: APICalling): void;
}

/** `IModel.stream`: see its documentation. */
export function modelStream(
  host: StreamHost,
  request: Record<string, unknown>,
  options?: ModelCallOptions,
): ReadableStream<StreamChunk> {
  if (request === null || typeof request !== "object" || Array.isArray(request)) {
    throw new TypeError(`Cannot stream: request must be an object`);
  }
  const signal = options?.signal;
  // Chunk handlers see the caller's abort and the consumer's cancel through one signal.
  const stop = new AbortController();
  const chunkSignal = signal ? anySignal([signal, stop.signal]) : stop.signal;
  let run: StreamRun | null = null;
  let opening: Promise<StreamRun> | null = null;
  let created: APICalling | null = null;
  let ended = false;
  let onCallerAbort: (() => void) | null = null;
  const release = () => {
    if (onCallerAbort) signal?.removeEventListener("abort", onCallerAbort);
    onCallerAbort = null;
  };
  const end = () => {
    release();
    if (ended || !created) return;
    ended = true;
    host.ended(created);
  };
  const open = () =>
    opening ??= host.createEvent({ ...request, stream: true }, options).then((event) => {
      created = event;
      options?.onEvent?.(event);
      host.started(event);
      run = (internals.streamRun as NonNullable<typeof internals.streamRun>)(event, signal);
      return run;
    });
  let listening = false;
  // Each chunk is read from the core stream's reader and processed here, in this stream's own
  // pull: no other stream or generator sits between the endpoint and the consumer.
  return new ReadableStream<StreamChunk>({
    pull: async (controller) => {
      let source = run;
      if (source === null || !source.started) {
        if (!listening && signal && !signal.aborted) {
          // From the first read on (a stream never read sends nothing and holds no listener), a
          // caller abort ends the stream at once, even while the consumer is not reading: the
          // event is CANCELLED, so observers hear post_call without waiting for another read.
          listening = true;
          onCallerAbort = () => {
            controller.error(signal.reason);
            // After the run's own abort listener (registered later) has made it CANCELLED.
            queueMicrotask(end);
          };
          signal.addEventListener("abort", onCallerAbort, { once: true });
        }
        try {
          source = await open();
        } catch (error) {
          release();
          throw error;
        }
      }
      let next: IteratorResult<unknown>;
      try {
        const core = source.source;
        if (core === null) next = await source.first();
        else {
          const read = core.next();
          next = isThenable(read) ? await read : read;
        }
      } catch (error) {
        source.fail(error);
        end();
        throw error;
      }
      if (source.settled) {
        // Cancelled or aborted while reading (the consumer has already been told: closing then
        // throws), or the event was not PENDING (an empty stream).
        end();
        try {
          controller.close();
        } catch {
          // already errored or cancelled
        }
        return;
      }
      if (next.done) {
        try {
          await source.complete();
        } catch (error) {
          end();
          throw error;
        }
        end();
        controller.close();
        return;
      }
      const chunk = next.value as StreamChunk;
      let processed: unknown;
      try {
        processed = host.process(chunk, chunkSignal);
        if (isThenable(processed)) processed = await processed;
      } catch (error) {
        if (chunkSignal.aborted) {
          // The caller aborted or the consumer cancelled while a handler ran: the event has
          // already ended CANCELLED and the request is closed.
          end();
          throw error;
        }
        // Stop the provider stream (closing the request), then record why the event ended.
        await source.abandon(error);
        end();
        throw error;
      }
      const delivered = (processed ?? chunk) as StreamChunk;
      if (created) host.delivered(created, delivered);
      controller.enqueue(delivered);
    },
    cancel: async (reason) => {
      stop.abort(reason ?? new DOMException("Stream cancelled", "AbortError"));
      if (run) await run.cancel(reason);
      else if (opening) await (await opening.catch(() => null))?.cancel(reason);
      end();
    },
  }, { highWaterMark: 0 });
}
