/**
 * {@linkcode PostgresStore}: a {@linkcode SessionStore} on PostgreSQL that many processes on many
 * machines share, with live subscriptions across them.
 *
 * @module
 */

import postgres from "postgres";
import type {
  MessageRecord,
  PendingApprovalFilter,
  PendingApprovalRow,
  RunAnswer,
  RunRecord,
  SessionRow,
  SessionStore,
  SignalInsert,
  SignalRow,
} from "../session_store.ts";
import { StoreClosedError, StoreConflictError, StoreUnavailableError } from "../store_errors.ts";
import {
  checkId,
  decodeText,
  messageFromColumns,
  normalizeBranchFields,
  normalizeMessage,
  normalizeMessageQuery,
  normalizeSessionFields,
  normalizeSessionRow,
  normalizeSignal,
  normalizeSignalQuery,
  presentSession,
  SESSION_FIELD_NAMES,
  sessionFromColumns,
} from "../_rows.ts";
import {
  normalizeAnswer,
  normalizePendingFilter,
  normalizeRun,
  pendingRowsOf,
  withAnswer,
  withClaim,
  withRelease,
} from "../_runs.ts";
import { PG_MIGRATIONS, PG_SCHEMA_VERSION } from "./_migrations.ts";
import { WriteQueue } from "./_write_queue.ts";
import { describePgError, isTransient, redactUrl } from "./_pg_errors.ts";
import { PgSubscription } from "./_subscription.ts";
import { PgListener } from "./_listener.ts";
import { guardClientDefect } from "./_client_guard.ts";
import type { StoreChange, StoreSubscription, SubscribeOptions } from "./store_change.ts";
import type { ListenHooks } from "./_listener.ts";

type Sql = postgres.Sql<Record<string, never>>;
type Row = Record<string, unknown>;

/** Options for {@linkcode PostgresStore.open}. */
export interface PostgresStoreOptions {
  /**
   * The PostgreSQL schema that holds this store's tables, created when absent (default
   * `"hookscope"`, or the URL's `?schema=` parameter). Letters, digits and `_`, at most 63.
   */
  schema?: string;
  /** Most connections the store opens at once (default 10; a subscription adds one listener). */
  max?: number;
  /**
   * Called with problems that do not reject a call: a dropped connection that was retried, a
   * notification listener that reconnected. Default: ignored.
   */
  onError?: (error: Error) => void;
  /** Deadline of every call, retries included, in milliseconds (default 30 000). */
  timeoutMs?: number;
  /**
   * Create the schema and apply missing migrations (default `true`). With `false` the schema
   * must already be at the current version (read-only viewers use this).
   */
  migrate?: boolean;
}

/** What {@linkcode PostgresStore.info} reports. */
export interface PostgresStoreInfo {
  /** The connection URL without its password. */
  readonly url: string;
  /** The schema holding the tables. */
  readonly schema: string;
  /** The schema version this store runs on. */
  readonly schemaVersion: number;
  /** The NOTIFY channel of this schema. */
  readonly channel: string;
  /** Write batches (multi-row statements) sent for messages and signals so far. */
  readonly writeBatches: number;
  /** Messages and signals sent in those batches. */
  readonly writtenRows: number;
}

/** One queued message or signal write. */
type Change =
  | { readonly kind: "message"; readonly row: MessageRecord }
  | { readonly kind: "signal"; readonly writeId: string; readonly row: SignalInsert };

const SCHEMA_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
const LOCK_CLASS = 0x686b73; // "hks": the advisory lock class of schema migrations
const MAX_BATCH = 1000;
// A free-text value that PostgreSQL cannot hold as an id: NUL or a lone surrogate.
// deno-lint-ignore no-control-regex
const BAD_ID = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function column(field: string): string {
  return field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

const SESSION_COLUMNS: readonly string[] = SESSION_FIELD_NAMES.map(column);

function isHookscopeError(error: unknown): boolean {
  return error instanceof TypeError || error instanceof StoreClosedError ||
    error instanceof StoreConflictError || error instanceof StoreUnavailableError;
}

// Free text is stored as JSON text (see _migrations.ts); numbers stay numbers.
function encodeText(value: string | null): string | null {
  return value === null ? null : JSON.stringify(value);
}

function toSql(value: unknown): string | number | null {
  if (value === undefined || value === null) return null;
  if (typeof value === "number") return value;
  return JSON.stringify(value);
}

function pgId(value: string, what: string, action: string): string {
  if (BAD_ID.test(value)) {
    throw new TypeError(
      `Cannot ${action}: ${what} cannot hold NUL or a lone surrogate in PostgreSQL; got ${
        JSON.stringify(value)
      }`,
    );
  }
  return value;
}

function toSession(row: Row): SessionRow {
  return sessionFromColumns(row, column);
}

function toMessage(row: Row): MessageRecord {
  return messageFromColumns(row);
}

function toSignal(row: Row): SignalRow {
  return {
    seq: Number(row.seq),
    sessionId: row.session_id as string,
    kind: row.kind as string,
    opId: decodeText(row.op_id) ?? "",
    ts: row.ts as number,
    payload: JSON.parse(row.payload as string),
  };
}

function toChange(row: Row): StoreChange {
  const changeSeq = Number(row.change_seq);
  return row.type === "signal"
    ? { type: "signal", changeSeq, ...toSignal(row) }
    : { type: "message", changeSeq, ...toMessage(row) };
}

function channelFor(schema: string): string {
  const name = `hookscope_${schema}`.toLowerCase();
  if (name.length <= 63) return name;
  let hash = 0x811c9dc5;
  for (let i = 0; i < schema.length; i++) {
    hash = Math.imul(hash ^ schema.charCodeAt(i), 0x01000193) >>> 0;
  }
  return `${name.slice(0, 54)}_${hash.toString(16).padStart(8, "0")}`;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Races `promise` against a deadline; the loser is ignored. */
function withDeadline<T>(promise: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(onTimeout()), Math.max(0, ms));
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

// How long one attempt of a retry-safe call may go unanswered before its pool is replaced.
const ATTEMPT_MS = 10_000;

class StuckAttempt extends Error {}

/**
 * Ends a pool, waiting at most `seconds` for running queries and never longer than that plus a
 * second: the client's `end()` can hang after a connection was lost.
 */
async function endPool(sql: Sql, seconds: number): Promise<void> {
  await withDeadline(sql.end({ timeout: seconds }), seconds * 1000 + 1000, () => new Error())
    .catch(() => {});
}

function parseOptions(url: unknown, options: unknown): {
  url: string;
  schema: string;
  max: number;
  onError: (error: Error) => void;
  timeoutMs: number;
  migrate: boolean;
} {
  const action = "open PostgreSQL store";
  if (typeof url !== "string" || !/^postgres(ql)?:\/\//.test(url)) {
    throw new TypeError(
      `Cannot ${action}: url must be a postgres:// or postgresql:// URL; got ${
        typeof url === "string" ? JSON.stringify(redactUrl(url)) : `(${typeof url})`
      }`,
    );
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TypeError(`Cannot ${action}: url ${JSON.stringify(redactUrl(url))} is not a URL`);
  }
  const fromUrl = parsed.searchParams.get("schema");
  parsed.searchParams.delete("schema");
  const o = (options ?? {}) as PostgresStoreOptions;
  if (typeof o !== "object") {
    throw new TypeError(`Cannot ${action}: options must be an object; got (${typeof o})`);
  }
  const schema = o.schema ?? fromUrl ?? "hookscope";
  if (typeof schema !== "string" || !SCHEMA_PATTERN.test(schema)) {
    throw new TypeError(
      `Cannot ${action}: schema must be letters, digits and "_" (at most 63, not starting with a digit); got ${
        JSON.stringify(schema)
      }`,
    );
  }
  const max = o.max ?? 10;
  if (typeof max !== "number" || !Number.isInteger(max) || max < 1) {
    throw new TypeError(`Cannot ${action}: max must be a positive integer; got ${String(max)}`);
  }
  const timeoutMs = o.timeoutMs ?? 30_000;
  if (typeof timeoutMs !== "number" || !(timeoutMs > 0) || !Number.isFinite(timeoutMs)) {
    throw new TypeError(
      `Cannot ${action}: timeoutMs must be a positive number; got ${String(timeoutMs)}`,
    );
  }
  if (o.onError !== undefined && typeof o.onError !== "function") {
    throw new TypeError(`Cannot ${action}: onError must be a function`);
  }
  const onError = o.onError ?? (() => {});
  return {
    url: parsed.toString(),
    schema,
    max,
    onError: (error) => {
      try {
        onError(error);
      } catch { /* a failing reporter must not break the store */ }
    },
    timeoutMs,
    migrate: o.migrate !== false,
  };
}

/**
 * A {@linkcode SessionStore} on PostgreSQL, with the same behaviour as `MemoryStore` and
 * `SqliteStore` (the store conformance suite runs against all three), for many worker processes
 * on many machines writing to one database.
 *
 * - One schema per store (`schema` option, created when absent). Versioned migrations run under a
 *   transaction-scoped advisory lock, so any number of processes may open a new schema at once.
 * - Messages and signals go through a small write queue: while one batch is in flight, later
 *   writes queue and are sent together in one multi-row call; each caller's promise resolves once
 *   its row is committed.
 * - A signal's `seq` counts per session without gaps or duplicates, however many processes write.
 *   Every message and signal also gets a store-wide `changeSeq`, increasing and never reused (not
 *   contiguous); {@linkcode PostgresStore.subscribe} follows it with LISTEN/NOTIFY and never sees a
 *   new change below one it has seen. Writers of different sessions share no lock: they commit in
 *   parallel (notifications are sent after the commit, outside the write).
 * - A dropped connection (a restarted server, `pg_terminate_backend`) is reported to `onError`
 *   and the call is retried until its deadline: writes are idempotent (messages by id, signals by
 *   a client-chosen write id), so a retried write is stored once. Other failures reject with
 *   {@linkcode StoreUnavailableError} carrying the driver's error as `cause`.
 * - Free text and JSON are stored as JSON text, so every JavaScript string round-trips exactly
 *   (NUL, lone surrogates); ids are stored as given and must not contain NUL or lone surrogates.
 *
 * @example Sessions, signals and a live subscription
 * ```ts
 * import { PostgresStore } from "@hookscope/core/store/postgres";
 * import assert from "node:assert/strict";
 * import process from "node:process";
 *
 * const url = process.env.HOOKSCOPE_PG_URL || "postgres://root@127.0.0.1:5432/test";
 * const store = await PostgresStore.open(url, { schema: "hookscope_docs" });
 * const sessionId = crypto.randomUUID();
 * await store.createSession({ id: sessionId, status: "running" });
 * const changes = store.subscribe({ sessionId, afterSeq: 0 });
 * await store.insertSessionSignal({ sessionId, kind: "ToolDenied", opId: "", ts: Date.now(), payload: {} });
 * for await (const change of changes) {
 *   assert.equal(change.type === "signal" && change.seq, 1);
 *   break; // ends the subscription
 * }
 * await store.close();
 * ```
 */
export class PostgresStore implements SessionStore {
  #sql: Sql;
  #connect: () => Sql;
  #retired: Sql[] = [];
  #url: string;
  #schema: string;
  #q: string;
  #channel: string;
  #timeoutMs: number;
  #onError: (error: Error) => void;
  #closed = false;
  #ended = false;
  #closing: Promise<void> | null = null;
  #queue: WriteQueue<Change>;
  #subscriptions = new Set<PgSubscription>();
  #lanes = new Map<string, Promise<void>>();
  #appendSql: string;
  #notice: { to: number; sessions: Set<string> | null } | null = null;
  #notifying: Promise<void> | null = null;
  #listener: PgListener;
  #unguard: () => void;

  private constructor(
    connect: () => Sql,
    connectListener: (hooks: ListenHooks) => Sql,
    config: { url: string; schema: string; timeoutMs: number; onError: (error: Error) => void },
  ) {
    this.#unguard = guardClientDefect();
    this.#connect = connect;
    this.#sql = connect();
    this.#url = redactUrl(config.url);
    this.#schema = config.schema;
    this.#q = `"${config.schema}"`;
    this.#channel = channelFor(config.schema);
    this.#timeoutMs = config.timeoutMs;
    this.#onError = config.onError;
    this.#listener = new PgListener(connectListener, {
      channel: this.#channel,
      attemptMs: ATTEMPT_MS,
      report: (message, cause) =>
        this.#onError(
          new StoreUnavailableError(
            `Cannot subscribe: PostgreSQL store ${JSON.stringify(this.#url)}: ${message}`,
            { cause },
          ),
        ),
    });
    this.#queue = new WriteQueue<Change>((batch) => this.#flush(batch), {
      maxBatch: MAX_BATCH,
      inFlight: 1,
    });
    this.#appendSql = `SELECT ${this.#q}.append_changes(` +
      "$1::int[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], " +
      "$8::text[], $9::float8[], $10::int[], $11::uuid[], $12::text[], $13::text[], " +
      "$14::text[], $15::float8[], $16::text[]) AS last";
  }

  /**
   * Connects to the database at `url` and migrates the store's schema to the current version.
   * Rejects with a `TypeError` for a malformed URL or option and with
   * {@linkcode StoreUnavailableError} when PostgreSQL does not answer in time, refuses the
   * connection, or holds a schema written by a newer hookscope.
   *
   * @example Open, use, close
   * ```ts
   * import { PostgresStore } from "@hookscope/core/store/postgres";
   * import assert from "node:assert/strict";
   * import process from "node:process";
   *
   * const url = process.env.HOOKSCOPE_PG_URL || "postgres://root@127.0.0.1:5432/test";
   * const store = await PostgresStore.open(`${url}?schema=hookscope_docs`);
   * assert.equal(store.info().schema, "hookscope_docs");
   * await store.close();
   * ```
   */
  static async open(url: string, options: PostgresStoreOptions = {}): Promise<PostgresStore> {
    const config = parseOptions(url, options);
    const connect = () =>
      postgres(config.url, {
        max: config.max,
        onnotice: () => {},
        connect_timeout: Math.max(1, Math.ceil(config.timeoutMs / 1000)),
        idle_timeout: 60,
      }) as unknown as Sql;
    // Subscriptions listen on a connection of their own (see _listener.ts).
    // `onnotify` and `onclose` are options of the client that its types do not list.
    const connectListener = (hooks: ListenHooks) =>
      postgres(config.url, {
        max: 1,
        onnotice: () => {},
        connect_timeout: Math.max(1, Math.ceil(config.timeoutMs / 1000)),
        idle_timeout: null as unknown as number,
        max_lifetime: null as unknown as number,
        fetch_types: false,
        ...{ onnotify: hooks.onnotify, onclose: hooks.onclose },
      } as postgres.Options<Record<string, never>>) as unknown as Sql;
    const store = new PostgresStore(connect, connectListener, config);
    try {
      await withDeadline(
        store.#migrate(config.migrate),
        config.timeoutMs,
        () => new Error(`no answer within ${config.timeoutMs} ms`),
      );
    } catch (error) {
      store.#closed = true;
      store.#ended = true;
      store.#unguard();
      await Promise.all([endPool(store.#sql, 0), store.#listener.end()]);
      if (error instanceof StoreUnavailableError) throw error;
      throw new StoreUnavailableError(
        `Cannot open PostgreSQL store ${JSON.stringify(store.#url)}: ${describePgError(error)}`,
        { cause: error },
      );
    }
    return store;
  }

  async #migrate(migrate: boolean): Promise<void> {
    const sql = this.#sql;
    const current = await this.#schemaVersion(sql);
    if (current > PG_SCHEMA_VERSION) throw this.#newer(current);
    if (current === PG_SCHEMA_VERSION) return;
    if (!migrate) {
      throw new StoreUnavailableError(
        `Cannot open PostgreSQL store ${JSON.stringify(this.#url)}: schema "${this.#schema}" ` +
          (current === 0
            ? "does not exist or holds no hookscope tables"
            : `is at version ${current} and needs migrating to version ${PG_SCHEMA_VERSION}`) +
          "; open it once with migrations enabled",
      );
    }
    await sql.begin(async (tx) => {
      // Other processes opening the same schema wait here; the first one migrates.
      await tx`SELECT pg_advisory_xact_lock(${LOCK_CLASS}::int, hashtext(${this.#schema}))`;
      const [exists] =
        await tx`SELECT 1 AS found FROM pg_namespace WHERE nspname = ${this.#schema}`;
      if (exists === undefined) await tx.unsafe(`CREATE SCHEMA ${this.#q}`);
      await tx.unsafe(
        `CREATE TABLE IF NOT EXISTS ${this.#q}.schema_migrations (version integer PRIMARY KEY, ` +
          "description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
      );
      const [{ version }] = await tx.unsafe(
        `SELECT coalesce(max(version), 0)::int AS version FROM ${this.#q}.schema_migrations`,
      );
      if (version > PG_SCHEMA_VERSION) throw this.#newer(version);
      for (const migration of PG_MIGRATIONS) {
        if (migration.version <= version) continue;
        for (const statement of migration.statements) {
          await tx.unsafe(statement.replaceAll("{s}", this.#q));
        }
        await tx.unsafe(
          `INSERT INTO ${this.#q}.schema_migrations (version, description) VALUES ($1, $2)`,
          [migration.version, migration.description],
        );
      }
    });
  }

  async #schemaVersion(sql: Sql): Promise<number> {
    const [row] = await sql`SELECT to_regclass(${`${this.#q}.schema_migrations`}) AS found`;
    if (row.found === null) return 0;
    const [{ version }] = await sql.unsafe(
      `SELECT coalesce(max(version), 0)::int AS version FROM ${this.#q}.schema_migrations`,
    );
    return version as number;
  }

  #newer(version: number): StoreUnavailableError {
    return new StoreUnavailableError(
      `Cannot open PostgreSQL store ${JSON.stringify(this.#url)}: schema "${this.#schema}" is at ` +
        `version ${version}, newer than version ${PG_SCHEMA_VERSION} that this hookscope supports`,
    );
  }

  /** Where the store is and how many batched writes it has sent. */
  info(): PostgresStoreInfo {
    return {
      url: this.#url,
      schema: this.#schema,
      schemaVersion: PG_SCHEMA_VERSION,
      channel: this.#channel,
      writeBatches: this.#queue.batches,
      writtenRows: this.#queue.items,
    };
  }

  /** Whether {@linkcode PostgresStore.close} was called. */
  get closed(): boolean {
    return this.#closed;
  }

  #use(operation: string): Sql {
    if (this.#closed) throw new StoreClosedError(operation, "PostgreSQL store");
    return this.#sql;
  }

  /**
   * Runs `body` after every earlier call on the same `key` has settled, so that writes to one
   * session, branch or sequence reach PostgreSQL in call order even when the caller does not
   * await them (the pool would otherwise run them on different connections in any order).
   */
  #lane<T>(key: string, body: () => Promise<T>): Promise<T> {
    const previous = this.#lanes.get(key) ?? Promise.resolve();
    const run = previous.then(body);
    const tail = run.then(() => {}, () => {});
    this.#lanes.set(key, tail);
    tail.then(() => {
      if (this.#lanes.get(key) === tail) this.#lanes.delete(key);
    });
    return run;
  }

  /**
   * Runs `body` with the store's deadline. A lost connection is reported and, when `retry` says
   * the operation is safe to repeat, retried with a growing pause until the deadline. An attempt
   * that neither succeeds nor fails within {@linkcode ATTEMPT_MS} (the client can strand a query
   * whose connection the server closed) is abandoned with its whole pool: later attempts and
   * calls use a fresh pool, and the old one is ended at close.
   */
  async #run<T>(
    operation: string,
    retry: boolean,
    body: (sql: Sql, attempt: number) => Promise<T>,
  ): Promise<T> {
    if (this.#ended) throw new StoreClosedError(operation, "PostgreSQL store");
    const deadline = Date.now() + this.#timeoutMs;
    const timedOut = () =>
      new StoreUnavailableError(
        `Cannot ${operation}: PostgreSQL store ${
          JSON.stringify(this.#url)
        } did not answer within ${this.#timeoutMs} ms`,
      );
    let pause = 25;
    for (let attempt = 1;; attempt++) {
      const sql = this.#sql;
      const remaining = deadline - Date.now();
      const stuck = retry && remaining > ATTEMPT_MS;
      try {
        return await withDeadline(
          body(sql, attempt),
          stuck ? ATTEMPT_MS : remaining,
          () => stuck ? new StuckAttempt() : timedOut(),
        );
      } catch (error) {
        if (isHookscopeError(error)) throw error;
        if (this.#ended) throw new StoreClosedError(operation, "PostgreSQL store");
        if (error instanceof StuckAttempt) {
          this.#retire(sql);
          this.#onError(
            new StoreUnavailableError(
              `Cannot ${operation}: PostgreSQL store ${
                JSON.stringify(this.#url)
              } gave no answer within ${ATTEMPT_MS} ms; retrying on new connections (attempt ${
                attempt + 1
              })`,
            ),
          );
          continue;
        }
        const failure = new StoreUnavailableError(
          `Cannot ${operation}: PostgreSQL store ${JSON.stringify(this.#url)} failed: ${
            describePgError(error)
          }`,
          { cause: error },
        );
        if (!retry || !isTransient(error) || Date.now() + pause >= deadline) throw failure;
        this.#onError(
          new StoreUnavailableError(`${failure.message}; retrying (attempt ${attempt + 1})`, {
            cause: error,
          }),
        );
        await delay(pause);
        pause = Math.min(pause * 2, 1000);
      }
    }
  }

  /**
   * Stops using `sql` for new calls (once); the old pool is ended in the background (what it still
   * runs gets 5 s). Subscriptions listen on a connection of their own (see _listener.ts).
   */
  #retire(sql: Sql): void {
    if (this.#sql !== sql || this.#ended) return;
    this.#sql = this.#connect();
    this.#retired.push(sql);
    void endPool(sql, 5).then(() => {
      this.#retired = this.#retired.filter((retired) => retired !== sql);
    });
  }

  async #flush(batch: readonly Change[]): Promise<void> {
    const seen = new Set<string>();
    const m = {
      ord: [] as number[],
      id: [] as string[],
      role: [] as string[],
      content: [] as string[],
      sender: [] as (string | null)[],
      recipient: [] as (string | null)[],
      branch: [] as (string | null)[],
      session: [] as (string | null)[],
      created: [] as number[],
    };
    const s = {
      ord: [] as number[],
      write: [] as string[],
      session: [] as string[],
      kind: [] as string[],
      op: [] as string[],
      ts: [] as number[],
      payload: [] as string[],
    };
    batch.forEach((change, index) => {
      const ord = index + 1;
      if (change.kind === "message") {
        const row = change.row;
        if (seen.has(row.id)) return; // the first of a batch wins, as in two separate inserts
        seen.add(row.id);
        m.ord.push(ord);
        m.id.push(row.id);
        m.role.push(row.role);
        m.content.push(JSON.stringify(row.content));
        m.sender.push(encodeText(row.sender));
        m.recipient.push(encodeText(row.recipient));
        m.branch.push(row.branchId);
        m.session.push(row.sessionId);
        m.created.push(row.createdAt);
      } else {
        const row = change.row;
        s.ord.push(ord);
        s.write.push(change.writeId);
        s.session.push(row.sessionId);
        s.kind.push(row.kind);
        s.op.push(encodeText(row.opId) as string);
        s.ts.push(row.ts);
        s.payload.push(JSON.stringify(row.payload));
      }
    });
    const what = s.ord.length === 0
      ? (m.ord.length === 1 ? "insert message" : `insert ${m.ord.length} messages`)
      : m.ord.length === 0
      ? (s.ord.length === 1 ? "insert session signal" : `insert ${s.ord.length} session signals`)
      : `insert ${m.ord.length} messages and ${s.ord.length} session signals`;
    // Safe to retry: stored message ids and signal write ids are skipped.
    const [{ last }] = await this.#run(what, true, (sql) =>
      sql.unsafe(this.#appendSql, [
        m.ord,
        m.id,
        m.role,
        m.content,
        m.sender,
        m.recipient,
        m.branch,
        m.session,
        m.created,
        s.ord,
        s.write,
        s.session,
        s.kind,
        s.op,
        s.ts,
        s.payload,
      ] as never[], { prepare: true }));
    this.#notify(Number(last), [...m.session, ...s.session]);
  }

  /**
   * Tells subscribers (of every process) that changes up to `to` of these sessions were
   * committed, after the commit and outside the write: NOTIFY takes PostgreSQL's cluster-wide
   * notification lock at commit, so notifying inside the write would make every writer wait for
   * the others. While one notification is in flight, later ones are merged into the next. The
   * notifying transaction commits without waiting for the WAL flush (a notification is not
   * durable anyway), so it holds that lock only briefly. A lost notification loses nothing:
   * subscribers read by change number and poll.
   */
  #notify(to: number, sessions: readonly (string | null)[]): void {
    const notice = this.#notice ??= { to, sessions: new Set() };
    notice.to = Math.max(notice.to, to);
    for (const session of sessions) {
      if (session === null) continue;
      notice.sessions?.add(session);
      if ((notice.sessions?.size ?? 0) > 100) notice.sessions = null; // "every session"
    }
    this.#notifying ??= this.#sendNotices().finally(() => {
      this.#notifying = null;
    });
  }

  async #sendNotices(): Promise<void> {
    for (let notice = this.#notice; notice !== null && !this.#ended; notice = this.#notice) {
      this.#notice = null;
      let sessions = notice.sessions === null ? "null" : JSON.stringify([...notice.sessions]);
      if (sessions.length > 7000) sessions = "null";
      const payload = `{"to":${notice.to},"s":${sessions}}`;
      try {
        await this.#run("notify subscribers", true, (sql) =>
          sql.unsafe(
            "SELECT set_config('synchronous_commit', 'off', true), pg_notify($1, $2)",
            [this.#channel, payload],
            { prepare: true },
          ));
      } catch (error) {
        if (!(error instanceof StoreClosedError)) this.#onError(error as Error);
      }
    }
  }

  /** Inserts a session row; an existing id rejects with {@linkcode StoreConflictError}. */
  async createSession(row: SessionRow): Promise<void> {
    this.#use("create session");
    const normalized = normalizeSessionRow(row) as unknown as Record<string, unknown>;
    const id = pgId(normalized.id as string, "id", "create session");
    const values: (string | number | null)[] = [id];
    for (const field of SESSION_FIELD_NAMES) values.push(toSql(normalized[field]));
    const placeholders = values.map((_, i) => `$${i + 1}`).join(", ");
    const text = `INSERT INTO ${this.#q}.sessions (id, ${SESSION_COLUMNS.join(", ")}) ` +
      `VALUES (${placeholders}) ON CONFLICT (id) DO NOTHING RETURNING id`;
    await this.#lane(
      `session:${id}`,
      () =>
        this.#run("create session", true, async (sql, attempt) => {
          const inserted = await sql.unsafe(text, values as never[], { prepare: true });
          if (inserted.length === 1) return;
          // A retry after a connection lost during the first attempt finds its own row: success.
          if (attempt > 1) {
            const [stored] = await sql.unsafe(`SELECT * FROM ${this.#q}.sessions WHERE id = $1`, [
              id,
            ]);
            if (
              stored !== undefined &&
              JSON.stringify(toSession(stored)) === JSON.stringify(presentSession(normalized))
            ) return;
          }
          throw new StoreConflictError(
            `Cannot create session: id ${JSON.stringify(id)} already exists`,
            id,
          );
        }),
    );
  }

  /** The row (`null` fields omitted), or `undefined`. */
  async getSession(id: string): Promise<SessionRow | undefined> {
    this.#use("get session");
    checkId(id, "id", "get session");
    const [row] = await this.#run(
      "get session",
      true,
      (sql) =>
        sql.unsafe(`SELECT * FROM ${this.#q}.sessions WHERE id = $1`, [
          pgId(id, "id", "get session"),
        ], {
          prepare: true,
        }),
    );
    return row === undefined ? undefined : toSession(row);
  }

  /** Every session row (`null` fields omitted), in creation order. */
  async listSessions(): Promise<SessionRow[]> {
    const rows = await this.#run(
      "list sessions",
      true,
      (sql) =>
        sql.unsafe(`SELECT * FROM ${this.#q}.sessions ORDER BY created`, [], { prepare: true }),
    );
    return rows.map(toSession);
  }

  /** Updates the given fields of an existing row; an unknown id changes nothing. */
  async updateSession(id: string, fields: Partial<SessionRow>): Promise<void> {
    this.#use("update session");
    checkId(id, "id", "update session");
    pgId(id, "id", "update session");
    const normalized = normalizeSessionFields(fields, "update session");
    const keys = Object.keys(normalized);
    if (keys.length === 0) return;
    const sets = keys.map((k, i) => `${column(k)} = $${i + 2}`).join(", ");
    const values = [id, ...keys.map((k) => toSql(normalized[k]))];
    // Setting the same values twice is harmless: safe to retry.
    await this.#lane(
      `session:${id}`,
      () =>
        this.#run(
          "update session",
          true,
          (sql) =>
            sql.unsafe(`UPDATE ${this.#q}.sessions SET ${sets} WHERE id = $1`, values as never[], {
              prepare: true,
            }),
        ),
    );
  }

  /** Sets `lastActivityAt` to now; an unknown id changes nothing. */
  async touchSessionActivity(id: string): Promise<void> {
    this.#use("touch session activity");
    checkId(id, "id", "touch session activity");
    pgId(id, "id", "touch session activity");
    await this.#lane(
      `session:${id}`,
      () =>
        this.#run("touch session activity", true, (sql) =>
          sql.unsafe(
            `UPDATE ${this.#q}.sessions SET last_activity_at = $2 WHERE id = $1`,
            [id, Date.now()],
            { prepare: true },
          )),
    );
  }

  /** Merges fields into a branch row, creating it when absent. */
  async updateBranch(id: string, fields: Record<string, unknown>): Promise<void> {
    this.#use("update branch");
    checkId(id, "id", "update branch");
    pgId(id, "id", "update branch");
    const normalized = normalizeBranchFields(fields);
    // Merging the same fields twice gives the same row: safe to retry.
    await this.#lane(
      `branch:${id}`,
      () =>
        this.#run("update branch", true, (sql) =>
          sql.begin(async (tx) => {
            await tx.unsafe(
              `INSERT INTO ${this.#q}.branches (id, fields) VALUES ($1, '{}') ON CONFLICT (id) DO NOTHING`,
              [id],
              { prepare: true },
            );
            const [row] = await tx.unsafe(
              `SELECT fields FROM ${this.#q}.branches WHERE id = $1 FOR UPDATE`,
              [id],
              { prepare: true },
            );
            const merged = { ...JSON.parse(row.fields as string), ...normalized };
            await tx.unsafe(
              `UPDATE ${this.#q}.branches SET fields = $2 WHERE id = $1`,
              [id, JSON.stringify(merged)],
              { prepare: true },
            );
          })),
    );
  }

  /** The branch row (with `id`), or `undefined`. */
  async getBranch(id: string): Promise<Record<string, unknown> | undefined> {
    this.#use("get branch");
    checkId(id, "id", "get branch");
    pgId(id, "id", "get branch");
    const [row] = await this.#run(
      "get branch",
      true,
      (sql) =>
        sql.unsafe(`SELECT fields FROM ${this.#q}.branches WHERE id = $1`, [id], { prepare: true }),
    );
    return row === undefined ? undefined : { id, ...JSON.parse(row.fields as string) };
  }

  /**
   * Inserts a message; a second insert of the same id is ignored (the first is kept). Resolves
   * once the message is committed; messages and signals written while another batch is in flight
   * go out together in the next one. A session without a row gets one (status `created`).
   */
  async insertMessage(message: MessageRecord): Promise<void> {
    this.#use("insert message");
    const row = normalizeMessage(message);
    pgId(row.id, "id", "insert message");
    if (row.branchId !== null) pgId(row.branchId, "branchId", "insert message");
    if (row.sessionId !== null) pgId(row.sessionId, "sessionId", "insert message");
    await this.#queue.push({ kind: "message", row });
  }

  /** Appends a message id to a sequence; an id already in that sequence is not repeated. */
  async appendToSequence(sequenceId: string, messageId: string): Promise<void> {
    this.#use("append to sequence");
    checkId(sequenceId, "sequenceId", "append to sequence");
    checkId(messageId, "messageId", "append to sequence");
    pgId(sequenceId, "sequenceId", "append to sequence");
    pgId(messageId, "messageId", "append to sequence");
    await this.#lane(
      `sequence:${sequenceId}`,
      () =>
        this.#run("append to sequence", true, (sql) =>
          sql.unsafe(
            `INSERT INTO ${this.#q}.progressions (progression_id, message_id) VALUES ($1, $2) ` +
              "ON CONFLICT DO NOTHING",
            [sequenceId, messageId],
            { prepare: true },
          )),
    );
  }

  /**
   * Messages in insertion order, or in sequence order when `sequenceId` is given; every
   * given filter must match.
   */
  async listMessages(
    options: { sessionId?: string; branchId?: string; sequenceId?: string },
  ): Promise<MessageRecord[]> {
    this.#use("list messages");
    const query = normalizeMessageQuery(options);
    const where: string[] = [];
    const params: string[] = [];
    let text: string;
    if (query.sequenceId !== undefined) {
      text =
        `SELECT m.* FROM ${this.#q}.progressions p JOIN ${this.#q}.messages m ON m.id = p.message_id`;
      params.push(pgId(query.sequenceId, "sequenceId", "list messages"));
      where.push(`p.progression_id = $${params.length}`);
    } else {
      text = `SELECT m.* FROM ${this.#q}.messages m`;
    }
    if (query.sessionId !== undefined) {
      params.push(pgId(query.sessionId, "sessionId", "list messages"));
      where.push(`m.session_id = $${params.length}`);
    }
    if (query.branchId !== undefined) {
      params.push(pgId(query.branchId, "branchId", "list messages"));
      where.push(`m.branch_id = $${params.length}`);
    }
    if (where.length > 0) text += ` WHERE ${where.join(" AND ")}`;
    text += query.sequenceId !== undefined ? " ORDER BY p.position" : " ORDER BY m.change_seq";
    const rows = await this.#run(
      "list messages",
      true,
      (sql) => sql.unsafe(text, params, { prepare: true }),
    );
    return rows.map(toMessage);
  }

  /**
   * Appends a signal row; the store assigns `seq`, the next number of that session (1, 2, 3, …
   * without gaps, whichever process writes). Resolves once the row is committed; signals written
   * while another batch is in flight go out together in the next one.
   */
  async insertSessionSignal(row: SignalInsert): Promise<void> {
    this.#use("insert session signal");
    const normalized = normalizeSignal(row);
    pgId(normalized.sessionId, "sessionId", "insert session signal");
    await this.#queue.push({ kind: "signal", writeId: crypto.randomUUID(), row: normalized });
  }

  /** Signal rows of one session in `seq` order, after `afterSeq`, at most `limit`. */
  async listSessionSignals(
    sessionId: string,
    options?: { afterSeq?: number; limit?: number },
  ): Promise<SignalRow[]> {
    this.#use("list session signals");
    checkId(sessionId, "sessionId", "list session signals");
    pgId(sessionId, "sessionId", "list session signals");
    const { afterSeq, limit } = normalizeSignalQuery(options);
    if (limit === 0) return [];
    const after = afterSeq;
    // float8 so that any number compares as in the other stores (fractions, ±Infinity).
    const text = `SELECT * FROM ${this.#q}.signals WHERE session_id = $1 AND seq > $2::float8 ` +
      `ORDER BY seq${Number.isFinite(limit) ? " LIMIT $3" : ""}`;
    const params = Number.isFinite(limit) ? [sessionId, after, limit] : [sessionId, after];
    const rows = await this.#run(
      "list session signals",
      true,
      (sql) => sql.unsafe(text, params as never[], { prepare: true }),
    );
    return rows.map(toSignal);
  }

  /** Inserts or replaces a run (by `runId`); a session without a row gets one (`created`). */
  async saveRun(run: RunRecord): Promise<void> {
    this.#use("save run");
    const normalized = normalizeRun(run);
    const runId = pgId(normalized.runId, "runId", "save run");
    if (normalized.sessionId !== null) pgId(normalized.sessionId, "sessionId", "save run");
    // Replacing with the same record twice is harmless: safe to retry. A run of a session that
    // has no row yet creates it (status "created"), as a first message or signal does.
    await this.#lane(`run:${runId}`, () =>
      this.#run("save run", true, (sql) =>
        sql.unsafe(
          `WITH created AS (INSERT INTO ${this.#q}.sessions (id, status) ` +
            `SELECT $2, '"created"' WHERE $2::text IS NOT NULL AND NOT EXISTS ` +
            `(SELECT 1 FROM ${this.#q}.sessions WHERE id = $2) ON CONFLICT (id) DO NOTHING) ` +
            `INSERT INTO ${this.#q}.runs (run_id, session_id, status, created_at, record) ` +
            "VALUES ($1, $2, $3, $4, $5) ON CONFLICT (run_id) DO UPDATE SET " +
            "session_id = excluded.session_id, status = excluded.status, " +
            "created_at = excluded.created_at, record = excluded.record, claim_token = NULL",
          [
            runId,
            normalized.sessionId,
            normalized.status,
            normalized.createdAt,
            JSON.stringify(normalized),
          ],
          { prepare: true },
        )));
  }

  /** The run, or `undefined`. */
  async getRun(runId: string): Promise<RunRecord | undefined> {
    this.#use("get run");
    checkId(runId, "runId", "get run");
    pgId(runId, "runId", "get run");
    const [row] = await this.#run(
      "get run",
      true,
      (sql) =>
        sql.unsafe(`SELECT record FROM ${this.#q}.runs WHERE run_id = $1`, [runId], {
          prepare: true,
        }),
    );
    return row === undefined ? undefined : JSON.parse(row.record as string) as RunRecord;
  }

  /**
   * Claims a run waiting for approval: its row is locked (`SELECT … FOR UPDATE`) while the claim
   * is checked and written, so of any number of claimers in any number of processes exactly one
   * gets `true`. A claim retried after a dropped connection recognizes its own committed claim.
   */
  async claimRun(runId: string, owner: string): Promise<boolean> {
    this.#use("claim run");
    checkId(runId, "runId", "claim run");
    checkId(owner, "owner", "claim run");
    pgId(runId, "runId", "claim run");
    return await this.#changeClaim("claim run", runId, (run) => withClaim(run, owner, Date.now()));
  }

  /**
   * Takes back `owner`'s claim on a running run (the run waits for approval again) with the row
   * locked, like a claim; `false` when it is unknown, not running or claimed by another. A release
   * retried after a dropped connection recognizes its own committed release.
   */
  async releaseRun(runId: string, owner: string): Promise<boolean> {
    this.#use("release run");
    checkId(runId, "runId", "release run");
    checkId(owner, "owner", "release run");
    pgId(runId, "runId", "release run");
    return await this.#changeClaim(
      "release run",
      runId,
      (run) => withRelease(run, owner, Date.now()),
    );
  }

  /**
   * Applies a claim or a release to a run with its row locked (`SELECT … FOR UPDATE`), tagging
   * the row with a token of this call: `change` returns the new record, or `undefined` to leave
   * the run as it is. A call retried after a dropped connection finds its own token on the row and
   * knows that its change was committed.
   */
  #changeClaim(
    what: string,
    runId: string,
    change: (run: RunRecord) => RunRecord | undefined,
  ): Promise<boolean> {
    const token = crypto.randomUUID();
    return this.#lane(
      `run:${runId}`,
      () =>
        this.#run(what, true, (sql, attempt) =>
          sql.begin(async (tx) => {
            const [row] = await tx.unsafe(
              `SELECT record, claim_token::text AS token FROM ${this.#q}.runs WHERE run_id = $1 FOR UPDATE`,
              [runId],
              { prepare: true },
            );
            if (row === undefined) return false;
            const next = change(JSON.parse(row.record as string) as RunRecord);
            if (next === undefined) return attempt > 1 && row.token === token;
            await tx.unsafe(
              `UPDATE ${this.#q}.runs SET status = $2, record = $3, claim_token = $4 WHERE run_id = $1`,
              [runId, next.status, JSON.stringify(next), token],
              { prepare: true },
            );
            return true;
          })),
    );
  }

  /** Records an answer to a pending call of a waiting run; `false` when there is no such call. */
  async answerApproval(runId: string, callId: string, answer: RunAnswer): Promise<boolean> {
    this.#use("answer approval");
    checkId(runId, "runId", "answer approval");
    checkId(callId, "callId", "answer approval");
    pgId(runId, "runId", "answer approval");
    const now = Date.now();
    const normalized = normalizeAnswer(answer, "answer approval", now);
    // The same answer written twice gives the same record: safe to retry.
    return await this.#lane(
      `run:${runId}`,
      () =>
        this.#run("answer approval", true, (sql) =>
          sql.begin(async (tx) => {
            const [row] = await tx.unsafe(
              `SELECT record FROM ${this.#q}.runs WHERE run_id = $1 FOR UPDATE`,
              [runId],
              { prepare: true },
            );
            if (row === undefined) return false;
            const stored = JSON.parse(row.record as string) as RunRecord;
            const next = withAnswer(stored, callId, normalized, now);
            if (next === undefined) return false;
            await tx.unsafe(
              `UPDATE ${this.#q}.runs SET record = $2 WHERE run_id = $1`,
              [runId, JSON.stringify(next)],
              { prepare: true },
            );
            return true;
          })),
    );
  }

  /** The pending calls of waiting runs, oldest run first, in call order. */
  async listPendingApprovals(filter?: PendingApprovalFilter): Promise<PendingApprovalRow[]> {
    this.#use("list pending approvals");
    const query = normalizePendingFilter(filter);
    const params: string[] = ["waiting_approval"];
    let text = `SELECT record FROM ${this.#q}.runs WHERE status = $1`;
    if (query.sessionId !== undefined) {
      params.push(pgId(query.sessionId, "sessionId", "list pending approvals"));
      text += ` AND session_id = $${params.length}`;
    }
    if (query.runId !== undefined) {
      params.push(pgId(query.runId, "runId", "list pending approvals"));
      text += ` AND run_id = $${params.length}`;
    }
    text += " ORDER BY created_at, position";
    const rows = await this.#run(
      "list pending approvals",
      true,
      (sql) => sql.unsafe(text, params, { prepare: true }),
    );
    const out: PendingApprovalRow[] = [];
    for (const row of rows) {
      out.push(...pendingRowsOf(JSON.parse(row.record as string) as RunRecord, query));
    }
    return out;
  }

  /**
   * Follows the messages and signals committed by every process, in `changeSeq` order, until the
   * caller stops: `break` out of the loop, call `return()`, abort `signal`, or close the store.
   * With `afterSeq` it first replays what was stored after that `changeSeq` (`0`: everything).
   *
   * Notifications (LISTEN/NOTIFY) only say that something was committed; the rows are read back
   * by `changeSeq`, so a notification that is coalesced or lost while the listener reconnects
   * loses nothing, and a subscriber that falls behind reads pages of 500.
   *
   * @example Follow one session from its start
   * ```ts
   * import { PostgresStore } from "@hookscope/core/store/postgres";
   * import assert from "node:assert/strict";
   * import process from "node:process";
   *
   * const url = process.env.HOOKSCOPE_PG_URL || "postgres://root@127.0.0.1:5432/test";
   * const store = await PostgresStore.open(url, { schema: "hookscope_docs" });
   * const sessionId = crypto.randomUUID();
   * const writer = await PostgresStore.open(url, { schema: "hookscope_docs" }); // another process, say
   * await writer.insertSessionSignal({ sessionId, kind: "Started", opId: "", ts: 1, payload: {} });
   * const controller = new AbortController();
   * const kinds: string[] = [];
   * const following = (async () => {
   *   for await (const change of store.subscribe({ sessionId, afterSeq: 0, signal: controller.signal })) {
   *     if (change.type === "signal") kinds.push(change.kind);
   *     if (kinds.length === 2) controller.abort();
   *   }
   * })();
   * await writer.insertSessionSignal({ sessionId, kind: "Finished", opId: "", ts: 2, payload: {} });
   * await following;
   * assert.deepEqual(kinds, ["Started", "Finished"]);
   * await writer.close();
   * await store.close();
   * ```
   */
  subscribe(options: SubscribeOptions = {}): StoreSubscription {
    this.#use("subscribe");
    const action = "subscribe";
    if (typeof options !== "object" || options === null) {
      throw new TypeError(`Cannot ${action}: options must be an object`);
    }
    const { sessionId, afterSeq, signal } = options;
    if (sessionId !== undefined) pgId(checkId(sessionId, "sessionId", action), "sessionId", action);
    if (
      afterSeq !== undefined &&
      (typeof afterSeq !== "number" || !Number.isInteger(afterSeq) || afterSeq < 0)
    ) {
      throw new TypeError(
        `Cannot ${action}: afterSeq must be a non-negative integer; got ${String(afterSeq)}`,
      );
    }
    // Duck-typed: `instanceof AbortSignal` is false for a signal of another realm.
    if (
      signal !== undefined &&
      (typeof signal !== "object" || signal === null || typeof signal.aborted !== "boolean" ||
        typeof signal.addEventListener !== "function")
    ) {
      throw new TypeError(`Cannot ${action}: signal must be an AbortSignal`);
    }
    const horizonText = `SELECT ${this.#q}.change_horizon() AS horizon`;
    const readBoth = (session: boolean) => {
      const filter = " AND change_seq < $3" + (session ? " AND session_id = $4" : "");
      return `(SELECT 'signal' AS type, change_seq, session_id, seq, kind, op_id, ts, payload, ` +
        "NULL::text AS id, NULL::text AS role, NULL::text AS content, NULL::text AS sender, " +
        "NULL::text AS recipient, NULL::text AS branch_id, NULL::float8 AS created_at " +
        `FROM ${this.#q}.signals WHERE change_seq > $1${filter} ORDER BY change_seq LIMIT $2) ` +
        "UNION ALL (SELECT 'message', change_seq, session_id, NULL::bigint, NULL::text, " +
        "NULL::text, NULL::float8, NULL::text, id, role, content, sender, recipient, branch_id, " +
        `created_at FROM ${this.#q}.messages WHERE change_seq > $1${filter} ` +
        "ORDER BY change_seq LIMIT $2) ORDER BY change_seq LIMIT $2";
    };
    const allText = readBoth(false);
    const sessionText = readBoth(true);
    const subscription: PgSubscription = new PgSubscription({
      listen: async (onNotify, onListen) => {
        this.#use("subscribe");
        try {
          return await this.#listener.listen(onNotify, onListen, this.#timeoutMs);
        } catch (error) {
          if (this.#ended) throw new StoreClosedError("subscribe", "PostgreSQL store");
          throw new StoreUnavailableError(
            `Cannot subscribe: PostgreSQL store ${JSON.stringify(this.#url)} failed: ${
              describePgError(error)
            }`,
            { cause: error },
          );
        }
      },
      head: () =>
        this.#run("subscribe", true, async (sql) => {
          const [row] = await sql.unsafe(horizonText);
          return Number(row.horizon) - 1;
        }),
      // The horizon is read first, in a statement of its own, so that the rows below it are
      // read with a later snapshot (see change_horizon in _migrations.ts).
      read: (cursor, limit, session) =>
        this.#run("read changes", true, async (sql) => {
          const [row] = await sql.unsafe(horizonText);
          const horizon = Number(row.horizon);
          if (horizon <= cursor + 1) return { changes: [], horizon };
          const rows = session === undefined
            ? await sql.unsafe(allText, [cursor, limit, horizon], { prepare: true })
            : await sql.unsafe(sessionText, [cursor, limit, horizon, session], { prepare: true });
          return { changes: rows.map(toChange), horizon };
        }),
      ended: (ended) => this.#subscriptions.delete(ended),
    }, { sessionId, afterSeq, signal, pollMs: 5000 });
    this.#subscriptions.add(subscription);
    return subscription;
  }

  /**
   * Waits for queued writes, ends every subscription and closes the connections; later calls
   * reject with {@linkcode StoreClosedError}. Idempotent.
   */
  close(): Promise<void> {
    this.#closed = true;
    this.#closing ??= (async () => {
      const subscriptions = [...this.#subscriptions];
      this.#subscriptions.clear();
      await Promise.all(subscriptions.map((subscription) => subscription.return()));
      await this.#queue.drain();
      while (this.#lanes.size > 0) await Promise.all(this.#lanes.values());
      while (this.#notifying !== null) await this.#notifying;
      this.#ended = true;
      await Promise.all([
        ...[this.#sql, ...this.#retired].map((sql) => endPool(sql, 5)),
        this.#listener.end(),
      ]);
      this.#unguard();
    })();
    return this.#closing;
  }
}
