// The SQL of the run methods of SqliteStore. Each function runs inside the store's transaction
// (writes) or plain read, on the synchronous driver.

import type {
  PendingApprovalFilter,
  PendingApprovalRow,
  RunAnswer,
  RunRecord,
} from "../session_store.ts";
import { pendingRowsOf, withAnswer, withClaim, withRelease } from "../_runs.ts";
import type { SqlDriver, SqlRow } from "./_driver.ts";

/**
 * Whether the file has the runs table: a file of an older schema opened read-only does not, and
 * then holds no runs.
 */
function hasRuns(db: SqlDriver): boolean {
  return db.get("SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = 'runs'") !==
    undefined;
}

function toRun(row: SqlRow): RunRecord {
  return JSON.parse(row.record as string) as RunRecord;
}

/** Inserts or replaces a run (already normalized). */
export function saveRunSql(db: SqlDriver, run: RunRecord): void {
  db.run(
    `INSERT INTO runs (run_id, session_id, status, created_at, record) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (run_id) DO UPDATE SET session_id = excluded.session_id,
       status = excluded.status, created_at = excluded.created_at, record = excluded.record`,
    [run.runId, run.sessionId, run.status, run.createdAt, JSON.stringify(run)],
  );
}

/** The run, or `undefined`. */
export function getRunSql(db: SqlDriver, runId: string): RunRecord | undefined {
  if (!hasRuns(db)) return undefined;
  const row = db.get("SELECT record FROM runs WHERE run_id = ?", [runId]);
  return row === undefined ? undefined : toRun(row);
}

/**
 * Claims a waiting run. Called inside `BEGIN IMMEDIATE`, which holds the database's write lock
 * from the start: the read below sees every earlier claim, and no other connection (in this
 * process or another) can claim between the read and the write.
 */
export function claimRunSql(db: SqlDriver, runId: string, owner: string, now: number): boolean {
  const stored = getRunSql(db, runId);
  const claimed = stored === undefined ? undefined : withClaim(stored, owner, now);
  if (claimed === undefined) return false;
  saveRunSql(db, claimed);
  return true;
}

/** Takes back `owner`'s claim on a running run (inside `BEGIN IMMEDIATE`, like a claim). */
export function releaseRunSql(db: SqlDriver, runId: string, owner: string, now: number): boolean {
  const stored = getRunSql(db, runId);
  const released = stored === undefined ? undefined : withRelease(stored, owner, now);
  if (released === undefined) return false;
  saveRunSql(db, released);
  return true;
}

/** Records an answer to a pending call of a waiting run (inside `BEGIN IMMEDIATE`). */
export function answerApprovalSql(
  db: SqlDriver,
  runId: string,
  callId: string,
  answer: RunAnswer,
  now: number,
  retrying = false,
): boolean {
  const stored = getRunSql(db, runId);
  const next = stored === undefined ? undefined : withAnswer(stored, callId, answer, now, retrying);
  if (next === undefined) return false;
  saveRunSql(db, next);
  return true;
}

/** The pending calls of waiting runs, oldest run first, in call order. */
export function listPendingApprovalsSql(
  db: SqlDriver,
  filter: PendingApprovalFilter,
): PendingApprovalRow[] {
  if (!hasRuns(db)) return [];
  const params: string[] = ["waiting_approval"];
  let sql = "SELECT record FROM runs WHERE status = ?";
  if (filter.sessionId !== undefined) {
    sql += " AND session_id = ?";
    params.push(filter.sessionId);
  }
  if (filter.runId !== undefined) {
    sql += " AND run_id = ?";
    params.push(filter.runId);
  }
  sql += " ORDER BY created_at, position";
  const out: PendingApprovalRow[] = [];
  for (const row of db.all(sql, params)) out.push(...pendingRowsOf(toRun(row), filter));
  return out;
}
