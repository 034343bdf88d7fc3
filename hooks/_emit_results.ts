// An internal key of `EmitOptions`: the caller of an emission whose results the bus ignores
// (`emit` of a point that does not fold) sees what each handler returned or threw. The Claude
// Code hook protocol reads `message.add` and `session.start` handlers this way (a prompt's
// deny, SessionStart context) without changing what those points mean elsewhere.
// Private: not exported from any entry.

/** The `EmitOptions` key of a {@linkcode ResultSink}. */
export const EMIT_RESULTS: unique symbol = Symbol("hookscope.emitResults");

/**
 * Called once per handler that ran, in chain order: with what it returned (`failed` false), or
 * with what it threw or its timeout error (`failed` true). Not called for shadow-mode handlers,
 * nor for the failures of a handler registered with `onFailure: "continue"` (its declared
 * failure policy: a failure does not count). The emission itself goes on as it would without
 * it (failures are reported or rethrown by their usual policy). Must not throw.
 */
export type ResultSink = (outcome: unknown, failed: boolean, hook: string | undefined) => void;

/** `EmitOptions` (and `AddMessageOptions`, passed through) with a {@linkcode ResultSink}. */
export interface WithResultSink {
  /** The sink. */
  readonly [EMIT_RESULTS]?: ResultSink;
}
