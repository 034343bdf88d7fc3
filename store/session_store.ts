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
 * import { MESSAGE_ROLES } from "@hookscope/core/session";
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
  metadata?: Record<string, unknown> | null;
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
  /**
   * Inserts a session row; an existing id is an error (a session's first message, signal or run
   * has already created its row with status `created`; `updateSession` fills it in).
   */
  createSession(row: SessionRow): Promise<void>;
  /** The row, or `undefined`. */
  getSession(id: string): Promise<SessionRow | undefined>;
  /** Every session row, in creation order. */
  listSessions(): Promise<SessionRow[]>;
  /** Updates the given fields of an existing row. */
  updateSession(id: string, fields: Partial<SessionRow>): Promise<void>;
  /** Sets `lastActivityAt` to now (activity other than a message: a message sets it itself). */
  touchSessionActivity(id: string): Promise<void>;
  /** Merges fields into a branch row (created when absent). */
  updateBranch(id: string, fields: Record<string, unknown>): Promise<void>;
  /** The branch row, or `undefined`. */
  getBranch(id: string): Promise<Record<string, unknown> | undefined>;
  /**
   * Inserts a message; the same id twice is stored once. A message of a session that has no row
   * creates it (`{ id, status: "created" }`, as `Session.start()` does), so that the session can
   * be restored whether or not it was started. A new message of a session sets that session's
   * `lastActivityAt` to now, in the same write (a repeated id changes nothing).
   */
  insertMessage(message: MessageRecord): Promise<void>;
  /** Appends a message id to a sequence (an ordered list of message ids). */
  appendToSequence(sequenceId: string, messageId: string): Promise<void>;
  /** Messages in insertion order, filtered. */
  listMessages(
    options: { sessionId?: string; branchId?: string; sequenceId?: string },
  ): Promise<MessageRecord[]>;
  /** Appends a signal row; the store assigns `seq`. Creates a missing session row, as above. */
  insertSessionSignal(row: SignalInsert): Promise<void>;
  /**
   * Signal rows in `seq` order, after `afterSeq` (default 0), at most `limit` (a non-negative
   * integer or `Infinity`, the default; anything else rejects with a `TypeError`).
   */
  listSessionSignals(
    sessionId: string,
    options?: { afterSeq?: number; limit?: number },
  ): Promise<SignalRow[]>;
  /**
   * Inserts or replaces a run (by `runId`). Stores a JSON-safe copy; `updatedAt` is kept as given.
   * A malformed record rejects with a `TypeError` and stores nothing. A run of a session that has
   * no row creates it, as a message does.
   */
  saveRun(run: RunRecord): Promise<void>;
  /** The run (a copy), or `undefined`. */
  getRun(runId: string): Promise<RunRecord | undefined>;
  /**
   * Claims a run waiting for approval, atomically: when its status is `waiting_approval` it
   * becomes `running` with `owner` and `claimedAt` set, and the call resolves to `true`; in every
   * other case (unknown run, already claimed, finished) nothing changes and it resolves to
   * `false`. Of any number of concurrent claimers, in this process or in others sharing the
   * store, exactly one gets `true`.
   */
  claimRun(runId: string, owner: string): Promise<boolean>;
  /**
   * Takes back a claim whose claimer is gone (its process died): when the run is `running` under
   * a claim by exactly `owner`, it waits for approval again (owner and `claimedAt` cleared, pending
   * calls and answers kept) and the call resolves to `true`; otherwise nothing changes and it
   * resolves to `false`. Naming the owner makes the release apply to the claim that was looked
   * at, not to a newer one. Only for a claimer known to be gone: a live claimer would go on and
   * save over the released run. Resumed again, the run uses the stored results of calls the
   * claimer had run, and runs the answered calls that have none.
   * Optional, so that stores written before it still type-check; every store in this package has it.
   */
  releaseRun?(runId: string, owner: string): Promise<boolean>;
  /**
   * Records a person's answer to one pending call of a run waiting for approval; resolves to
   * `true`. Resolves to `false` and changes nothing when the run is unknown, is not waiting for
   * approval (claimed, finished) or has no pending call `callId`. A later answer to the same call
   * replaces the earlier one until the run is claimed. `answeredAt` defaults to now.
   */
  answerApproval(runId: string, callId: string, answer: RunAnswer): Promise<boolean>;
  /**
   * The pending calls of every run waiting for approval, oldest run first and in call order
   * within a run, each with the answer given so far.
   */
  listPendingApprovals(filter?: PendingApprovalFilter): Promise<PendingApprovalRow[]>;
  /** Releases resources; later calls reject. */
  close(): Promise<void>;
}

/** Where a resumable agent run stands. */
export type RunStatus = "running" | "waiting_approval" | "completed" | "failed" | "aborted";

/**
 * The run statuses, in no particular order: what stores accept.
 *
 * @example
 * ```ts
 * import { RUN_STATUSES } from "@hookscope/core/store";
 * import assert from "node:assert/strict";
 *
 * assert.ok(RUN_STATUSES.includes("waiting_approval"));
 * ```
 */
export const RUN_STATUSES: readonly RunStatus[] = Object.freeze([
  "running",
  "waiting_approval",
  "completed",
  "failed",
  "aborted",
]);

/** A tool call waiting for a person's answer (the stored form of a `PendingApproval`). */
export interface RunApproval {
  /** The run it belongs to. */
  runId: string;
  /** The session, when the run has one. */
  sessionId?: string;
  /** The branch, when the run has one. */
  branchId?: string;
  /** The tool call's id (the model's call id). */
  callId: string;
  /** The tool's name. */
  toolName: string;
  /** The arguments the tool would receive (after the `tool.pre` rewrites). */
  args: Record<string, unknown>;
  /** Why a hook asked. */
  reason?: string;
  /** Milliseconds since the epoch. */
  requestedAt: number;
  /** The hash of `args` (`argsHash`); stores compute it when a record has none. */
  argsHash?: string;
  /** The policy (hook name) that asked. */
  policy?: string;
  /** When it stops waiting (milliseconds since the epoch); later it resolves as rejected. */
  expiresAt?: number;
  /** Who may answer (an answer's `by`); anyone when absent. */
  answerableBy?: string[];
  /**
   * The call was started by a resumer whose claim was released (its process died): it may have
   * run. It waits for a person's answer again; approving runs it again.
   */
  interrupted?: boolean;
  /**
   * A change-set approval (a `tool.effects` hook asked about what a staged run did): the change
   * set (its first 200 entries), how many entries it has and its hash.
   */
  effects?: RunApprovalEffects;
}

/** The change set of a change-set approval, as a run stores it. */
export interface RunApprovalEffects {
  /** The entries in path order (at most 200). */
  changes: {
    path: string;
    kind: string;
    type?: string;
    bytesBefore?: number;
    bytesAfter?: number;
    target?: string;
  }[];
  /** How many entries the change set has. */
  count: number;
  /** The change set's hash (lowercase hex SHA-256). */
  hash: string;
}

/** A person's answer to one {@linkcode RunApproval} (the stored form of an `ApprovalAnswer`). */
export interface RunAnswer {
  /** `true` to run the call, `false` to refuse it. */
  approve: boolean;
  /** With `approve: true`: the arguments to run the call with instead (validated again). */
  updatedArgs?: Record<string, unknown>;
  /** With `approve: false`: why, told to the model. */
  reason?: string;
  /** With `approve: false`: end the run instead of telling the model. */
  interrupt?: boolean;
  /** Who answered. */
  by?: string;
  /** Milliseconds since the epoch (set by the store when absent). */
  answeredAt?: number;
  /** The pending call's `argsHash` the answer is for (the store sets it to the pending one). */
  argsHash?: string;
  /**
   * For a change-set approval: the hash of the change set the answer is for (the store sets it to
   * the pending one; an answer that names another one, or names `argsHash` without it, is
   * refused).
   */
  effectsHash?: string;
}

/** A tool call of the model, as the agent loop keeps it in a run. */
export interface RunToolCall {
  /** The model's call id. */
  id: string;
  /** The tool's name. */
  name: string;
  /** The arguments as the model sent them (JSON text). */
  arguments: string;
}

/** What the agent loop needs to continue a run exactly where it stopped. */
export interface RunState {
  /** Model turns taken so far. */
  turn: number;
  /** The run's turn limit. */
  maxTurns: number;
  /** Extra request fields sent with every model call (`temperature`, …). */
  request?: Record<string, unknown>;
  /** The tool calls of the last assistant turn, in the model's order. */
  toolCalls: RunToolCall[];
  /** Ids of the calls of that turn already answered to the model (ran, denied or failed). */
  done: string[];
  /** The id of the last assistant message. */
  messageId?: string;
  /** Whether the model is called streaming (`operateStream`); a resumed run does the same. */
  stream?: boolean;
  /**
   * Ids of the approved calls a resumer is about to run, written before the first of them
   * starts: a released claim turns those without a stored result into `interrupted` approvals.
   */
  started?: string[];
}

/**
 * A resumable agent run. The agent loop saves one per `operate` / `operateStream`; a run that
 * stops for approval has status `waiting_approval`, its `pending` calls and, once people answer,
 * their `answers` (by call id).
 */
export interface RunRecord {
  /** The run id. */
  runId: string;
  /** The session, or `null` for a branch outside a session. */
  sessionId: string | null;
  /** The branch, or `null`. */
  branchId: string | null;
  /** Where the run stands. */
  status: RunStatus;
  /** Why the run stopped last (`answer`, `maxTurns`, `approval`, `denied`, `aborted`), or `null`. */
  stoppedBy: string | null;
  /** The calls waiting for an answer (empty unless `waiting_approval`). */
  pending: RunApproval[];
  /** Answers by call id. */
  answers: Record<string, RunAnswer>;
  /** The agent-loop state. */
  state: RunState;
  /** Who claimed the run last (see {@linkcode SessionStore.claimRun}), or `null`. */
  owner: string | null;
  /** When it was claimed, or `null`. */
  claimedAt: number | null;
  /** A failure message, or `null`. */
  error: string | null;
  /** Milliseconds since the epoch. */
  createdAt: number;
  /** Milliseconds since the epoch. */
  updatedAt: number;
}

/** Filters for {@linkcode SessionStore.listPendingApprovals}; every given one must match. */
export interface PendingApprovalFilter {
  /** Only this session's runs. */
  sessionId?: string;
  /** Only this run. */
  runId?: string;
  /** Only this call. */
  callId?: string;
}

/** One unanswered or answered approval of a waiting run, as listed by a store. */
export interface PendingApprovalRow extends RunApproval {
  /** The answer given so far, or `undefined`. */
  answer?: RunAnswer;
}
