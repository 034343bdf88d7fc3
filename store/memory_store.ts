/**
 * An in-memory {@linkcode SessionStore}: the default for tests and short-lived sessions.
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
} from "./session_store.ts";
import { StoreClosedError, StoreConflictError } from "./store_errors.ts";
import {
  checkId,
  copySignalRow,
  normalizeBranchFields,
  normalizeMessage,
  normalizeMessageQuery,
  normalizeSessionFields,
  normalizeSessionRow,
  normalizeSignal,
  normalizeSignalQuery,
  presentSession,
} from "./_rows.ts";
import {
  givenTime,
  normalizeAnswer,
  normalizePendingFilter,
  normalizeRun,
  pendingRowsOf,
  withAnswer,
  withClaim,
  withRelease,
} from "./_runs.ts";

const FINISHED: ReadonlySet<string> = new Set(["completed", "failed", "aborted"]);

/** Options of {@linkcode MemoryStore}. */
export interface MemoryStoreOptions {
  /**
   * How many finished runs (status `completed`, `failed` or `aborted`) to keep; older finished runs are
   * dropped when another one finishes. Runs that wait for approval or are running are always
   * kept. Default: all (`Infinity`). A session without a store keeps its runs in a private
   * memory store that keeps 64.
   */
  keepFinishedRuns?: number;
}

/**
 * A complete {@linkcode SessionStore} held in memory.
 *
 * Rows are stored as JSON-safe deep copies and returned as fresh copies, so a caller can never
 * change a stored row by mutating an argument or a result. Session rows come back with their
 * `null` fields omitted. `updateSession` and `touchSessionActivity` of an unknown session change
 * nothing (as an SQL `UPDATE` would). Signals get a `seq` that increases by one per insert across
 * the whole store. After {@linkcode MemoryStore.close} every call rejects with
 * {@linkcode StoreClosedError}; malformed arguments reject with a `TypeError` and store nothing.
 *
 * @example Sessions, messages and signals
 * ```ts
 * import { MemoryStore } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const store = new MemoryStore();
 * await store.createSession({ id: "s1", status: "created" });
 * await store.insertMessage({
 *   id: "m1", role: "user", content: "hi", sender: null, recipient: null,
 *   branchId: "b1", sessionId: "s1", createdAt: 1,
 * });
 * await store.insertSessionSignal({ sessionId: "s1", kind: "MessageAdded", opId: "", ts: 1, payload: {} });
 * assert.equal((await store.listMessages({ branchId: "b1" }))[0].content, "hi");
 * assert.equal((await store.listSessionSignals("s1"))[0].seq, 1);
 * ```
 */
export class MemoryStore implements SessionStore {
  #closed = false;
  #seq = 0;
  #sessions = new Map<string, Record<string, unknown>>();
  #branches = new Map<string, Record<string, unknown>>();
  #messages = new Map<string, MessageRecord>();
  #progressions = new Map<string, string[]>();
  #signals: SignalRow[] = [];
  #runs = new Map<string, RunRecord>();
  #finished = new Set<string>();
  #keepFinished: number;

  /**
   * Makes an empty store.
   *
   * @throws {TypeError} when `keepFinishedRuns` is not a number ≥ 0.
   */
  constructor(options?: MemoryStoreOptions) {
    const keep = options?.keepFinishedRuns ?? Infinity;
    if (typeof keep !== "number" || Number.isNaN(keep) || keep < 0) {
      throw new TypeError("Cannot create memory store: keepFinishedRuns must be a number >= 0");
    }
    this.#keepFinished = keep;
  }

  /** Whether {@linkcode MemoryStore.close} was called. */
  get closed(): boolean {
    return this.#closed;
  }

  #open(operation: string): void {
    if (this.#closed) throw new StoreClosedError(operation, "memory store");
  }

  /** Inserts a session row; an existing id rejects with {@linkcode StoreConflictError}. */
  async createSession(row: SessionRow): Promise<void> {
    this.#open("create session");
    const normalized = normalizeSessionRow(row);
    if (this.#sessions.has(normalized.id)) {
      throw new StoreConflictError(
        `Cannot create session: id "${normalized.id}" already exists`,
        normalized.id,
      );
    }
    this.#sessions.set(normalized.id, normalized as unknown as Record<string, unknown>);
    await undefined;
  }

  /**
   * Creates the row of a session that is written to before `createSession` (status `created`,
   * as `Session.start()` would), so that every session with data can be restored.
   */
  #implicitSession(id: string | null): void {
    if (id === null || this.#sessions.has(id)) return;
    const row = normalizeSessionRow({ id, status: "created" });
    this.#sessions.set(id, row as unknown as Record<string, unknown>);
  }

  /** The row (a copy, `null` fields omitted), or `undefined`. */
  async getSession(id: string): Promise<SessionRow | undefined> {
    this.#open("get session");
    checkId(id, "id", "get session");
    const stored = this.#sessions.get(id);
    await undefined;
    return stored === undefined ? undefined : presentSession(stored);
  }

  /** Every session row (copies, `null` fields omitted), in creation order. */
  async listSessions(): Promise<SessionRow[]> {
    this.#open("list sessions");
    await undefined;
    return [...this.#sessions.values()].map((stored) => presentSession(stored));
  }

  /** Updates the given fields of an existing row; an unknown id changes nothing. */
  async updateSession(id: string, fields: Partial<SessionRow>): Promise<void> {
    this.#open("update session");
    checkId(id, "id", "update session");
    const normalized = normalizeSessionFields(fields, "update session");
    const stored = this.#sessions.get(id);
    if (stored !== undefined) Object.assign(stored, normalized);
    await undefined;
  }

  /** Sets `lastActivityAt` to now; an unknown id changes nothing. */
  async touchSessionActivity(id: string): Promise<void> {
    this.#open("touch session activity");
    checkId(id, "id", "touch session activity");
    const stored = this.#sessions.get(id);
    if (stored !== undefined) stored.lastActivityAt = Date.now();
    await undefined;
  }

  /** Merges fields into a branch row, creating it when absent. */
  async updateBranch(id: string, fields: Record<string, unknown>): Promise<void> {
    this.#open("update branch");
    checkId(id, "id", "update branch");
    const normalized = normalizeBranchFields(fields);
    const stored = this.#branches.get(id);
    if (stored === undefined) this.#branches.set(id, { id, ...normalized });
    else Object.assign(stored, normalized);
    await undefined;
  }

  /** The branch row (a copy, with `id`), or `undefined`. */
  async getBranch(id: string): Promise<Record<string, unknown> | undefined> {
    this.#open("get branch");
    checkId(id, "id", "get branch");
    const stored = this.#branches.get(id);
    await undefined;
    return stored === undefined ? undefined : structuredClone(stored);
  }

  /**
   * Inserts a message; a second insert of the same id is ignored (the first is kept). A session
   * without a row gets one (status `created`); a new message sets its session's
   * `lastActivityAt` to now.
   */
  async insertMessage(message: MessageRecord): Promise<void> {
    this.#open("insert message");
    const normalized = normalizeMessage(message);
    if (!this.#messages.has(normalized.id)) {
      this.#messages.set(normalized.id, normalized);
      this.#implicitSession(normalized.sessionId);
      if (normalized.sessionId !== null) {
        this.#sessions.get(normalized.sessionId)!.lastActivityAt = Date.now();
      }
    }
    await undefined;
  }

  /** Appends a message id to a sequence; an id already in that sequence is not repeated. */
  async appendToSequence(sequenceId: string, messageId: string): Promise<void> {
    this.#open("append to sequence");
    checkId(sequenceId, "sequenceId", "append to sequence");
    checkId(messageId, "messageId", "append to sequence");
    const list = this.#progressions.get(sequenceId);
    if (list === undefined) this.#progressions.set(sequenceId, [messageId]);
    else if (!list.includes(messageId)) list.push(messageId);
    await undefined;
  }

  /**
   * Messages (copies) in insertion order, or in sequence order when `sequenceId` is given;
   * every given filter must match.
   */
  async listMessages(
    options: { sessionId?: string; branchId?: string; sequenceId?: string },
  ): Promise<MessageRecord[]> {
    this.#open("list messages");
    const query = normalizeMessageQuery(options);
    let source: Iterable<MessageRecord>;
    if (query.sequenceId !== undefined) {
      const ids = this.#progressions.get(query.sequenceId) ?? [];
      const found: MessageRecord[] = [];
      for (const id of ids) {
        const message = this.#messages.get(id);
        if (message !== undefined) found.push(message);
      }
      source = found;
    } else {
      source = this.#messages.values();
    }
    const out: MessageRecord[] = [];
    for (const message of source) {
      if (query.sessionId !== undefined && message.sessionId !== query.sessionId) continue;
      if (query.branchId !== undefined && message.branchId !== query.branchId) continue;
      out.push(structuredClone(message));
    }
    await undefined;
    return out;
  }

  /** Appends a signal row with the next `seq`; a session without a row gets one (`created`). */
  async insertSessionSignal(row: SignalInsert): Promise<void> {
    this.#open("insert session signal");
    const normalized = normalizeSignal(row);
    this.#implicitSession(normalized.sessionId);
    this.#seq += 1;
    this.#signals.push({ seq: this.#seq, ...normalized });
    await undefined;
  }

  /** Signal rows (copies) of one session in `seq` order, after `afterSeq`, at most `limit`. */
  async listSessionSignals(
    sessionId: string,
    options?: { afterSeq?: number; limit?: number },
  ): Promise<SignalRow[]> {
    this.#open("list session signals");
    checkId(sessionId, "sessionId", "list session signals");
    const { afterSeq, limit } = normalizeSignalQuery(options);
    const out: SignalRow[] = [];
    for (const row of this.#signals) {
      if (out.length >= limit) break;
      if (row.sessionId === sessionId && row.seq > afterSeq) out.push(copySignalRow(row));
    }
    await undefined;
    return out;
  }

  /** Inserts or replaces a run (a JSON-safe copy); a session without a row gets one (`created`). */
  async saveRun(run: RunRecord): Promise<void> {
    this.#open("save run");
    const normalized = normalizeRun(run);
    this.#implicitSession(normalized.sessionId);
    const id = normalized.runId;
    this.#runs.set(id, normalized);
    this.#finished.delete(id);
    if (FINISHED.has(normalized.status)) {
      this.#finished.add(id);
      for (const oldest of this.#finished) {
        if (this.#finished.size <= this.#keepFinished) break;
        this.#finished.delete(oldest);
        this.#runs.delete(oldest);
      }
    }
    await undefined;
  }

  /** The run (a copy), or `undefined`. */
  async getRun(runId: string): Promise<RunRecord | undefined> {
    this.#open("get run");
    checkId(runId, "runId", "get run");
    const stored = this.#runs.get(runId);
    await undefined;
    return stored === undefined ? undefined : structuredClone(stored);
  }

  /**
   * Claims a run waiting for approval (status `running`, `owner`, `claimedAt`); `false` when it
   * is unknown or not waiting. Check and write happen in one synchronous step, so exactly one of
   * concurrent claimers wins.
   */
  async claimRun(runId: string, owner: string): Promise<boolean> {
    this.#open("claim run");
    checkId(runId, "runId", "claim run");
    checkId(owner, "owner", "claim run");
    const stored = this.#runs.get(runId);
    const claimed = stored === undefined ? undefined : withClaim(stored, owner, Date.now());
    if (claimed !== undefined) this.#runs.set(runId, claimed);
    await undefined;
    return claimed !== undefined;
  }

  /**
   * Takes back the claim of `owner` on a running run (waiting for approval again); `false` when
   * the run is unknown, not running or claimed by someone else.
   */
  async releaseRun(runId: string, owner: string): Promise<boolean> {
    this.#open("release run");
    checkId(runId, "runId", "release run");
    checkId(owner, "owner", "release run");
    const stored = this.#runs.get(runId);
    const released = stored === undefined ? undefined : withRelease(stored, owner, Date.now());
    if (released !== undefined) this.#runs.set(runId, released);
    await undefined;
    return released !== undefined;
  }

  /** Records an answer to a pending call of a waiting run; `false` when there is no such call. */
  async answerApproval(runId: string, callId: string, answer: RunAnswer): Promise<boolean> {
    this.#open("answer approval");
    checkId(runId, "runId", "answer approval");
    checkId(callId, "callId", "answer approval");
    const now = Date.now();
    const normalized = normalizeAnswer(answer, "answer approval", now);
    const stored = this.#runs.get(runId);
    // An answer that names its own `answeredAt` is the caller's retry of it (see withAnswer).
    const next = stored === undefined
      ? undefined
      : withAnswer(stored, callId, normalized, now, givenTime(answer));
    if (next !== undefined) this.#runs.set(runId, next);
    await undefined;
    return next !== undefined;
  }

  /** The pending calls of waiting runs (copies), oldest run first, in call order. */
  async listPendingApprovals(filter?: PendingApprovalFilter): Promise<PendingApprovalRow[]> {
    this.#open("list pending approvals");
    const query = normalizePendingFilter(filter);
    const runs = [...this.#runs.values()].sort((a, b) => a.createdAt - b.createdAt);
    const out: PendingApprovalRow[] = [];
    for (const run of runs) out.push(...pendingRowsOf(run, query));
    await undefined;
    return out;
  }

  /** Drops everything; later calls reject with {@linkcode StoreClosedError}. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#sessions.clear();
    this.#branches.clear();
    this.#messages.clear();
    this.#progressions.clear();
    this.#signals = [];
    this.#runs.clear();
    await undefined;
  }
}
