/**
 * `hookscope serve`: answers Claude Code `type: "http"` hooks at `POST /claude/hooks` from one
 * warm process, over the session store. Keeps no state of its own beyond the store, so several
 * processes over one PostgreSQL store answer one session's events consistently.
 *
 * @module
 */

import process from "node:process";
import { timingSafeEqual } from "node:crypto";
import { loadPolicy } from "../claude/load_policy.ts";
import { flagHelp, type FlagSpec, parseFlags } from "./_args.ts";
import { displayDb, openOrCreateDb, projectDb } from "./_db.ts";
import { CliError, type CliIO, UsageError } from "./_output.ts";
import { answerInStore } from "./_claude_events.ts";
import {
  ANSWER_HEADER,
  ANSWER_HEADER_VALUE,
  asciiJson,
  failedAnswer,
  MAX_EVENT_BYTES,
  readLimited,
} from "./_claude_wire.ts";
import { WriteBehind } from "./_write_behind.ts";
import { listen } from "./_http_listen.ts";
import { consoleHandler } from "../console/handler.ts";
import { abortable } from "../core/_async.ts";
import { RequestDeadlines } from "./_request_deadlines.ts";

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

function send(status: number, body: unknown): Response {
  const text = typeof body === "string" ? body : asciiJson(body);
  return new Response(text, {
    status,
    headers: {
      "content-type": typeof body === "string" ? "text/plain; charset=utf-8" : "application/json",
      "cache-control": "no-store",
    },
  });
}

/**
 * A request URL's path, as `new URL(url).pathname` gives it (which runs only for a path that is
 * not plain: percent signs, dot segments, backslashes).
 */
function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start < 0) return new URL(url).pathname;
  const query = url.indexOf("?", start);
  const path = query < 0 ? url.slice(start) : url.slice(start, query);
  return /^\/[A-Za-z0-9/_-]*$/.test(path) && !path.includes("//") ? path : new URL(url).pathname;
}

/** A protocol answer: marked, so a forwarder takes nothing else for one (fail closed). */
function answer(output: Record<string, unknown>): Response {
  return new Response(asciiJson(output), {
    status: 200,
    headers: {
      "content-type": "application/json",
      "cache-control": "no-store",
      [ANSWER_HEADER]: ANSWER_HEADER_VALUE,
    },
  });
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** A body of a declared length, as text, unless `signal` aborts first. */
async function readWhole(req: Request, signal: AbortSignal, timeoutMs: number): Promise<string> {
  try {
    return utf8.decode(await abortable(req.arrayBuffer(), signal));
  } catch (error) {
    if (signal.aborted && error === signal.reason) {
      throw new Error(`no complete event within ${timeoutMs} ms`);
    }
    throw error;
  }
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
  const db = (values.db as string | undefined) ?? projectDb(process.cwd());
  const store = await openOrCreateDb(db);
  const known = new Set<string>();
  const writeBehind = new WriteBehind(store);
  const pending = new Set<Promise<void>>();
  const expected = token === undefined ? undefined : new TextEncoder().encode(`Bearer ${token}`);
  const authorized = (req: Request): boolean => {
    if (expected === undefined) return true;
    const given = new TextEncoder().encode(req.headers.get("authorization") ?? "");
    return given.length === expected.length && timingSafeEqual(given, expected);
  };
  const record = async (recorded: Promise<void>) => {
    pending.add(recorded);
    await recorded.catch((error) =>
      io.err(`hookscope serve: cannot record a decision: ${(error as Error)?.message ?? error}`)
    );
    pending.delete(recorded);
  };
  // The web console at `/`: the same bearer token answers approvals (read-only without one).
  const stopping = new AbortController();
  const consoleHandle = consoleHandler(store, {
    ...(token === undefined ? {} : { tokens: { console: token } }),
    signal: stopping.signal,
  });
  // One deadline for each request (reading the event and the policy's answer), on one timer.
  const deadlines = new RequestDeadlines(
    timeoutMs,
    () => new Error(`the policy did not answer within ${timeoutMs} ms`),
  );
  const handle = async (req: Request): Promise<Response> => {
    const path = pathOf(req.url);
    if (req.method === "GET" && path === "/healthz") return send(200, "ok");
    if (path !== "/claude/hooks") return await consoleHandle(req);
    if (req.method !== "POST") return send(405, { error: "use POST" });
    if (!authorized(req)) return send(401, { error: "missing or wrong bearer token" });
    if (!/^application\/json\b/i.test(req.headers.get("content-type") ?? "")) {
      return send(415, { error: "the body must be application/json" });
    }
    const length = req.headers.get("content-length");
    const declared = length === null ? undefined : Number(length);
    if (declared !== undefined && declared > MAX_EVENT_BYTES) {
      return send(413, { error: `the body is larger than ${MAX_EVENT_BYTES} bytes` });
    }
    const request = deadlines.start();
    try {
      let event: unknown;
      try {
        let text: string;
        if (declared !== undefined && Number.isSafeInteger(declared)) {
          // The server frames a body by its declared length: read it whole (without making
          // the body's stream).
          if (declared === 0) throw new Error("the body is empty");
          text = await readWhole(req, request.signal, timeoutMs);
        } else {
          if (req.body === null) throw new Error("the body is empty");
          text = await readLimited(
            req.body as AsyncIterable<Uint8Array>,
            MAX_EVENT_BYTES,
            timeoutMs,
          );
        }
        event = JSON.parse(text);
      } catch (error) {
        const message = (error as Error)?.message ?? String(error);
        return send(/larger than/.test(message) ? 413 : 400, {
          error: `cannot read the event: ${message}`,
        });
      }
      try {
        // Answer first, record after: the event's writes are queued behind the answer (a failed
        // write is reported on stderr; stopping the server waits for pending writes).
        const answered = await answerInStore(store, policy, event, Infinity, {
          known,
          writeBehind,
          signal: request.signal,
          deferRecord: (recorded) => void record(recorded),
        });
        return answer(answered.output);
      } catch (error) {
        // Claude Code treats a non-2xx answer as a non-blocking error (the call would run):
        // answer a failed PreToolUse with a deny instead, so the hook fails closed.
        const { output, blocks } = failedAnswer(
          event,
          `hookscope serve: ${(error as Error)?.message ?? error}`,
        );
        return blocks && Object.keys(output).length === 0
          ? send(400, { error: "not a Claude hook event" })
          : answer(output);
      }
    } finally {
      request.done();
    }
  };
  const server = await listen(handle, { host, port, requestTimeoutMs: timeoutMs + 10_000 });
  io.out(
    `listening on http://${host.includes(":") ? `[${host}]` : host}:${server.port} (store ${
      displayDb(db)
    })`,
  );
  await new Promise<void>((stopped) => {
    const stop = () => {
      stopping.abort(); // the console's live streams end first
      void server.close().then(stopped, stopped);
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  deadlines.close();
  await Promise.allSettled([...pending]);
  await writeBehind.drained();
  await store.close();
  return 0;
}
