/**
 * `Session.resume`: continue an agent run that stopped for approval, exactly where it stopped,
 * from any process that opens the same store.
 *
 * @module
 */

import { type ApprovalAnswer, type ApprovalHandler, argsHash } from "../core/approval.ts";
import { ApprovalConflictError } from "../store/store_errors.ts";
import type { RunAnswer, RunRecord, SessionStore } from "../store/session_store.ts";
import type { AgentStreamEvent, OperateResult } from "./agent_loop.ts";
import {
  agentLoop,
  checkApprove,
  invokeTurn,
  type LoopStart,
  requireModel,
  runToEnd,
  streamTurn,
  toApprovalAnswer,
} from "./_loop.ts";
import { bounded } from "./_bounded.ts";
import { runStoreOf } from "./_run_store.ts";
import { responsesAfter } from "./_stored_responses.ts";
import { answerRecorded } from "./_answer.ts";
import type { Session } from "./session.ts";
import { isRecord } from "../core/_util.ts";

/** Options for {@linkcode resumeRun} (`Session.resume`). */
export interface ResumeOptions {
  /** Cancels the resumed run; it then stops with `stoppedBy: "aborted"`. */
  signal?: AbortSignal;
  /** Answers inline to new asks the resumed run meets (otherwise it stops for approval again). */
  approve?: ApprovalHandler;
  /** Who resumes (stored as the run's `owner`); a random id by default. */
  owner?: string;
}

/** Why a run could not be resumed. */
export type RunNotResumableReason =
  | "not_found"
  | "other_session"
  | "not_waiting"
  | "claimed"
  | "unanswered"
  | "no_branch";

/**
 * A run cannot be resumed: unknown, of another session, not waiting for approval (finished, or
 * claimed by another resumer: `reason: "claimed"`), a pending call without an answer, or a branch
 * the session does not have.
 *
 * @example
 * ```ts
 * import { RunNotResumableError, Session } from "@hookscope/core/session";
 * import assert from "node:assert/strict";
 *
 * const session = new Session();
 * await assert.rejects(
 *   session.resume("no-such-run", {}),
 *   (error: unknown) => error instanceof RunNotResumableError && error.reason === "not_found",
 * );
 * ```
 */
export class RunNotResumableError extends Error {
  /** The run. */
  readonly runId: string;
  /** Why. */
  readonly reason: RunNotResumableReason;
  /** The run's status, when it exists. */
  readonly status?: string;
  /** Makes the error. */
  constructor(runId: string, reason: RunNotResumableReason, detail: string, status?: string) {
    super(`Cannot resume run ${JSON.stringify(runId)}: ${detail}`);
    this.name = "RunNotResumableError";
    this.runId = runId;
    this.reason = reason;
    if (status !== undefined) this.status = status;
  }
}

/** Validates one answer a caller gives; returns a plain copy. */
function checkAnswer(callId: string, value: unknown, action: string): ApprovalAnswer {
  const where = `Cannot ${action}: the answer for call ${JSON.stringify(callId)}`;
  if (!isRecord(value) || typeof value.approve !== "boolean") {
    throw new TypeError(`${where} must be an object with a boolean "approve"`);
  }
  const check = (key: string, type: "string" | "boolean" | "object") => {
    const v = value[key];
    if (v === undefined) return;
    const ok = type === "object"
      ? isRecord(v)
      : type === "string"
      ? typeof v === "string"
      : typeof v === "boolean";
    if (!ok) {
      throw new TypeError(
        `${where}: ${key} must be ${type === "object" ? "an object" : `a ${type}`}`,
      );
    }
  };
  check("by", "string");
  if (value.approve) {
    check("updatedArgs", "object");
    for (const key of ["reason", "interrupt"]) {
      if (value[key] !== undefined) {
        throw new TypeError(`${where}: ${key} goes with approve: false`);
      }
    }
    const out: { approve: true; updatedArgs?: Record<string, unknown>; by?: string } = {
      approve: true,
    };
    if (value.updatedArgs !== undefined) {
      out.updatedArgs = structuredClone(value.updatedArgs as Record<string, unknown>);
    }
    if (value.by !== undefined) out.by = value.by as string;
    return out;
  }
  check("reason", "string");
  check("interrupt", "boolean");
  if (value.updatedArgs !== undefined) {
    throw new TypeError(`${where}: updatedArgs goes with approve: true`);
  }
  const out: { approve: false; reason?: string; interrupt?: boolean; by?: string } = {
    approve: false,
  };
  if (value.reason !== undefined) out.reason = value.reason as string;
  if (value.interrupt !== undefined) out.interrupt = value.interrupt as boolean;
  if (value.by !== undefined) out.by = value.by as string;
  return out;
}

function toRunAnswer(answer: ApprovalAnswer): RunAnswer {
  return structuredClone(answer) as RunAnswer;
}

/** The store a session's runs are in (its store, or the private in-memory one). */
function runStoreOfSession(session: Session): SessionStore {
  return runStoreOf({ session });
}

/**
 * Continues a run that stopped for approval, exactly where it stopped: the calls of the last
 * model turn that already ran are not run again, each pending call gets its answer (an approved
 * one runs once, through the gate and the hooks, with the approver's `updatedArgs` validated by
 * the tool's schema; a rejected one is answered to the model with the reason, or ends the run
 * with `interrupt: true`), then the loop goes on with the next model turn.
 *
 * `answers` (by call id) are merged over the answers already stored for the run (for example by
 * `hookscope approve`); every pending call needs one. The run is claimed with
 * `SessionStore.claimRun` first: when two callers (in this process or two processes sharing the
 * store) resume the same run, one runs it and the other rejects with
 * {@linkcode RunNotResumableError} (`reason: "claimed"`) having run nothing. Used by
 * `Session.resume`.
 *
 * @example Stop on an ask, then resume with an approval
 * ```ts
 * import { Session } from "@hookscope/core/session";
 * import { Tool } from "@hookscope/core/action";
 * import { FunctionEndpoint, IModel } from "@hookscope/core/service";
 * import assert from "node:assert/strict";
 *
 * let turn = 0;
 * const model = new IModel({
 *   model: "m",
 *   endpoint: new FunctionEndpoint({
 *     call: () => turn++ === 0
 *       ? { choices: [{ message: { content: "", tool_calls: [{ id: "c1", function: { name: "echo", arguments: '{"v":1}' } }] } }] }
 *       : { choices: [{ message: { content: "done" } }] },
 *   }),
 * });
 * const session = new Session({ model });
 * const branch = session.defaultBranch;
 * const ran: unknown[] = [];
 * branch.actions.register(new Tool({ name: "echo", execute: (a: Record<string, unknown>) => ran.push(a.v) }));
 * session.hooks.on("tool.pre", () => ({ decision: "ask", reason: "check" }));
 * const stopped = await branch.operate("echo one");
 * if (stopped.stoppedBy === "approval") {
 *   const done = await session.resume(stopped.runId, { c1: { approve: true, updatedArgs: { v: 2 } } });
 *   assert.equal(done.stoppedBy, "answer");
 *   assert.deepEqual(ran, [2]);
 * }
 * ```
 */
export async function resumeRun(
  session: Session,
  runId: string,
  answers: Readonly<Record<string, ApprovalAnswer>>,
  options?: ResumeOptions,
): Promise<OperateResult> {
  if (typeof runId !== "string" || runId === "") {
    throw new TypeError("Cannot resume run: runId must be a non-empty string");
  }
  if (!isRecord(answers)) {
    throw new TypeError("Cannot resume run: answers must be an object of answers by call id");
  }
  if (options !== undefined && (options === null || typeof options !== "object")) {
    throw new TypeError("Cannot resume run: options must be an object");
  }
  const approve = checkApprove(options?.approve);
  const owner = options?.owner ?? `resume-${crypto.randomUUID()}`;
  if (typeof owner !== "string" || owner === "") {
    throw new TypeError("Cannot resume run: owner must be a non-empty string");
  }
  const store = runStoreOfSession(session);
  const signal = options?.signal ?? new AbortController().signal;
  const run = await bounded(store.getRun(runId), "get run", signal);
  if (run === undefined) {
    throw new RunNotResumableError(runId, "not_found", "no such run in the store");
  }
  if (run.sessionId !== null && run.sessionId !== session.id) {
    throw new RunNotResumableError(
      runId,
      "other_session",
      `it belongs to session ${JSON.stringify(run.sessionId)}, not ${JSON.stringify(session.id)}`,
      run.status,
    );
  }
  if (run.status !== "waiting_approval") {
    throw notWaiting(run);
  }
  const branch = session.branches.find((b) => b.id === run.branchId);
  if (branch === undefined) {
    throw new RunNotResumableError(
      runId,
      "no_branch",
      `the session has no branch ${JSON.stringify(run.branchId)} (restore it with Session.restore)`,
      run.status,
    );
  }
  requireModel(branch);
  const pendingIds = run.pending.map((p) => p.callId);
  const given: Record<string, ApprovalAnswer> = {};
  for (const [callId, answer] of Object.entries(answers)) {
    if (!pendingIds.includes(callId)) {
      throw new TypeError(
        `Cannot resume run ${JSON.stringify(runId)}: call ${
          JSON.stringify(callId)
        } is not pending; pending calls: ${pendingIds.map((id) => JSON.stringify(id)).join(", ")}`,
      );
    }
    given[callId] = checkAnswer(callId, answer, "resume run");
  }
  // The answers given here go through the store like any other: the first answer wins.
  for (const [callId, answer] of Object.entries(given)) {
    await bounded(
      answerRecorded(store, runId, callId, toRunAnswer(answer)),
      "answer approval",
      signal,
    );
  }
  const unanswered = (record: RunRecord, at: number): string[] => {
    const stored = responsesAfter(branch.messages, record.state.messageId);
    return record.pending.filter((p) =>
      record.answers[p.callId] === undefined && !stored.has(p.callId) &&
      !(p.expiresAt !== undefined && at >= p.expiresAt)
    ).map((p) => p.callId);
  };
  const early = unanswered(
    (await bounded(store.getRun(runId), "get run", signal)) ?? run,
    Date.now(),
  );
  if (early.length > 0) throw missingAnswers(run, early);
  // Claim first, then read the answers: an answer recorded after the claim cannot be lost, and
  // one recorded before it is in the record read below.
  if (!(await bounded(store.claimRun(runId, owner), "claim run", signal))) {
    const now = await bounded(store.getRun(runId), "get run", signal);
    throw notWaiting(now ?? run);
  }
  const claimed = await bounded(store.getRun(runId), "get run", signal);
  if (claimed === undefined || claimed.owner !== owner) {
    throw notWaiting(claimed ?? run);
  }
  const giveBack = async (error: Error): Promise<never> => {
    await bounded(store.releaseRun?.(runId, owner) ?? Promise.resolve(false), "release run", signal)
      .catch(() => false);
    throw error;
  };
  const now = Date.now();
  const late = unanswered(claimed, now);
  if (late.length > 0) await giveBack(missingAnswers(claimed, late));
  const stored = responsesAfter(branch.messages, claimed.state.messageId);
  const merged: Record<string, ApprovalAnswer> = {};
  const calls: RunRecord["state"]["toolCalls"] = [];
  const started: string[] = [];
  for (const pending of claimed.pending) {
    const callId = pending.callId;
    let answer = claimed.answers[callId];
    if (answer === undefined && !stored.has(callId)) {
      // Past its expiry without an answer: rejected, and the model is told so.
      answer = { approve: false, reason: "expired", by: "hookscope", answeredAt: now };
      claimed.answers[callId] = answer;
    }
    if (answer !== undefined) {
      // The call that runs is the one whose hash was approved, taken from the approval.
      const hash = argsHash(pending.args);
      if (
        answer.approve &&
        (pending.argsHash !== hash || (answer.argsHash !== undefined && answer.argsHash !== hash))
      ) {
        await giveBack(
          new ApprovalConflictError(
            callId,
            "args_changed",
            undefined,
            "the stored approval does not match the arguments it names (the run record was changed); nothing ran",
          ),
        );
      }
      merged[callId] = toApprovalAnswer(answer);
      if (answer.approve && !stored.has(callId)) started.push(callId);
    }
    calls.push({ id: callId, name: pending.toolName, arguments: JSON.stringify(pending.args) });
  }
  // Calls of the turn that neither ran nor wait for an answer are not run (nobody asked the
  // hooks about them in this record's history).
  const done = new Set(claimed.state.done);
  const byId = new Map(calls.map((c) => [c.id, c]));
  const kept: RunRecord["state"]["toolCalls"] = [];
  for (const call of claimed.state.toolCalls) {
    const approved = byId.get(call.id);
    if (approved !== undefined) {
      kept.push(approved);
      byId.delete(call.id);
    } else if (done.has(call.id)) kept.push(call);
  }
  claimed.state.toolCalls = [...kept, ...byId.values()];
  claimed.state.started = started;
  claimed.updatedAt = now;
  await bounded(store.saveRun(claimed), "save run", signal);
  const start: LoopStart = { run: claimed, store, answers: merged };
  if (approve !== undefined) start.approve = approve;
  // The model is called the way the run called it (streaming for operateStream).
  const turn = claimed.state.stream === true
    ? streamTurn(branch, claimed)
    : invokeTurn(branch, claimed);
  const loop: AsyncGenerator<AgentStreamEvent> = agentLoop(branch, start, signal, turn);
  return await runToEnd(loop);
}

function missingAnswers(run: RunRecord, missing: readonly string[]): RunNotResumableError {
  return new RunNotResumableError(
    run.runId,
    "unanswered",
    `no answer for pending call${missing.length > 1 ? "s" : ""} ${
      missing.map((id) => JSON.stringify(id)).join(", ")
    }`,
    run.status,
  );
}

function notWaiting(run: RunRecord): RunNotResumableError {
  if (run.owner !== null) {
    return new RunNotResumableError(
      run.runId,
      "claimed",
      `it was claimed by ${JSON.stringify(run.owner)} (status ${JSON.stringify(run.status)})${
        run.status === "running"
          ? "; if that claimer is gone, store.releaseRun(runId, owner) takes the claim back"
          : ""
      }`,
      run.status,
    );
  }
  return new RunNotResumableError(
    run.runId,
    "not_waiting",
    `its status is ${JSON.stringify(run.status)}, not "waiting_approval"`,
    run.status,
  );
}
