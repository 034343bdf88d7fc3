/**
 * `hookscope replay`: re-evaluates recorded tool calls under a policy file and reports which
 * verdicts change — a CI gate for a policy change.
 *
 * @module
 */

import { loadPolicy } from "../claude/load_policy.ts";
import { type DecisionChange, replayDecisions } from "../session/replay.ts";
import { flagHelp, type FlagSpec, parseFlags } from "./_args.ts";
import { formatTime, openExistingDb } from "./_db.ts";
import { CliError, type CliIO, UsageError } from "./_output.ts";
import { renderTable } from "./_table.ts";

const FLAGS: Record<string, FlagSpec> = {
  policy: {
    type: "string",
    help: "a .ts/.js module exporting policy, or a .json Claude settings file",
  },
  all: { type: "boolean", help: "replay every session in DB" },
  since: { type: "string", help: "only calls recorded at or after this ISO date" },
  json: { type: "boolean", help: "print JSON" },
  "timeout-ms": { type: "string", help: "longest wait for the policy per call (default 10000)" },
};

/** Help text for `hookscope replay`. */
export const REPLAY_HELP: string =
  `Usage: hookscope replay DB [SESSION…] [--all] --policy FILE [--json] [--since ISO_DATE]

Re-evaluates every recorded tool.pre of the sessions (hookscope sessions and Claude Code sessions
answered by 'hookscope hook' or 'serve') under the policy, with the arguments as the model sent
them, and reports each call whose outcome changes (deny, ask, or runs) or whose rewrite differs.
Nothing runs and nothing is written (DB is opened read-only). Exit codes: 0 nothing changed,
1 something changed, 2 usage error.

${flagHelp(FLAGS)}`;

/** Runs `hookscope replay`; returns the exit code. */
export async function replayCommand(args: readonly string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseFlags("replay", args, FLAGS);
  if (values.help) {
    io.out(REPLAY_HELP);
    return 0;
  }
  const [db, ...sessions] = positionals;
  if (db === undefined) {
    throw new UsageError("hookscope replay: expected DB; see 'hookscope replay --help'");
  }
  if (values.policy === undefined) {
    throw new UsageError("hookscope replay: --policy FILE is required");
  }
  if ((sessions.length === 0) === (values.all !== true)) {
    throw new UsageError("hookscope replay: give SESSION ids or --all (not both)");
  }
  let since: number | undefined;
  if (values.since !== undefined) {
    since = Date.parse(values.since as string);
    if (Number.isNaN(since)) {
      throw new UsageError(
        `hookscope replay: --since must be an ISO date; got ${JSON.stringify(values.since)}`,
      );
    }
  }
  const timeoutMs = Number(values["timeout-ms"] ?? 10_000);
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1) {
    throw new UsageError("hookscope replay: --timeout-ms must be a positive integer");
  }
  let policy;
  try {
    policy = await loadPolicy(values.policy as string);
  } catch (error) {
    throw new CliError((error as Error).message, { cause: error });
  }
  const store = await openExistingDb(db);
  const changes: DecisionChange[] = [];
  let replayed = 0;
  try {
    const ids = values.all ? (await store.listSessions()).map((s) => s.id) : sessions;
    for (const id of ids) {
      if (!values.all && (await store.getSession(id)) === undefined) {
        throw new CliError(`No session ${JSON.stringify(id)} in ${JSON.stringify(db)}`);
      }
      for await (
        const change of replayDecisions(store, id, policy, {
          includeUnchanged: true,
          timeoutMs,
          ...(since === undefined ? {} : { since }),
        })
      ) {
        replayed++;
        if (change.changed) changes.push(change);
      }
    }
    const unchanged = replayed - changes.length;
    if (values.json) {
      io.out(
        JSON.stringify(
          {
            sessions: ids.length,
            replayed,
            unchanged,
            changed: changes.map(({ changed: _, ...c }) => c),
          },
          null,
          2,
        ),
      );
      return changes.length ? 1 : 0;
    }
    io.out(
      `${ids.length} session(s), ${replayed} call(s) replayed: ${changes.length} changed, ${unchanged} unchanged`,
    );
    if (changes.length) {
      const groups = new Map<string, { row: string[]; count: number }>();
      for (const c of changes) {
        const key = [c.toolName, c.hook ?? "-", `${c.recorded} → ${c.replayed}`].join("\u0000");
        const group = groups.get(key) ??
          { row: [c.toolName, c.hook ?? "-", `${c.recorded} → ${c.replayed}`], count: 0 };
        group.count++;
        groups.set(key, group);
      }
      io.out("");
      io.out(
        renderTable(
          ["TOOL", "HOOK", "VERDICT", "CALLS"],
          [...groups.values()].map((g) => [...g.row, String(g.count)]),
        ),
      );
      io.out("");
      io.out(renderTable(
        ["TIME", "SESSION", "CALL", "TOOL", "VERDICT", "WHY", "ARGS"],
        changes.map((c) => [
          formatTime(c.ts),
          c.sessionId,
          c.callId,
          c.toolName,
          `${c.recorded} → ${c.replayed}`,
          c.error
            ? `policy failed: ${c.error}`
            : c.reason ?? (c.updatedArgs ? "rewrites the arguments" : "-"),
          JSON.stringify(c.updatedArgs ? { args: c.args, now: c.updatedArgs } : c.args),
        ]),
        100,
      ));
    }
    return changes.length ? 1 : 0;
  } finally {
    await store.close();
  }
}
