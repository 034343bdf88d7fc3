/**
 * Built-in Session hook handlers: persistence through the bus's `SessionStore`, and logging.
 * Each rejects when a required payload key is missing and does nothing when the bus has no store.
 *
 * @module
 */

import { logger } from "../core/logger.ts";
import { toJsonSafe } from "../core/json_safe.ts";
import type { MessageRecord, MessageRole, SessionRow } from "../store/session_store.ts";
import type { HookContext } from "./bus.ts";
import type { HookPayloads } from "./hook_point.ts";

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
 * import { HookBus, MemoryStore, persistSessionStart } from "@hookscope/core";
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
 * merged into `nodeMetadata`, and usage. A row already terminal only receives usage.
 *
 * @example
 * ```ts
 * import { HookBus, MemoryStore, persistSessionEnd } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const store = new MemoryStore();
 * await store.createSession({ id: "s1", status: "running" });
 * const bus = new HookBus(null, { store });
 * bus.on("session.end", persistSessionEnd);
 * await bus.emit("session.end", { sessionId: "s1", status: "failed", error: "boom" });
 * const row = await store.getSession("s1");
 * assert.equal(row?.statusReasonCode, "run.failed.exception");
 * assert.deepEqual(row?.nodeMetadata, { error: "boom" });
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
    fields.nodeMetadata = { ...(row.nodeMetadata ?? {}), error: payload.error };
  }
  await store.updateSession(sessionId, fields);
}

/**
 * Records a branch's provenance (`model`, `provider`, `agentName`; missing ones as `null`).
 *
 * @example
 * ```ts
 * import { HookBus, MemoryStore, persistBranchProvenance } from "@hookscope/core";
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
  /** The branch's progression to append to. */
  branchProgressionId?: string;
  /** The session's progression to append to. */
  sessionProgressionId?: string;
  /** Legacy name for the branch progression. */
  progressionId?: string;
  /** Other keys are ignored. */
  [key: string]: unknown;
}

/**
 * Persists a message: insert, append to the branch progression, append to the session
 * progression, remember a system message on its branch, then touch the session's activity.
 *
 * @example
 * ```ts
 * import { HookBus, MemoryStore, persistMessage } from "@hookscope/core";
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
  const branchProgression = p.branchProgressionId ?? p.progressionId;
  if (branchProgression) await store.appendToProgression(branchProgression, id);
  if (p.sessionProgressionId) await store.appendToProgression(p.sessionProgressionId, id);
  if (role === "system" && p.branchId) {
    await store.updateBranch(p.branchId, { systemMessageId: id });
  }
  await store.touchSessionActivity(sessionId);
}

/**
 * Logs one `api.post_call` line at info level: model, provider, total tokens, latency.
 *
 * @example
 * ```ts
 * import { HookBus, logApiMetrics, logger, type LogRecord } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const lines: LogRecord[] = [];
 * logger.configure({ level: "info", sink: (r) => lines.push(r) });
 * const bus = new HookBus();
 * bus.on("api.post_call", logApiMetrics);
 * await bus.emit("api.post_call", { model: "m", provider: "p", status: "completed", latencyMs: 12, tokens: { total: 30 } });
 * logger.configure({ level: "silent", sink: null });
 * assert.equal(lines[0].message, "api.post_call model=m provider=p tokens=30 latency_ms=12");
 * ```
 */
export function logApiMetrics(payload: HookPayloads["api.post_call"]): void {
  const p = (payload ?? {}) as Record<string, unknown>;
  const tokens = p.tokens as { total?: unknown } | null | undefined;
  const parts = [`api.post_call model=${String(p.model)}`, `provider=${String(p.provider)}`];
  if (tokens && tokens.total !== undefined) parts.push(`tokens=${String(tokens.total)}`);
  parts.push(`latency_ms=${String(p.latencyMs)}`);
  logger.info(parts.join(" "), payload);
}

/**
 * Logs a tool call at info level: tool, action, and the argument keys (or the summary).
 *
 * @example
 * ```ts
 * import { HookBus, logToolCall } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const bus = new HookBus();
 * bus.on("tool.pre", logToolCall);
 * await bus.emit("tool.pre", { toolName: "reader", callId: "c1", args: {}, argsSummary: "{}" });
 * assert.equal(bus.handlersFor("tool.pre").length, 1);
 * ```
 */
export function logToolCall(payload: Record<string, unknown>): void {
  const toolName = requireString(payload, "toolName", "logToolCall");
  const args = payload.args;
  const action = typeof payload.action === "string"
    ? payload.action
    : args && typeof args === "object" &&
        typeof (args as Record<string, unknown>).action === "string"
    ? (args as Record<string, unknown>).action
    : "";
  const rendered = args && typeof args === "object"
    ? `[${Object.keys(args).join(", ")}]`
    : String(payload.argsSummary ?? "");
  logger.info(`tool.pre tool=${toolName} action=${String(action)} args=${rendered}`, payload);
}
