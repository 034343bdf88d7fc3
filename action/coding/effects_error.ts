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
  /**
   * An undo's `conflict`: the later committed calls that changed the same paths, newest first
   * (the first is the one to undo first), with the session each ran in when known.
   */
  readonly later?: readonly {
    readonly callId: string;
    readonly toolName: string;
    readonly sessionId?: string;
  }[];
  /** An undo's `conflict` or `changed`: the paths in question (at most 20). */
  readonly paths?: readonly string[];
  /** Builds the error; `detail` gives an undo refusal's `later` calls and `paths`. */
  constructor(
    why: EffectsCommitError["why"],
    message: string,
    detail?: Pick<EffectsCommitError, "later" | "paths">,
  ) {
    super(message);
    this.name = "EffectsCommitError";
    this.why = why;
    if (detail?.later !== undefined) this.later = detail.later;
    if (detail?.paths !== undefined) this.paths = detail.paths;
  }
}
