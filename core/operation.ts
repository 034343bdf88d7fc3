/**
 * Events: units of work with a status, a duration, a response and an error, run once through
 * `invoke()` or `stream()`.
 *
 * @module
 */

import { anySignal, neverAborted } from "./_abort.ts";
import { durationClock } from "./_util.ts";
import { Entity, type EntityInit } from "./entity.ts";

/**
 * The lifecycle states of an {@linkcode Operation}.
 *
 * @example
 * ```ts
 * import { EventStatus } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * assert.equal(EventStatus.COMPLETED, "completed");
 * ```
 */
export const EventStatus = {
  PENDING: "pending",
  PROCESSING: "processing",
  COMPLETED: "completed",
  FAILED: "failed",
  SKIPPED: "skipped",
  CANCELLED: "cancelled",
  ABORTED: "aborted",
} as const;

/** One of the {@linkcode EventStatus} values. */
export type EventStatus = typeof EventStatus[keyof typeof EventStatus];

const STATUS_VALUES: ReadonlySet<string> = new Set(Object.values(EventStatus));

/**
 * Whether a value is one of the {@linkcode EventStatus} strings.
 *
 * @example
 * ```ts
 * import { isEventStatus } from "@hookscope/core/action";
 * import assert from "node:assert/strict";
 *
 * assert.equal(isEventStatus("failed"), true);
 * assert.equal(isEventStatus("FAILED"), false);
 * ```
 */
export function isEventStatus(value: unknown): value is EventStatus {
  return typeof value === "string" && STATUS_VALUES.has(value);
}

/** The mutable execution state every event carries. */
export interface Execution {
  /** Where the event is in its lifecycle. */
  status: EventStatus;
  /** How long the last run took, in milliseconds; `null` before any run. */
  durationMs: number | null;
  /** What the run produced; `null` on failure. */
  response: unknown;
  /** What went wrong, or `null`. */
  error: unknown;
}

/** Options for {@linkcode Operation.invoke} and {@linkcode Operation.stream}. */
export interface EventRunOptions {
  /** Aborting it cancels the run: the event ends CANCELLED and the reason is rethrown. */
  signal?: AbortSignal;
}

/**
 * Whether `error` is the result of `signal` being aborted (the caller cancelled).
 *
 * @example
 * ```ts
 * import { isAbortError } from "@hookscope/core/action";
 * import assert from "node:assert/strict";
 *
 * const controller = new AbortController();
 * controller.abort();
 * assert.equal(isAbortError(controller.signal.reason, controller.signal), true);
 * ```
 */
export function isAbortError(error: unknown, signal?: AbortSignal): boolean {
  if (signal?.aborted && error === signal.reason) return true;
  return error instanceof Error && error.name === "AbortError" && (signal?.aborted ?? true);
}

/**
 * The base of every unit of work. Subclasses implement `_invoke` and optionally `_stream`.
 *
 * `invoke()` runs only from PENDING (later calls return at once); an ordinary failure ends FAILED
 * and is recorded, not thrown; an abort through the caller's signal ends CANCELLED and rethrows.
 * `stream()` delivers chunks with backpressure; errors reach the consumer (the event ends
 * FAILED), and cancelling the stream or aborting the signal ends it CANCELLED.
 *
 * @example A tiny event
 * ```ts
 * import { EventStatus } from "@hookscope/core";
 * import { Operation } from "@hookscope/core/action";
 * import assert from "node:assert/strict";
 *
 * class Add extends Operation {
 *   protected _invoke(): Promise<unknown> { return Promise.resolve(1 + 2); }
 * }
 * const event = new Add();
 * await event.invoke();
 * assert.equal(event.status, EventStatus.COMPLETED);
 * assert.equal(event.response, 3);
 * ```
 */
export abstract class Operation extends Entity {
  /** Status, duration, response and error of the last run. */
  readonly execution: Execution = {
    status: EventStatus.PENDING,
    durationMs: null,
    response: null,
    error: null,
  };

  /** Makes an event in the PENDING state. */
  constructor(init?: EntityInit) {
    super(init);
  }

  /** The current status. Setting an unknown string throws a `TypeError`. */
  get status(): EventStatus {
    return this.execution.status;
  }
  set status(value: EventStatus) {
    if (!isEventStatus(value)) {
      throw new TypeError(
        `Cannot set status: unknown status ${
          typeof value === "string" ? JSON.stringify(value) : `(${typeof value})`
        }; valid statuses: ${[...STATUS_VALUES].map((s) => `"${s}"`).join(", ")}`,
      );
    }
    this.execution.status = value;
  }

  /** The response of the last run (`execution.response`). */
  get response(): unknown {
    return this.execution.response;
  }

  /** Runs the event once. See the class documentation for the status rules. */
  async invoke(options?: EventRunOptions): Promise<void> {
    if (this.execution.status !== EventStatus.PENDING) return;
    const signal = options?.signal ?? neverAborted();
    const execution = this.execution;
    execution.status = EventStatus.PROCESSING;
    const started = durationClock();
    try {
      signal.throwIfAborted();
      const response = await this._invoke(signal);
      execution.response = response;
      execution.error = null;
      execution.status = EventStatus.COMPLETED;
    } catch (error) {
      execution.response = null;
      execution.error = error;
      if (isAbortError(error, signal)) {
        execution.status = EventStatus.CANCELLED;
        throw error;
      }
      execution.status = EventStatus.FAILED;
    } finally {
      execution.durationMs = durationClock() - started;
    }
  }

  /**
   * Runs the event as a stream of chunks. From any state but PENDING the stream is empty.
   * Errors reach the consumer.
   */
  stream(options?: EventRunOptions): ReadableStream<unknown> {
    return streamEvent(this, this._stream.bind(this), options?.signal);
  }

  /** The work itself. Throwing fails the event; the signal tells of cancellation. */
  protected abstract _invoke(signal: AbortSignal): Promise<unknown>;

  /** The streaming work; by default one chunk, the result of `_invoke`. */
  protected _stream(signal: AbortSignal): ReadableStream<unknown> | AsyncIterable<unknown> {
    const invoke = () => this._invoke(signal);
    return (async function* () {
      yield await invoke();
    })();
  }
}

type ChunkSource = {
  next(): Promise<IteratorResult<unknown>>;
  cancel(reason: unknown): Promise<void>;
};

function toSource(source: ReadableStream<unknown> | AsyncIterable<unknown>): ChunkSource {
  if (source instanceof ReadableStream) {
    const reader = source.getReader();
    return {
      next: () => reader.read() as Promise<IteratorResult<unknown>>,
      cancel: (reason) => reader.cancel(reason).catch(() => {}),
    };
  }
  const iterator = source[Symbol.asyncIterator]();
  return {
    next: () => iterator.next(),
    cancel: async (reason) => {
      try {
        await iterator.return?.(reason);
      } catch {
        // the iterator's own cleanup failure is not the consumer's problem
      }
    },
  };
}

function streamEvent(
  event: Operation,
  open: (signal: AbortSignal) => ReadableStream<unknown> | AsyncIterable<unknown>,
  callerSignal: AbortSignal | undefined,
): ReadableStream<unknown> {
  const execution = event.execution;
  const internal = new AbortController();
  const signal = callerSignal ? anySignal([callerSignal, internal.signal]) : internal.signal;
  let source: ChunkSource | null = null;
  let started = 0;
  let settled = false;
  let onCallerAbort: (() => void) | null = null;

  const finish = (status: EventStatus, error: unknown) => {
    if (settled) return;
    settled = true;
    execution.status = status;
    execution.error = error;
    execution.durationMs = durationClock() - started;
    if (onCallerAbort) callerSignal?.removeEventListener("abort", onCallerAbort);
  };

  return new ReadableStream<unknown>({
    start(controller) {
      if (execution.status !== EventStatus.PENDING) {
        settled = true;
        controller.close();
        return;
      }
      execution.status = EventStatus.PROCESSING;
      started = durationClock();
      if (callerSignal) {
        onCallerAbort = () => {
          if (settled) return;
          const reason = callerSignal.reason;
          finish(EventStatus.CANCELLED, reason);
          internal.abort(reason);
          source?.cancel(reason);
          controller.error(reason);
        };
        if (callerSignal.aborted) {
          onCallerAbort();
          return;
        }
        callerSignal.addEventListener("abort", onCallerAbort, { once: true });
      }
    },
    async pull(controller) {
      if (settled) return;
      try {
        source ??= toSource(open(signal));
        const next = await source.next();
        if (settled) return;
        if (next.done) {
          finish(EventStatus.COMPLETED, null);
          controller.close();
        } else {
          controller.enqueue(next.value);
        }
      } catch (error) {
        if (settled) return;
        execution.response = null;
        finish(isAbortError(error, signal) ? EventStatus.CANCELLED : EventStatus.FAILED, error);
        controller.error(error);
      }
    },
    async cancel(reason) {
      if (settled) return;
      finish(EventStatus.CANCELLED, reason ?? null);
      internal.abort(reason);
      await source?.cancel(reason);
    },
  }, { highWaterMark: 0 });
}
