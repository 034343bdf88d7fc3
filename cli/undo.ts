/**
 * `hookscope undo DB CALL_ID [--force]`: restores a workspace as it was before the committed
 * change set of one coding-toolkit call (a staged bash run), from its checkpoint.
 *
 * @module
 */

import { flagHelp, type FlagSpec, parseFlags } from "./_args.ts";
import { dbAndCall, optionalString } from "./_approvals.ts";
import { openExistingDb } from "./_db.ts";
import { CliError, type CliIO } from "./_output.ts";
import { undoChanges } from "../action/coding/_commit.ts";
import { effectsBases, findCheckpoints } from "../action/coding/_find_checkpoints.ts";
import { EffectsCommitError } from "../action/coding/effects_error.ts";

const FLAGS: Record<string, FlagSpec> = {
  force: { type: "boolean", help: "restore even when later calls changed the same paths" },
  "effects-dir": { type: "string", help: "the toolkit's effectsDir (default: its default)" },
  json: { type: "boolean", help: "print JSON" },
};

/** Help text for `hookscope undo`. */
export const UNDO_HELP: string =
  `Usage: hookscope undo DB CALL_ID [--force] [--effects-dir DIR] [--json]

Restores the workspace as it was before the committed change set of the call CALL_ID of a
session in DB (content, modes, symlinks), from the checkpoint the coding toolkit kept. Refuses
when a later call changed the same paths, or the committed files changed since, unless --force.
Journals a killed process left are completed or rolled back first.

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
  // The database must be a hookscope database; the checkpoint itself lives with the workspace.
  const db = await openExistingDb(path);
  await db.close();
  const bases = effectsBases(dir);
  const candidates = await findCheckpoints(bases, new Set([callId]));
  const found = candidates.filter((c) => c.manifest.state === "committed").at(-1) ??
    candidates.at(-1);
  if (found !== undefined) {
    const { store } = found;
    const workspace = store.workspace;
    try {
      const changes = await undoChanges(store, callId, { force: values.force === true });
      if (values.json === true) io.out(JSON.stringify({ callId, workspace, changes }));
      else {
        io.out(`Undid call ${callId} in ${workspace}: ${changes.length} path(s) restored`);
        for (const change of changes) io.out(`  ${change.kind} ${change.path}`);
      }
      return 0;
    } catch (error) {
      if (error instanceof EffectsCommitError) {
        throw new CliError(`hookscope undo: ${error.message}`);
      }
      throw error;
    }
  }
  throw new CliError(`hookscope undo: no checkpoint for call ${callId} (in ${bases.join(", ")})`);
}
