/**
 * `hookscope undo DB CALL_ID [--force]`: restores a workspace as it was before the committed
 * change set of one coding-toolkit call (a staged bash run), from its checkpoint.
 *
 * @module
 */

import { flagHelp, type FlagSpec, parseFlags } from "./_args.ts";
import { dbAndCall, defaultAnswerer, optionalString } from "./_approvals.ts";
import { openWritableDb } from "./_db.ts";
import { CliError, type CliIO } from "./_output.ts";
import { undoChanges } from "../action/coding/_commit.ts";
import { effectsBases, findCheckpoints } from "../action/coding/_find_checkpoints.ts";
import { EffectsCommitError } from "../action/coding/effects_error.ts";
import { changesUndoneRow } from "../console/_undo.ts";

const FLAGS: Record<string, FlagSpec> = {
  force: { type: "boolean", help: "restore even when later calls changed the same paths" },
  "effects-dir": { type: "string", help: "the toolkit's effectsDir (default: its default)" },
  by: { type: "string", help: "who undoes it, for the record (default: $USER)" },
  json: { type: "boolean", help: "print JSON" },
};

/** Help text for `hookscope undo`. */
export const UNDO_HELP: string =
  `Usage: hookscope undo DB CALL_ID [--force] [--effects-dir DIR] [--by NAME] [--json]

Restores the workspace as it was before the committed change set of the call CALL_ID of a
session in DB (content, modes, symlinks), from the checkpoint the coding toolkit kept. Refuses
when a later call changed the same paths, or the committed files changed since, unless --force.
Journals a killed process left are completed or rolled back first. The undo is recorded in the
session the call ran in (a ChangesUndone row, shown by 'hookscope show'), when the checkpoint
names it.

${flagHelp(FLAGS)}`;

/** Runs `hookscope undo`; returns the exit code. */
export async function undoCommand(args: readonly string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseFlags("undo", args, FLAGS);
  if (values.help) {
    io.out(UNDO_HELP);
    return 0;
  }
  const [path, callId] = dbAndCall("undo", positionals);
  const dir = optionalString("undo", values["effects-dir"], "effects-dir");
  const by = optionalString("undo", values.by, "by") ?? defaultAnswerer();
  // The database must be a hookscope database; the checkpoint itself lives with the workspace,
  // and names the session the call ran in (where the undo is recorded).
  const db = await openWritableDb(path);
  try {
    return await undoIn(db, path, callId, dir, by, values.force === true, values.json === true, io);
  } finally {
    await db.close();
  }
}

/**
 * A refusal in the CLI's words: the library's message names its `force` option; here the way on
 * is `--force`, or the `hookscope undo` of the later call to undo first.
 */
function refusal(error: EffectsCommitError, path: string, callId: string): string {
  const paths = (error.paths ?? []).slice(0, 5).join(", ");
  if (error.why === "conflict" && error.later !== undefined && error.later.length > 0) {
    const ids = error.later.map((call) => call.callId);
    const who = ids.length === 1
      ? `A later call (${ids[0]})`
      : `Later calls (${ids.join(", ")}; newest first)`;
    return `${who} changed the same paths (${paths}); undo ${
      ids.length === 1 ? "it" : "them"
    } first (hookscope undo ${path} ${ids[0]}) or give --force`;
  }
  if (error.why === "changed") {
    return `Paths changed since call ${callId} committed (${paths}); give --force to restore them anyway`;
  }
  return error.message;
}

async function undoIn(
  db: Awaited<ReturnType<typeof openWritableDb>>,
  path: string,
  callId: string,
  dir: string | undefined,
  by: string,
  force: boolean,
  json: boolean,
  io: CliIO,
): Promise<number> {
  const bases = effectsBases(dir);
  const candidates = await findCheckpoints(bases, new Set([callId]));
  const found = candidates.filter((c) => c.manifest.state === "committed").at(-1) ??
    candidates.at(-1);
  if (found !== undefined) {
    const { store } = found;
    const workspace = store.workspace;
    try {
      const changes = await undoChanges(store, callId, { force });
      const sessionId = found.manifest.sessionId;
      let recorded = false;
      if (sessionId !== undefined && (await db.getSession(sessionId).catch(() => undefined))) {
        await db.insertSessionSignal(changesUndoneRow({
          sessionId,
          callId,
          toolName: found.manifest.toolName,
          by,
          workspace,
          force,
          changes,
        }));
        recorded = true;
      }
      if (json) io.out(JSON.stringify({ callId, workspace, changes, recorded }));
      else {
        io.out(`Undid call ${callId} in ${workspace}: ${changes.length} path(s) restored`);
        for (const change of changes) io.out(`  ${change.kind} ${change.path}`);
        io.out(
          recorded
            ? `recorded in session ${sessionId} (hookscope show)`
            : "not recorded in a session (the checkpoint names none in this database)",
        );
      }
      return 0;
    } catch (error) {
      if (error instanceof EffectsCommitError) {
        throw new CliError(refusal(error, path, callId));
      }
      throw error;
    }
  }
  throw new CliError(`no checkpoint for call ${callId} (in ${bases.join(", ")})`);
}
