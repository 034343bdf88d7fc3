/**
 * `hookscope tail URL [SESSION]`: follows the signals that any process writes to a PostgreSQL
 * store, live, until interrupted.
 *
 * @module
 */

import process from "node:process";
import { summarize } from "../core/json_safe.ts";
import type { SignalRow } from "../store/session_store.ts";
import { flagHelp, type FlagSpec, parseFlags } from "./_args.ts";
import { displayDb, formatTime, isDbUrl, openToFollow } from "./_db.ts";
import { CliError, type CliIO, UsageError } from "./_output.ts";
import { signalDetail } from "./show.ts";

const FLAGS: Record<string, FlagSpec> = {
  all: { type: "boolean", help: "print what is stored first, then follow" },
  messages: { type: "boolean", help: "print messages too" },
  json: { type: "boolean", help: "print one JSON object per line" },
};

/** Help text for `hookscope tail`. */
export const TAIL_HELP: string = `Usage: hookscope tail URL [SESSION] [--all] [--messages] [--json]

Follows the signals written to the PostgreSQL store at URL (postgres://…, ?schema=NAME for a
schema other than "hookscope") by every process, as they are committed, until interrupted
(Ctrl-C exits 0). With SESSION only that session's. A schema without hookscope tables yet is
created (said on stderr), so tail can be started before the first agent writes.

${flagHelp(FLAGS)}`;

/**
 * Runs `hookscope tail`; returns the exit code once `signal` aborts or the process gets SIGINT
 * (0), or when the store fails (a thrown `CliError`).
 */
export async function tailCommand(
  args: readonly string[],
  io: CliIO,
  options: { signal?: AbortSignal } = {},
): Promise<number> {
  const { values, positionals } = parseFlags("tail", args, FLAGS);
  if (values.help) {
    io.out(TAIL_HELP);
    return 0;
  }
  if (positionals.length < 1 || positionals.length > 2) {
    throw new UsageError(
      `hookscope tail: expected URL and an optional SESSION; see 'hookscope tail --help'`,
    );
  }
  const [url, sessionId] = positionals;
  if (!isDbUrl(url)) {
    throw new UsageError(
      `hookscope tail: ${JSON.stringify(url)} is not a postgres:// URL; live following needs a ` +
        "PostgreSQL store (for a SQLite file use 'hookscope show')",
    );
  }
  const { store, created } = await openToFollow(url);
  if (created) {
    io.err(
      `created schema ${
        JSON.stringify(new URL(url).searchParams.get("schema") ?? "hookscope")
      } in ${displayDb(url)}: it had no hookscope tables yet; waiting for the first signals ` +
        "(check the ?schema= name if you expected some)",
    );
  }
  const controller = new AbortController();
  const stop = () => controller.abort();
  options.signal?.addEventListener("abort", stop, { once: true });
  if (options.signal?.aborted) stop();
  process.on("SIGINT", stop);
  try {
    const { PostgresStore } = await import("../store/postgres/mod.ts");
    if (!(store instanceof PostgresStore)) {
      throw new CliError("Cannot follow: not a PostgreSQL store");
    }
    const changes = store.subscribe({
      ...(sessionId === undefined ? {} : { sessionId }),
      ...(values.all ? { afterSeq: 0 } : {}),
      signal: controller.signal,
    });
    try {
      await changes.ready;
    } catch (error) {
      throw new CliError(
        `Cannot follow ${JSON.stringify(displayDb(url))}: ${(error as Error).message}`,
        { cause: error },
      );
    }
    if (!values.json) {
      io.err(
        `following ${sessionId === undefined ? "every session" : `session ${sessionId}`} in ${
          displayDb(url)
        } (Ctrl-C to stop)`,
      );
    }
    const printed = new Set<string>();
    try {
      for await (const change of changes) {
        if (change.type === "message" && !values.messages) continue;
        // A message printed on its own line: its MessageAdded signal adds nothing to it.
        if (!values.json && change.type === "signal" && change.kind === "MessageAdded") {
          const ref = (change.payload as { messageRef?: { id?: unknown } } | null)?.messageRef;
          if (typeof ref?.id === "string" && printed.has(ref.id)) continue;
        }
        if (change.type === "message" && !values.json) {
          if (printed.size >= 10_000) printed.clear();
          printed.add(change.id);
        }
        if (values.json) {
          io.out(JSON.stringify(change));
        } else if (change.type === "signal") {
          io.out(
            `${formatTime(change.ts)}  ${change.sessionId}  #${change.seq}  ${change.kind}  ${
              signalDetail({ kind: change.kind, payload: change.payload as SignalRow["payload"] })
            }`,
          );
        } else {
          io.out(
            `${formatTime(change.createdAt)}  ${change.sessionId ?? "-"}  message ${change.role}  ${
              summarize(change.content, 160)
            }`,
          );
        }
      }
    } catch (error) {
      throw new CliError(
        `Lost ${JSON.stringify(displayDb(url))}: ${(error as Error).message}`,
        { cause: error },
      );
    }
    return 0;
  } finally {
    process.off("SIGINT", stop);
    options.signal?.removeEventListener("abort", stop);
    await store.close();
  }
}
