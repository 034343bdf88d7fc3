/**
 * `hookscope approve DB CALL_ID`: approve a tool call waiting for approval, optionally with
 * edited arguments.
 *
 * @module
 */

import { flagHelp, type FlagSpec, parseFlags } from "./_args.ts";
import {
  dbAndCall,
  defaultAnswerer,
  findPending,
  optionalString,
  parseArgsFlag,
  recordAnswer,
} from "./_approvals.ts";
import { openWritableDb } from "./_db.ts";
import type { CliIO } from "./_output.ts";

const FLAGS: Record<string, FlagSpec> = {
  args: { type: "string", help: "run the call with these arguments instead (a JSON object)" },
  by: { type: "string", help: "who approves (default $USER)" },
  run: { type: "string", help: "the run, when the call id is pending in several" },
  "effects-dir": {
    type: "string",
    help: "where the coding toolkit keeps staged layers (its effectsDir; default: its default)",
  },
  json: { type: "boolean", help: "print JSON" },
};

/** Help text for `hookscope approve`. */
export const APPROVE_HELP: string =
  `Usage: hookscope approve DB CALL_ID [--args JSON] [--by NAME] [--run RUN_ID]
                        [--effects-dir DIR] [--json]

Approves the pending tool call CALL_ID in the SQLite file DB. With --args the call runs with
those arguments instead (validated again by the tool's schema when the run resumes). The answer
is stored; 'hookscope resume DB RUN_ID' continues the run once every pending call of it is
answered. A staged layer kept for another change set of the call than the one approved is
removed (under --effects-dir).

${flagHelp(FLAGS)}`;

/** Runs `hookscope approve`; returns the exit code. */
export async function approveCommand(args: readonly string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseFlags("approve", args, FLAGS);
  if (values.help) {
    io.out(APPROVE_HELP);
    return 0;
  }
  const [path, callId] = dbAndCall("approve", positionals);
  const argsText = optionalString("approve", values.args, "args");
  const updatedArgs = argsText === undefined ? undefined : parseArgsFlag("approve", argsText);
  const by = optionalString("approve", values.by, "by") ?? defaultAnswerer();
  const runId = optionalString("approve", values.run, "run");
  const store = await openWritableDb(path);
  try {
    const pending = await findPending(store, "approve", callId, runId);
    const answer = updatedArgs === undefined
      ? { approve: true, by }
      : { approve: true, updatedArgs, by };
    const effectsDir = optionalString("approve", values["effects-dir"], "effects-dir");
    return await recordAnswer(store, pending, answer, path, io, values.json === true, effectsDir);
  } finally {
    await store.close();
  }
}
