// Approvals on the Claude Code protocol path: an `ask` answered to Claude Code is recorded as an
// `ApprovalRequested`; the outcome, when a later event tells it, as an `ApprovalAnswered`.
//
// What can be known: Claude Code asks the person itself (its permission prompt), so hookscope sees
// the answer only through later events of the same tool call. A `PostToolUse` or
// `PostToolUseFailure` means the call was approved and ran (approved with other input when its
// `tool_input` differs from the input asked about); a `PermissionDenied` means it was refused
// (headless `-p` runs and the SDK without `canUseTool` refuse every ask this way). A refusal in
// Claude Code's interactive prompt sends no event: that ask stays unanswered in the record.
//
// Sessions answered by `hook` and `serve` are made afresh for each event, so the ask is found in
// the store: the session row's metadata says whether the session ever asked (one read per tool
// event, after the answer), and only then are its signals read.

import { argsHash, type PendingApproval } from "../core/approval.ts";
import type { Session } from "../session/session.ts";
import {
  ApprovalAnswered,
  type ApprovalAnsweredData,
  ApprovalRequested,
} from "../session/signal.ts";
import type { ClaudeHookDecisionData } from "./hook_decision_signal.ts";
import { isRecord } from "../core/_util.ts";

/** The metadata key marking a session in which hookscope answered `ask` at least once. */
export const ASKED_KEY = "claudeCodeAsked";

/** Who answered, in `ApprovalAnswered` signals of this path. */
export const ANSWERED_BY = "claude-code";

const ANSWERING_EVENTS: ReadonlySet<string> = new Set([
  "PostToolUse",
  "PostToolUseFailure",
  "PermissionDenied",
]);

/**
 * Records the approval side of one answered event in `session`: an `ApprovalRequested` for an
 * ask, an `ApprovalAnswered` for an event that tells an earlier ask's outcome.
 */
export async function recordApproval(
  session: Session,
  event: Record<string, unknown>,
  decision: ClaudeHookDecisionData,
): Promise<void> {
  if (decision.event === "PreToolUse" && decision.verdict === "ask") {
    await requested(session, decision);
    return;
  }
  const callId = event.tool_use_id;
  if (!ANSWERING_EVENTS.has(decision.event) || typeof callId !== "string" || callId === "") {
    return;
  }
  const asked = await openAsk(session, callId);
  if (asked === undefined) return;
  const data: { -readonly [K in keyof ApprovalAnsweredData]: ApprovalAnsweredData[K] } = {
    runId: "",
    callId,
    toolName: asked.toolName,
    approve: decision.event !== "PermissionDenied",
    by: ANSWERED_BY,
  };
  if (decision.event === "PermissionDenied") {
    data.reason = typeof event.reason === "string" && event.reason !== ""
      ? event.reason
      : "refused in Claude Code";
  } else if (isRecord(event.tool_input) && argsHash(event.tool_input) !== asked.argsHash) {
    data.updatedArgs = event.tool_input;
  }
  await session.observer.emit(new ApprovalAnswered({ data }));
}

async function requested(session: Session, decision: ClaudeHookDecisionData): Promise<void> {
  const args = decision.updatedInput ?? decision.toolInput ?? {};
  const pending: { -readonly [K in keyof PendingApproval]: PendingApproval[K] } = {
    runId: "",
    sessionId: session.id,
    callId: decision.callId ?? "",
    toolName: decision.toolName ?? "",
    args,
    requestedAt: Date.now(),
    argsHash: argsHash(args),
  };
  if (decision.reason !== undefined) pending.reason = decision.reason;
  if (decision.hook !== undefined) pending.policy = decision.hook;
  await session.observer.emit(new ApprovalRequested({ data: Object.freeze(pending) }));
  const store = session.store;
  if (store === undefined) return;
  const row = await store.getSession(session.id);
  if (row === undefined || row.metadata?.[ASKED_KEY] === true) return;
  await store.updateSession(session.id, { metadata: { ...row.metadata, [ASKED_KEY]: true } });
}

/** The ask of `callId` in `session` that has no answer yet, if any. */
async function openAsk(session: Session, callId: string): Promise<PendingApproval | undefined> {
  const store = session.store;
  if (store === undefined) {
    // In-process (claudeAgentHooks without a store): the observer's log.
    if (session.observer.byType(ApprovalAnswered).some((s) => s.opId === callId)) return undefined;
    return session.observer.byType(ApprovalRequested).findLast((s) => s.opId === callId)
      ?.data as PendingApproval | undefined;
  }
  const row = await store.getSession(session.id);
  if (row?.metadata?.[ASKED_KEY] !== true) return undefined;
  let asked: PendingApproval | undefined;
  for (const signal of await store.listSessionSignals(session.id)) {
    if (signal.opId !== callId) continue;
    if (signal.kind === "ApprovalAnswered") return undefined;
    if (signal.kind === "ApprovalRequested") {
      const data = (signal.payload as { data?: unknown }).data;
      if (isRecord(data) && typeof data.toolName === "string") {
        asked = data as unknown as PendingApproval;
      }
    }
  }
  return asked;
}
