/**
 * The audit signal of one Claude Code hook event answered by hookscope.
 *
 * @module
 */

import { Signal, type SignalInit } from "../core/signal.ts";

/** What {@linkcode ClaudeHookDecision} carries. */
export interface ClaudeHookDecisionData {
  /** The Claude event (`PreToolUse`, …). */
  readonly event: string;
  /** The tool call, for tool events. */
  readonly callId?: string;
  /** The Claude tool name, for tool events. */
  readonly toolName?: string;
  /** The tool input as Claude sent it (`PreToolUse`), so a later policy can be replayed on it. */
  readonly toolInput?: Readonly<Record<string, unknown>>;
  /** `allow`, `ask`, `deny`, `block` (a prompt), or `none` (no opinion). */
  readonly verdict: "allow" | "ask" | "deny" | "block" | "none";
  /** Why. */
  readonly reason?: string;
  /** The hook that decided, when named. */
  readonly hook?: string;
  /** The rewritten input, when a hook rewrote it. */
  readonly updatedInput?: Readonly<Record<string, unknown>>;
  /** Context added for the model. */
  readonly context?: string;
  /** The policy failed or timed out; the answer followed the failure policy. */
  readonly error?: string;
}

/**
 * One Claude Code hook event and hookscope's answer to it: persisted with the session, shown by
 * `hookscope show`. `opId` is the tool call id, when there is one.
 *
 * @example
 * ```ts
 * import { ClaudeHookDecision } from "@hookscope/core/claude";
 * import assert from "node:assert/strict";
 *
 * const signal = new ClaudeHookDecision({ data: { event: "PreToolUse", callId: "toolu_1", toolName: "Bash", verdict: "deny", reason: "no" } });
 * assert.equal(signal.opId, "toolu_1");
 * ```
 */
export class ClaudeHookDecision extends Signal {
  /** Makes the signal; `init.data` is a {@linkcode ClaudeHookDecisionData}. */
  constructor(init?: SignalInit) {
    super(init);
  }
  /** The call id (persisted as the signal's operation id). */
  get opId(): string {
    const callId = (this.data as { callId?: unknown } | null)?.callId;
    return typeof callId === "string" ? callId : "";
  }
}
