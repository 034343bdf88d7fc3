// Kept for the callers not moved to the async kit yet (session/branch.ts, session/_gate.ts,
// session/replay.ts, claude/answer_event.ts, tape/_tape.ts): `race` is `deadline` of
// `core/_async.ts`. New code imports `core/_async.ts`.

import { deadline, TIMED_OUT } from "./_async.ts";

export { TIMED_OUT };

/**
 * Resolves or rejects like `pending`, unless `ms` pass first (rejects with {@linkcode TIMED_OUT})
 * or `signal` aborts (rejects with its reason).
 *
 * @deprecated Use `deadline` (or `abortable`) of `core/_async.ts`.
 */
export function race<T>(
  pending: PromiseLike<T>,
  ms: number,
  signal: AbortSignal | undefined,
): Promise<T> {
  return deadline(pending, ms, signal);
}
