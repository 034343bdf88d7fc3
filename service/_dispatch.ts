// The registry's dispatch, shared by HookRegistry.call, HookEvent and IModel. Returns
// synchronously when the handler does, so hot paths await only thenables.

import { EventStatus } from "../core/mod.ts";
import { HOOK_EVENT_TYPES, HookEventType, toHookEventType } from "./hook_event_type.ts";
import type {
  AssociatedEventInfo,
  HookCallResult,
  HookParams,
  PhaseHandler,
  StreamHandler,
} from "./types.ts";
import { className, isCancellation, isThenable, NEVER_ABORTED, raceAbort } from "./_util.ts";

/** Options of a hook call (the public `HookCallOptions`). */
export interface DispatchOptions {
  hookType?: HookEventType;
  chunkType?: string;
  chunk?: unknown;
  shouldExit?: boolean;
  signal?: AbortSignal;
  params?: Record<string, unknown>;
}

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
  options: DispatchOptions,
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
  const signal = options.signal ?? NEVER_ABORTED;
  // Fast path (per-chunk calls usually carry no params): no spread of an empty object.
  const makeParams = (): HookParams => extra ? { ...extra, exit, signal } : { exit, signal };

  if (options.hookType !== undefined && options.hookType !== null) {
    const type = toHookEventType(options.hookType);
    if (type === undefined) {
      throw new TypeError(
        `Cannot call hook: unknown hook type ${describe(options.hookType)}; valid types: ${
          HOOK_EVENT_TYPES.map((t) => `"${t}"`).join(", ")
        }`,
      );
    }
    const info = infoFor(type, eventLike);
    const failStatus = type === HookEventType.PostInvocation
      ? EventStatus.ABORTED
      : EventStatus.CANCELLED;
    const handler = hooks.get(type);
    if (!handler) {
      const error = new TypeError(`No handler registered for hook type "${type}"`);
      return { result: error, error, shouldExit: exit, status: failStatus, info };
    }
    const params = makeParams();
    return settle(() => handler(eventLike, params), signal, exit, failStatus, true, info);
  }
  if (options.chunkType !== undefined && options.chunkType !== null) {
    const chunkType = options.chunkType;
    const handler = stream.get(chunkType);
    if (!handler) {
      const error = new TypeError(`No stream handler registered for "${String(chunkType)}"`);
      return { result: error, error, shouldExit: exit, status: EventStatus.ABORTED };
    }
    const params = makeParams();
    return settle(
      () => handler(null, chunkType, options.chunk, params),
      signal,
      exit,
      EventStatus.ABORTED,
      false,
      undefined,
    );
  }
  throw new TypeError("Cannot call hook: either hookType or chunkType must be provided");
}

function settle(
  run: () => unknown,
  signal: AbortSignal,
  exit: boolean,
  failStatus: EventStatus,
  phase: boolean,
  info: AssociatedEventInfo | undefined,
): HookCallResult | Promise<HookCallResult> {
  const ok = (value: unknown): HookCallResult =>
    phase
      ? { result: value, error: null, shouldExit: false, status: EventStatus.COMPLETED, info }
      : { result: value, error: null, shouldExit: false, status: null };
  const fail = (error: unknown): HookCallResult => {
    const out: HookCallResult = isCancellation(error, signal)
      ? { result: [undefined, error], error, shouldExit: true, status: EventStatus.CANCELLED }
      : { result: error, error, shouldExit: exit, status: failStatus };
    if (phase) out.info = info;
    return out;
  };
  if (signal.aborted) return fail(signal.reason);
  let value: unknown;
  try {
    value = run();
  } catch (error) {
    return fail(error);
  }
  if (!isThenable(value)) return ok(value);
  return raceAbort(value, signal).then(ok, fail);
}

function infoFor(type: HookEventType, eventLike: unknown): AssociatedEventInfo {
  const info: AssociatedEventInfo = {};
  const name = className(eventLike);
  if (name !== undefined) info.lionClass = name;
  if (
    type !== HookEventType.PreEventCreate && typeof eventLike === "object" && eventLike !== null
  ) {
    const { id, createdAt } = eventLike as { id?: unknown; createdAt?: unknown };
    if (typeof id === "string") info.eventId = id;
    if (typeof createdAt === "number") info.eventCreatedAt = createdAt;
  }
  return info;
}

function describe(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (value === null) return "null";
  if (Array.isArray(value)) return "(array)";
  return `(${typeof value})`;
}
