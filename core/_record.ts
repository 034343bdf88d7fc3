// The observer's synchronous record method (private protocol between the hooks and session
// scopes, which never import each other): a bus calls it instead of `emit(event)` when the sink
// has it.

/**
 * Key of a sink's `(event) => undefined | Promise<unknown>`: stores and delivers `event` like
 * `emit(event)`, returning `undefined` when nothing is left pending (no promise, no microtask),
 * else a promise that settles when the pending subscribers did. It never rejects: failures are
 * the sink's own to report.
 */
export const RECORD: unique symbol = Symbol("hookscope.record");
