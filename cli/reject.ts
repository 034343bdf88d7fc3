/**
 * `hookscope reject DB CALL_ID`: refuse a tool call waiting for approval; the reason reaches the
 * model when the run resumes.
 *
 * @module
 */

import { flagHelp, type FlagSpec, parseFlags } from "./_args.ts";
import {
  dbAndCall,
  defaultAnswerer,
  findPending,
  optionalString,
  recordAnswer,
} from "./_approvals.ts";
import { openWritableDb } from "./_db.ts";
import type { CliIO } from "./_output.ts";

const FLAGS: Record<string, FlagSpec> = {
  reason: { type: "string", help: "why (told to the model)" },
  interrupt: { type: "boolean", help: "end the run instead of telling the model" },
  by: { type: "string", help: "who rejects (default $USER)" },
  run: { type: "string", help: "the run, when the call id is pending in several" },
  "effects-dir": {
    type: "string",
    help: "where the coding toolkit keeps staged layers (its effectsDir; default: its default)",
  },
  json: { type: "boolean", help: "print JSON" },
};

/** Help text for `hookscope reject`. */
export const REJECT_HELP: string =
  `Usage: hookscope reject DB CALL_ID [--reason TEXT] [--interrupt] [--by NAME] [--run RUN_ID]
                       [--effects-dir DIR] [--json]

Rejects the pending tool call CALL_ID in the SQLite file DB. When the run resumes, the model gets
a tool message saying the call was denied, with the reason, and the run goes on (with
--interrupt the run ends instead). 'hookscope resume DB RUN_ID' continues the run once every
pending call of it is answered. A rejected change set's staged layer (kept under --effects-dir
for the answer) is removed.

${flagHelp(FLAGS)}`;

/** Runs `hookscope reject`; returns the exit code. */
export async function rejectCommand(args: readonly string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseFlags("reject", args, FLAGS);
  if (values.help) {
    io.out(REJECT_HELP);
    return 0;
  }
  const [path, callId] = dbAndCall("reject", positionals);
  const reason = optionalString("reject", values.reason, "reason");
  const by = optionalString("reject", values.by, "by") ?? defaultAnswerer();
  const runId = optionalString("reject", values.run, "run");
  const store = await openWritableDb(path);
  try {
    const pending = await findPending(store, "reject", callId, runId);
    const answer: { approve: false; reason?: string; interrupt?: boolean; by: string } = {
      approve: false,
      by,
    };
    if (reason !== undefined) answer.reason = reason;
    if (values.interrupt === true) answer.interrupt = true;
    const effectsDir = optionalString("reject", values["effects-dir"], "effects-dir");
    return await recordAnswer(store, pending, answer, path, io, values.json === true, effectsDir);
  } finally {
    await store.close();
  }
}
