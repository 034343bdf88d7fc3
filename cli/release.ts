/**
 * `hookscope release DB RUN_ID`: take back the claim of a resume whose process is gone, so the
 * run waits for approval again and `hookscope resume` can continue it.
 *
 * @module
 */

import { flagHelp, type FlagSpec, parseFlags } from "./_args.ts";
import { liveLocalClaimer } from "./_claim_owner.ts";
import { displayDb, formatTime, openWritableDb } from "./_db.ts";
import { CliError, type CliIO, UsageError } from "./_output.ts";
import { responsesAfter } from "../session/_stored_responses.ts";

const FLAGS: Record<string, FlagSpec> = {
  force: {
    type: "boolean",
    help: "release even when the claiming 'hookscope resume' process still runs on this machine",
  },
  json: { type: "boolean", help: "print JSON" },
};

/** Help text for `hookscope release`. */
export const RELEASE_HELP: string = `Usage: hookscope release DB RUN_ID [--force] [--json]

Takes back the claim on the run RUN_ID in DB (a SQLite file or postgres:// URL) when the process
that resumed it is gone (killed, crashed, its machine lost): the run waits for approval again with
its pending calls and answers, and 'hookscope resume DB RUN_ID' continues it.

Only release a run whose claimer is really gone: a claimer that is still running goes on and saves
over the released run. When the run is resumed again, an answered call whose result the claimer
had already stored is not run again (the stored result is used). A call the claimer had started
without a stored result is "interrupted": it may have run, so its answer is dropped and it runs
again only if a person approves it again (or is rejected, and the model is told).

A claim by a 'hookscope resume' process that still runs on this machine is refused unless --force
is given (its process id may have been reused by another program).

Exit codes: 0 released, 1 no such run, nothing to release or the claimer still runs, 2 usage error.

${flagHelp(FLAGS)}`;

/** Runs `hookscope release`; returns the exit code. */
export async function releaseCommand(args: readonly string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseFlags("release", args, FLAGS);
  if (values.help) {
    io.out(RELEASE_HELP);
    return 0;
  }
  if (positionals.length !== 2 || positionals.some((p) => p.trim() === "")) {
    throw new UsageError(
      `hookscope release: expected DB and RUN_ID; see 'hookscope release --help'`,
    );
  }
  const [path, runId] = positionals;
  const store = await openWritableDb(path);
  try {
    const run = await store.getRun(runId);
    if (run === undefined) {
      throw new CliError(`No run ${JSON.stringify(runId)} in ${JSON.stringify(displayDb(path))}`);
    }
    if (run.status !== "running" || run.owner === null) {
      throw new CliError(
        `Run ${JSON.stringify(runId)} is not claimed (status ${run.status}); nothing to release`,
      );
    }
    const live = liveLocalClaimer(run.owner);
    if (live !== null && values.force !== true) {
      throw new CliError(
        `Run ${JSON.stringify(runId)} is claimed by ${run.owner}, and process ${live} still ` +
          `runs on this machine: stop it first, or pass --force if that process is not the resume`,
      );
    }
    if (typeof store.releaseRun !== "function") {
      throw new CliError(`Cannot release run: this store has no releaseRun`);
    }
    // The claim that was read is the one released: a newer claim makes this a no-op.
    if (!(await store.releaseRun(runId, run.owner))) {
      const now = await store.getRun(runId);
      throw new CliError(
        `Run ${JSON.stringify(runId)} changed while releasing it (status ${now?.status ?? "gone"}${
          now?.owner ? `, claimed by ${now.owner}` : ""
        }); nothing was released`,
      );
    }
    // Calls the claimer had started lose their answers (they may have run): a person decides.
    const now = (await store.getRun(runId)) ?? run;
    const answered = now.pending.filter((p) => now.answers[p.callId] !== undefined);
    const stored = run.sessionId === null
      ? new Map()
      : responsesAfter(await store.listMessages({ sessionId: run.sessionId }), run.state.messageId);
    const again = answered.filter((p) => !stored.has(p.callId));
    const kept = run.pending.filter((p) => stored.has(p.callId));
    const interrupted = now.pending.filter((p) => p.interrupted === true && !stored.has(p.callId));
    if (values.json === true) {
      io.out(JSON.stringify(
        {
          runId,
          releasedOwner: run.owner,
          claimedAt: run.claimedAt,
          status: "waiting_approval",
          runAgain: again.map((p) => ({ callId: p.callId, toolName: p.toolName })),
          resultStored: kept.map((p) => ({ callId: p.callId, toolName: p.toolName })),
          interrupted: interrupted.map((p) => ({ callId: p.callId, toolName: p.toolName })),
        },
        null,
        2,
      ));
      return 0;
    }
    io.out(
      `released run ${runId} (claimed by ${run.owner} at ${
        formatTime(run.claimedAt)
      }); it waits for approval again`,
    );
    const names = (calls: typeof answered) =>
      calls.map((p) => `${p.callId} (${p.toolName})`).join(", ");
    if (kept.length > 0) io.out(`ran, result stored, not run again: ${names(kept)}`);
    if (again.length > 0) io.out(`answered, will run on resume: ${names(again)}`);
    if (interrupted.length > 0) {
      io.out(
        `interrupted (started, may have run; not run again unless approved again): ${
          names(interrupted)
        }`,
      );
      io.out(`answer them:  hookscope approve|reject ${displayDb(path)} CALL_ID --run ${runId}`);
    }
    io.out(`continue it:  hookscope resume ${displayDb(path)} ${runId}`);
    return 0;
  } finally {
    await store.close();
  }
}
