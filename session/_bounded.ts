// A deadline (and the caller's abort) on store calls of the agent loop and of resume: a store
// that never answers cannot hang a run.

import { deadline } from "../core/_async.ts";
import { StoreUnavailableError } from "../store/store_errors.ts";

/** How long a store call of a run may take, in milliseconds. */
export const RUN_STORE_TIMEOUT_MS = 30_000;

/**
 * Waits for `promise` at most `timeoutMs` (then rejects with `StoreUnavailableError`) and, when
 * `signal` is given, no longer than until it aborts (then rejects with its reason).
 */
export function bounded<T>(
  promise: Promise<T>,
  what: string,
  signal?: AbortSignal,
  timeoutMs: number = RUN_STORE_TIMEOUT_MS,
): Promise<T> {
  return deadline(
    promise,
    timeoutMs,
    signal,
    () =>
      new StoreUnavailableError(`Cannot ${what}: the store did not answer within ${timeoutMs} ms`),
  );
}
