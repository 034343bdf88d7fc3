/**
 * What `hookscope approve` and `hookscope reject` share: finding one pending call and recording
 * an answer to it.
 *
 * @module
 */

import type { PendingApprovalRow, RunAnswer, SessionStore } from "../store/session_store.ts";
import { ApprovalConflictError } from "../store/store_errors.ts";
import { approvedArgs } from "../store/_runs.ts";
import { answerRecorded } from "../session/_answer.ts";
import { CliError, type CliIO, UsageError } from "./_output.ts";
import { readResumeInfo } from "./_resume_info.ts";

/** The pending call `callId` (in run `runId` when given); a clear error when none or several. */
export async function findPending(
  store: SessionStore,
  command: string,
  callId: string,
  runId: string | undefined,
): Promise<PendingApprovalRow> {
  const filter: { callId: string; runId?: string } = { callId };
  if (runId !== undefined) filter.runId = runId;
  const rows = await store.listPendingApprovals(filter);
  if (rows.length === 0) {
    throw new CliError(
      `No pending approval for call ${JSON.stringify(callId)}${
        runId !== undefined ? ` in run ${JSON.stringify(runId)}` : ""
      }; 'hookscope pending DB' lists them`,
    );
  }
  if (rows.length > 1) {
    throw new UsageError(
      `hookscope ${command}: call ${JSON.stringify(callId)} is pending in ${rows.length} runs (${
        rows.map((r) => r.runId).join(", ")
      }); add --run RUN_ID`,
    );
  }
  return rows[0];
}

/** Who answers when `--by` is not given. */
export function defaultAnswerer(): string {
  const env = globalThis.process?.env ?? {};
  return env.USER || env.USERNAME || "cli";
}

/** Records the answer and prints what was done; returns the exit code. */
export async function recordAnswer(
  store: SessionStore,
  pending: PendingApprovalRow,
  answer: RunAnswer,
  dbPath: string,
  io: CliIO,
  json: boolean,
  effectsDir?: string,
): Promise<number> {
  // The answer names the arguments (and change set) this command showed: other ones are refused
  // by the store.
  const bound: RunAnswer = pending.argsHash === undefined
    ? answer
    : { ...answer, argsHash: pending.argsHash };
  if (pending.effects !== undefined) bound.effectsHash = pending.effects.hash;
  let recorded: boolean;
  try {
    recorded = await answerRecorded(store, pending.runId, pending.callId, bound);
  } catch (error) {
    if (error instanceof ApprovalConflictError) {
      throw new CliError(`${error.message} (refused: ${error.why})`);
    }
    throw error;
  }
  if (!recorded) {
    throw new CliError(
      `Cannot answer call ${JSON.stringify(pending.callId)}: run ${
        JSON.stringify(pending.runId)
      } is no longer waiting for approval (resumed by another process?)`,
    );
  }
  // A change set this answer rules out (rejected, or another one approved) can never be
  // committed: its kept staged layer goes now, not when it expires.
  let removed = 0;
  if (pending.effects !== undefined) {
    try {
      const { dropKeptLayers, effectsBases } = await import(
        "../action/coding/_find_checkpoints.ts"
      );
      // The layer belongs to the call of that run in that session (the run record names it).
      const sessionId = pending.sessionId ?? (await store.getRun(pending.runId))?.sessionId;
      removed = await dropKeptLayers(effectsBases(effectsDir), {
        callId: pending.callId,
        runId: pending.runId,
        ...(typeof sessionId === "string" ? { sessionId } : {}),
      }, bound);
    } catch (error) {
      io.err(
        `cannot remove the staged layer kept for ${pending.callId}: ${
          (error as Error)?.message ?? error
        }`,
      );
    }
  }
  const left = (await store.listPendingApprovals({ runId: pending.runId }))
    .filter((row) => row.answer === undefined)
    .map((row) => row.callId);
  if (json) {
    const run = await store.getRun(pending.runId);
    io.out(JSON.stringify(
      {
        runId: pending.runId,
        sessionId: pending.sessionId ?? null,
        callId: pending.callId,
        toolName: pending.toolName,
        answer: run?.answers[pending.callId] ?? answer,
        unanswered: left,
        ...(pending.effects !== undefined ? { keptLayersRemoved: removed } : {}),
      },
      null,
      2,
    ));
    return 0;
  }
  const verb = answer.approve ? "approved" : "rejected";
  io.out(
    `${verb} call ${pending.callId} (${pending.toolName}) of run ${pending.runId}` +
      (answer.by ? ` as ${answer.by}` : ""),
  );
  if (removed > 0) {
    io.out(`removed the staged layer kept for it (it can no longer be committed)`);
  }
  if (left.length > 0) {
    io.out(`still unanswered in this run: ${left.join(", ")}`);
  } else if (await resumableByCli(store, pending.sessionId)) {
    io.out(`every call of the run is answered; continue it with:`);
    io.out(`  hookscope resume ${dbPath} ${pending.runId}`);
  } else {
    io.out(
      `every call of the run is answered; the application that started it resumes it (Session.restore + session.resume)`,
    );
  }
  return 0;
}

/** Whether `hookscope resume` can continue runs of this session (started by `run`/`demo`). */
async function resumableByCli(
  store: SessionStore,
  sessionId: string | undefined,
): Promise<boolean> {
  if (sessionId === undefined) return false;
  const row = await store.getSession(sessionId).catch(() => undefined);
  return readResumeInfo(row?.metadata) !== null;
}

/**
 * Parses `--args`: a JSON object of plain JSON within the stores' limits (see
 * `approvedArgs`), or a usage error that says what is wrong.
 */
export function parseArgsFlag(command: string, text: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new UsageError(
      `hookscope ${command}: --args is not valid JSON (${(error as Error).message})`,
    );
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new UsageError(`hookscope ${command}: --args must be a JSON object`);
  }
  // The arguments approved are the ones that run: never cut to fit the store, refused instead.
  try {
    return approvedArgs(parsed, "--args", `${command} call`, "args");
  } catch (error) {
    throw new UsageError(`hookscope ${command}: ${(error as Error).message}`);
  }
}

/** The two positionals DB and CALL_ID, or a usage error. */
export function dbAndCall(command: string, positionals: readonly string[]): [string, string] {
  if (positionals.length !== 2 || positionals.some((p) => p.trim() === "")) {
    throw new UsageError(
      `hookscope ${command}: expected DB and CALL_ID; see 'hookscope ${command} --help'`,
    );
  }
  return [positionals[0], positionals[1]];
}

/** A string flag's value, `undefined` when absent, or a usage error when empty. */
export function optionalString(command: string, value: unknown, flag: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value === "") {
    throw new UsageError(`hookscope ${command}: --${flag} needs a value`);
  }
  return value;
}
