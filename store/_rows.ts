// Validation and normalization shared by every store, so all stores accept and return the same rows.

import { toJsonSafe } from "../core/json_safe.ts";
import {
  MESSAGE_ROLES as ROLES,
  type MessageRecord,
  type MessageRole,
  type SessionRow,
  type SignalInsert,
  type SignalRow,
} from "./session_store.ts";

/** The SessionRow fields other than `id`, with their JSON type. */
export const SESSION_FIELDS: Readonly<Record<string, "string" | "number" | "object">> = {
  status: "string",
  statusReasonCode: "string",
  startedAt: "number",
  endedAt: "number",
  model: "string",
  provider: "string",
  effort: "string",
  agentName: "string",
  agentHash: "string",
  invocationId: "string",
  nodeMetadata: "object",
  inputTokens: "number",
  outputTokens: "number",
  totalCostUsd: "number",
  numTurns: "number",
  durationMs: "number",
  lastActivityAt: "number",
};

/** The session columns in a fixed order (the SQLite schema uses it). */
export const SESSION_FIELD_NAMES: readonly string[] = Object.keys(SESSION_FIELDS);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function quote(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (value === null) return "null";
  if (Array.isArray(value)) return "(array)";
  return `(${typeof value})`;
}

/** Checks an id argument. */
export function checkId(value: unknown, what: string, action: string): string {
  if (typeof value !== "string" || value.length === 0) {
    throw new TypeError(
      `Cannot ${action}: ${what} must be a non-empty string; got ${quote(value)}`,
    );
  }
  return value;
}

/** Validates session fields and returns a JSON-safe copy without `undefined` values. */
export function normalizeSessionFields(
  fields: unknown,
  action: string,
): Record<string, unknown> {
  if (!isRecord(fields)) {
    throw new TypeError(`Cannot ${action}: fields must be an object; got ${quote(fields)}`);
  }
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(fields)) {
    const value = fields[key];
    if (key === "id") continue;
    const type = SESSION_FIELDS[key];
    if (type === undefined) {
      throw new TypeError(`Cannot ${action}: unknown session field ${quote(key)}`);
    }
    if (value === undefined) continue;
    if (value === null) {
      if (key === "status") {
        throw new TypeError(`Cannot ${action}: status must be a string; got null`);
      }
      out[key] = null;
      continue;
    }
    if (type === "number" && (typeof value !== "number" || !Number.isFinite(value))) {
      throw new TypeError(
        `Cannot ${action}: session field "${key}" must be a finite number; got ${quote(value)}`,
      );
    }
    if (type === "string" && typeof value !== "string") {
      throw new TypeError(
        `Cannot ${action}: session field "${key}" must be a string; got ${quote(value)}`,
      );
    }
    out[key] = type === "object" ? toJsonSafe(value) : value;
  }
  return out;
}

/** Validates a full session row for `createSession`. */
export function normalizeSessionRow(row: unknown): SessionRow {
  const action = "create session";
  if (!isRecord(row)) {
    throw new TypeError(`Cannot ${action}: row must be an object; got ${quote(row)}`);
  }
  const id = checkId(row.id, "id", action);
  if (typeof row.status !== "string") {
    throw new TypeError(`Cannot ${action}: status must be a string; got ${quote(row.status)}`);
  }
  return { ...normalizeSessionFields(row, action), id } as SessionRow;
}

/** A stored session as returned to callers: `id` first, `null` fields omitted. */
export function presentSession(stored: Record<string, unknown>): SessionRow {
  const out: Record<string, unknown> = { id: stored.id };
  for (const key of SESSION_FIELD_NAMES) {
    const value = stored[key];
    if (value !== null && value !== undefined) out[key] = structuredClone(value);
  }
  return out as unknown as SessionRow;
}

/** Validates a branch update; returns a JSON-safe copy without `undefined` values. */
export function normalizeBranchFields(fields: unknown): Record<string, unknown> {
  const action = "update branch";
  if (!isRecord(fields)) {
    throw new TypeError(`Cannot ${action}: fields must be an object; got ${quote(fields)}`);
  }
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(fields)) {
    if (key === "id" || fields[key] === undefined) continue;
    out[key] = toJsonSafe(fields[key]);
  }
  return out;
}

function nullableString(value: unknown, key: string, action: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "string") {
    throw new TypeError(`Cannot ${action}: ${key} must be a string or null; got ${quote(value)}`);
  }
  return value;
}

function nullableId(value: unknown, key: string, action: string): string | null {
  if (value === undefined || value === null) return null;
  return checkId(value, key, action);
}

/** Validates a message record; returns a JSON-safe copy. */
export function normalizeMessage(message: unknown): MessageRecord {
  const action = "insert message";
  if (!isRecord(message)) {
    throw new TypeError(`Cannot ${action}: message must be an object; got ${quote(message)}`);
  }
  const id = checkId(message.id, "id", action);
  if (!ROLES.includes(message.role as MessageRole)) {
    throw new TypeError(
      `Cannot ${action}: unknown role ${quote(message.role)}; valid roles: ${
        ROLES.map((r) => `"${r}"`).join(", ")
      }`,
    );
  }
  const createdAt = message.createdAt;
  if (typeof createdAt !== "number" || !Number.isFinite(createdAt)) {
    throw new TypeError(
      `Cannot ${action}: createdAt must be a finite number; got ${quote(createdAt)}`,
    );
  }
  return {
    id,
    role: message.role as MessageRole,
    content: toJsonSafe(message.content),
    sender: nullableString(message.sender, "sender", action),
    recipient: nullableString(message.recipient, "recipient", action),
    branchId: nullableId(message.branchId, "branchId", action),
    sessionId: nullableId(message.sessionId, "sessionId", action),
    createdAt,
  };
}

/** Validates a signal insert; returns a JSON-safe copy. */
export function normalizeSignal(row: unknown): SignalInsert {
  const action = "insert session signal";
  if (!isRecord(row)) {
    throw new TypeError(`Cannot ${action}: row must be an object; got ${quote(row)}`);
  }
  const sessionId = checkId(row.sessionId, "sessionId", action);
  if (typeof row.kind !== "string" || row.kind.length === 0) {
    throw new TypeError(
      `Cannot ${action}: kind must be a non-empty string; got ${quote(row.kind)}`,
    );
  }
  const opId = row.opId ?? "";
  if (typeof opId !== "string") {
    throw new TypeError(`Cannot ${action}: opId must be a string; got ${quote(opId)}`);
  }
  if (typeof row.ts !== "number" || !Number.isFinite(row.ts)) {
    throw new TypeError(`Cannot ${action}: ts must be a finite number; got ${quote(row.ts)}`);
  }
  if (!isRecord(row.payload)) {
    throw new TypeError(`Cannot ${action}: payload must be an object; got ${quote(row.payload)}`);
  }
  return {
    sessionId,
    kind: row.kind,
    opId,
    ts: row.ts,
    payload: toJsonSafe(row.payload) as Record<string, unknown>,
  };
}

/** Validates `listSessionSignals` options. */
export function normalizeSignalQuery(
  options: unknown,
): { afterSeq: number; limit: number } {
  const action = "list session signals";
  if (options === undefined || options === null) return { afterSeq: 0, limit: Infinity };
  if (!isRecord(options)) {
    throw new TypeError(`Cannot ${action}: options must be an object; got ${quote(options)}`);
  }
  const afterSeq = options.afterSeq ?? 0;
  const limit = options.limit ?? Infinity;
  if (typeof afterSeq !== "number" || Number.isNaN(afterSeq)) {
    throw new TypeError(`Cannot ${action}: afterSeq must be a number; got ${quote(afterSeq)}`);
  }
  // A fractional limit would mean different things to different stores (SQL LIMIT floors it).
  if (
    typeof limit !== "number" || limit < 0 || (limit !== Infinity && !Number.isInteger(limit))
  ) {
    throw new TypeError(
      `Cannot ${action}: limit must be a non-negative integer or Infinity; got ${quote(limit)}`,
    );
  }
  return { afterSeq, limit };
}

/** Validates `listMessages` options. */
export function normalizeMessageQuery(
  options: unknown,
): { sessionId?: string; branchId?: string; progressionId?: string } {
  const action = "list messages";
  if (options === undefined || options === null) return {};
  if (!isRecord(options)) {
    throw new TypeError(`Cannot ${action}: options must be an object; got ${quote(options)}`);
  }
  const out: { sessionId?: string; branchId?: string; progressionId?: string } = {};
  for (const key of ["sessionId", "branchId", "progressionId"] as const) {
    const value = options[key];
    if (value === undefined) continue;
    out[key] = checkId(value, key, action);
  }
  return out;
}

/** A deep copy of a signal row. */
export function copySignalRow(row: SignalRow): SignalRow {
  return { ...row, payload: structuredClone(row.payload) };
}
