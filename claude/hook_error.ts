/**
 * The error a Claude hook that failed to give an answer ends with: it crashed (an exit code other
 * than 0 and 2), timed out, printed too much, printed malformed JSON, or its server answered with
 * an error. At `PreToolUse` it denies the call unless the hook says `onFailure: "continue"`.
 *
 * @module
 */

/** Why a Claude hook failed. */
export type ClaudeHookFailure = "exit" | "timeout" | "spawn" | "output" | "http";

/**
 * A Claude hook failed to give an answer.
 *
 * @example
 * ```ts
 * import { ClaudeHookError } from "@hookscope/core/claude";
 * import assert from "node:assert/strict";
 *
 * const error = new ClaudeHookError("timeout", "./check.sh", "timed out after 60000 ms");
 * assert.equal(error.message, 'Claude hook "./check.sh" failed: timed out after 60000 ms');
 * assert.equal(error.why, "timeout");
 * ```
 */
export class ClaudeHookError extends Error {
  /** Why. */
  readonly why: ClaudeHookFailure;
  /** The hook's command or URL. */
  readonly hook: string;
  /** Makes the error. */
  constructor(why: ClaudeHookFailure, hook: string, detail: string) {
    super(`Claude hook ${JSON.stringify(hook)} failed: ${detail}`);
    this.name = "ClaudeHookError";
    this.why = why;
    this.hook = hook;
  }
}
