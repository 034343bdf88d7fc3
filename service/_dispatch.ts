// The registry's dispatch, shared by HookRegistry.call, HookEvent and IModel. Returns
// synchronously when the handler does, so hot paths await only thenables.

import { EventStatus, HookPhaseError } from "../core/mod.ts";
import { HookEventType } from "./hook_event_type.ts";
import { isHookEventType, unknownHookType } from "./_phase_keys.ts";
import type {
  AssociatedEventInfo,
  HookCallOptions,
  HookCallResult,
  PhaseHandler,
  StreamHandler,
  StreamHandlerContext,
} from "./types.ts";
import { className, describe, isCancellation, isThenable, neverAborted } from "./_util.ts";
import { abortable } from "../core/_async.ts";
import { createDeadline } from "./_deadline.ts";
import type { StreamChunkType } from "./hook_registry.ts";
import { anySignal } from "../core/_abort.ts";

/** The deadline of a pending stream handler: the hook deadline (`HookEvent`'s default). */
const CHUNK_HANDLER_TIMEOUT_MS = 30_000;

export interface Handlers {
  hooks: Map<HookEventType, PhaseHandler>;
  stream: Map<string, StreamHandler>;
}

export const INTERNALS: WeakMap<object, Handlers> = new WeakMap();

/**
 * The registry's dispatch, returning synchronously when the handler does (the hot path awaits
 * only thenables). Not part of the public surface; `HookRegistry.call` wraps it.
 */
export function dispatchHook(
  registry: object,
  eventLike: unknown,
  options: HookCallOptions,
): HookCallResult | Promise<HookCallResult> {
  if (options === null || typeof options !== "object") {
    throw new TypeError(`Cannot call hook: options must be an object; got ${describe(options)}`);
  }
  const internals = INTERNALS.get(registry);
  if (!internals) {
    throw new TypeError(
      `Cannot call hook: registry must be a HookRegistry; got ${describe(registry)}`,
    );
  }
  const { hooks, stream } = internals;
  const extra = options.params;
  if (extra !== undefined && (typeof extra !== "object" || extra === null)) {
    throw new TypeError(`Cannot call hook: params must be an object; got ${describe(extra)}`);
  }
  const exit = options.shouldExit === true || extra?.exit === true;
  const signal = options.signal ?? neverAborted();

  let phase: PhaseHandler | undefined;
  let chunkHandler: StreamHandler | undefined;
  let chunkType = "" as StreamChunkType;
  let failStatus: EventStatus = EventStatus.ABORTED;
  // Phase calls carry associated info; stream calls do not (and succeed with status null).
  let info: AssociatedEventInfo | undefined;
  if (options.hookType !== undefined && options.hookType !== null) {
    const type = options.hookType;
    if (!isHookEventType(type)) throw unknownHookType("Cannot call hook", type);
    info = infoFor(type, eventLike);
    if (type !== HookEventType.PostInvocation) failStatus = EventStatus.CANCELLED;
    phase = hooks.get(type);
    if (!phase) {
      const error = new TypeError(`No handler registered for hook type "${type}"`);
      return { result: error, error, shouldExit: exit, status: failStatus, info };
    }
  } else if (options.chunkType !== undefined && options.chunkType !== null) {
    chunkType = options.chunkType;
    chunkHandler = stream.get(chunkType);
    if (!chunkHandler) {
      const error = new TypeError(`No stream handler registered for "${String(chunkType)}"`);
      return { result: error, error, shouldExit: exit, status: failStatus };
    }
  } else {
    throw new TypeError("Cannot call hook: either hookType or chunkType must be provided");
  }
  if (signal.aborted) return failed(signal.reason, signal, exit, failStatus, info);
  let value: unknown;
  try {
    if (phase) {
      value = phase(eventLike, extra ? { ...extra, exit, signal } : { exit, signal });
    } else {
      // Per-chunk calls usually carry no extra params: no spread of an empty object.
      const ctx: StreamHandlerContext = extra
        ? { ...extra, chunkType, exit, signal }
        : { chunkType, exit, signal };
      value = chunkHandler!(options.chunk, ctx);
    }
  } catch (error) {
    return failed(error, signal, exit, failStatus, info);
  }
  if (!isThenable(value)) return completed(value, info);
  // A stream handler has no HookEvent around it: its deadline is armed here, and only for a
  // handler that is actually pending (a sync handler costs no timer).
  const bound = chunkHandler ? boundedSignal(signal, options.timeoutMs) : undefined;
  return abortable(value, bound ? bound.signal : signal).then(
    (result) => {
      bound?.clear();
      return completed(result, info);
    },
    (error) => {
      bound?.clear();
      return failed(error, signal, exit, failStatus, info);
    },
  );
}

/**
 * A phase call of `HookEvent`, which has checked its inputs at construction: the handler
 * registered now for `type` with `{ ...extra, exit, signal }`, reported like `dispatchHook`
 * reports it but without the associated info (the event stamps its own). Falls back to
 * `dispatchHook` when no handler is registered.
 */
export function callPhase(
  registry: object,
  type: HookEventType,
  eventLike: unknown,
  shouldExit: boolean,
  extra: Record<string, unknown>,
  signal: AbortSignal,
): HookCallResult | Promise<HookCallResult> {
  const phase = INTERNALS.get(registry)?.hooks.get(type);
  if (phase === undefined || signal.aborted) {
    return dispatchHook(registry, eventLike, { hookType: type, shouldExit, signal, params: extra });
  }
  const exit = shouldExit || extra.exit === true;
  const failStatus = type === HookEventType.PostInvocation
    ? EventStatus.ABORTED
    : EventStatus.CANCELLED;
  let value: unknown;
  try {
    value = phase(eventLike, { ...extra, exit, signal });
  } catch (error) {
    return failed(error, signal, exit, failStatus, undefined);
  }
  if (!isThenable(value)) {
    return { result: value, error: null, shouldExit: false, status: EventStatus.COMPLETED };
  }
  return abortable(value, signal).then(
    (result) => ({ result, error: null, shouldExit: false, status: EventStatus.COMPLETED }),
    (error) => failed(error, signal, exit, failStatus, undefined),
  );
}

/**
 * `IModel`'s per-chunk call of a registered stream handler: what `dispatchHook` with `chunkType`
 * does, answered the way the stream needs it, without the options and result objects per chunk.
 * Returns the replacement, or `null` to keep the chunk (also for a returned `Error`, or a failure
 * with `exit` off); throws (or rejects with) the failure when `exit` is on or the signal was
 * aborted. Synchronous when the handler is.
 */
export function callChunkHandler(
  handler: StreamHandler,
  chunk: unknown,
  chunkType: StreamChunkType,
  exit: boolean,
  signal: AbortSignal,
): unknown {
  if (signal.aborted) return chunkFailure(signal.reason, signal, exit);
  let value: unknown;
  try {
    value = handler(chunk, { chunkType, exit, signal });
  } catch (error) {
    return chunkFailure(error, signal, exit);
  }
  if (!isThenable(value)) return replacement(value);
  const bound = boundedSignal(signal, undefined);
  return abortable(value, bound.signal).then(
    (result) => {
      bound.clear();
      return replacement(result);
    },
    (error) => {
      bound.clear();
      return chunkFailure(error, signal, exit);
    },
  );
}

/** A handler's return as a replacement: `null` keeps the chunk (a returned Error keeps it too). */
function replacement(result: unknown): unknown {
  return result === undefined || result === null || result instanceof Error ? null : result;
}

/**
 * A failed chunk handler: a cancellation always ends the stream, any other failure only with
 * `exit` (otherwise the chunk is kept). Whatever was thrown is the cause.
 */
function chunkFailure(error: unknown, signal: AbortSignal, exit: boolean): null {
  if (!exit && !isCancellation(error, signal)) return null;
  throw error ?? new HookPhaseError("Streaming hook requested exit without a cause");
}

/** A deadline for a pending stream handler that also follows the caller's signal. */
function boundedSignal(
  signal: AbortSignal,
  timeoutMs: number | undefined,
): { signal: AbortSignal; clear(): void } {
  const ms = typeof timeoutMs === "number" && timeoutMs > 0 ? timeoutMs : CHUNK_HANDLER_TIMEOUT_MS;
  const deadline = createDeadline(ms);
  let joined = deadline.signal;
  if (deadline.follow) deadline.follow(signal);
  else if (signal !== neverAborted()) joined = anySignal([signal, deadline.signal]);
  deadline.arm();
  return { signal: joined, clear: () => deadline.clear() };
}

// Top-level helpers, so a synchronous handler costs no closure per call (the per-chunk hot path).

/** A successful call: COMPLETED with info for a phase, status `null` for a stream handler. */
function completed(result: unknown, info: AssociatedEventInfo | undefined): HookCallResult {
  return info
    ? { result, error: null, shouldExit: false, status: EventStatus.COMPLETED, info }
    : { result, error: null, shouldExit: false, status: null };
}

/** A failed call: a cancellation (the signal's reason or an AbortError) or a handler failure. */
function failed(
  error: unknown,
  signal: AbortSignal,
  exit: boolean,
  failStatus: EventStatus,
  info: AssociatedEventInfo | undefined,
): HookCallResult {
  const out: HookCallResult = isCancellation(error, signal)
    ? { result: undefined, error, shouldExit: true, status: EventStatus.CANCELLED }
    : { result: error, error, shouldExit: exit, status: failStatus };
  if (info) out.info = info;
  return out;
}

function infoFor(type: HookEventType, eventLike: unknown): AssociatedEventInfo {
  const info: AssociatedEventInfo = {};
  const name = className(eventLike);
  if (name !== undefined) info.eventClass = name;
  if (
    type !== HookEventType.PreEventCreate && typeof eventLike === "object" && eventLike !== null
  ) {
    const { id, createdAt } = eventLike as { id?: unknown; createdAt?: unknown };
    if (typeof id === "string") info.eventId = id;
    if (typeof createdAt === "number") info.eventCreatedAt = createdAt;
  }
  return info;
}
