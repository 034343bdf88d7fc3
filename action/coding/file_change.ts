/**
 * The effects vocabulary of the coding toolkit: {@linkcode FileChange} (one entry of a change
 * set read from a staged run's copy-on-write layer), {@linkcode ToolEffectsDecision} (what a
 * `tool.effects` hook answers), {@linkcode ToolEffectsPayload} (what it is given) and
 * {@linkcode ToolEffectsChannel} (how a tool's staged run reaches a session's decisions,
 * approvals and audit trail).
 *
 * @module
 */

/** What happened to one path in a change set. */
export type FileChangeKind = "created" | "modified" | "deleted" | "mode" | "symlink";

/**
 * One entry of a change set: a workspace-relative, `"/"`-separated path and what the program
 * did to it. A path whose type changed (a file replaced by a directory) appears twice:
 * `deleted`, then `created`.
 *
 * @example
 * ```ts
 * import type { FileChange } from "@hookscope/core/coding";
 * import assert from "node:assert/strict";
 *
 * const change: FileChange = { path: "src/a.ts", kind: "modified", bytesBefore: 10, bytesAfter: 12 };
 * assert.equal(change.kind, "modified");
 * ```
 */
export interface FileChange {
  /** Workspace-relative, `"/"`-separated (never starts with `/`, never holds `..`). */
  readonly path: string;
  /** What happened to it. */
  readonly kind: FileChangeKind;
  /** The size before (files: bytes; symlinks: the target's length); absent when it was new. */
  readonly bytesBefore?: number;
  /** The size after; absent when it was deleted. */
  readonly bytesAfter?: number;
  /** What the entry is (after the change; before it for `deleted`). */
  readonly type?: "file" | "directory" | "symlink";
  /** A symlink's target (for `symlink` entries). */
  readonly target?: string;
}

/** What a `tool.effects` hook answers; `undefined` is no opinion. */
export type ToolEffectsDecision =
  | undefined
  | { decision: "allow"; reason?: string }
  | { decision: "ask"; reason?: string }
  | { decision: "deny"; reason: string };

/** What a `tool.effects` hook is given. */
export interface ToolEffectsPayload {
  /** The tool (`"bash"`). */
  readonly toolName: string;
  /** The call id. */
  readonly callId: string;
  /** The arguments the tool ran with. */
  readonly args: Readonly<Record<string, unknown>>;
  /** The change set, in path order. */
  readonly changes: readonly FileChange[];
  /** The branch, when the call came through one. */
  readonly branchId?: string;
  /** Where the tool came from. */
  readonly source?: { readonly kind: string };
  /** The command judge's reading of the command (advice only when effects are on). */
  readonly advice?: string;
}

/** A `tool.effects` hook on an `AgentSpec` or a toolkit: decides on a change set. */
export type ToolEffectsHook = (
  payload: ToolEffectsPayload & { readonly signal: AbortSignal },
) => ToolEffectsDecision | Promise<ToolEffectsDecision>;

/** The folded verdict of the `tool.effects` hooks. */
export interface EffectsVerdict {
  /** `none`: no hook had an opinion (the change set commits, as a call runs without `tool.pre` opinions). */
  readonly decision: "allow" | "ask" | "deny" | "none";
  /** The reason of the deciding hook (a deny's, else the first ask's). */
  readonly reason?: string;
  /** The name of the deciding hook (a deny's, else the first ask's), when known. */
  readonly hook?: string;
}

/** What a person is asked about a change set (see {@linkcode ToolEffectsChannel.approve}). */
export interface ToolEffectsAsk {
  /** The change set and the call it belongs to. */
  readonly payload: ToolEffectsPayload;
  /** Why the hooks ask. */
  readonly reason?: string;
  /** The hook that asked. */
  readonly hook?: string;
  /** The hash of exactly what would be committed (an answer is bound to it). */
  readonly hash: string;
  /** Until when the staged layer is kept for a later answer (ms since the epoch). */
  readonly expiresAt?: number;
}

/** A person's answer about a change set. */
export interface EffectsAnswer {
  /** `true` commits the change set. */
  readonly approve: boolean;
  /** Why (a rejection). */
  readonly reason?: string;
  /** Who answered. */
  readonly by?: string;
}

/** What became of a change set (see {@linkcode ToolEffectsChannel.settled}). */
export interface EffectsOutcome {
  /** The tool. */
  readonly toolName: string;
  /** The call. */
  readonly callId: string;
  /** Whether it was committed into the workspace. */
  readonly applied: boolean;
  /** Why it was not (a refusal, a failed commit). */
  readonly reason?: string;
  /** The checkpoint that undoes it (committed change sets). */
  readonly checkpoint?: string;
  /** The real workspace root. */
  readonly workspace?: string;
  /** The change set. */
  readonly changes: readonly FileChange[];
}

/**
 * How a tool's staged run reaches the decisions of the session it runs in. `Branch.act` and the
 * agent loop give one to every tool as `ToolContext.effects`: `decide` runs the tool's own
 * `tool.effects` hooks and then the session's handlers and records the verdict (an
 * `EffectsDecided` signal); `approve` asks a person through the call's approval path (the
 * `approve` option of `act`/`operate`, else the call stops as a pending approval that
 * `Session.resume` answers); `settled` records the outcome (`EffectsCommitted` with the
 * checkpoint, or `EffectsDiscarded`). Without it (a tool invoked outside a session) the coding
 * toolkit decides with its specs' hooks alone.
 *
 * @example A channel that allows everything (what a test or an embedding might pass)
 * ```ts
 * import type { ToolEffectsChannel } from "@hookscope/core/coding";
 * import assert from "node:assert/strict";
 *
 * const channel: ToolEffectsChannel = {
 *   decide: () => Promise.resolve({ decision: "allow" }),
 *   approve: () => Promise.resolve({ approve: false, reason: "nobody asked" }),
 *   settled: () => Promise.resolve(),
 * };
 * assert.equal((await channel.decide({ toolName: "bash", callId: "c", args: {}, changes: [] }, [])).decision, "allow");
 * ```
 */
export interface ToolEffectsChannel {
  /**
   * Runs `hooks` (the tool's own, from its specs), then the session's `tool.effects` handlers
   * (folded by its bus as at `tool.pre`: their options hold, a shadow-mode handler's verdict is
   * recorded as `WouldDeny` / `WouldAsk`, not applied), on `payload`; folds them (deny > ask >
   * allow; a hook that throws or runs past its deadline denies) and records the verdict.
   */
  decide(
    payload: ToolEffectsPayload,
    hooks: readonly ToolEffectsHook[],
  ): Promise<EffectsVerdict>;
  /**
   * Asks a person about an asked change set through the call's approval path and resolves to
   * the answer. Without an inline approver it rejects with `ApprovalRequiredError` (the call
   * stops as a pending approval; the tool keeps the staged layer for the answer), unless
   * `wait` is `false`: then it resolves to a rejection and records nothing. A rejection that ends
   * the run (`interrupt`) rejects with `ToolDeniedError`.
   */
  approve(request: ToolEffectsAsk, options?: { wait?: boolean }): Promise<EffectsAnswer>;
  /** Records what became of the change set. */
  settled(outcome: EffectsOutcome): Promise<void>;
  /** The session the call runs in, when there is one (kept with a checkpoint). */
  readonly sessionId?: string;
  /** The agent-loop run the call belongs to, when there is one. */
  readonly runId?: string;
}
