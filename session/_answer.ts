// Recording a person's answer through the store, where the first answer wins. Both outcomes are
// kept in the session's signals when they happen: `ApprovalAccepted` for the answer that was
// stored, `ApprovalRefused` for one that was not, so the audit trail (and a console following the
// store's change stream) shows who answered and when, before any resume.

import { ApprovalConflictError } from "../store/store_errors.ts";
import type { RunAnswer, SessionStore } from "../store/session_store.ts";

/**
 * `store.answerApproval`, then an `ApprovalAccepted` signal row in the run's session (the stored
 * answer: who, when, the hash it is bound to); on an `ApprovalConflictError` an `ApprovalRefused`
 * row (`why`, who, the hash the answer named) before the error is rethrown. Resolves to `false`
 * when the run does not wait for that call (nothing is recorded then).
 */
export async function answerRecorded(
  store: SessionStore,
  runId: string,
  callId: string,
  answer: RunAnswer,
): Promise<boolean> {
  try {
    const stored = await store.answerApproval(runId, callId, answer);
    if (stored) await recordAcceptance(store, runId, callId).catch(() => {});
    return stored;
  } catch (error) {
    if (error instanceof ApprovalConflictError) {
      await recordRefusal(store, runId, callId, answer, error).catch(() => {});
    }
    throw error;
  }
}

async function recordRefusal(
  store: SessionStore,
  runId: string,
  callId: string,
  answer: RunAnswer,
  error: ApprovalConflictError,
): Promise<void> {
  const run = await store.getRun(runId);
  if (run?.sessionId == null) return;
  const payload: Record<string, unknown> = {
    runId,
    callId,
    why: error.why,
    approve: answer.approve,
    message: error.message,
  };
  if (answer.by !== undefined) payload.by = answer.by;
  if (answer.argsHash !== undefined) payload.argsHash = answer.argsHash;
  if (error.answer !== undefined) payload.standing = structuredClone(error.answer);
  await store.insertSessionSignal({
    sessionId: run.sessionId,
    kind: "ApprovalRefused",
    opId: callId,
    ts: Date.now(),
    payload,
  });
}

async function recordAcceptance(store: SessionStore, runId: string, callId: string): Promise<void> {
  const run = await store.getRun(runId);
  const answer = run?.answers[callId];
  if (run?.sessionId == null || answer === undefined) return;
  const pending = run.pending.find((p) => p.callId === callId);
  // The stored answer as it stands, with the tool, and for an edit the arguments it replaced.
  const payload: Record<string, unknown> = { runId, callId, ...answer };
  if (pending !== undefined) {
    payload.toolName = pending.toolName;
    if (answer.updatedArgs !== undefined) payload.args = pending.args;
  }
  await store.insertSessionSignal({
    sessionId: run.sessionId,
    kind: "ApprovalAccepted",
    opId: callId,
    ts: Date.now(),
    payload,
  });
}
