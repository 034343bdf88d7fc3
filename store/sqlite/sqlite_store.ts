/**
 * {@linkcode SqliteStore}: a {@linkcode SessionStore} on a real SQLite file.
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
import { messageOf } from "../../core/_util.ts";
import { registerChangeMark } from "../_change_mark.ts";
import { delay, retry } from "../../core/_async.ts";
import {
  checkId,
  checkPayloadLimits,
  messageFromColumns,
  normalizeBranchFields,
  normalizeMessage,
  normalizeMessageQuery,
  normalizeSessionFields,
  normalizeSessionRow,
  normalizeSignal,
  normalizeSignalQuery,
  type PayloadLimits,
  sessionFromColumns,
  signalFromColumns,
} from "../_rows.ts";
import {
  appendToSequenceSql,
  encodeText,
  insertSessionSql,
  isStoreError,
  listMessagesSql,
  snakeColumn,
  type SqlDialect,
  touchSessionSql,
  updateSessionSql,
} from "../_sql.ts";
import { openDriver, type SqlDriver, type SqlRow } from "./_driver.ts";
import { MIGRATIONS, SCHEMA_VERSION } from "./_migrations.ts";
import { givenTime, normalizeAnswer, normalizePendingFilter, normalizeRun } from "../_runs.ts";
import {
  answerApprovalSql,
  claimRunSql,
  getRunSql,
  listPendingApprovalsSql,
  releaseRunSql,
  saveRunSql,
} from "./_runs.ts";

/** Options for {@linkcode SqliteStore.open}. */
export interface SqliteStoreOptions {
  /**
   * Open the file read-only: reads work, every write rejects with
   * {@linkcode StoreUnavailableError}. The file must exist and carry the current schema.
   * Without it (the default) the file must be writable: a read-only file (its mode, an immutable
   * flag, a read-only mount) fails at open with a `StoreUnavailableError` that says so, instead
   * of failing at the first write.
   */
  readOnly?: boolean;
  /** How long a write waits for another connection's lock, in milliseconds (default 5 000). */
  busyTimeoutMs?: number;
  /**
   * When a commit reaches the disk (SQLite's `PRAGMA synchronous` in WAL mode).
   * - `"normal"` (the default): a commit is written to the WAL and synced at the next checkpoint.
   *   A process that crashes or is killed loses nothing it committed, and the file is never
   *   corrupted; a power loss or an operating-system crash can lose the last commits before it.
   *   The write lock is held for the write only, not for a disk sync, so processes sharing the
   *   file wait far less for each other.
   * - `"full"`: every commit is synced before it resolves (one disk sync per commit, with the
   *   write lock held through it): committed writes also survive a power loss.
   */
  synchronous?: "normal" | "full";
  /**
   * Limits on each persisted value (message content, signal payload, branch field): nesting
   * depth (default 64) and JSON size (default 1 MiB). A value past them is stored cut, as
   * `{ truncated: true, reason: "depth" | "size", limit, originalBytes?, data }`.
   */
  limits?: { maxDepth?: number; maxBytes?: number };
}

/** What {@linkcode SqliteStore.info} reports. */
export interface SqliteStoreInfo {
  /** The file path. */
  readonly path: string;
  /** The schema version of the file (`PRAGMA user_version`). */
  readonly schemaVersion: number;
  /** The journal mode (`"wal"` for a writable store). */
  readonly journalMode: string;
  /** When commits reach the disk (the `synchronous` option; `PRAGMA synchronous`). */
  readonly synchronous: "off" | "normal" | "full" | "extra";
  /** Whether the store was opened read-only. */
  readonly readOnly: boolean;
}

// The session's free-form metadata keeps the reference's column name (`node_metadata`), so
// files written before the field was renamed stay readable.
const RENAMED_COLUMNS: Readonly<Record<string, string>> = { metadata: "node_metadata" };

function column(field: string): string {
  return RENAMED_COLUMNS[field] ?? snakeColumn(field);
}

/** How this store spells its SQL (shared query text is in ../_sql.ts). */
const SQLITE: SqlDialect = { table: (name) => name, param: () => "?", column };

// Free text (senders, models, op ids, …) is stored JSON-encoded (see ../_sql.ts): SQLite's C
// strings would cut it at NUL and its UTF-8 conversion would replace lone surrogates. Ids are
// checked instead. Session text columns and node_metadata hold JSON; numeric ones numbers.
function toSession(row: SqlRow): SessionRow {
  return sessionFromColumns(row, column);
}

function toMessage(row: SqlRow): MessageRecord {
  return messageFromColumns(row);
}

/**
 * A {@linkcode SessionStore} on a SQLite file, with the same behaviour as `MemoryStore` (the store
 * conformance suite runs against both).
 *
 * - Driver: `node:sqlite` (`DatabaseSync`) in Deno ≥ 2.2 and Node ≥ 22.5, `bun:sqlite` in Bun. On
 *   Node 20 {@linkcode SqliteStore.open} rejects with {@linkcode StoreUnavailableError} naming the
 *   version needed.
 * - Schema: ordered migrations recorded in a `schema_version` table and in `PRAGMA user_version`;
 *   a file written by a newer schema is refused rather than misread. Each migration re-reads the
 *   version under its write lock, so connections that open one new file at the same time each
 *   apply a migration once instead of failing on tables another one just created.
 * - The journal is WAL; every write runs in one `BEGIN IMMEDIATE` … `COMMIT` transaction and is
 *   rolled back whole on failure. Signals get `seq` from an `AUTOINCREMENT` key, so sequence
 *   numbers only increase, across reopenings too. Commits are synced at checkpoints
 *   (`synchronous: "normal"`, the default: safe against crashed processes, not against a power
 *   loss) or at every commit (`synchronous: "full"`).
 * - Concurrent opens: `busy_timeout` is set before any statement that can take a lock, and the
 *   setup (WAL switch, migrations) is retried within `busyTimeoutMs` where SQLite refuses a lock
 *   without waiting, so processes opening one new file at once all succeed.
 * - Limits: each message content, signal payload and branch field is kept to 64 levels of
 *   nesting and 1 MiB of JSON (`limits` option); a value past them is stored as
 *   `{ truncated: true, reason, limit, originalBytes?, data }`, never cut silently.
 * - SQLite failures (a full disk, a file made read-only later) reject with {@linkcode StoreUnavailableError}
 *   carrying the driver's error as `cause`; after {@linkcode SqliteStore.close} every call
 *   rejects with {@linkcode StoreClosedError}.
 *
 * @example Persist, close, reopen
 * ```ts
 * import { SqliteStore } from "@hookscope/core/store/sqlite";
 * import assert from "node:assert/strict";
 *
 * const isNode20 = !("Deno" in globalThis) && !("Bun" in globalThis) &&
 *   /^v(1\d|20|21|22\.[0-4]\.)/.test(String((globalThis as { process?: { version?: string } }).process?.version));
 * if (!isNode20) {
 *   const store = await SqliteStore.open(":memory:");
 *   await store.createSession({ id: "s1", status: "created" });
 *   await store.insertSessionSignal({ sessionId: "s1", kind: "K", opId: "", ts: 1, payload: { a: 1 } });
 *   assert.deepEqual((await store.listSessionSignals("s1")).map((row) => row.seq), [1]);
 *   await store.close();
 * }
 * ```
 */
export class SqliteStore implements SessionStore {
  #db: SqlDriver | null;
  #path: string;
  #readOnly: boolean;
  #limits: PayloadLimits;
  #busyMs: number;
  #waiting: Array<{
    operation: string;
    body: (db: SqlDriver) => void;
    deadline: number;
    resolve: () => void;
    reject: (error: unknown) => void;
  }> = [];
  /**
   * Whether {@linkcode SqliteStore.#pump} runs. It is cleared by the pump itself in the same
   * synchronous step that finds no write waiting: a flag cleared one microtask later (by a
   * `.finally`) left a window in which a write queued, saw a pump that had already ended, and
   * waited forever.
   */
  #pumpActive = false;
  /** The running (or last) pump, for close() to wait on. */
  #pumped: Promise<void> = Promise.resolve();
  /** Transactions this connection committed (`PRAGMA data_version` counts only the others'). */
  #commits = 0;

  private constructor(
    db: SqlDriver,
    path: string,
    readOnly: boolean,
    limits: PayloadLimits,
    busyMs: number,
  ) {
    this.#db = db;
    this.#busyMs = busyMs;
    this.#path = path;
    this.#readOnly = readOnly;
    this.#limits = limits;
    // The console polls this instead of reading rows: one pragma, no row read.
    registerChangeMark(this, () => {
      const version = this.#db?.get("PRAGMA data_version")?.data_version ?? "closed";
      return `${version}:${this.#commits}`;
    });
  }

  /**
   * Opens (creating when absent, unless `readOnly`) the SQLite file at `path` and migrates it to
   * the current schema. `":memory:"` opens a private in-memory database.
   *
   * @example Open an in-memory database
   * ```ts
   * import { SqliteStore, StoreUnavailableError } from "@hookscope/core/store/sqlite";
   * import assert from "node:assert/strict";
   *
   * try {
   *   const store = await SqliteStore.open(":memory:");
   *   assert.equal(store.info().schemaVersion, 4);
   *   await store.close();
   * } catch (error) {
   *   assert.ok(error instanceof StoreUnavailableError); // Node 20: no node:sqlite
   * }
   * ```
   */
  static async open(path: string, options: SqliteStoreOptions = {}): Promise<SqliteStore> {
    if (typeof path !== "string" || path.length === 0) {
      throw new TypeError(
        `Cannot open SQLite store: path must be a non-empty string; got ${
          typeof path === "string" ? '""' : `(${typeof path})`
        }`,
      );
    }
    const readOnly = options.readOnly === true;
    const limits = checkPayloadLimits(options.limits, "open SQLite store");
    const synchronous = options.synchronous ?? "normal";
    if (synchronous !== "normal" && synchronous !== "full") {
      throw new TypeError(
        `Cannot open SQLite store: synchronous must be "normal" or "full"; got ${
          typeof synchronous === "string" ? JSON.stringify(synchronous) : `(${typeof synchronous})`
        }`,
      );
    }
    const busy = options.busyTimeoutMs ?? 5000;
    if (typeof busy !== "number" || !Number.isFinite(busy) || busy < 0) {
      throw new TypeError(
        `Cannot open SQLite store: busyTimeoutMs must be a non-negative number; got ${
          String(busy)
        }`,
      );
    }
    let db: SqlDriver;
    try {
      db = await openDriver(path, readOnly);
    } catch (error) {
      if (error instanceof StoreUnavailableError) throw error;
      throw new StoreUnavailableError(
        `Cannot open SQLite store ${JSON.stringify(path)}: ${messageOf(error)}`,
        { cause: error },
      );
    }
    try {
      // First, before any statement that can take a lock: every later wait honours it.
      db.exec(`PRAGMA busy_timeout = ${Math.floor(busy)}`);
      // Some lock waits never reach the busy handler (SQLite refuses at once where waiting could
      // deadlock, e.g. switching a new file to WAL while another connection reads its schema):
      // the setup is retried, with a little jitter, until the busy timeout has passed.
      const ends = Date.now() + Math.max(busy, 1000);
      await retry(() => {
        if (!readOnly) db.exec("PRAGMA journal_mode = WAL");
        // Per connection: in WAL mode "normal" syncs at checkpoints, not at every commit.
        db.exec(`PRAGMA synchronous = ${synchronous === "full" ? "FULL" : "NORMAL"}`);
        migrate(db, path, readOnly);
        if (!readOnly) checkWritable(db, path);
      }, {
        attempts: Infinity,
        retryIf: (error) => isBusy(error) && Date.now() < ends,
        delayMs: (attempt) => Math.min(50, attempt * 2) + Math.random() * 10,
      });
    } catch (error) {
      try {
        db.close();
      } catch { /* already failing */ }
      if (isStoreError(error)) throw error;
      throw new StoreUnavailableError(
        `Cannot open SQLite store ${JSON.stringify(path)}: ${messageOf(error)}`,
        { cause: error },
      );
    }
    return new SqliteStore(db, path, readOnly, limits, Math.floor(busy));
  }

  /** Whether {@linkcode SqliteStore.close} was called. */
  get closed(): boolean {
    return this.#db === null;
  }

  /**
   * The file path, schema version, journal mode and read-only flag.
   *
   * @example
   * ```ts
   * import { SqliteStore } from "@hookscope/core/store/sqlite";
   * import assert from "node:assert/strict";
   *
   * const store = await SqliteStore.open(":memory:").catch(() => null); // null on Node 20
   * if (store) {
   *   assert.equal(store.info().path, ":memory:");
   *   await store.close();
   * }
   * ```
   */
  info(): SqliteStoreInfo {
    const db = this.#use("read store info");
    return {
      path: this.#path,
      schemaVersion: Number(db.get("PRAGMA user_version")?.user_version ?? 0),
      journalMode: String(db.get("PRAGMA journal_mode")?.journal_mode ?? ""),
      synchronous: (["off", "normal", "full", "extra"] as const)[
        Number(db.get("PRAGMA synchronous")?.synchronous ?? 2)
      ] ?? "full",
      readOnly: this.#readOnly,
    };
  }

  #use(operation: string): SqlDriver {
    if (this.#db === null) throw new StoreClosedError(operation, "SQLite store");
    return this.#db;
  }

  #fail(operation: string, error: unknown): never {
    if (isStoreError(error)) throw error;
    throw new StoreUnavailableError(
      `Cannot ${operation}: SQLite store ${JSON.stringify(this.#path)} failed: ${messageOf(error)}`,
      { cause: error },
    );
  }

  #read<T>(operation: string, body: (db: SqlDriver) => T): T {
    const db = this.#use(operation);
    try {
      return body(db);
    } catch (error) {
      this.#fail(operation, error);
    }
  }

  /**
   * Runs `body` in one `BEGIN IMMEDIATE` … `COMMIT` transaction, at once when the write lock is
   * free and no earlier write of this store waits for it; otherwise queued behind those (so one
   * store's writes commit in call order) until the lock is free, up to `busyTimeoutMs`.
   */
  #write(operation: string, body: (db: SqlDriver) => void): void | Promise<void> {
    const db = this.#use(operation);
    if (this.#waiting.length === 0 && this.#begin(db, operation)) {
      this.#commit(db, operation, body);
      return;
    }
    return new Promise<void>((resolve, reject) => {
      const deadline = Date.now() + this.#busyMs;
      this.#waiting.push({ operation, body, deadline, resolve, reject });
      if (!this.#pumpActive) {
        this.#pumpActive = true;
        this.#pumped = this.#pump();
      }
    });
  }

  /**
   * Takes the write lock without waiting: `false` when another connection holds it. SQLite's own
   * busy handler sleeps ever longer between tries (up to 100 ms), so a writer that came later
   * often got the lock first and one unlucky writer waited hundreds of milliseconds; and it
   * blocks the thread while it sleeps. Waiting is done by {@linkcode SqliteStore.#pump} instead.
   */
  #begin(db: SqlDriver, operation: string): boolean {
    try {
      db.exec("PRAGMA busy_timeout = 0");
      try {
        db.exec("BEGIN IMMEDIATE");
      } finally {
        db.exec(`PRAGMA busy_timeout = ${this.#busyMs}`);
      }
      return true;
    } catch (error) {
      if (isBusy(error)) return false;
      this.#fail(operation, error);
    }
  }

  #commit(db: SqlDriver, operation: string, body: (db: SqlDriver) => void): void {
    try {
      body(db);
      db.exec("COMMIT");
      this.#commits++;
    } catch (error) {
      try {
        db.exec("ROLLBACK");
      } catch { /* the transaction is already gone */ }
      this.#fail(operation, error);
    }
  }

  /**
   * Runs the waiting writes in order. The lock is tried again after a short pause (0.5 to 2 ms,
   * with jitter, so processes waiting together do not retry in lockstep) until it is free or the
   * first write's deadline has passed. Once it is taken, every write waiting by then goes into
   * that one transaction, each under a savepoint of its own (a failing write is rolled back alone
   * and rejects alone; the others commit together): one lock hand-over and one WAL sync for all
   * of them. After a commit that other writes queued behind, the next try waits a moment, so that
   * other processes polling for the lock get their turn instead of this one taking it again at
   * once.
   */
  async #pump(): Promise<void> {
    // The flag is cleared in the same synchronous step in which the loop finds no write waiting.
    try {
      let attempt = 0;
      while (this.#waiting.length > 0) {
        const first = this.#waiting[0];
        const db = this.#db;
        try {
          if (db === null) throw new StoreClosedError(first.operation, "SQLite store");
          if (!this.#begin(db, first.operation)) {
            if (Date.now() >= first.deadline) {
              throw new StoreUnavailableError(
                `Cannot ${first.operation}: SQLite store ${
                  JSON.stringify(this.#path)
                } failed: database is locked (another connection held the write lock for ${this.#busyMs} ms)`,
              );
            }
            attempt += 1;
            await pause(Math.min(2, 0.5 * attempt));
            continue;
          }
        } catch (error) {
          this.#waiting.shift();
          first.reject(error);
          continue;
        }
        attempt = 0;
        const batch = this.#waiting.splice(0);
        const done: Array<() => void> = [];
        for (const write of batch) {
          try {
            db.exec("SAVEPOINT hookscope_write");
            try {
              write.body(db);
              db.exec("RELEASE hookscope_write");
              done.push(write.resolve);
            } catch (error) {
              db.exec("ROLLBACK TO hookscope_write");
              db.exec("RELEASE hookscope_write");
              throw error;
            }
          } catch (error) {
            try {
              this.#fail(write.operation, error);
            } catch (failure) {
              done.push(() => write.reject(failure));
            }
          }
        }
        try {
          db.exec("COMMIT");
          this.#commits++;
          for (const settle of done) settle();
        } catch (error) {
          try {
            db.exec("ROLLBACK");
          } catch { /* the transaction is already gone */ }
          for (const write of batch) {
            try {
              this.#fail(write.operation, error);
            } catch (failure) {
              write.reject(failure);
            }
          }
        }
        if (this.#waiting.length > 0) await pause(0.5);
      }
    } catch (error) {
      // Not reached by a failing write (each one settles alone); a fault of the loop itself must
      // not leave writes waiting for a pump that is gone.
      for (const write of this.#waiting.splice(0)) write.reject(error);
    } finally {
      this.#pumpActive = false;
    }
  }

  /** Inserts a session row; an existing id rejects with {@linkcode StoreConflictError}. */
  async createSession(row: SessionRow): Promise<void> {
    this.#use("create session");
    const normalized = normalizeSessionRow(row) as unknown as Record<string, unknown>;
    await this.#write("create session", (db) => {
      if (db.get("SELECT 1 AS found FROM sessions WHERE id = ?", [normalized.id as string])) {
        throw new StoreConflictError(
          `Cannot create session: id ${JSON.stringify(normalized.id)} already exists`,
          normalized.id as string,
        );
      }
      const insert = insertSessionSql(SQLITE, normalized);
      db.run(insert.text, insert.values);
    });
  }

  /** The row (`null` fields omitted), or `undefined`. */
  async getSession(id: string): Promise<SessionRow | undefined> {
    this.#use("get session");
    checkId(id, "id", "get session");
    const row = this.#read(
      "get session",
      (db) => db.get("SELECT * FROM sessions WHERE id = ?", [id]),
    );
    await undefined;
    return row === undefined ? undefined : toSession(row);
  }

  /** Every session row (`null` fields omitted), in creation order. */
  async listSessions(): Promise<SessionRow[]> {
    this.#use("list sessions");
    const rows = this.#read(
      "list sessions",
      (db) => db.all("SELECT * FROM sessions ORDER BY rowid", []),
    );
    await undefined;
    return rows.map(toSession);
  }

  /** Updates the given fields of an existing row; an unknown id changes nothing. */
  async updateSession(id: string, fields: Partial<SessionRow>): Promise<void> {
    this.#use("update session");
    checkId(id, "id", "update session");
    const normalized = normalizeSessionFields(fields, "update session");
    if (Object.keys(normalized).length > 0) {
      const update = updateSessionSql(SQLITE, id, normalized);
      await this.#write("update session", (db) => {
        db.run(update.text, update.values);
      });
    }
    await undefined;
  }

  /** Sets `lastActivityAt` to now; an unknown id changes nothing. */
  async touchSessionActivity(id: string): Promise<void> {
    this.#use("touch session activity");
    checkId(id, "id", "touch session activity");
    await this.#write("touch session activity", (db) => {
      db.run(touchSessionSql(SQLITE), [Date.now(), id]);
    });
  }

  /** Merges fields into a branch row, creating it when absent. */
  async updateBranch(id: string, fields: Record<string, unknown>): Promise<void> {
    this.#use("update branch");
    checkId(id, "id", "update branch");
    const normalized = normalizeBranchFields(fields, this.#limits);
    await this.#write("update branch", (db) => {
      const row = db.get("SELECT fields FROM branches WHERE id = ?", [id]);
      const merged = row === undefined
        ? normalized
        : { ...JSON.parse(row.fields as string), ...normalized };
      db.run(
        "INSERT INTO branches (id, fields) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET fields = excluded.fields",
        [id, JSON.stringify(merged)],
      );
    });
  }

  /** The branch row (with `id`), or `undefined`. */
  async getBranch(id: string): Promise<Record<string, unknown> | undefined> {
    this.#use("get branch");
    checkId(id, "id", "get branch");
    const row = this.#read(
      "get branch",
      (db) => db.get("SELECT fields FROM branches WHERE id = ?", [id]),
    );
    await undefined;
    return row === undefined ? undefined : { id, ...JSON.parse(row.fields as string) };
  }

  /**
   * Inserts a message; a second insert of the same id is ignored (the first is kept). A session
   * without a row gets one (status `created`); a new message sets its session's
   * `lastActivityAt` to now, in the same transaction.
   */
  async insertMessage(message: MessageRecord): Promise<void> {
    this.#use("insert message");
    const m = normalizeMessage(message, this.#limits);
    await this.#write("insert message", (db) => {
      implicitSession(db, m.sessionId);
      const added = db.get(
        `INSERT INTO messages (id, role, content, sender, recipient, branch_id, session_id, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING RETURNING id`,
        [
          m.id,
          m.role,
          JSON.stringify(m.content),
          encodeText(m.sender),
          encodeText(m.recipient),
          m.branchId,
          m.sessionId,
          m.createdAt,
        ],
      );
      if (added !== undefined && m.sessionId !== null) {
        db.run(touchSessionSql(SQLITE), [Date.now(), m.sessionId]);
      }
    });
  }

  /** Appends a message id to a sequence; an id already in that sequence is not repeated. */
  async appendToSequence(sequenceId: string, messageId: string): Promise<void> {
    this.#use("append to sequence");
    checkId(sequenceId, "sequenceId", "append to sequence");
    checkId(messageId, "messageId", "append to sequence");
    await this.#write("append to sequence", (db) => {
      db.run(appendToSequenceSql(SQLITE), [sequenceId, messageId]);
    });
  }

  /**
   * Messages in insertion order, or in sequence order when `sequenceId` is given; every
   * given filter must match.
   */
  async listMessages(
    options: { sessionId?: string; branchId?: string; sequenceId?: string },
  ): Promise<MessageRecord[]> {
    this.#use("list messages");
    const { text, params } = listMessagesSql(SQLITE, normalizeMessageQuery(options), "position");
    const rows = this.#read("list messages", (db) => db.all(text, params));
    await undefined;
    return rows.map(toMessage);
  }

  /** Appends a signal row with the next `seq`; a session without a row gets one (`created`). */
  async insertSessionSignal(row: SignalInsert): Promise<void> {
    this.#use("insert session signal");
    const s = normalizeSignal(row, this.#limits);
    await this.#write("insert session signal", (db) => {
      implicitSession(db, s.sessionId);
      db.run(
        "INSERT INTO session_signals (session_id, kind, op_id, ts, payload) VALUES (?, ?, ?, ?, ?)",
        [s.sessionId, s.kind, encodeText(s.opId), s.ts, JSON.stringify(s.payload)],
      );
    });
  }

  /** Signal rows of one session in `seq` order, after `afterSeq`, at most `limit`. */
  async listSessionSignals(
    sessionId: string,
    options?: { afterSeq?: number; limit?: number },
  ): Promise<SignalRow[]> {
    this.#use("list session signals");
    checkId(sessionId, "sessionId", "list session signals");
    const { afterSeq, limit } = normalizeSignalQuery(options);
    const rows = this.#read("list session signals", (db) =>
      db.all(
        "SELECT * FROM session_signals WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?",
        [sessionId, afterSeq, Number.isFinite(limit) ? limit : -1],
      ));
    await undefined;
    return rows.map(signalFromColumns);
  }

  /** Inserts or replaces a run; a session without a row gets one (`created`). */
  async saveRun(run: RunRecord): Promise<void> {
    this.#use("save run");
    const normalized = normalizeRun(run);
    await this.#write("save run", (db) => {
      implicitSession(db, normalized.sessionId);
      saveRunSql(db, normalized);
    });
  }

  /** The run, or `undefined`. */
  async getRun(runId: string): Promise<RunRecord | undefined> {
    this.#use("get run");
    checkId(runId, "runId", "get run");
    const run = this.#read("get run", (db) => getRunSql(db, runId));
    await undefined;
    return run;
  }

  /**
   * Claims a run waiting for approval in one `BEGIN IMMEDIATE` transaction: of concurrent
   * claimers, in any process using the file, exactly one gets `true`.
   */
  async claimRun(runId: string, owner: string): Promise<boolean> {
    this.#use("claim run");
    checkId(runId, "runId", "claim run");
    checkId(owner, "owner", "claim run");
    let claimed = false;
    await this.#write("claim run", (db) => {
      claimed = claimRunSql(db, runId, owner, Date.now());
    });
    return claimed;
  }

  /**
   * Takes back `owner`'s claim on a running run in one `BEGIN IMMEDIATE` transaction (the run
   * waits for approval again); `false` when it is unknown, not running or claimed by another.
   */
  async releaseRun(runId: string, owner: string): Promise<boolean> {
    this.#use("release run");
    checkId(runId, "runId", "release run");
    checkId(owner, "owner", "release run");
    let released = false;
    await this.#write("release run", (db) => {
      released = releaseRunSql(db, runId, owner, Date.now());
    });
    return released;
  }

  /** Records an answer to a pending call of a waiting run; `false` when there is no such call. */
  async answerApproval(runId: string, callId: string, answer: RunAnswer): Promise<boolean> {
    this.#use("answer approval");
    checkId(runId, "runId", "answer approval");
    checkId(callId, "callId", "answer approval");
    const now = Date.now();
    const normalized = normalizeAnswer(answer, "answer approval", now);
    let answered = false;
    await this.#write("answer approval", (db) => {
      answered = answerApprovalSql(db, runId, callId, normalized, now, givenTime(answer));
    });
    return answered;
  }

  /** The pending calls of waiting runs, oldest run first, in call order. */
  async listPendingApprovals(filter?: PendingApprovalFilter): Promise<PendingApprovalRow[]> {
    this.#use("list pending approvals");
    const query = normalizePendingFilter(filter);
    const rows = this.#read("list pending approvals", (db) => listPendingApprovalsSql(db, query));
    await undefined;
    return rows;
  }

  /** Closes the file; later calls reject with {@linkcode StoreClosedError}. Idempotent. */
  async close(): Promise<void> {
    // Writes still waiting for the lock are finished (or fail by their deadline) first.
    while (this.#pumpActive) await this.#pumped;
    const db = this.#db;
    this.#db = null;
    if (db !== null) db.close();
    await undefined;
  }
}

/** Waits about `ms` (half to one and a half times, at random). */
function pause(ms: number): Promise<void> {
  return delay(ms * (0.5 + Math.random()));
}

/**
 * Creates the row of a session written to before `createSession` (status `created`, as
 * `Session.start()` would), so that every session with data can be restored.
 */
function implicitSession(db: SqlDriver, sessionId: string | null): void {
  if (sessionId === null) return;
  db.run("INSERT INTO sessions (id, status) VALUES (?, ?) ON CONFLICT (id) DO NOTHING", [
    sessionId,
    JSON.stringify("created"),
  ]);
}

function newerSchema(path: string, version: number): StoreUnavailableError {
  return new StoreUnavailableError(
    `Cannot open SQLite store ${JSON.stringify(path)}: schema version ${version} is newer than ` +
      `version ${SCHEMA_VERSION} that this hookscope supports`,
  );
}

/** Whether a driver error is SQLite's SQLITE_BUSY / SQLITE_LOCKED ("database is locked"). */
function isBusy(error: unknown): boolean {
  const e = error as { code?: unknown; errcode?: unknown; message?: unknown } | null;
  const code = typeof e?.errcode === "number" ? e.errcode & 0xff : undefined;
  return code === 5 || code === 6 || e?.code === "SQLITE_BUSY" || e?.code === "SQLITE_LOCKED" ||
    /database is locked|database table is locked|SQLITE_BUSY/i.test(String(e?.message ?? ""));
}

/**
 * Fails at open, not at the first write, when the file cannot be written (a read-only file, a
 * read-only mount): takes and releases the write lock, which SQLite refuses on such a file.
 */
function checkWritable(db: SqlDriver, path: string): void {
  try {
    db.exec("BEGIN IMMEDIATE");
    // user_version rewritten to itself: a real page write inside the probe transaction.
    const version = Number(db.get("PRAGMA user_version")?.user_version ?? 0);
    db.exec(`PRAGMA user_version = ${version}`);
    db.exec("ROLLBACK");
  } catch (error) {
    try {
      db.exec("ROLLBACK");
    } catch { /* no transaction */ }
    if (isBusy(error)) throw error;
    if (/readonly|read-only|read only|permission|access/i.test(messageOf(error))) {
      throw new StoreUnavailableError(
        `Cannot open SQLite store ${JSON.stringify(path)} for writing: the file is read-only ` +
          `(${messageOf(error)}); open it with { readOnly: true } to read it`,
        { cause: error },
      );
    }
    throw error;
  }
}

function migrate(db: SqlDriver, path: string, readOnly: boolean): void {
  const current = Number(db.get("PRAGMA user_version")?.user_version ?? 0);
  if (current > SCHEMA_VERSION) throw newerSchema(path, current);
  if (current === SCHEMA_VERSION) return;
  // Read-only: a file that lacks only steps whose tables reads can do without is opened as is.
  if (readOnly && current >= 1 && MIGRATIONS.every((m) => m.version <= current || m.readOptional)) {
    return;
  }
  if (readOnly) {
    throw new StoreUnavailableError(
      `Cannot open SQLite store ${JSON.stringify(path)} read-only: schema version ${current} ` +
        `needs migrating to version ${SCHEMA_VERSION}; open it writable once`,
    );
  }
  for (const migration of MIGRATIONS) {
    if (migration.version <= current) continue;
    db.exec("BEGIN IMMEDIATE");
    try {
      // Another connection (another process opening the same new file) may have migrated
      // between the read above and this lock: read the version again under the lock.
      const locked = Number(db.get("PRAGMA user_version")?.user_version ?? 0);
      if (locked > SCHEMA_VERSION) throw newerSchema(path, locked);
      if (locked >= migration.version) {
        db.exec("COMMIT");
        continue;
      }
      db.exec(
        "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, description TEXT NOT NULL, applied_at REAL NOT NULL)",
      );
      for (const statement of migration.statements) db.exec(statement);
      db.run("INSERT INTO schema_version (version, description, applied_at) VALUES (?, ?, ?)", [
        migration.version,
        migration.description,
        Date.now(),
      ]);
      db.exec(`PRAGMA user_version = ${migration.version}`);
      db.exec("COMMIT");
    } catch (error) {
      try {
        db.exec("ROLLBACK");
      } catch { /* already rolled back */ }
      throw error;
    }
  }
}
