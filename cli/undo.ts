/**
 * `hookscope undo DB CALL_ID [--force]`: restores a workspace as it was before the committed
 * change set of one coding-toolkit call (a staged bash run), from its checkpoint.
 *
 * @module
 */

import { readdir, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { flagHelp, type FlagSpec, parseFlags } from "./_args.ts";
import { dbAndCall, optionalString } from "./_approvals.ts";
import { openExistingDb } from "./_db.ts";
import { CliError, type CliIO } from "./_output.ts";
import { effectsStore, listCheckpoints, undoChanges } from "../action/coding/_commit.ts";
import { EffectsCommitError } from "../action/coding/effects_error.ts";
import { defaultEffectsDir } from "../action/coding/toolkit.ts";

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
  const bases = dir !== undefined ? [dir] : [defaultEffectsDir(), `${tmpdir()}/hookscope-effects`];
  for (const base of bases) {
    for (const hash of await readdir(base).catch(() => [] as string[])) {
      let workspace: string;
      try {
        workspace = await readFile(`${base}/${hash}/workspace`, "utf8");
      } catch {
        continue;
      }
      const store = effectsStore(base, workspace);
      if (store.dir !== `${base}/${hash}`) continue;
      const checkpoints = await listCheckpoints(store);
      if (!checkpoints.some((c) => c.callId === callId)) continue;
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
  }
  throw new CliError(`hookscope undo: no checkpoint for call ${callId} (in ${bases.join(", ")})`);
}
