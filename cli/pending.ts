/**
 * `hookscope pending DB`: the tool calls waiting for a person's approval.
 *
 * @module
 */

import { summarize } from "../core/json_safe.ts";
import { flagHelp, type FlagSpec, parseFlags } from "./_args.ts";
import { formatTime, openExistingDb } from "./_db.ts";
import { type CliIO, UsageError } from "./_output.ts";
import { renderTable } from "./_table.ts";

const FLAGS: Record<string, FlagSpec> = {
  session: { type: "string", help: "only this session's runs" },
  run: { type: "string", help: "only this run" },
  json: { type: "boolean", help: "print JSON" },
};

/** Help text for `hookscope pending`. */
export const PENDING_HELP: string = `Usage: hookscope pending DB [--session ID] [--run ID] [--json]

Lists the tool calls waiting for approval in the SQLite file DB (runs that stopped because a
tool.pre hook asked), oldest run first, with the answers given so far. Answer them with
'hookscope approve' or 'hookscope reject', then continue the run with 'hookscope resume'.

${flagHelp(FLAGS)}`;

/** Runs `hookscope pending`; returns the exit code. */
export async function pendingCommand(args: readonly string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseFlags("pending", args, FLAGS);
  if (values.help) {
    io.out(PENDING_HELP);
    return 0;
  }
  if (positionals.length !== 1 || positionals[0].trim() === "") {
    throw new UsageError(`hookscope pending: expected one DB path; see 'hookscope pending --help'`);
  }
  const filter: { sessionId?: string; runId?: string } = {};
  for (const [flag, key] of [["session", "sessionId"], ["run", "runId"]] as const) {
    const value = values[flag];
    if (value === undefined) continue;
    if (typeof value !== "string" || value === "") {
      throw new UsageError(`hookscope pending: --${flag} needs a value`);
    }
    filter[key] = value;
  }
  const store = await openExistingDb(positionals[0]);
  try {
    const rows = await store.listPendingApprovals(filter);
    if (values.json) {
      io.out(JSON.stringify(rows, null, 2));
      return 0;
    }
    if (rows.length === 0) {
      io.out("no pending approvals");
      return 0;
    }
    io.out(renderTable(
      ["CALL", "TOOL", "RUN", "SESSION", "REQUESTED", "REASON", "ARGS", "ANSWER"],
      rows.map((row) => [
        row.callId,
        row.toolName,
        row.runId,
        row.sessionId ?? "-",
        formatTime(row.requestedAt),
        row.reason ?? "-",
        summarize(row.args, 60),
        row.answer === undefined
          ? "-"
          : `${row.answer.approve ? "approve" : "reject"}${
            row.answer.by ? ` by ${row.answer.by}` : ""
          }`,
      ]),
      60,
    ));
    return 0;
  } finally {
    await store.close();
  }
}
