/**
 * The handler and result shapes of the service hook registry.
 *
 * @module
 */

import type { EventStatus } from "../core/mod.ts";
import type { HookEventType } from "./hook_event_type.ts";
import type { StreamChunkType } from "./hook_registry.ts";

/**
 * What a phase handler receives as its second argument (`handler(event, params)`); a stream
 * handler's {@linkcode StreamHandlerContext} has these fields too.
 */
export interface HookParams extends Record<string, unknown> {
  /** Whether a failure of this handler should stop the operation. */
  exit: boolean;
  /** Aborted when the caller cancels or the hook's deadline passes. */
  signal: AbortSignal;
}

/**
 * A phase handler: `handler(eventOrClass, { ...params, exit, signal })`. The pre-create phase
 * receives the event class; the invocation phases receive the event.
 */
export type PhaseHandler = {
  // Method syntax keeps parameters bivariant, so handlers may annotate the event they expect.
  handler(eventOrClass: unknown, params: HookParams): unknown;
}["handler"];

/**
 * What a stream handler receives besides the chunk: the chunk's type, the exit policy, the signal,
 * and any extra params the caller passed (`HookCallOptions.params`).
 */
export interface StreamHandlerContext<T extends string = StreamChunkType> extends HookParams {
  /** The chunk's type: the key the handler is registered under. */
  readonly chunkType: T;
  /**
   * Aborted when the caller aborts or the consumer cancels the stream. A handler still pending
   * at its deadline fails the call with a `TimeoutError` (see `HookCallOptions.timeoutMs`).
   */
  signal: AbortSignal;
}

/**
 * A per-chunk stream handler: `handler(chunk, ctx)`, with the chunk type, `exit` and `signal` in
 * `ctx` (see {@linkcode StreamHandlerContext}). A non-`null`/`undefined`, non-Error return
 * replaces the chunk.
 */
export type StreamHandler<C = unknown> = {
  // Method syntax keeps parameters bivariant, so handlers may annotate the chunk they expect.
  handler(chunk: C, ctx: StreamHandlerContext): unknown;
}["handler"];

/** The event a hook ran for (always stamped, whatever the outcome). */
export interface AssociatedEventInfo {
  /** The event's class name. */
  eventClass?: string;
  /** The event's id (absent for the pre-create phase until the event exists). */
  eventId?: string;
  /** The event's creation time, ms since the epoch. */
  eventCreatedAt?: number;
}

/**
 * What `HookRegistry.call` reports:
 *
 * | path | result | shouldExit | status |
 * |---|---|---|---|
 * | success | the handler's return value | `false` | `completed` (`null` for stream handlers) |
 * | cancellation (abort) | `undefined` (the reason is in `error`) | `true` | `cancelled` |
 * | pre phase throws | the error | configured exit | `cancelled` |
 * | post phase or stream handler throws | the error | configured exit | `aborted` |
 */
export interface HookCallResult {
  /** The handler's return value, the thrown error, or `undefined` on cancellation (see `error`). */
  result: unknown;
  /** The thrown error or abort reason; `null` on success. */
  error: unknown;
  /** Whether the caller should stop the operation. */
  shouldExit: boolean;
  /** The phase status; `null` for a successful stream handler. */
  status: EventStatus | null;
  /** The associated event, for phase calls only. */
  info?: AssociatedEventInfo;
}

/** Options of `HookRegistry.call`. */
export interface HookCallOptions {
  /** The phase to run; wins over `chunkType` when both are given. */
  hookType?: HookEventType;
  /** The stream handler to run (an unknown type from an untyped caller reports "no handler"). */
  chunkType?: StreamChunkType;
  /** The chunk handed to a stream handler. */
  chunk?: unknown;
  /** The configured exit: reported as `shouldExit` when the handler throws. */
  shouldExit?: boolean;
  /** Aborting it ends the call CANCELLED (the handler also receives it as `signal`). */
  signal?: AbortSignal;
  /**
   * Extra fields of the handler's params (phases) or `ctx` (stream handlers); a legacy
   * `exit: true` here also sets the exit.
   */
  params?: Record<string, unknown>;
  /**
   * The deadline of a stream handler that returns a promise, in ms (default 30 000, the hook
   * deadline): past it the call fails with a `TimeoutError` (an exit when `shouldExit`).
   */
  timeoutMs?: number;
}
