/**
 * Applying a {@linkcode Policy} to a session: a policy may be `async` (it may await its setup
 * before registering hooks), so what it returns is awaited, within a deadline, before the session
 * answers anything. Shared by `hookscope hook`/`serve` (`answerInStore`) and `replayDecisions`.
 *
 * @module
 */

import { deadline } from "../core/_async.ts";
import { isThenable } from "../core/_util.ts";
import type { Policy } from "./policy.ts";
import type { Session } from "./session.ts";

/** A policy file's `async` policy (the `Policy` type itself is synchronous). */
export type AsyncPolicy = (session: Session) => PromiseLike<void | (() => void)>;

/** An `async` policy whose setup rejected or did not finish in time: its hooks are not all there. */
export class PolicySetupError extends Error {
  /** Makes the error. */
  constructor(reason: string, options?: { cause?: unknown }) {
    super(`Cannot apply the policy: its setup ${reason}`, options);
    this.name = "PolicySetupError";
  }
}

/**
 * Applies `policy` to `session` and returns what undoes it. When the policy returns a promise
 * (an `async` policy), it is awaited until `signal` aborts or `ms` pass, whichever is first; a
 * rejection or the deadline is a {@linkcode PolicySetupError} (the caller fails closed), and an
 * undo the promise resolves with after that runs when it arrives. A policy that throws at once
 * throws its own error.
 */
export async function applyPolicy(
  policy: Policy | AsyncPolicy,
  session: Session,
  ms: number,
  signal?: AbortSignal,
): Promise<(() => void) | undefined> {
  const returned = policy(session);
  if (!isThenable(returned)) return typeof returned === "function" ? returned : undefined;
  const setup = Promise.resolve(returned);
  try {
    const undo = await deadline(
      setup,
      ms,
      signal,
      () => new PolicySetupError(`did not finish within ${ms} ms`),
    );
    return typeof undo === "function" ? undo : undefined;
  } catch (error) {
    // A setup that finishes after the deadline is undone when it does.
    setup.then((undo) => void (typeof undo === "function" && undo()), () => {});
    if (error instanceof PolicySetupError) throw error;
    const reason = (error as Error)?.message ?? String(error);
    throw new PolicySetupError(
      signal?.aborted && error === signal.reason
        ? `did not finish: ${reason}`
        : `rejected: ${reason}`,
      { cause: error },
    );
  }
}
