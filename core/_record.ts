// The observer's synchronous record methods (private protocol between the hooks and session
// scopes, which never import each other): a bus calls them instead of `emit(event)` when the
// sink has them.

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
