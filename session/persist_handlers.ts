/**
 * The built-in persistence handlers: session, branch and message rows written through the
 * bus's `SessionStore`, and {@linkcode DEFAULT_HOOKS}, the handlers every `Session` bus starts
 * with. Each handler rejects when a required payload key is missing and does nothing when the
 * bus has no store. Their names (`persistSessionStart`, `persistSessionEnd`,
 * `persistBranchProvenance`, `persistMessage`) are registered for declarative configs.
 *
 * @module
 */

import { toJsonSafe } from "../core/json_safe.ts";
import type { HookContext, HookHandler, HookPayloads } from "../hooks/mod.ts";
import { HookPoint, registerHandler } from "../hooks/mod.ts";
import type { MessageRecord, MessageRole, SessionRow } from "../store/session_store.ts";

/** Session statuses after which a start does nothing and an end only adds usage. */
export const TERMINAL_SESSION_STATUSES: ReadonlySet<string> = new Set([
  "completed",
  "completed_empty",
  "failed",
  "timed_out",
  "aborted",
  "cancelled",
]);

const END_REASON_CODES: Readonly<Record<string, string>> = {
  completed: "run.completed.ok",
  failed: "run.failed.exception",
  timed_out: "run.timed_out.deadline",
  aborted: "run.aborted.user",
  cancelled: "run.cancelled.system",
};

const MESSAGE_ROLES: ReadonlySet<string> = new Set([
  "system",
  "user",
  "assistant",
  "action_request",
  "action_response",
]);

function requireString(payload: unknown, key: string, handler: string): string {
  const value = payload !== null && typeof payload === "object"
    ? (payload as Record<string, unknown>)[key]
    : undefined;
  if (typeof value !== "string" || value.length === 0) {
    throw new TypeError(`Cannot run ${handler}: payload needs a non-empty string "${key}"`);
  }
  return value;
}

function optional<T>(value: T | undefined): T | null {
  return value === undefined ? null : value;
}

/**
 * Marks a session row running (`run.started.ok`) with its provenance. Does nothing when the row
 * is missing, already terminal, or already started (idempotent).
 *
 * @example
 * ```ts
 * import { HookBus } from "@hookscope/core/hooks";
 * import { MemoryStore } from "@hookscope/core";
 * import { persistSessionStart } from "@hookscope/core/session";
 * import assert from "node:assert/strict";
 *
 * const store = new MemoryStore();
 * await store.createSession({ id: "s1", status: "created" });
 * const bus = new HookBus(null, { store });
 * bus.on("session.start", persistSessionStart);
 * await bus.emit("session.start", { sessionId: "s1", model: "m" });
 * assert.equal((await store.getSession("s1"))?.status, "running");
 * ```
 */
export async function persistSessionStart(
  payload: HookPayloads["session.start"],
  context: HookContext,
): Promise<void> {
  const sessionId = requireString(payload, "sessionId", "persistSessionStart");
  const store = context?.store;
  if (!store) return;
  const row = await store.getSession(sessionId);
  if (!row || TERMINAL_SESSION_STATUSES.has(row.status)) return;
  if (row.statusReasonCode === "run.started.ok") return;
  await store.updateSession(sessionId, {
    statusReasonCode: "run.started.ok",
    model: optional(payload.model),
    provider: optional(payload.provider),
    effort: optional(payload.effort),
    agentName: optional(payload.agentName),
    agentHash: optional(payload.agentHash),
    invocationId: optional(payload.invocationId),
    status: "running",
    startedAt: Date.now(),
  });
}

/**
 * Closes a session row: status (default `completed`) with its reason code, `endedAt`, the error
 * merged into `metadata`, and usage. A row already terminal only receives usage.
 *
 * @example
 * ```ts
 * import { HookBus } from "@hookscope/core/hooks";
 * import { MemoryStore } from "@hookscope/core";
 * import { persistSessionEnd } from "@hookscope/core/session";
 * import assert from "node:assert/strict";
 *
 * const store = new MemoryStore();
 * await store.createSession({ id: "s1", status: "running" });
 * const bus = new HookBus(null, { store });
 * bus.on("session.end", persistSessionEnd);
 * await bus.emit("session.end", { sessionId: "s1", status: "failed", error: "boom" });
 * const row = await store.getSession("s1");
 * assert.equal(row?.statusReasonCode, "run.failed.exception");
 * assert.deepEqual(row?.metadata, { error: "boom" });
 * ```
 */
export async function persistSessionEnd(
  payload: HookPayloads["session.end"],
  context: HookContext,
): Promise<void> {
  const sessionId = requireString(payload, "sessionId", "persistSessionEnd");
  const store = context?.store;
  if (!store) return;
  const row = await store.getSession(sessionId);
  if (!row) return;
  const usage: Partial<SessionRow> = {};
  for (
    const key of ["inputTokens", "outputTokens", "totalCostUsd", "numTurns", "durationMs"] as const
  ) {
    const value = payload[key];
    if (value !== undefined && value !== null) usage[key] = value;
  }
  if (TERMINAL_SESSION_STATUSES.has(row.status)) {
    if (Object.keys(usage).length > 0) await store.updateSession(sessionId, usage);
    return;
  }
  const status = typeof payload.status === "string" && payload.status
    ? payload.status
    : "completed";
  const fields: Partial<SessionRow> = {
    ...usage,
    endedAt: Date.now(),
    status,
    statusReasonCode: END_REASON_CODES[status] ?? "run.failed.exception",
  };
  if (payload.error !== undefined && payload.error !== null) {
    fields.metadata = { ...(row.metadata ?? {}), error: payload.error };
  }
  await store.updateSession(sessionId, fields);
}

/**
 * Records a branch's provenance (`model`, `provider`, `agentName`; missing ones as `null`).
 *
 * @example
 * ```ts
 * import { HookBus } from "@hookscope/core/hooks";
 * import { MemoryStore } from "@hookscope/core";
 * import { persistBranchProvenance } from "@hookscope/core/session";
 * import assert from "node:assert/strict";
 *
 * const store = new MemoryStore();
 * const bus = new HookBus(null, { store });
 * bus.on("branch.create", persistBranchProvenance);
 * await bus.emit("branch.create", { branchId: "b1", model: "m" });
 * assert.equal((await store.getBranch("b1"))?.model, "m");
 * ```
 */
export async function persistBranchProvenance(
  payload: HookPayloads["branch.create"],
  context: HookContext,
): Promise<void> {
  const branchId = requireString(payload, "branchId", "persistBranchProvenance");
  const store = context?.store;
  if (!store) return;
  await store.updateBranch(branchId, {
    model: optional(payload.model),
    provider: optional(payload.provider),
    agentName: optional(payload.agentName),
  });
}

/** The payload {@linkcode persistMessage} accepts. */
export interface PersistMessagePayload {
  /** The message (a `Message` or a `MessageRecord`). */
  message: { id: string; role: string; content?: unknown; [key: string]: unknown };
  /** The owning session. */
  sessionId: string;
  /** The branch, if any. */
  branchId?: string;
  /** The branch's sequence to append to. */
  branchSequenceId?: string;
  /** The session's sequence to append to. */
  sessionSequenceId?: string;
  /** Legacy name for the branch sequence. */
  sequenceId?: string;
  /** Other keys are ignored. */
  [key: string]: unknown;
}

/**
 * Persists a message: insert (which sets the session's `lastActivityAt`), append to the branch
 * sequence, append to the session sequence, remember a system message on its branch.
 *
 * @example
 * ```ts
 * import { HookBus } from "@hookscope/core/hooks";
 * import { MemoryStore } from "@hookscope/core";
 * import { persistMessage } from "@hookscope/core/session";
 * import assert from "node:assert/strict";
 *
 * const store = new MemoryStore();
 * await store.createSession({ id: "s1", status: "running" });
 * const bus = new HookBus(null, { store });
 * bus.on("message.add", persistMessage);
 * await bus.emit("message.add", {
 *   sessionId: "s1", branchId: "b1",
 *   message: { id: "m1", role: "user", content: "hi", createdAt: 1 },
 * });
 * assert.equal((await store.listMessages({ sessionId: "s1" }))[0].content, "hi");
 * ```
 */
export async function persistMessage(
  payload: PersistMessagePayload | HookPayloads["message.add"],
  context: HookContext,
): Promise<void> {
  const sessionId = requireString(payload, "sessionId", "persistMessage");
  const message = (payload as PersistMessagePayload).message;
  if (message === null || typeof message !== "object") {
    throw new TypeError(`Cannot run persistMessage: payload needs a "message" object`);
  }
  const id = requireString(message, "id", "persistMessage");
  const role = requireString(message, "role", "persistMessage");
  if (!MESSAGE_ROLES.has(role)) {
    throw new TypeError(
      `Cannot run persistMessage: unknown message role ${JSON.stringify(role)}; valid roles: ${
        [...MESSAGE_ROLES].map((r) => `"${r}"`).join(", ")
      }`,
    );
  }
  const store = context?.store;
  if (!store) return;
  const p = payload as PersistMessagePayload;
  const m = message as Record<string, unknown>;
  const branchId = typeof m.branchId === "string" ? m.branchId : p.branchId ?? null;
  const record: MessageRecord = {
    id,
    role: role as MessageRole,
    content: toJsonSafe(m.content),
    sender: typeof m.sender === "string" ? m.sender : null,
    recipient: typeof m.recipient === "string" ? m.recipient : null,
    branchId,
    sessionId,
    createdAt: typeof m.createdAt === "number" ? m.createdAt : Date.now(),
  };
  await store.insertMessage(record);
  const branchProgression = p.branchSequenceId ?? p.sequenceId;
  if (branchProgression) await store.appendToSequence(branchProgression, id);
  if (p.sessionSequenceId) await store.appendToSequence(p.sessionSequenceId, id);
  if (role === "system" && p.branchId) {
    await store.updateBranch(p.branchId, { systemMessageId: id });
  }
}

/**
 * The handlers every `Session` bus starts with, per point, in this order. A declarative config
 * replaces a point's whole list (an empty list disables it).
 *
 * @example
 * ```ts
 * import { DEFAULT_HOOKS, persistMessage } from "@hookscope/core/session";
 * import assert from "node:assert/strict";
 *
 * assert.deepEqual(Object.keys(DEFAULT_HOOKS), ["session.start", "session.end", "message.add", "branch.create"]);
 * assert.equal(DEFAULT_HOOKS["message.add"]?.[0], persistMessage);
 * ```
 */
export const DEFAULT_HOOKS: Readonly<Partial<Record<HookPoint, readonly HookHandler[]>>> = Object
  .freeze({
    [HookPoint.SESSION_START]: Object.freeze([persistSessionStart as HookHandler]),
    [HookPoint.SESSION_END]: Object.freeze([persistSessionEnd as HookHandler]),
    [HookPoint.MESSAGE_ADD]: Object.freeze([persistMessage as HookHandler]),
    [HookPoint.BRANCH_CREATE]: Object.freeze([persistBranchProvenance as HookHandler]),
  });

// Declarative configs name these handlers: keep the names in the process-global registry.
registerHandler("persistSessionStart", persistSessionStart as HookHandler);
registerHandler("persistSessionEnd", persistSessionEnd as HookHandler);
registerHandler("persistBranchProvenance", persistBranchProvenance as HookHandler);
registerHandler("persistMessage", persistMessage as HookHandler);
