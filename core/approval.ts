/**
 * Approvals: a tool call a hook asked a person about, the answer, and the handler that answers
 * inline.
 *
 * @module
 */

/**
 * A tool call waiting for a person's answer, because a `tool.pre` handler returned
 * `{ decision: "ask" }`.
 *
 * @example
 * ```ts
 * import type { PendingApproval } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const pending: PendingApproval = {
 *   runId: "", callId: "c1", toolName: "bash", args: { command: "ls" }, requestedAt: Date.now(),
 * };
 * assert.equal(pending.toolName, "bash");
 * ```
 */
export interface PendingApproval {
  /** The agent-loop run that stopped for it; `""` for a direct `act` call without a run id. */
  readonly runId: string;
  /** The session, when the branch belongs to one. */
  readonly sessionId?: string;
  /** The branch the call was made on. */
  readonly branchId?: string;
  /** The tool call's id. */
  readonly callId: string;
  /** The tool's name. */
  readonly toolName: string;
  /** The arguments the tool would receive (after every rewrite), deep-frozen. */
  readonly args: Readonly<Record<string, unknown>>;
  /** Why the hook asked. */
  readonly reason?: string;
  /** When it was asked, in milliseconds since the epoch. */
  readonly requestedAt: number;
}

/**
 * A person's answer to a {@linkcode PendingApproval}.
 *
 * @example
 * ```ts
 * import type { ApprovalAnswer } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const yes: ApprovalAnswer = { approve: true, updatedArgs: { command: "ls -l" }, by: "ana" };
 * const no: ApprovalAnswer = { approve: false, reason: "not today" };
 * assert.equal(yes.approve && !no.approve, true);
 * ```
 */
export type ApprovalAnswer =
  | {
    /** Run the call. */
    readonly approve: true;
    /** Arguments to run it with instead (validated by the tool's schema). */
    readonly updatedArgs?: Record<string, unknown>;
    /** Who answered. */
    readonly by?: string;
  }
  | {
    /** Do not run the call. */
    readonly approve: false;
    /** Why (reaches the model). */
    readonly reason?: string;
    /** In the agent loop: end the run instead of going on. */
    readonly interrupt?: boolean;
    /** Who answered. */
    readonly by?: string;
  };

/**
 * Answers an approval inline. `true` approves, `false` rejects; an {@linkcode ApprovalAnswer}
 * says more. It gets the act path's signal, which aborts on the caller's abort or deadline.
 *
 * @example Approve read-only commands
 * ```ts
 * import type { ApprovalHandler } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const approve: ApprovalHandler = (pending) => pending.args.command === "ls";
 * const answer = await approve(
 *   { runId: "", callId: "c", toolName: "bash", args: { command: "ls" }, requestedAt: 0 },
 *   { signal: new AbortController().signal },
 * );
 * assert.equal(answer, true);
 * ```
 */
export type ApprovalHandler = (
  pending: PendingApproval,
  options: { signal: AbortSignal },
) => boolean | ApprovalAnswer | Promise<boolean | ApprovalAnswer>;
