/**
 * The console's HTTP side: a web-standard handler over a session store that serves the page, a
 * read API (sessions, a session's timeline, pending approvals) and one write, an answer. Every
 * answer needs a bearer token the operator configured (the token's name is who answered);
 * cross-site requests, bodies that are not JSON and bodies past the cap are refused.
 *
 * @module
 */

import { timingSafeEqual } from "node:crypto";
import { answerRecorded } from "../session/_answer.ts";
import type { RunAnswer, SessionStore } from "../store/session_store.ts";
import { ApprovalConflictError } from "../store/store_errors.ts";
import { CONSOLE_CSS, CONSOLE_HTML, CONSOLE_JS } from "./_page.ts";
import { eventStream, readSessions, readTimeline } from "./_events.ts";
import { LiveFeed } from "./_live.ts";
import { sessionCheckpoints, undoCall } from "./_undo.ts";
import { isRecord } from "../core/_util.ts";

/**
 * Removes the staged layers kept for a call that `answer` rules out (a rejection, or an approval
 * of another change set), under the toolkit's effects directories.
 */
async function dropKept(
  runId: string,
  sessionId: string | null,
  callId: string,
  answer: RunAnswer,
  effectsDirs: readonly string[] | undefined,
): Promise<void> {
  const { dropKeptLayers, effectsBases } = await import("../action/coding/_find_checkpoints.ts");
  await dropKeptLayers(effectsDirs ?? effectsBases(), {
    callId,
    runId,
    ...(sessionId ? { sessionId } : {}),
  }, answer);
}

/** Options of {@linkcode consoleHandler}. */
export interface ConsoleOptions {
  /**
   * Bearer tokens by the name of who holds them (`{ ana: "s3cret" }`). With none, the console
   * is read-only: every answer is refused. With some, every `/api/` request needs one.
   */
  readonly tokens?: Readonly<Record<string, string>>;
  /** Largest request body, in bytes (default 65 536). */
  readonly maxBodyBytes?: number;
  /** Most signals one timeline response carries (default 5 000). */
  readonly pageSize?: number;
  /**
   * How often the live stream looks for changes when the store has no change feed, in
   * milliseconds (default 50): a SQLite file is probed with `PRAGMA data_version` (no rows read),
   * another store is read. PostgreSQL's LISTEN/NOTIFY needs no polling.
   */
  readonly pollMs?: number;
  /**
   * With PostgreSQL, how often the live streams read again anyway, in milliseconds (default
   * 1 000): its change stream carries messages and signals (answers are recorded as signals), not
   * a run that is claimed or released.
   */
  readonly fallbackMs?: number;
  /**
   * How often a live stream sends a keep-alive comment, in milliseconds (default 5 000). The page
   * reads it from the `x-hookscope-keep-alive` header: a stream silent for three keep-alives (a
   * connection that died without closing, as behind a proxy or after a laptop slept) is dropped
   * and reopened from the cursor.
   */
  readonly keepAliveMs?: number;
  /** Most live streams open at once (default 32); more are refused with 503. */
  readonly maxStreams?: number;
  /**
   * Whether the console offers undo for the checkpoints of a session's calls (default `true`;
   * an undo needs the token like an answer). See `hookscope undo`.
   */
  readonly undo?: boolean;
  /**
   * Where the coding toolkit keeps checkpoints (its `effectsDir`; default: its default and the
   * temporary fallback, as `hookscope undo` looks).
   */
  readonly effectsDirs?: readonly string[];
  /** Ends every live stream (stop the console with it: a stream never ends by itself). */
  readonly signal?: AbortSignal;
}

/** A web-standard request handler. */
export type ConsoleHandler = (request: Request) => Promise<Response>;

const SECURITY_HEADERS: Record<string, string> = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
};

function reply(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { ...SECURITY_HEADERS, "content-type": "application/json; charset=utf-8" },
  });
}

function asset(body: string, type: string): Response {
  return new Response(body, { headers: { ...SECURITY_HEADERS, "content-type": type } });
}

/**
 * Parses a token setting: `name=token` pairs separated by commas, or one bare token (named
 * `console`). Empty parts are ignored.
 *
 * @example
 * ```ts
 * import { parseConsoleTokens } from "./handler.ts";
 * import assert from "node:assert/strict";
 *
 * assert.deepEqual(parseConsoleTokens("ana=a1,bo=b2"), { ana: "a1", bo: "b2" });
 * assert.deepEqual(parseConsoleTokens("only"), { console: "only" });
 * ```
 */
export function parseConsoleTokens(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const parts = text.split(",").map((p) => p.trim()).filter(Boolean);
  if (parts.length === 1 && !parts[0].includes("=")) return { console: parts[0] };
  for (const part of parts) {
    const at = part.indexOf("=");
    if (at <= 0 || at === part.length - 1) {
      throw new TypeError(
        `Cannot read console tokens: expected name=token, got a part without one`,
      );
    }
    out[part.slice(0, at)] = part.slice(at + 1);
  }
  return out;
}

function sameText(a: string, b: string): boolean {
  const x = new TextEncoder().encode(a);
  const y = new TextEncoder().encode(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Who holds the request's bearer token, or `null`. */
function holder(request: Request, tokens: Readonly<Record<string, string>>): string | null {
  const header = request.headers.get("authorization") ?? "";
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  if (match === null) return null;
  let found: string | null = null;
  for (const [name, token] of Object.entries(tokens)) {
    if (sameText(match[1], token)) found = name;
  }
  return found;
}

/** Why a state-changing request looks cross-site, or `null`. */
function crossSite(request: Request): string | null {
  const site = request.headers.get("sec-fetch-site");
  if (site !== null && site !== "same-origin" && site !== "none") {
    return `Sec-Fetch-Site is ${site}`;
  }
  const origin = request.headers.get("origin");
  if (origin !== null) {
    const host = request.headers.get("host") ?? new URL(request.url).host;
    let originHost: string;
    try {
      originHost = new URL(origin).host;
    } catch {
      return "a malformed Origin";
    }
    if (originHost !== host) return `Origin ${origin} is not this console`;
  }
  return null;
}

async function readBody(request: Request, cap: number): Promise<string | null> {
  const length = Number(request.headers.get("content-length") ?? "0");
  if (length > cap) return null;
  if (request.body === null) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > cap) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    all.set(chunk, at);
    at += chunk.length;
  }
  return new TextDecoder().decode(all);
}

/**
 * The console over `store`: `GET /` (the page), `GET /api/sessions`,
 * `GET /api/sessions/ID/timeline?afterSeq=N&messagesFrom=M&limit=L`, `GET /api/pending`,
 * `GET /api/events?session=ID&afterSeq=N&messagesFrom=M` (the live stream, fed by the store's
 * change stream), `GET /api/checkpoints?session=ID`, `POST /api/answer`, `POST /api/undo`. See
 * docs/approvals.md ("The console").
 *
 * @example A read-only console answers nothing
 * ```ts
 * import { consoleHandler } from "./handler.ts";
 * import { MemoryStore } from "../store/memory_store.ts";
 * import assert from "node:assert/strict";
 *
 * const handle = consoleHandler(new MemoryStore());
 * const answer = await handle(new Request("http://127.0.0.1/api/answer", { method: "POST" }));
 * assert.equal(answer.status, 403);
 * ```
 */
export function consoleHandler(store: SessionStore, options: ConsoleOptions = {}): ConsoleHandler {
  const tokens = options.tokens ?? {};
  const guarded = Object.keys(tokens).length > 0;
  const cap = options.maxBodyBytes ?? 65_536;
  const pageSize = options.pageSize ?? 5_000;
  const maxStreams = options.maxStreams ?? 32;
  const keepAliveMs = options.keepAliveMs ?? 5_000;
  if (typeof keepAliveMs !== "number" || !(keepAliveMs >= 10) || !(keepAliveMs <= 600_000)) {
    throw new TypeError(
      `Cannot create console handler: keepAliveMs must be a number from 10 to 600000; got ${
        String(keepAliveMs)
      }`,
    );
  }
  const undoOn = options.undo !== false;
  let feed: LiveFeed | undefined;
  let streams = 0;
  options.signal?.addEventListener("abort", () => feed?.close(), { once: true });
  const cursor = (value: string | null): number => {
    const n = Number(value ?? "0");
    return Number.isInteger(n) && n > 0 ? n : 0;
  };
  const answer = async (body: unknown, who: string): Promise<Response> => {
    if (
      !isRecord(body) || typeof body.runId !== "string" || typeof body.callId !== "string" ||
      typeof body.approve !== "boolean" || typeof body.argsHash !== "string"
    ) {
      return reply(400, {
        error: "an answer needs runId, callId, approve (boolean) and argsHash (what you saw)",
      });
    }
    const given: RunAnswer = { approve: body.approve, by: who, argsHash: body.argsHash };
    // A change-set approval names the change set the page showed.
    if (typeof body.effectsHash === "string") given.effectsHash = body.effectsHash;
    if (body.approve && body.updatedArgs !== undefined) {
      if (!isRecord(body.updatedArgs)) {
        return reply(400, { error: "updatedArgs must be an object" });
      }
      given.updatedArgs = body.updatedArgs;
    }
    if (!body.approve && body.reason !== undefined) {
      if (typeof body.reason !== "string") return reply(400, { error: "reason is text" });
      given.reason = body.reason;
    }
    try {
      const ok = await answerRecorded(store, body.runId, body.callId, given);
      if (!ok) return reply(404, { error: "that run does not wait for that call" });
      const run = await store.getRun(body.runId);
      const recorded = run?.answers[body.callId];
      if (recorded?.effectsHash !== undefined) {
        // A change set this answer rules out can never be committed: its kept layer goes now.
        await dropKept(run!.runId, run!.sessionId, body.callId, recorded, options.effectsDirs)
          .catch(() => {});
      }
      return reply(200, { ok: true, answer: run?.answers[body.callId] ?? given });
    } catch (error) {
      if (error instanceof ApprovalConflictError) {
        return reply(409, { error: error.message, why: error.why, answer: error.answer ?? null });
      }
      if (error instanceof TypeError) return reply(400, { error: error.message });
      throw error;
    }
  };
  const undo = async (body: unknown, who: string): Promise<Response> => {
    if (!undoOn) return reply(403, { error: "undo is turned off in this console" });
    if (
      !isRecord(body) || typeof body.session !== "string" || body.session === "" ||
      typeof body.callId !== "string" || body.callId === "" ||
      (body.force !== undefined && typeof body.force !== "boolean")
    ) {
      return reply(400, { error: "an undo needs session, callId and optionally force (boolean)" });
    }
    const outcome = await undoCall(
      store,
      body.session,
      body.callId,
      body.force === true,
      who,
      options.effectsDirs,
    );
    if (!outcome.ok) {
      const { ok: _ok, status, ...refusal } = outcome;
      return reply(status, refusal);
    }
    return reply(200, {
      ok: true,
      callId: body.callId,
      workspace: outcome.workspace,
      changes: outcome.changes,
    });
  };
  return async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const path = url.pathname;
    if (request.method === "GET" && (path === "/" || path === "/index.html")) {
      return asset(CONSOLE_HTML, "text/html; charset=utf-8");
    }
    if (request.method === "GET" && path === "/console.js") {
      return asset(CONSOLE_JS, "text/javascript; charset=utf-8");
    }
    if (request.method === "GET" && path === "/console.css") {
      return asset(CONSOLE_CSS, "text/css; charset=utf-8");
    }
    if (!path.startsWith("/api/")) return reply(404, { error: "not found" });
    const who = guarded ? holder(request, tokens) : null;
    if (path === "/api/answer" || path === "/api/undo") {
      const what = path === "/api/answer" ? "an answer" : "an undo";
      if (request.method !== "POST") return reply(405, { error: `POST ${what}` });
      const cross = crossSite(request);
      if (cross !== null) return reply(403, { error: `cross-site request refused (${cross})` });
      if (!guarded) {
        return reply(403, {
          error: "this console is read-only: no answer token is configured (--token-env)",
        });
      }
      if (who === null) return reply(401, { error: `a valid bearer token is needed for ${what}` });
      const type = request.headers.get("content-type") ?? "";
      if (!/^application\/json\b/i.test(type)) {
        return reply(415, { error: `${what} is application/json` });
      }
      const text = await readBody(request, cap);
      if (text === null) return reply(413, { error: `the body is larger than ${cap} bytes` });
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        return reply(400, { error: "the body is not JSON" });
      }
      return path === "/api/answer" ? await answer(body, who) : await undo(body, who);
    }
    if (request.method !== "GET") return reply(405, { error: "read with GET" });
    if (guarded && who === null) return reply(401, { error: "a valid bearer token is needed" });
    if (path === "/api/whoami") return reply(200, { name: who, canAnswer: guarded });
    if (path === "/api/sessions") return reply(200, await readSessions(store));
    if (path === "/api/checkpoints") {
      const session = url.searchParams.get("session");
      if (!session) return reply(400, { error: "name the session: ?session=ID" });
      if (!undoOn) return reply(200, { undo: false, checkpoints: [] });
      return reply(200, {
        undo: guarded,
        checkpoints: await sessionCheckpoints(store, session, options.effectsDirs),
      });
    }
    if (path === "/api/events") {
      if (options.signal?.aborted) return reply(503, { error: "the console is stopping" });
      if (streams >= maxStreams) {
        return reply(503, { error: `too many live streams (${maxStreams}); close a console tab` });
      }
      streams++;
      feed ??= new LiveFeed(store, {
        ...(options.pollMs === undefined ? {} : { pollMs: options.pollMs }),
        ...(options.fallbackMs === undefined ? {} : { fallbackMs: options.fallbackMs }),
      });
      const session = url.searchParams.get("session");
      const body = eventStream(store, feed, {
        ...(session ? { session } : {}),
        afterSeq: cursor(url.searchParams.get("afterSeq")),
        messagesFrom: cursor(url.searchParams.get("messagesFrom")),
      }, {
        pageSize,
        keepAliveMs,
        ...(options.signal === undefined ? {} : { signal: options.signal }),
        onEnd: () => streams--,
      });
      return new Response(body, {
        headers: {
          ...SECURITY_HEADERS,
          "content-type": "text/event-stream; charset=utf-8",
          "x-accel-buffering": "no",
          "x-hookscope-feed": feed.kind,
          "x-hookscope-keep-alive": String(keepAliveMs),
        },
      });
    }
    if (path === "/api/pending") {
      const sessionId = url.searchParams.get("session") ?? undefined;
      const rows = await store.listPendingApprovals(sessionId ? { sessionId } : undefined);
      return reply(200, rows);
    }
    const timeline = /^\/api\/sessions\/([^/]+)\/timeline$/.exec(path);
    if (timeline !== null) {
      let sessionId: string;
      try {
        sessionId = decodeURIComponent(timeline[1]);
      } catch {
        // `%ZZ`, or a `%` escape that is not UTF-8: not a session id, and not a server fault.
        return reply(400, { error: "the session id in the path is not valid percent-encoding" });
      }
      const asked = Number(url.searchParams.get("limit") ?? String(pageSize));
      const limit = Number.isInteger(asked) && asked > 0 ? Math.min(asked, pageSize) : pageSize;
      const page = await readTimeline(
        store,
        sessionId,
        cursor(url.searchParams.get("afterSeq")),
        cursor(url.searchParams.get("messagesFrom")),
        limit,
      );
      return reply(200, page);
    }
    return reply(404, { error: "not found" });
  };
}
