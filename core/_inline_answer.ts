// An approval answered inline (an `approve` handler): the wait ends at the approval's expiry, and
// an answer by someone the asking hooks did not name is not taken. Both resolve as a rejection
// made by hookscope, so the model is told and the tool does not run. Shared by the act path and
// the MCP elicitation handler.

import type { ApprovalAnswer, ApprovalHandler, PendingApproval } from "./approval.ts";
import { deadline, TIMED_OUT } from "./_async.ts";
import { anySignal, neverAborted } from "./_abort.ts";
import { ApprovalRequiredError } from "./errors.ts";

/** Who a rejection hookscope made (expiry, an answerer not allowed) is recorded as by. */
export const HOOKSCOPE_ANSWERER = "hookscope";

/** The reason of an approval that expired without an answer. */
export const EXPIRED_REASON = "expired";

const EXPIRED: ApprovalAnswer = Object.freeze({
  approve: false,
  reason: EXPIRED_REASON,
  by: HOOKSCOPE_ANSWERER,
});

/** Handlers that give an answer the store accepted already (a resumed run's): not checked again. */
const storedHandlers = new WeakMap<
  ApprovalHandler,
  { answer: ApprovalAnswer; applies?: (approval: PendingApproval) => boolean }
>();

/**
 * A handler that gives `answer`, recorded earlier through the store (which enforced the expiry
 * and who may answer when it was given): the re-ask of a resumed run takes it as it is. With
 * `applies`, an approval it does not apply to (a change set other than the one answered) gets no
 * answer: the call waits for a person again (`ApprovalRequiredError`).
 */
export function storedAnswerHandler(
  answer: ApprovalAnswer,
  applies?: (approval: PendingApproval) => boolean,
): ApprovalHandler {
  const handler: ApprovalHandler = (approval) => {
    if (applies !== undefined && !applies(approval)) throw new ApprovalRequiredError(approval);
    return answer;
  };
  storedHandlers.set(handler, applies === undefined ? { answer } : { answer, applies });
  return handler;
}

/**
 * The answer a {@linkcode storedAnswerHandler} gives `approval`, read without asking: `undefined`
 * when `handler` is not one, `null` when its answer does not apply (the call waits again).
 * A stored answer that applies is recorded as applied (`ApprovalAnswered`, `resumed`), not as a
 * new ask.
 */
export function storedAnswerOf(
  handler: ApprovalHandler | undefined,
  approval: PendingApproval,
): ApprovalAnswer | null | undefined {
  const stored = handler === undefined ? undefined : storedHandlers.get(handler);
  if (stored === undefined) return undefined;
  return stored.applies === undefined || stored.applies(approval) ? stored.answer : null;
}

/**
 * Asks `approve` about `approval` and reads its answer with `normalize`. With an `expiresAt`, the
 * handler's signal aborts at that time and the wait ends then: the answer is a rejection with
 * reason `"expired"` (by `"hookscope"`), also when the approval had expired before it was asked.
 * With `answerableBy`, an answer whose `by` is not listed is not taken: the answer is a rejection
 * naming who answered and who may. `signal` (the caller's) rejects the wait with its reason.
 */
export async function answerInline(
  approval: PendingApproval,
  approve: ApprovalHandler,
  signal: AbortSignal | undefined,
  normalize: (value: unknown) => ApprovalAnswer,
): Promise<ApprovalAnswer> {
  if (storedHandlers.has(approve)) {
    return normalize(await approve(approval, { signal: signal ?? neverAborted() }));
  }
  const { expiresAt, answerableBy } = approval;
  // Without an expiry the wait has no deadline of its own (Infinity arms no timer).
  const left = expiresAt === undefined ? Infinity : expiresAt - Date.now();
  if (!(left > 0)) return EXPIRED;
  const expiry = new AbortController();
  const asked = Promise.resolve().then(() =>
    approve(approval, {
      signal: signal === undefined ? expiry.signal : anySignal([signal, expiry.signal]),
    })
  );
  let answer: ApprovalAnswer;
  try {
    answer = normalize(
      await deadline(asked, left, signal, () => {
        expiry.abort(new DOMException("The approval expired.", "TimeoutError"));
        return TIMED_OUT;
      }),
    );
  } catch (error) {
    if (error !== TIMED_OUT) throw error;
    asked.catch(() => {});
    return EXPIRED;
  }
  if (expiresAt !== undefined && Date.now() >= expiresAt) return EXPIRED; // answered as it was due
  if (
    answerableBy !== undefined && (answer.by === undefined || !answerableBy.includes(answer.by))
  ) {
    return Object.freeze({
      approve: false,
      reason: `not allowed: ${
        answer.by === undefined ? "an answer without a name" : JSON.stringify(answer.by)
      } may not answer it; who may: ${answerableBy.map((who) => JSON.stringify(who)).join(", ")}`,
      by: HOOKSCOPE_ANSWERER,
    });
  }
  return answer;
}
