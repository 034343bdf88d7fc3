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
import { isLoopback, parsePort } from "./_listen_flags.ts";
import { CliError, type CliIO, UsageError } from "./_output.ts";
import { answerInStore } from "./_claude_events.ts";
import {
  ANSWER_HEADER,
  ANSWER_HEADER_VALUE,
  asciiJson,
  blockAnything,
  failedAnswer,
  MAX_EVENT_BYTES,
} from "./_claude_wire.ts";
import { eventNameOf, readEventBody } from "./_event_body.ts";
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
address needs --token-env (requests then need 'Authorization: Bearer TOKEN'). Fails closed, always
with HTTP 200 (Claude Code runs the call on any other status): when the policy fails or times
out, or the request is not a whole event (over 1 MiB, not UTF-8 or JSON, no session_id), a
PreToolUse is denied and a UserPromptSubmit blocked; a request whose event cannot be told, or
without the right token, is answered {"continue": false, "decision": "block", ...}, which denies
a call, blocks a prompt and stops the run.
Prints 'listening on http://HOST:PORT' once ready.

${flagHelp(FLAGS)}`;

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
const lossy = new TextDecoder("utf-8");

/** The most read (and dropped) of a body past the event limit before the answer goes out. */
const MAX_DRAINED_BYTES = 64 * MAX_EVENT_BYTES;

/**
 * The refusal of a request at `POST /claude/hooks`, in the protocol's terms and with HTTP 200
 * (Claude Code runs the call on any other status): a `PreToolUse` is denied, a `UserPromptSubmit`
 * blocked, another named event answered `{}`, and a request whose event cannot be told gets the
 * answer that blocks any event. `closes`: the body was not read to its end.
 */
function refusal(event: unknown, reason: string, closes = false): Response {
  const { output, blocks } = failedAnswer(event, reason);
  const response = answer(
    blocks && Object.keys(output).length === 0 ? blockAnything(reason) : output,
  );
  if (closes) response.headers.set("connection", "close");
  return response;
}

/** The event's name as far as `bytes` (a body that could not be parsed whole) tell it. */
function namedBy(bytes: Uint8Array): { hook_event_name?: string } {
  const name = eventNameOf(lossy.decode(bytes));
  return name === undefined ? {} : { hook_event_name: name };
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
  const port = parsePort("serve", values.port, 8787);
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
  /** Reads, parses and answers one event; every refusal is an answer (see `refusal`). */
  const answerRequest = async (req: Request, signal: AbortSignal): Promise<Response> => {
    const refused = !authorized(req)
      ? "missing or wrong bearer token"
      : !/^application\/json\b/i.test(req.headers.get("content-type") ?? "")
      ? "the body must be application/json"
      : undefined;
    if (refused !== undefined) {
      // Nothing of the body is judged, but it is read to its end: closing a connection that
      // still has unread data resets it, and the answer could be lost (then the call runs).
      const dropped = await readEventBody(req.body, 0, MAX_DRAINED_BYTES, signal);
      return refusal(undefined, `hookscope serve: ${refused}`, dropped.ending !== "end");
    }
    const length = req.headers.get("content-length");
    const declared = length === null ? undefined : Number(length);
    let bytes: Uint8Array;
    if (declared !== undefined && Number.isSafeInteger(declared) && declared <= MAX_EVENT_BYTES) {
      // The server frames a body by its declared length: read it whole (without making the
      // body's stream).
      try {
        bytes = new Uint8Array(await abortable(req.arrayBuffer(), signal));
      } catch (error) {
        if (!signal.aborted) throw error;
        return refusal(
          undefined,
          `hookscope serve: cannot read the event: no complete event within ${timeoutMs} ms`,
          true,
        );
      }
    } else {
      const body = await readEventBody(req.body, MAX_EVENT_BYTES, MAX_DRAINED_BYTES, signal);
      if (body.ending !== "end" || body.size > MAX_EVENT_BYTES) {
        const why = body.ending === "deadline"
          ? `no complete event within ${timeoutMs} ms`
          : `the event is larger than ${MAX_EVENT_BYTES} bytes`;
        return refusal(
          namedBy(body.bytes),
          `hookscope serve: cannot read the event: ${why}`,
          body.ending !== "end",
        );
      }
      bytes = body.bytes;
    }
    let event: unknown;
    try {
      if (bytes.length === 0) throw new Error("the body is empty");
      event = JSON.parse(utf8.decode(bytes));
      if (event === null || typeof event !== "object" || Array.isArray(event)) {
        throw new Error("the event is not a JSON object");
      }
    } catch (error) {
      return refusal(
        namedBy(bytes),
        `hookscope serve: cannot read the event: ${(error as Error)?.message ?? error}`,
      );
    }
    try {
      // Answer first, record after: the event's writes are queued behind the answer (a failed
      // write is reported on stderr; stopping the server waits for pending writes).
      const answered = await answerInStore(store, policy, event, Infinity, {
        known,
        writeBehind,
        signal,
        deferRecord: (recorded) => void record(recorded),
      });
      return answer(answered.output);
    } catch (error) {
      return refusal(event, `hookscope serve: ${(error as Error)?.message ?? error}`);
    }
  };
  const handle = async (req: Request): Promise<Response> => {
    const path = pathOf(req.url);
    if (req.method === "GET" && path === "/healthz") return send(200, "ok");
    if (path !== "/claude/hooks") return await consoleHandle(req);
    if (req.method !== "POST") return send(405, { error: "use POST" });
    const request = deadlines.start();
    try {
      return await answerRequest(req, request.signal);
    } catch (error) {
      // Whatever went wrong, the request may be a PreToolUse: it fails closed.
      return refusal(undefined, `hookscope serve: ${(error as Error)?.message ?? error}`, true);
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
