/**
 * `EffectsCommitError`: a staged change set could not be applied or undone.
 *
 * @module
 */

/**
 * A change set could not be applied or undone; the workspace is unchanged. `why` says what
 * stopped it.
 *
 * @example
 * ```ts
 * import { EffectsCommitError } from "@hookscope/core/coding";
 * import assert from "node:assert/strict";
 *
 * const error = new EffectsCommitError("too_large", "The change replaces 3 GiB");
 * assert.equal(error.why, "too_large");
 * ```
 */
export class EffectsCommitError extends Error {
  /** What stopped it. */
  readonly why: "too_large" | "escape" | "changed" | "conflict" | "unknown_call" | "failed";
  /** Builds the error. */
  constructor(why: EffectsCommitError["why"], message: string) {
    super(message);
    this.name = "EffectsCommitError";
    this.why = why;
  }
}
