/**
 * The attributes of a `hookscope.decision` span event (a proposal; the GenAI conventions define
 * no decision events): see `docs/otel_decisions.md`.
 *
 * @module
 */

/** What a decision event records. */
export type DecisionKind =
  | "deny"
  | "ask"
  | "answer"
  | "block"
  | "gate_deny"
  | "effect"
  | "other";

const KINDS: Record<string, { kind: DecisionKind; shadow?: true }> = {
  ToolDenied: { kind: "deny" },
  HookBlocked: { kind: "block" },
  GateDenied: { kind: "gate_deny" },
  WouldDeny: { kind: "deny", shadow: true },
  WouldAsk: { kind: "ask", shadow: true },
  ApprovalRequested: { kind: "ask" },
  ApprovalAnswered: { kind: "answer" },
};

const CLAUDE: Record<string, DecisionKind> = { deny: "deny", ask: "ask", block: "block" };

/**
 * The attributes of one decision event: its kind, the signal it comes from, whether it was a
 * shadow verdict (recorded, not applied), and what the signal says (reason, hook, point, who
 * answered, the call).
 */
export function decisionEvent(
  kind: DecisionKind | null,
  signal: string,
  data: Record<string, unknown>,
): Record<string, string | boolean> {
  const known = KINDS[signal];
  let resolved: DecisionKind = kind ?? known?.kind ?? "other";
  // An adapter's decision signal (ClaudeHookDecision) names its verdict.
  const named = data.verdict ?? data.decision;
  if (kind === null && !known && typeof named === "string") resolved = CLAUDE[named] ?? "other";
  const out: Record<string, string | boolean> = {
    "hookscope.decision.kind": resolved,
    "hookscope.signal": signal,
    "hookscope.decision.shadow": known?.shadow === true || data.shadow === true,
  };
  const text = (key: string): string | undefined =>
    typeof data[key] === "string" && data[key] ? data[key] as string : undefined;
  const error = data.error as { message?: unknown } | undefined;
  const reason = text("reason") ??
    (typeof error?.message === "string" && error.message ? error.message : undefined);
  if (reason !== undefined) out["hookscope.decision.reason"] = reason;
  const hook = text("hook");
  if (hook !== undefined) out["hookscope.decision.hook"] = hook;
  const point = text("point");
  if (point !== undefined) out["hookscope.hook.point"] = point;
  const toolName = text("toolName");
  if (toolName !== undefined) out["gen_ai.tool.name"] = toolName;
  const callId = text("callId");
  if (callId !== undefined) out["gen_ai.tool.call.id"] = callId;
  if (data.interrupt === true) out["hookscope.decision.interrupt"] = true;
  if (resolved === "answer") {
    out["hookscope.approval.approved"] = data.approve === true;
    out["hookscope.approval.updated_args"] = data.updatedArgs !== undefined;
  }
  const by = text("by");
  if (by !== undefined) out["hookscope.approval.by"] = by;
  const effect = text("effect");
  if (effect !== undefined) out["hookscope.effect.type"] = effect;
  return out;
}
