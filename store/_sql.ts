// What the SQL stores (SQLite, PostgreSQL) share besides row mapping (_rows.ts): how values are
// encoded into columns, the query text they build the same way, and which errors pass through
// them unchanged. Each store describes its SQL with a small dialect.

import { StoreClosedError, StoreConflictError, StoreUnavailableError } from "./store_errors.ts";
import { SESSION_FIELD_NAMES } from "./_rows.ts";

/** How one SQL store spells tables, parameters and session columns. */
export interface SqlDialect {
  /** A table's name in SQL text (`messages`, `"schema".messages`). */
  readonly table: (name: string) => string;
  /** The placeholder of the `n`-th parameter (1-based): `?` or `$n`. */
  readonly param: (n: number) => string;
  /** The column of a session field. */
  readonly column: (field: string) => string;
}

/** A camelCase field's snake_case column. */
export function snakeColumn(field: string): string {
  return field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** Errors a store passes on as they are: bad input, a closed store, conflicts, its own failures. */
export function isStoreError(error: unknown): boolean {
  return error instanceof TypeError || error instanceof StoreClosedError ||
    error instanceof StoreConflictError || error instanceof StoreUnavailableError;
}

/**
 * Free text (senders, op ids, …) is stored as JSON text: SQLite's C strings would cut it at NUL,
 * PostgreSQL's `text` cannot hold NUL, and lone surrogates would be replaced on the way to UTF-8.
 */
export function encodeText(value: string | null): string | null {
  return value === null ? null : JSON.stringify(value);
}

/** A session field's column value: numbers stay numbers, the rest is JSON text. */
export function sqlValue(value: unknown): string | number | null {
  if (value === undefined || value === null) return null;
  if (typeof value === "number") return value;
  return JSON.stringify(value);
}

/** The session columns in a fixed order (after `id`). */
export function sessionColumns(d: SqlDialect): string[] {
  return SESSION_FIELD_NAMES.map(d.column);
}

/** `INSERT INTO sessions (id, …every field) VALUES (…)` and its values for a normalized row. */
export function insertSessionSql(
  d: SqlDialect,
  normalized: Readonly<Record<string, unknown>>,
): { text: string; values: (string | number | null)[] } {
  const values: (string | number | null)[] = [normalized.id as string];
  for (const field of SESSION_FIELD_NAMES) values.push(sqlValue(normalized[field]));
  const placeholders = values.map((_, i) => d.param(i + 1)).join(", ");
  return {
    text: `INSERT INTO ${d.table("sessions")} (id, ${sessionColumns(d).join(", ")}) ` +
      `VALUES (${placeholders})`,
    values,
  };
}

/** `UPDATE sessions SET … WHERE id = …` for the given normalized fields (at least one). */
export function updateSessionSql(
  d: SqlDialect,
  id: string,
  fields: Readonly<Record<string, unknown>>,
): { text: string; values: (string | number | null)[] } {
  const keys = Object.keys(fields);
  const sets = keys.map((k, i) => `${d.column(k)} = ${d.param(i + 1)}`).join(", ");
  return {
    text: `UPDATE ${d.table("sessions")} SET ${sets} WHERE id = ${d.param(keys.length + 1)}`,
    values: [...keys.map((k) => sqlValue(fields[k])), id],
  };
}

/**
 * `listMessages`: messages of a sequence (in sequence order) or of the store (in insertion order,
 * `insertionOrder` names the column), each given filter applied.
 */
export function listMessagesSql(
  d: SqlDialect,
  query: { sessionId?: string; branchId?: string; sequenceId?: string },
  insertionOrder: string,
): { text: string; params: string[] } {
  const where: string[] = [];
  const params: string[] = [];
  const bind = (value: string) => d.param(params.push(value));
  let text: string;
  if (query.sequenceId !== undefined) {
    text = `SELECT m.* FROM ${d.table("progressions")} p JOIN ${
      d.table("messages")
    } m ON m.id = p.message_id`;
    where.push(`p.progression_id = ${bind(query.sequenceId)}`);
  } else {
    text = `SELECT m.* FROM ${d.table("messages")} m`;
  }
  if (query.sessionId !== undefined) where.push(`m.session_id = ${bind(query.sessionId)}`);
  if (query.branchId !== undefined) where.push(`m.branch_id = ${bind(query.branchId)}`);
  if (where.length > 0) text += ` WHERE ${where.join(" AND ")}`;
  text += query.sequenceId !== undefined ? " ORDER BY p.position" : ` ORDER BY m.${insertionOrder}`;
  return { text, params };
}

/** `INSERT INTO progressions … ON CONFLICT DO NOTHING` with parameters sequence, message. */
export function appendToSequenceSql(d: SqlDialect): string {
  return `INSERT INTO ${d.table("progressions")} (progression_id, message_id) VALUES (${
    d.param(1)
  }, ${d.param(2)}) ON CONFLICT DO NOTHING`;
}

/**
 * `UPDATE sessions SET last_activity_at = … WHERE id = …` with parameters time, session id:
 * `touchSessionActivity`, and a new message's write (SQLite; PostgreSQL's `append_changes` does
 * the same inside the batch).
 */
export function touchSessionSql(d: SqlDialect): string {
  return `UPDATE ${d.table("sessions")} SET ${d.column("lastActivityAt")} = ${
    d.param(1)
  } WHERE id = ${d.param(2)}`;
}
