// Recording a person's answer through the store, where the first answer wins; a refused answer
// is kept in the session's signals (`ApprovalRefused`), so the audit trail shows it.

import { ApprovalConflictError } from "../store/store_errors.ts";
import type { RunAnswer, SessionStore } from "../store/session_store.ts";

/**
 * `store.answerApproval`, and on an `ApprovalConflictError` an `ApprovalRefused` signal row in the
 * run's session (`why`, who, the hash the answer named) before the error is rethrown. Resolves
 * to `false` when the run does not wait for that call.
 */
export async function answerRecorded(
  store: SessionStore,
  runId: string,
  callId: string,
  answer: RunAnswer,
): Promise<boolean> {
  try {
    return await store.answerApproval(runId, callId, answer);
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
