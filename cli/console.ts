/**
 * `hookscope console DB`: the web console over a session store, without the hook endpoint.
 *
 * @module
 */

import process from "node:process";
import { consoleHandler, parseConsoleTokens } from "../console/handler.ts";
import { listen } from "./_http_listen.ts";
import { isLoopback, parsePort } from "./_listen_flags.ts";
import { flagHelp, type FlagSpec, parseFlags, requirePositionals } from "./_args.ts";
import { existsSync } from "node:fs";
import { displayDb, isDbUrl, openOrCreateDb, openWritableDb } from "./_db.ts";
import { CliError, type CliIO, UsageError } from "./_output.ts";

const FLAGS: Record<string, FlagSpec> = {
  host: { type: "string", help: "address to listen on (default 127.0.0.1)" },
  port: { type: "string", help: "port (default 8788; 0 picks a free one)" },
  "token-env": {
    type: "string",
    help: "environment variable with the answer token(s) (default HOOKSCOPE_CONSOLE_TOKEN)",
  },
  "effects-dir": {
    type: "string",
    help: "where the coding toolkit keeps checkpoints (its effectsDir; default: its default)",
  },
  "no-undo": { type: "boolean", help: "offer no undo of committed change sets" },
};

/** Help text for `hookscope console`. */
export const CONSOLE_HELP: string =
  `Usage: hookscope console DB [--host 127.0.0.1] [--port 8788] [--token-env NAME]
                         [--effects-dir DIR] [--no-undo]

Serves the web console over DB (an existing SQLite session database, or a postgres:// URL whose
schema is created when it has no hookscope tables yet): the sessions, a live
timeline of one session, and the tool calls waiting for a person, with approve, reject (with a
reason) and edit-then-approve; and an undo of the change sets the coding toolkit committed for a
session's calls (as hookscope undo, refused when later calls changed the same paths unless forced).

Answers need a bearer token, read from the environment variable NAME (default
HOOKSCOPE_CONSOLE_TOKEN): one token (answers are recorded as by "console"), or name=token pairs
separated by commas (answers are recorded as by that name). With a token set, every API request
needs it; without one the console is read-only, and listens on a loopback address only (another
--host needs a token). A --token-env variable that is not set is a usage error. Prints
'listening on http://HOST:PORT' once ready.

${flagHelp(FLAGS)}`;

/**
 * The store the console serves: a PostgreSQL schema (created when it has no hookscope tables yet,
 * so a console can wait for the first agent), or an existing hookscope SQLite file. A file that
 * does not exist is refused (a typo must not serve a new, empty database), as is another
 * application's file.
 */
async function openConsoleDb(db: string) {
  if (isDbUrl(db)) return await openOrCreateDb(db);
  if (!existsSync(db)) {
    throw new CliError(
      `Cannot open database ${
        JSON.stringify(db)
      }: no file there. The console serves an existing session database; 'hookscope hook --db ` +
        `FILE', 'hookscope serve --db FILE' and 'hookscope run --db FILE' create one (or any ` +
        `application that writes sessions with SqliteStore.open)`,
    );
  }
  return await openWritableDb(db);
}

/** Runs `hookscope console`; returns the exit code. */
export async function consoleCommand(args: readonly string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseFlags("console", args, FLAGS);
  if (values.help) {
    io.out(CONSOLE_HELP);
    return 0;
  }
  const [db] = requirePositionals("console", positionals, ["DB"]);
  const host = typeof values.host === "string" && values.host !== "" ? values.host : "127.0.0.1";
  const port = parsePort("console", values.port, 8788);
  const named = values["token-env"];
  if (named !== undefined && (typeof named !== "string" || named === "")) {
    throw new UsageError("hookscope console: --token-env needs the name of a variable");
  }
  const envName = named ?? "HOOKSCOPE_CONSOLE_TOKEN";
  const raw = process.env[envName] ?? "";
  // A variable named on purpose that is not set is a mistake, not a wish for a read-only console.
  if (named !== undefined && raw === "") {
    throw new UsageError(`hookscope console: the environment variable ${named} is empty`);
  }
  let tokens: Record<string, string>;
  try {
    tokens = raw === "" ? {} : parseConsoleTokens(raw);
  } catch (error) {
    throw new UsageError(`hookscope console: ${envName}: ${(error as Error).message}`);
  }
  // Without a token every API read is open: only this machine may reach it then.
  if (!isLoopback(host) && Object.keys(tokens).length === 0) {
    throw new UsageError(
      `hookscope console: --host ${host} is not a loopback address: set a token (--token-env ` +
        `NAME, or HOOKSCOPE_CONSOLE_TOKEN), or listen on 127.0.0.1`,
    );
  }
  const store = await openConsoleDb(db);
  // Live streams never end by themselves: stopping ends them first, then the server.
  const stopping = new AbortController();
  const server = await listen(
    consoleHandler(store, {
      tokens,
      signal: stopping.signal,
      undo: values["no-undo"] !== true,
      ...(typeof values["effects-dir"] === "string" && values["effects-dir"] !== ""
        ? { effectsDirs: [values["effects-dir"]] }
        : {}),
    }),
    { host, port, requestTimeoutMs: 30_000 },
  );
  io.out(
    `listening on http://${host.includes(":") ? `[${host}]` : host}:${server.port} (store ${
      displayDb(db)
    }; ${Object.keys(tokens).length > 0 ? "answers need a token" : "read-only: no token set"})`,
  );
  await new Promise<void>((stopped) => {
    const stop = () => {
      stopping.abort();
      void server.close().then(stopped, stopped);
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  await store.close();
  return 0;
}
