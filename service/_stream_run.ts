// The streamed run of a HookedEvent as a pull source (private): what `Event.stream()` and
// `HookedEvent`'s stream generator do together, without their two promise layers per chunk.
// `IModel.stream` reads the core stream's reader directly and processes each chunk in its own
// pull; this object keeps the event's lifecycle (status, duration, pre hook before the first
// chunk, post hook after a normal end, caller abort, cancel).

import { EventStatus, type Execution, isAbortError } from "../core/mod.ts";
import { anySignal } from "../core/_abort.ts";
import { durationClock } from "../core/_util.ts";

/**
 * Where a run's chunks come from: the core stream's reader, or (for endpoints that expose one)
 * the iterator the stream would have been built from, read without any stream in between.
 */
export interface ChunkSource {
  /** The next chunk; synchronous when the source is. */
  next(): IteratorResult<unknown> | Promise<IteratorResult<unknown>>;
  /** Stops the source (never rejects). */
  cancel(): Promise<void>;
  /** Lets go of the source after it ended normally. */
  release(): void;
}

/** A {@linkcode ChunkSource} over a stream reader. */
export function readerSource(reader: ReadableStreamDefaultReader<unknown>): ChunkSource {
  return {
    next: () => reader.read() as Promise<IteratorResult<unknown>>,
    cancel: () => reader.cancel().catch(() => {}),
    release: () => reader.releaseLock(),
  };
}

/** A {@linkcode ChunkSource} over an iterator (sync or async). */
export function iteratorSource(
  iterator: Iterator<unknown> | AsyncIterator<unknown>,
): ChunkSource {
  return {
    next: () => iterator.next(),
    cancel: async () => {
      try {
        await iterator.return?.();
      } catch {
        // the iterator's own cleanup failure is not the consumer's problem
      }
    },
    release: () => {},
  };
}

/** What a run needs from its event. */
export interface StreamRunParts {
  /** Runs the pre hook, then opens the core source. */
  open(signal: AbortSignal): Promise<ChunkSource>;
  /** Runs the post hook after the core stream ended normally. */
  close(signal: AbortSignal): Promise<void>;
}

const DONE: IteratorResult<unknown> = Object.freeze({ done: true, value: undefined });

/**
 * One streamed run. `first()` starts it and reads the first chunk; later chunks come from
 * `source.next()` directly. The caller reports how it ended: `complete()` after a done read,
 * `fail(error)` when a read threw, `abandon(error)` when processing a chunk failed, `cancel()`.
 */
export class StreamRun {
  /** The core source once open. */
  source: ChunkSource | null = null;
  /** Whether `first()` was called. */
  started = false;
  /** Whether the event reached its final status. */
  settled = false;
  readonly #execution: Execution;
  readonly #parts: StreamRunParts;
  readonly #caller: AbortSignal | undefined;
  readonly #internal = new AbortController();
  readonly #signal: AbortSignal;
  #startedAt = 0;
  #onAbort: (() => void) | null = null;

  constructor(execution: Execution, callerSignal: AbortSignal | undefined, parts: StreamRunParts) {
    this.#execution = execution;
    this.#parts = parts;
    this.#caller = callerSignal;
    this.#signal = callerSignal
      ? anySignal([callerSignal, this.#internal.signal])
      : this.#internal.signal;
  }

  /** Starts the run (from PENDING only; else it is empty) and reads the first chunk. */
  async first(): Promise<IteratorResult<unknown>> {
    this.started = true;
    const execution = this.#execution;
    if (execution.status !== EventStatus.PENDING) {
      this.settled = true;
      return DONE;
    }
    execution.status = EventStatus.PROCESSING;
    this.#startedAt = durationClock();
    const caller = this.#caller;
    if (caller) {
      if (caller.aborted) {
        this.#finish(EventStatus.CANCELLED, caller.reason);
        this.#internal.abort(caller.reason);
        throw caller.reason;
      }
      this.#onAbort = () => {
        if (this.settled) return;
        const reason = caller.reason;
        this.#finish(EventStatus.CANCELLED, reason);
        this.#internal.abort(reason);
        this.source?.cancel();
      };
      caller.addEventListener("abort", this.#onAbort, { once: true });
    }
    const source = await this.#parts.open(this.#signal);
    this.source = source;
    if (this.settled) {
      await source.cancel();
      return DONE;
    }
    return await source.next();
  }

  /** After a done read: the post hook, then COMPLETED. A post hook that rejects fails the run. */
  async complete(): Promise<void> {
    if (this.settled) return;
    this.source?.release();
    this.source = null;
    try {
      await this.#parts.close(this.#signal);
    } catch (error) {
      this.fail(error);
      throw error;
    }
    if (!this.settled) this.#finish(EventStatus.COMPLETED, null);
  }

  /** A read (or the start) threw: FAILED, or CANCELLED for the caller's abort. */
  fail(error: unknown): void {
    if (this.settled) return;
    this.#execution.response = null;
    this.#finish(
      isAbortError(error, this.#signal) ? EventStatus.CANCELLED : EventStatus.FAILED,
      error,
    );
    this.source?.cancel();
  }

  /** Processing a chunk failed: the request is closed and the event ends FAILED with `error`. */
  async abandon(error: unknown): Promise<void> {
    if (this.settled) return;
    this.#internal.abort(error);
    await this.source?.cancel();
    this.#finish(EventStatus.FAILED, error);
  }

  /** The consumer cancelled: CANCELLED, the request is aborted. */
  async cancel(reason: unknown): Promise<void> {
    if (this.settled) return;
    this.#finish(EventStatus.CANCELLED, reason ?? null);
    this.#internal.abort(reason);
    await this.source?.cancel();
  }

  #finish(status: EventStatus, error: unknown): void {
    if (this.settled) return;
    this.settled = true;
    const execution = this.#execution;
    execution.status = status;
    execution.error = error;
    execution.durationMs = durationClock() - this.#startedAt;
    if (this.#onAbort) this.#caller?.removeEventListener("abort", this.#onAbort);
    this.#onAbort = null;
  }
}

/**
 * Hooks the service classes fill in from their static blocks (so no public member exposes these
 * private types): how a `HookedEvent` makes its run, how an event can open its core source
 * without a stream (`APICalling`), and how an endpoint opens what its stream wraps
 * (`FunctionEndpoint`).
 */
export const internals: {
  streamRun?: (event: object, callerSignal: AbortSignal | undefined) => StreamRun;
  coreSource?: (event: object, signal: AbortSignal) => ChunkSource | null;
  endpointSource?: (
    endpoint: object,
    payload: Record<string, unknown>,
    options: { signal: AbortSignal },
  ) => ChunkSource | null;
} = {};
