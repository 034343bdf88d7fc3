// The observer's synchronous record methods (private protocol between the hooks and session
// scopes, which never import each other): a bus calls them instead of `emit(event)` when the
// sink has them.

import { isAbortSignal } from "./_abort.ts";

/**
 * Key of a sink's `(event) => undefined | Promise<unknown>`: stores and delivers `event` like
 * `emit(event)`, returning `undefined` when nothing is left pending (no promise, no microtask),
 * else a promise that settles when the pending subscribers did. It never rejects: failures are
 * the sink's own to report.
 */
export const RECORD: unique symbol = Symbol("hookscope.record");

/**
 * Key of a sink's `(point, payload) => undefined | Promise<unknown>`: records what
 * `RECORD(new HookSignal({ point, payload }))` would, with the same result convention. The sink
 * builds the envelope itself, so it may defer building it until someone reads it; it must copy
 * the payload before returning (the caller may change it afterwards).
 */
export const RECORD_HOOK: unique symbol = Symbol("hookscope.recordHook");

/**
 * The payload as a signal records it: a shallow copy without its `signal` (the `tool.*` payloads
 * carry the call's AbortSignal for the handlers; a record keeps data, not a live signal). The
 * payload itself when it has no `signal` and `frozen` is true (a frozen payload needs no copy).
 */
export function recordedPayload(
  payload: Record<string, unknown>,
  frozen: boolean,
): Record<string, unknown> {
  const signal = payload.signal;
  if (signal === undefined || !isAbortSignal(signal)) return frozen ? payload : { ...payload };
  // The rest of a destructuring, not `delete` on a copy: a deleted property turns the copy into
  // a slow dictionary object (every later read of the record pays for it).
  const { signal: _signal, ...rest } = payload;
  return rest;
}
