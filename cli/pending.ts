/**
 * `hookscope pending DB`: the tool calls waiting for a person's approval.
 *
 * @module
 */

import { flagHelp, type FlagSpec, parseFlags } from "./_args.ts";
import { displayDb, formatTime, openExistingDb } from "./_db.ts";
import { renderArgs } from "./_fold.ts";
import { changeLines } from "./_changes.ts";
import { type CliIO, UsageError } from "./_output.ts";
import { renderTable } from "./_table.ts";

const FLAGS: Record<string, FlagSpec> = {
  session: { type: "string", help: "only this session's runs" },
  run: { type: "string", help: "only this run" },
  full: {
    type: "boolean",
    help: "show every argument unfolded (long values are folded otherwise)",
  },
  json: { type: "boolean", help: "print JSON" },
};

/** Help text for `hookscope pending`. */
export const PENDING_HELP: string =
  `Usage: hookscope pending DB [--session ID] [--run ID] [--full] [--json]

Lists the tool calls waiting for approval in the SQLite file DB (runs that stopped because a
tool.pre hook asked, or a tool.effects hook asked about the change set of a staged run: then
the change set is listed too), oldest run first, with the answers given so far. Answer them with
'hookscope approve' or 'hookscope reject', then continue the run with 'hookscope resume'.

Every argument of every call is shown, wrapped. A value longer than 1200 characters, and a run
of 16 or more blanks, is folded with a marker ("… [folded 1234 chars; hookscope pending DB
--full] …") that keeps its head and its tail; --full (or --json) shows everything.

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
      [
        "CALL",
        "TOOL",
        "RUN",
        "SESSION",
        "REQUESTED",
        "REASON",
        "WHO MAY ANSWER",
        "EXPIRES",
        "ANSWER",
      ],
      rows.map((row) => [
        row.interrupted ? `${row.callId} (interrupted)` : row.callId,
        row.toolName,
        row.runId,
        row.sessionId ?? "-",
        formatTime(row.requestedAt),
        row.reason ?? "-",
        row.answerableBy === undefined ? "anyone" : row.answerableBy.join(", "),
        row.expiresAt === undefined
          ? "never"
          : `${formatTime(row.expiresAt)}${row.expiresAt <= Date.now() ? " (expired)" : ""}`,
        row.answer === undefined
          ? "-"
          : `${row.answer.approve ? "approve" : "reject"}${
            row.answer.by ? ` by ${row.answer.by}` : ""
          }`,
      ]),
      60,
    ));
    // The arguments a person approves, whole: never cut, folded only with a marker.
    const hint = `hookscope pending ${displayDb(positionals[0])} --full`;
    for (const row of rows) {
      if (row.interrupted) {
        io.out(
          `\n${row.callId} was started by a resumer whose claim was released: it may have run. It runs again only if approved again.`,
        );
      }
      io.out(
        `\narguments of ${row.callId} (${row.toolName}, hash ${
          row.argsHash?.slice(0, 12) ?? "-"
        }):`,
      );
      for (const line of renderArgs(row.args, { hint, full: values.full === true })) io.out(line);
      if (row.effects !== undefined) {
        io.out(
          `change set of ${row.callId} (${row.effects.count} entr${
            row.effects.count === 1 ? "y" : "ies"
          }, hash ${
            row.effects.hash.slice(0, 12)
          }): the command has run in a staged copy; approving commits exactly these changes (it does not run again)${
            row.expiresAt === undefined ? "" : `, until ${formatTime(row.expiresAt)}`
          }`,
        );
        for (const line of changeLines(row.effects.changes, row.effects.count)) io.out(line);
      }
    }
    return 0;
  } finally {
    await store.close();
  }
}
