/**
 * `hookscope serve`: answers Claude Code `type: "http"` hooks at `POST /claude/hooks` from one
 * warm process, over the session store. Keeps no state of its own beyond the store, so several
 * processes over one PostgreSQL store answer one session's events consistently.
 *
 * @module
 */

import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import process from "node:process";
import { resolve } from "node:path";
import { timingSafeEqual } from "node:crypto";
import { loadPolicy } from "../claude/load_policy.ts";
import { flagHelp, type FlagSpec, parseFlags } from "./_args.ts";
import { displayDb, openOrCreateDb } from "./_db.ts";
import { CliError, type CliIO, UsageError } from "./_output.ts";
import {
  answerInStore,
  asciiJson,
  failedAnswer,
  MAX_EVENT_BYTES,
  readLimited,
} from "./_claude_events.ts";

const FLAGS: Record<string, FlagSpec> = {
  policy: {
    type: "string",
    help: "a .ts/.js module exporting policy, or a .json Claude settings file",
  },
  db: { type: "string", help: "SQLite file or postgres:// URL (default .hookscope/sessions.db)" },
  host: { type: "string", help: "address to listen on (default 127.0.0.1)" },
  port: { type: "string", help: "port (default 8787; 0 picks a free one)" },
  "token-env": {
    type: "string",
    help: "environment variable holding the bearer token (required off loopback)",
  },
  "timeout-ms": { type: "string", help: "longest wait for the policy per event (default 20000)" },
};

/** Help text for `hookscope serve`. */
export const SERVE_HELP: string =
  `Usage: hookscope serve --policy FILE [--db URL] [--host 127.0.0.1] [--port 8787] [--token-env NAME]

Answers Claude Code http hooks: POST /claude/hooks takes the hook event JSON and answers the
protocol's JSON; GET /healthz answers ok. Binds 127.0.0.1 unless --host says otherwise; any other
address needs --token-env (requests then need 'Authorization: Bearer TOKEN'). Bodies over 1 MiB
are refused. A policy that fails or times out denies a PreToolUse (fail closed).
Prints 'listening on http://HOST:PORT' once ready.

${flagHelp(FLAGS)}`;

function isLoopback(host: string): boolean {
  return host === "127.0.0.1" || host === "::1" || host === "localhost" || /^127\./.test(host);
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = typeof body === "string" ? body : asciiJson(body);
  res.writeHead(status, {
    "content-type": typeof body === "string" ? "text/plain; charset=utf-8" : "application/json",
    "cache-control": "no-store",
    // A refusal may leave the request body unread: the connection is not reused after it.
    ...(status >= 400 ? { connection: "close" } : {}),
  });
  res.end(text);
}

/** Runs `hookscope serve` until the process is stopped; returns the exit code. */
export async function serveCommand(args: readonly string[], io: CliIO): Promise<number> {
  const { values } = parseFlags("serve", args, FLAGS);
  if (values.help) {
    io.out(SERVE_HELP);
    return 0;
  }
  const policyFile = values.policy as string | undefined;
  if (policyFile === undefined) {
    throw new UsageError(
      "hookscope serve: --policy FILE is required; see 'hookscope serve --help'",
    );
  }
  const host = (values.host as string | undefined) ?? "127.0.0.1";
  const port = Number(values.port ?? 8787);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new UsageError("hookscope serve: --port must be 0..65535");
  }
  const timeoutMs = Number(values["timeout-ms"] ?? 20_000);
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 600_000) {
    throw new UsageError("hookscope serve: --timeout-ms must be an integer from 1 to 600000");
  }
  const tokenEnv = values["token-env"] as string | undefined;
  const token = tokenEnv === undefined ? undefined : process.env[tokenEnv];
  if (tokenEnv !== undefined && !token) {
    throw new UsageError(`hookscope serve: the environment variable ${tokenEnv} is empty`);
  }
  if (!isLoopback(host) && token === undefined) {
    throw new UsageError(
      `hookscope serve: --host ${host} is not a loopback address: give --token-env NAME`,
    );
  }
  let policy;
  try {
    policy = await loadPolicy(policyFile);
  } catch (error) {
    throw new CliError((error as Error).message, { cause: error });
  }
  const db = (values.db as string | undefined) ?? resolve(".hookscope/sessions.db");
  const store = await openOrCreateDb(db);
  const known = new Set<string>();
  const pending = new Set<Promise<void>>();
  const expected = token === undefined ? undefined : new TextEncoder().encode(`Bearer ${token}`);
  const authorized = (req: IncomingMessage): boolean => {
    if (expected === undefined) return true;
    const given = new TextEncoder().encode(String(req.headers.authorization ?? ""));
    return given.length === expected.length && timingSafeEqual(given, expected);
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? "/").split("?")[0];
    if (req.method === "GET" && path === "/healthz") return send(res, 200, "ok");
    if (path !== "/claude/hooks") return send(res, 404, { error: "not found" });
    if (req.method !== "POST") return send(res, 405, { error: "use POST" });
    if (!authorized(req)) return send(res, 401, { error: "missing or wrong bearer token" });
    if (!/^application\/json\b/i.test(String(req.headers["content-type"] ?? ""))) {
      return send(res, 415, { error: "the body must be application/json" });
    }
    const declared = Number(req.headers["content-length"] ?? 0);
    if (declared > MAX_EVENT_BYTES) {
      return send(res, 413, { error: `the body is larger than ${MAX_EVENT_BYTES} bytes` });
    }
    let event: unknown;
    try {
      event = JSON.parse(
        await readLimited(req as AsyncIterable<Uint8Array>, MAX_EVENT_BYTES, timeoutMs),
      );
    } catch (error) {
      const message = (error as Error)?.message ?? String(error);
      return send(res, /larger than/.test(message) ? 413 : 400, {
        error: `cannot read the event: ${message}`,
      });
    }
    try {
      // Answer first, record after: the decision's signal is written once the answer is sent
      // (a failed write is reported on stderr; stopping the server waits for pending writes).
      let recorded: Promise<void> | undefined;
      const answer = await answerInStore(store, policy, event, timeoutMs, {
        known,
        deferRecord: (promise) => void (recorded = promise),
      });
      send(res, 200, answer.output);
      if (recorded) {
        pending.add(recorded);
        await recorded.catch((error) =>
          io.err(`hookscope serve: cannot record a decision: ${(error as Error)?.message ?? error}`)
        );
        pending.delete(recorded);
      }
      return;
    } catch (error) {
      // Claude Code treats a non-2xx answer as a non-blocking error (the call would run):
      // answer a failed PreToolUse with a deny instead, so the hook fails closed.
      const { output, blocks } = failedAnswer(
        event,
        `hookscope serve: ${(error as Error)?.message ?? error}`,
      );
      return blocks && Object.keys(output).length === 0
        ? send(res, 400, { error: "not a Claude hook event" })
        : send(res, 200, output);
    }
  };
  const server = createServer((req, res) => {
    handle(req, res).catch((error) => {
      if (!res.headersSent) send(res, 500, { error: String((error as Error)?.message ?? error) });
    });
  });
  server.requestTimeout = timeoutMs + 10_000;
  server.headersTimeout = 10_000;
  await new Promise<void>((ready, failed) => {
    server.once("error", failed);
    server.listen(port, host, () => ready());
  });
  const address = server.address() as { port: number };
  io.out(
    `listening on http://${host.includes(":") ? `[${host}]` : host}:${address.port} (store ${
      displayDb(db)
    })`,
  );
  await new Promise<void>((stopped) => {
    const stop = () => server.close(() => stopped());
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  await Promise.allSettled([...pending]);
  await store.close();
  return 0;
}
