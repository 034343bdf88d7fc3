// The streamed run of a HookedEvent as a pull source (private): what `Event.stream()` and
// `HookedEvent`'s stream generator do together, without their two promise layers per chunk.
// `IModel.stream` reads the core stream's reader directly and processes each chunk in its own
// pull; this object keeps the event's lifecycle (status, duration, pre hook before the first
// chunk, post hook after a normal end, caller abort, cancel).

import { EventStatus, type Execution, isAbortError } from "../core/mod.ts";
import { anySignal } from "../core/_abort.ts";
import { durationClock } from "../core/_util.ts";

/** What a run needs from its event. */
export interface StreamRunParts {
  /** Runs the pre hook, then opens the core stream. */
  open(signal: AbortSignal): Promise<ReadableStreamDefaultReader<unknown>>;
  /** Runs the post hook after the core stream ended normally. */
  close(signal: AbortSignal): Promise<void>;
}

const DONE: ReadableStreamReadResult<unknown> = Object.freeze({ done: true, value: undefined });

/**
 * One streamed run. `first()` starts it and reads the first chunk; later chunks come from
 * `reader.read()` directly. The caller reports how it ended: `complete()` after a done read,
 * `fail(error)` when a read threw, `abandon(error)` when processing a chunk failed, `cancel()`.
 */
export class StreamRun {
  /** The core stream's reader once open. */
  reader: ReadableStreamDefaultReader<unknown> | null = null;
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
  async first(): Promise<ReadableStreamReadResult<unknown>> {
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
        this.reader?.cancel().catch(() => {});
      };
      caller.addEventListener("abort", this.#onAbort, { once: true });
    }
    const reader = await this.#parts.open(this.#signal);
    this.reader = reader;
    if (this.settled) {
      await reader.cancel().catch(() => {});
      return DONE;
    }
    return await reader.read();
  }

  /** After a done read: the post hook, then COMPLETED. A post hook that rejects fails the run. */
  async complete(): Promise<void> {
    if (this.settled) return;
    this.reader?.releaseLock();
    this.reader = null;
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
    this.#finish(isAbortError(error, this.#signal) ? EventStatus.CANCELLED : EventStatus.FAILED, error);
    this.reader?.cancel().catch(() => {});
  }

  /** Processing a chunk failed: the request is closed and the event ends FAILED with `error`. */
  async abandon(error: unknown): Promise<void> {
    if (this.settled) return;
    this.#internal.abort(error);
    await this.reader?.cancel().catch(() => {});
    this.#finish(EventStatus.FAILED, error);
  }

  /** The consumer cancelled: CANCELLED, the request is aborted. */
  async cancel(reason: unknown): Promise<void> {
    if (this.settled) return;
    this.#finish(EventStatus.CANCELLED, reason ?? null);
    this.#internal.abort(reason);
    await this.reader?.cancel().catch(() => {});
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

/** Key of `HookedEvent`'s method that makes its {@linkcode StreamRun}. */
export const STREAM_RUN: unique symbol = Symbol("hookscope.streamRun");
