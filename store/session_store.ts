/**
 * The storage interface that persistence hooks and observers write through.
 *
 * @module
 */

/** Who wrote a message. */
export type MessageRole = "system" | "user" | "assistant" | "action_request" | "action_response";

/**
 * The five message roles, in conversation order: what stores and branches accept.
 *
 * @example
 * ```ts
 * import { MESSAGE_ROLES } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * assert.ok(MESSAGE_ROLES.includes("action_response"));
 * assert.equal(MESSAGE_ROLES.length, 5);
 * ```
 */
export const MESSAGE_ROLES: readonly MessageRole[] = Object.freeze([
  "system",
  "user",
  "assistant",
  "action_request",
  "action_response",
]);

/** A session's row. Field names are the camelCase of the reference columns. */
export interface SessionRow {
  /** The session id. */
  id: string;
  /** `created`, `running`, `completed`, `failed`, `timed_out`, `aborted`, `cancelled`, … */
  status: string;
  /** Why the status is what it is (`run.started.ok`, `run.completed.ok`, …). */
  statusReasonCode?: string | null;
  /** Milliseconds since the epoch. */
  startedAt?: number | null;
  /** Milliseconds since the epoch. */
  endedAt?: number | null;
  /** The model name. */
  model?: string | null;
  /** The provider name. */
  provider?: string | null;
  /** Reasoning effort. */
  effort?: string | null;
  /** The agent's name. */
  agentName?: string | null;
  /** A hash of the agent's definition. */
  agentHash?: string | null;
  /** The invocation id. */
  invocationId?: string | null;
  /** Free-form metadata. */
  nodeMetadata?: Record<string, unknown> | null;
  /** Input tokens used. */
  inputTokens?: number | null;
  /** Output tokens used. */
  outputTokens?: number | null;
  /** Cost in US dollars. */
  totalCostUsd?: number | null;
  /** Turns taken. */
  numTurns?: number | null;
  /** Duration in milliseconds. */
  durationMs?: number | null;
  /** Milliseconds since the epoch. */
  lastActivityAt?: number | null;
}

/** A stored message. */
export interface MessageRecord {
  /** The message id. */
  id: string;
  /** Who wrote it. */
  role: MessageRole;
  /** The content (JSON-safe). */
  content: unknown;
  /** The sender, or `null`. */
  sender: string | null;
  /** The recipient, or `null`. */
  recipient: string | null;
  /** The branch it belongs to, or `null`. */
  branchId: string | null;
  /** The session it belongs to, or `null`. */
  sessionId: string | null;
  /** Milliseconds since the epoch. */
  createdAt: number;
}

/** A persisted signal. */
export interface SignalRow {
  /** Sequence number, increasing per store. */
  seq: number;
  /** The session. */
  sessionId: string;
  /** The signal's class name. */
  kind: string;
  /** The signal's `opId`, or `""`. */
  opId: string;
  /** Milliseconds since the epoch. */
  ts: number;
  /** The sanitized payload (at most 16 384 UTF-8 bytes of JSON). */
  payload: Record<string, unknown>;
}

/** What {@linkcode SessionStore.insertSessionSignal} takes. */
export interface SignalInsert {
  /** The session. */
  sessionId: string;
  /** The signal's class name. */
  kind: string;
  /** The signal's `opId`, or `""`. */
  opId: string;
  /** Milliseconds since the epoch. */
  ts: number;
  /** The sanitized payload. */
  payload: Record<string, unknown>;
}

/**
 * Where sessions, branches, messages and signals are persisted. `MemoryStore` and `SqliteStore`
 * implement it.
 *
 * @example A store is used through this interface only
 * ```ts
 * import { MemoryStore, type SessionStore } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const store: SessionStore = new MemoryStore();
 * await store.createSession({ id: "s1", status: "created" });
 * assert.equal((await store.getSession("s1"))?.status, "created");
 * ```
 */
export interface SessionStore {
  /** Inserts a session row; an existing id is an error. */
  createSession(row: SessionRow): Promise<void>;
  /** The row, or `undefined`. */
  getSession(id: string): Promise<SessionRow | undefined>;
  /** Every session row, in creation order. */
  listSessions(): Promise<SessionRow[]>;
  /** Updates the given fields of an existing row. */
  updateSession(id: string, fields: Partial<SessionRow>): Promise<void>;
  /** Sets `lastActivityAt` to now. */
  touchSessionActivity(id: string): Promise<void>;
  /** Merges fields into a branch row (created when absent). */
  updateBranch(id: string, fields: Record<string, unknown>): Promise<void>;
  /** The branch row, or `undefined`. */
  getBranch(id: string): Promise<Record<string, unknown> | undefined>;
  /** Inserts a message; the same id twice is stored once. */
  insertMessage(message: MessageRecord): Promise<void>;
  /** Appends a message id to a progression (an ordered list of message ids). */
  appendToProgression(progressionId: string, messageId: string): Promise<void>;
  /** Messages in insertion order, filtered. */
  listMessages(
    options: { sessionId?: string; branchId?: string; progressionId?: string },
  ): Promise<MessageRecord[]>;
  /** Appends a signal row; the store assigns `seq`. */
  insertSessionSignal(row: SignalInsert): Promise<void>;
  /**
   * Signal rows in `seq` order, after `afterSeq` (default 0), at most `limit` (a non-negative
   * integer or `Infinity`, the default; anything else rejects with a `TypeError`).
   */
  listSessionSignals(
    sessionId: string,
    options?: { afterSeq?: number; limit?: number },
  ): Promise<SignalRow[]>;
  /** Releases resources; later calls reject. */
  close(): Promise<void>;
}
