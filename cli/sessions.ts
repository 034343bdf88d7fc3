/**
 * `hookscope sessions DB`: the sessions persisted in a database.
 *
 * @module
 */

import { flagHelp, type FlagSpec, parseFlags, requirePositionals } from "./_args.ts";
import { formatTime, openExistingDb } from "./_db.ts";
import type { CliIO } from "./_output.ts";
import { renderTable } from "./_table.ts";

const FLAGS: Record<string, FlagSpec> = { json: { type: "boolean", help: "print JSON" } };

/** Help text for `hookscope sessions`. */
export const SESSIONS_HELP: string = `Usage: hookscope sessions DB [--json]

Lists the sessions persisted in DB (a SQLite file or a postgres:// URL), oldest first.

${flagHelp(FLAGS)}`;

/** Runs `hookscope sessions`; returns the exit code. */
export async function sessionsCommand(args: readonly string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseFlags("sessions", args, FLAGS);
  if (values.help) {
    io.out(SESSIONS_HELP);
    return 0;
  }
  const [path] = requirePositionals("sessions", positionals, ["DB"]);
  const store = await openExistingDb(path);
  try {
    const sessions = await store.listSessions();
    if (values.json) {
      io.out(JSON.stringify(sessions, null, 2));
      return 0;
    }
    if (sessions.length === 0) {
      io.out("no sessions");
      return 0;
    }
    const rows = [];
    for (const s of sessions) {
      const messages = await store.listMessages({ sessionId: s.id });
      const signals = await store.listSessionSignals(s.id);
      rows.push([
        s.id,
        s.status,
        s.model ?? "-",
        formatTime(s.startedAt),
        formatTime(s.endedAt),
        String(messages.length),
        String(signals.length),
      ]);
    }
    io.out(
      renderTable(["SESSION", "STATUS", "MODEL", "STARTED", "ENDED", "MESSAGES", "SIGNALS"], rows),
    );
    return 0;
  } finally {
    await store.close();
  }
}
