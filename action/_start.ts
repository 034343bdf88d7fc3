/**
 * A private init key: `ActionManager.invoke` hands `FunctionCalling` the clock reading it took,
 * which becomes both `createdAt` and the start of the run (one clock read fewer per call; the
 * two happen in the same synchronous step).
 *
 * @module
 */

/** Key of the start time (milliseconds, `Date.now()`) on a `FunctionCallingInit`. */
export const START_AT: unique symbol = Symbol("hookscope.startAt");

/** Key of `FunctionCalling`'s run method that resolves to the call itself. */
export const RUN_CALL: unique symbol = Symbol("hookscope.runCall");

/** Key of the effects channel (`InvokeOptions.effects`) on a `FunctionCallingInit`. */
export const EFFECTS: unique symbol = Symbol("hookscope.effects");
