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
import { describeValue, isRecord } from "../core/_util.ts";

/** Limits on what one persisted value (message content, signal payload, branch field) may hold. */
export interface PayloadLimits {
  /** Nesting levels kept; deeper values become `"[Depth]"` (default 64). */
  maxDepth: number;
  /** UTF-8 bytes of the value's JSON (default 1 048 576, 1 MiB). */
  maxBytes: number;
}

/** The default {@linkcode PayloadLimits}: depth 64 and 1 MiB per value. */
export const DEFAULT_PAYLOAD_LIMITS: PayloadLimits = { maxDepth: 64, maxBytes: 1_048_576 };

/** The marker a cut value is stored as: the cut is visible in the row, never silent. */
export interface TruncatedValue {
  truncated: true;
  /** `depth`: nested deeper than `maxDepth`; `size`: JSON larger than `maxBytes`. */
  reason: "depth" | "size";
  /** The limit that was exceeded. */
  limit: number;
  /** For `size`: the JSON's size in bytes. */
  originalBytes?: number;
  /** For `depth`: the value with deeper levels as `"[Depth]"`; for `size`: a prefix of its JSON. */
  data: unknown;
}

/** Checks limits given as options; fills in the defaults. */
export function checkPayloadLimits(limits: unknown, action: string): PayloadLimits {
  if (limits === undefined) return DEFAULT_PAYLOAD_LIMITS;
  if (!isRecord(limits)) {
    throw new TypeError(`Cannot ${action}: limits must be an object; got ${describeValue(limits)}`);
  }
  const out = { ...DEFAULT_PAYLOAD_LIMITS };
  for (const key of ["maxDepth", "maxBytes"] as const) {
    const value = limits[key];
    if (value === undefined) continue;
    if (typeof value !== "number" || !Number.isInteger(value) || value < 1) {
      throw new TypeError(
        `Cannot ${action}: limits.${key} must be a positive integer; got ${describeValue(value)}`,
      );
    }
    out[key] = value;
  }
  return out;
}

/** UTF-8 bytes of a string, without encoding it. */
function utf8Bytes(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

/** Whether a JSON-safe value holds a `"[Depth]"` cut at exactly `maxDepth`. */
function cutAtDepth(value: unknown, maxDepth: number, depth = 0): boolean {
  if (typeof value === "string") return depth === maxDepth && value === "[Depth]";
  if (value === null || typeof value !== "object" || depth >= maxDepth) return false;
  const items = Array.isArray(value) ? value : Object.values(value);
  for (const item of items) if (cutAtDepth(item, maxDepth, depth + 1)) return true;
  return false;
}

/**
 * A JSON-safe copy of `value` within `limits`; a value cut to fit is returned as a
 * {@linkcode TruncatedValue}, so the row itself says it was cut and why.
 */
export function limitPayload(value: unknown, limits: PayloadLimits): unknown {
  let safe = toJsonSafe(value, { maxDepth: limits.maxDepth });
  let marked: TruncatedValue | undefined;
  if (cutAtDepth(safe, limits.maxDepth)) {
    marked = { truncated: true, reason: "depth", limit: limits.maxDepth, data: safe };
    safe = marked;
  }
  const json = JSON.stringify(safe) ?? "null";
  const bytes = utf8Bytes(json);
  if (bytes <= limits.maxBytes) return safe;
  // The prefix keeps a little under the limit for the marker around it.
  const room = Math.max(0, limits.maxBytes - 256);
  let prefix = json.slice(0, room);
  while (prefix.length > 0 && utf8Bytes(JSON.stringify(prefix)) > room) {
    prefix = prefix.slice(0, Math.floor(prefix.length * 0.9));
  }
  const code = prefix.charCodeAt(prefix.length - 1);
  if (code >= 0xd800 && code <= 0xdbff) prefix = prefix.slice(0, -1);
  return {
    truncated: true,
    reason: "size",
    limit: limits.maxBytes,
    originalBytes: bytes,
    data: prefix,
  } satisfies TruncatedValue;
}

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
  metadata: "object",
  inputTokens: "number",
  outputTokens: "number",
  totalCostUsd: "number",
  numTurns: "number",
  durationMs: "number",
  lastActivityAt: "number",
};

/** The session columns in a fixed order (the SQLite schema uses it). */
export const SESSION_FIELD_NAMES: readonly string[] = Object.keys(SESSION_FIELDS);

/** A control character (C0, DEL or C1). */
const CONTROL = /\p{Cc}/u;

/**
 * Checks an id argument: a non-empty string without control characters (a NUL, say, is cut off
 * by some readers, so the id would be stored as one and listed as another).
 */
export function checkId(value: unknown, what: string, action: string): string {
  if (typeof value !== "string" || value.length === 0) {
    throw new TypeError(
      `Cannot ${action}: ${what} must be a non-empty string; got ${describeValue(value)}`,
    );
  }
  if (CONTROL.test(value)) {
    throw new TypeError(
      `Cannot ${action}: ${what} must not contain control characters; got ${
        JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value)
      }`,
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
    throw new TypeError(`Cannot ${action}: fields must be an object; got ${describeValue(fields)}`);
  }
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(fields)) {
    const value = fields[key];
    if (key === "id") continue;
    const type = SESSION_FIELDS[key];
    if (type === undefined) {
      throw new TypeError(`Cannot ${action}: unknown session field ${describeValue(key)}`);
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
        `Cannot ${action}: session field "${key}" must be a finite number; got ${
          describeValue(value)
        }`,
      );
    }
    if (type === "string" && typeof value !== "string") {
      throw new TypeError(
        `Cannot ${action}: session field "${key}" must be a string; got ${describeValue(value)}`,
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
    throw new TypeError(`Cannot ${action}: row must be an object; got ${describeValue(row)}`);
  }
  const id = checkId(row.id, "id", action);
  if (typeof row.status !== "string") {
    throw new TypeError(
      `Cannot ${action}: status must be a string; got ${describeValue(row.status)}`,
    );
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
export function normalizeBranchFields(
  fields: unknown,
  limits: PayloadLimits = DEFAULT_PAYLOAD_LIMITS,
): Record<string, unknown> {
  const action = "update branch";
  if (!isRecord(fields)) {
    throw new TypeError(`Cannot ${action}: fields must be an object; got ${describeValue(fields)}`);
  }
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(fields)) {
    if (key === "id" || fields[key] === undefined) continue;
    out[key] = limitPayload(fields[key], limits);
  }
  return out;
}

function nullableString(value: unknown, key: string, action: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "string") {
    throw new TypeError(
      `Cannot ${action}: ${key} must be a string or null; got ${describeValue(value)}`,
    );
  }
  return value;
}

function nullableId(value: unknown, key: string, action: string): string | null {
  if (value === undefined || value === null) return null;
  return checkId(value, key, action);
}

/** Validates a message record; returns a JSON-safe copy with its content within `limits`. */
export function normalizeMessage(
  message: unknown,
  limits: PayloadLimits = DEFAULT_PAYLOAD_LIMITS,
): MessageRecord {
  const action = "insert message";
  if (!isRecord(message)) {
    throw new TypeError(
      `Cannot ${action}: message must be an object; got ${describeValue(message)}`,
    );
  }
  const id = checkId(message.id, "id", action);
  if (!ROLES.includes(message.role as MessageRole)) {
    throw new TypeError(
      `Cannot ${action}: unknown role ${describeValue(message.role)}; valid roles: ${
        ROLES.map((r) => `"${r}"`).join(", ")
      }`,
    );
  }
  const createdAt = message.createdAt;
  if (typeof createdAt !== "number" || !Number.isFinite(createdAt)) {
    throw new TypeError(
      `Cannot ${action}: createdAt must be a finite number; got ${describeValue(createdAt)}`,
    );
  }
  return {
    id,
    role: message.role as MessageRole,
    content: limitPayload(message.content, limits),
    sender: nullableString(message.sender, "sender", action),
    recipient: nullableString(message.recipient, "recipient", action),
    branchId: nullableId(message.branchId, "branchId", action),
    sessionId: nullableId(message.sessionId, "sessionId", action),
    createdAt,
  };
}

/** Validates a signal insert; returns a JSON-safe copy with its payload within `limits`. */
export function normalizeSignal(
  row: unknown,
  limits: PayloadLimits = DEFAULT_PAYLOAD_LIMITS,
): SignalInsert {
  const action = "insert session signal";
  if (!isRecord(row)) {
    throw new TypeError(`Cannot ${action}: row must be an object; got ${describeValue(row)}`);
  }
  const sessionId = checkId(row.sessionId, "sessionId", action);
  if (typeof row.kind !== "string" || row.kind.length === 0) {
    throw new TypeError(
      `Cannot ${action}: kind must be a non-empty string; got ${describeValue(row.kind)}`,
    );
  }
  const opId = row.opId ?? "";
  if (typeof opId !== "string") {
    throw new TypeError(`Cannot ${action}: opId must be a string; got ${describeValue(opId)}`);
  }
  if (typeof row.ts !== "number" || !Number.isFinite(row.ts)) {
    throw new TypeError(
      `Cannot ${action}: ts must be a finite number; got ${describeValue(row.ts)}`,
    );
  }
  if (!isRecord(row.payload)) {
    throw new TypeError(
      `Cannot ${action}: payload must be an object; got ${describeValue(row.payload)}`,
    );
  }
  return {
    sessionId,
    kind: row.kind,
    opId,
    ts: row.ts,
    payload: limitPayload(row.payload, limits) as Record<string, unknown>,
  };
}

/** Validates `listSessionSignals` options. */
export function normalizeSignalQuery(
  options: unknown,
): { afterSeq: number; limit: number } {
  const action = "list session signals";
  if (options === undefined || options === null) return { afterSeq: 0, limit: Infinity };
  if (!isRecord(options)) {
    throw new TypeError(
      `Cannot ${action}: options must be an object; got ${describeValue(options)}`,
    );
  }
  const afterSeq = options.afterSeq ?? 0;
  const limit = options.limit ?? Infinity;
  if (typeof afterSeq !== "number" || Number.isNaN(afterSeq)) {
    throw new TypeError(
      `Cannot ${action}: afterSeq must be a number; got ${describeValue(afterSeq)}`,
    );
  }
  // A fractional limit would mean different things to different stores (SQL LIMIT floors it).
  if (
    typeof limit !== "number" || limit < 0 || (limit !== Infinity && !Number.isInteger(limit))
  ) {
    throw new TypeError(
      `Cannot ${action}: limit must be a non-negative integer or Infinity; got ${
        describeValue(limit)
      }`,
    );
  }
  return { afterSeq, limit };
}

/** Validates `listMessages` options. */
export function normalizeMessageQuery(
  options: unknown,
): { sessionId?: string; branchId?: string; sequenceId?: string } {
  const action = "list messages";
  if (options === undefined || options === null) return {};
  if (!isRecord(options)) {
    throw new TypeError(
      `Cannot ${action}: options must be an object; got ${describeValue(options)}`,
    );
  }
  const out: { sessionId?: string; branchId?: string; sequenceId?: string } = {};
  for (const key of ["sessionId", "branchId", "sequenceId"] as const) {
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

/** A stored text column that holds JSON, or `null`. */
export function decodeText(value: unknown): string | null {
  return typeof value === "string" ? JSON.parse(value) : null;
}

/**
 * A session row read back from a SQL store: text columns hold JSON, numeric ones numbers;
 * `column` names the column of each field.
 */
export function sessionFromColumns(
  row: Readonly<Record<string, unknown>>,
  column: (field: string) => string,
): SessionRow {
  const stored: Record<string, unknown> = { id: row.id };
  for (const field of SESSION_FIELD_NAMES) {
    const value = row[column(field)];
    stored[field] = typeof value === "string" ? JSON.parse(value) : value;
  }
  return presentSession(stored);
}

/** A message row read back from a SQL store (snake_case columns, JSON content). */
export function messageFromColumns(row: Readonly<Record<string, unknown>>): MessageRecord {
  return {
    id: row.id as string,
    role: row.role as MessageRole,
    content: JSON.parse(row.content as string),
    sender: decodeText(row.sender),
    recipient: decodeText(row.recipient),
    branchId: (row.branch_id as string | null) ?? null,
    sessionId: (row.session_id as string | null) ?? null,
    createdAt: row.created_at as number,
  };
}

/** A signal row read back from a SQL store (snake_case columns, JSON payload and op id). */
export function signalFromColumns(row: Readonly<Record<string, unknown>>): SignalRow {
  return {
    seq: Number(row.seq),
    sessionId: row.session_id as string,
    kind: row.kind as string,
    opId: decodeText(row.op_id) ?? "",
    ts: row.ts as number,
    payload: JSON.parse(row.payload as string),
  };
}
