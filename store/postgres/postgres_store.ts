/**
 * {@linkcode PostgresStore}: a {@linkcode SessionStore} on PostgreSQL that many processes on many
 * machines share, with live subscriptions across them.
 *
 * The class holds the public methods; its parts live beside it: options (`_options.ts`), the
 * migration runner (`_migrate.ts`), the pool with deadlines and retries (`_pool.ts`), per-key
 * write order (`_lanes.ts`), write batching (`_write_queue.ts`, `_batch.ts`), notifications
 * after commit (`_notifier.ts`) and the subscription's reads (`_change_feed.ts`, `_listener.ts`,
 * `_subscription.ts`). Row mapping and the query text it shares with the SQLite store are in
 * `../_rows.ts` and `../_sql.ts`.
 *
 * @module
 */

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
  messageFromColumns,
  normalizeBranchFields,
  normalizeMessage,
  normalizeMessageQuery,
  normalizeSessionFields,
  normalizeSessionRow,
  normalizeSignal,
  normalizeSignalQuery,
  presentSession,
  sessionFromColumns,
  signalFromColumns,
} from "../_rows.ts";
import {
  appendToSequenceSql,
  insertSessionSql,
  listMessagesSql,
  snakeColumn,
  type SqlDialect,
  touchSessionSql,
  updateSessionSql,
} from "../_sql.ts";
import {
  givenTime,
  normalizeAnswer,
  normalizePendingFilter,
  normalizeRun,
  pendingRowsOf,
  withAnswer,
  withClaim,
  withRelease,
} from "../_runs.ts";
import { deadline } from "../../core/_async.ts";
import { PG_SCHEMA_VERSION } from "./_migrations.ts";
import { migrateSchema } from "./_migrate.ts";
import { WriteQueue } from "./_write_queue.ts";
import { describePgError, redactUrl } from "./_pg_errors.ts";
import { PgSubscription } from "./_subscription.ts";
import { PgListener } from "./_listener.ts";
import { guardClientDefect } from "./_client_guard.ts";
import {
  channelFor,
  parseOptions,
  type PostgresStoreInfo,
  type PostgresStoreOptions,
} from "./_options.ts";
import { ATTEMPT_MS, listenerClient, PgPool, poolClient, type Row, type Sql } from "./_pool.ts";
import { Lanes } from "./_lanes.ts";
import { appendBatch, appendText, type Change, MAX_BATCH } from "./_batch.ts";
import { Notifier } from "./_notifier.ts";
import { changeFeedText, toChange } from "./_change_feed.ts";
import type { StoreSubscription, SubscribeOptions } from "./store_change.ts";

export type { PostgresStoreInfo, PostgresStoreOptions } from "./_options.ts";

// A free-text value that PostgreSQL cannot hold as an id: NUL or a lone surrogate.
// deno-lint-ignore no-control-regex
const BAD_ID = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

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
  return sessionFromColumns(row, snakeColumn);
}

function toMessage(row: Row): MessageRecord {
  return messageFromColumns(row);
}

/** A call whose answer was lost: a connection error (SQLSTATE 08006), so it is retried. */
function lostAnswer(): Error {
  return Object.assign(new Error("PostgreSQL returned no row for a call that returns one"), {
    code: "08006",
  });
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
  #pool: PgPool;
  #url: string;
  #schema: string;
  #q: string;
  #sql: SqlDialect;
  #channel: string;
  #timeoutMs: number;
  #onError: (error: Error) => void;
  #closed = false;
  #closing: Promise<void> | null = null;
  #queue: WriteQueue<Change>;
  #subscriptions = new Set<PgSubscription>();
  #lanes = new Lanes();
  #appendSql: string;
  #notifier: Notifier;
  #listener: PgListener;
  #unguard: () => void;

  private constructor(
    connect: () => Sql,
    connectListener: ReturnType<typeof listenerClient>,
    config: { url: string; schema: string; timeoutMs: number; onError: (error: Error) => void },
  ) {
    this.#unguard = guardClientDefect();
    this.#url = redactUrl(config.url);
    this.#timeoutMs = config.timeoutMs;
    this.#onError = config.onError;
    this.#pool = new PgPool(connect, {
      url: this.#url,
      timeoutMs: config.timeoutMs,
      onError: config.onError,
    });
    this.#schema = config.schema;
    const q = this.#q = `"${config.schema}"`;
    this.#sql = { table: (name) => `${q}.${name}`, param: (n) => `$${n}`, column: snakeColumn };
    this.#channel = channelFor(config.schema);
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
    this.#appendSql = appendText(q);
    this.#notifier = new Notifier(
      (payload) => this.#sendNotice(payload),
      () => this.#pool.ended,
      () => this.#subscriptions.size > 0,
    );
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
    const store = new PostgresStore(poolClient(config), listenerClient(config), config);
    try {
      await deadline(
        migrateSchema(
          store.#pool.sql,
          { schema: store.#schema, q: store.#q, url: store.#url },
          config.migrate,
        ),
        config.timeoutMs,
        undefined,
        () => new Error(`no answer within ${config.timeoutMs} ms`),
      );
    } catch (error) {
      store.#closed = true;
      store.#unguard();
      await Promise.all([store.#pool.end(0), store.#listener.end()]);
      if (error instanceof StoreUnavailableError) throw error;
      throw new StoreUnavailableError(
        `Cannot open PostgreSQL store ${JSON.stringify(store.#url)}: ${describePgError(error)}`,
        { cause: error },
      );
    }
    return store;
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

  #use(operation: string): void {
    if (this.#closed) throw new StoreClosedError(operation, "PostgreSQL store");
  }

  /**
   * Runs `body` after every earlier call on the same `key` has settled, so that writes to one
   * session, branch or sequence reach PostgreSQL in call order even when the caller does not
   * await them (the pool would otherwise run them on different connections in any order).
   */
  #lane<T>(key: string, body: () => Promise<T>): Promise<T> {
    return this.#lanes.run(key, body);
  }

  /** Runs `body` with the store's deadline and retries (see {@linkcode PgPool.run}). */
  #run<T>(
    operation: string,
    retry: boolean,
    body: (sql: Sql, attempt: number) => Promise<T>,
  ): Promise<T> {
    return this.#pool.run(operation, retry, body);
  }

  async #flush(batch: readonly Change[]): Promise<void> {
    const append = appendBatch(batch);
    // Safe to retry: stored message ids and signal write ids are skipped.
    const [{ last }] = await this.#run(
      append.what,
      true,
      async (sql) => {
        const rows = await sql.unsafe(this.#appendSql, append.params as never[], {
          prepare: true,
        });
        // The statement always returns one row. None came back once under a connection
        // terminated mid-answer (the 8-process test): a lost answer, retried like a lost
        // connection (the append skips rows already stored).
        if (rows.length === 0) throw lostAnswer();
        return rows;
      },
    );
    this.#notifier.notify(Number(last), append.sessions);
  }

  /**
   * Sends one notification (see _notifier.ts) when a connection listens on the channel (listener
   * connections carry the channel as their `application_name`, which `pg_stat_activity` shows to
   * every role), and resolves whether one did. The notifying transaction commits without waiting
   * for the WAL flush (a notification is not durable anyway), so it holds PostgreSQL's
   * notification lock only briefly.
   */
  async #sendNotice(payload: string): Promise<boolean> {
    try {
      const rows = await this.#run("notify subscribers", true, (sql) =>
        sql.unsafe(
          "SELECT set_config('synchronous_commit', 'off', true), pg_notify($1, $2) WHERE EXISTS " +
            "(SELECT 1 FROM pg_stat_activity WHERE application_name = $1 " +
            "AND datname = current_database())",
          [this.#channel, payload],
          { prepare: true },
        ));
      return rows.length > 0;
    } catch (error) {
      if (!(error instanceof StoreClosedError)) this.#onError(error as Error);
      return true;
    }
  }

  /** Inserts a session row; an existing id rejects with {@linkcode StoreConflictError}. */
  async createSession(row: SessionRow): Promise<void> {
    this.#use("create session");
    const normalized = normalizeSessionRow(row) as unknown as Record<string, unknown>;
    const id = pgId(normalized.id as string, "id", "create session");
    const insert = insertSessionSql(this.#sql, normalized);
    const values = insert.values;
    const text = `${insert.text} ON CONFLICT (id) DO NOTHING RETURNING id`;
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
    if (Object.keys(normalized).length === 0) return;
    const { text, values } = updateSessionSql(this.#sql, id, normalized);
    // Setting the same values twice is harmless: safe to retry.
    await this.#lane(
      `session:${id}`,
      () =>
        this.#run(
          "update session",
          true,
          (sql) => sql.unsafe(text, values as never[], { prepare: true }),
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
        this.#run(
          "touch session activity",
          true,
          (sql) => sql.unsafe(touchSessionSql(this.#sql), [Date.now(), id], { prepare: true }),
        ),
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
   * go out together in the next one. A session without a row gets one (status `created`); a new
   * message sets its session's `lastActivityAt` to the time of the write, in the same transaction.
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
        this.#run(
          "append to sequence",
          true,
          (sql) =>
            sql.unsafe(appendToSequenceSql(this.#sql), [sequenceId, messageId], { prepare: true }),
        ),
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
    for (const key of ["sequenceId", "sessionId", "branchId"] as const) {
      const value = query[key];
      if (value !== undefined) pgId(value, key, "list messages");
    }
    const { text, params } = listMessagesSql(this.#sql, query, "change_seq");
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
    return rows.map(signalFromColumns);
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
    // Safe to retry: a retry that finds its own answer stored succeeds (see withAnswer).
    return await this.#lane(
      `run:${runId}`,
      () =>
        this.#run("answer approval", true, (sql, attempt) =>
          sql.begin(async (tx) => {
            const [row] = await tx.unsafe(
              `SELECT record FROM ${this.#q}.runs WHERE run_id = $1 FOR UPDATE`,
              [runId],
              { prepare: true },
            );
            if (row === undefined) return false;
            const stored = JSON.parse(row.record as string) as RunRecord;
            // A later attempt may find its own answer: the first one committed unheard.
            const next = withAnswer(
              stored,
              callId,
              normalized,
              now,
              attempt > 1 || givenTime(answer),
            );
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
    const feed = changeFeedText(this.#q);
    const subscription: PgSubscription = new PgSubscription({
      listen: async (onNotify, onListen) => {
        this.#use("subscribe");
        try {
          return await this.#listener.listen(onNotify, onListen, this.#timeoutMs);
        } catch (error) {
          if (this.#pool.ended) throw new StoreClosedError("subscribe", "PostgreSQL store");
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
          const [row] = await sql.unsafe(feed.horizon);
          return Number(row.horizon) - 1;
        }),
      // The horizon is read first, in a statement of its own, so that the rows below it are
      // read with a later snapshot (see change_horizon in _migrations.ts).
      read: (cursor, limit, session) =>
        this.#run("read changes", true, async (sql) => {
          const [row] = await sql.unsafe(feed.horizon);
          const horizon = Number(row.horizon);
          if (horizon <= cursor + 1) return { changes: [], horizon };
          const rows = session === undefined
            ? await sql.unsafe(feed.all, [cursor, limit, horizon], { prepare: true })
            : await sql.unsafe(feed.session, [cursor, limit, horizon, session], { prepare: true });
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
      await this.#lanes.settled();
      await this.#notifier.idle();
      await Promise.all([this.#pool.end(5), this.#listener.end()]);
      this.#unguard();
    })();
    return this.#closing;
  }
}
