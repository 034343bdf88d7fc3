// The query text and row mapping of PostgresStore.subscribe: messages and signals read together
// in change-number order, below the store's horizon. Private to the store.

import { messageFromColumns, signalFromColumns } from "../_rows.ts";
import type { StoreChange } from "./store_change.ts";

/** The statements a subscription reads with, for one schema (`q`: the quoted schema). */
export interface ChangeFeedText {
  /** `SELECT … change_horizon() AS horizon`. */
  readonly horizon: string;
  /** Changes of every session: `$1` after, `$2` limit, `$3` horizon. */
  readonly all: string;
  /** Changes of one session: as {@linkcode ChangeFeedText.all}, `$4` the session. */
  readonly session: string;
}

/** The statements of {@linkcode ChangeFeedText} for the schema `q` (quoted). */
export function changeFeedText(q: string): ChangeFeedText {
  const readBoth = (session: boolean) => {
    const filter = " AND change_seq < $3" + (session ? " AND session_id = $4" : "");
    return `(SELECT 'signal' AS type, change_seq, session_id, seq, kind, op_id, ts, payload, ` +
      "NULL::text AS id, NULL::text AS role, NULL::text AS content, NULL::text AS sender, " +
      "NULL::text AS recipient, NULL::text AS branch_id, NULL::float8 AS created_at " +
      `FROM ${q}.signals WHERE change_seq > $1${filter} ORDER BY change_seq LIMIT $2) ` +
      "UNION ALL (SELECT 'message', change_seq, session_id, NULL::bigint, NULL::text, " +
      "NULL::text, NULL::float8, NULL::text, id, role, content, sender, recipient, branch_id, " +
      `created_at FROM ${q}.messages WHERE change_seq > $1${filter} ` +
      "ORDER BY change_seq LIMIT $2) ORDER BY change_seq LIMIT $2";
  };
  return {
    horizon: `SELECT ${q}.change_horizon() AS horizon`,
    all: readBoth(false),
    session: readBoth(true),
  };
}

/** One row of the change feed as a {@linkcode StoreChange}. */
export function toChange(row: Readonly<Record<string, unknown>>): StoreChange {
  const changeSeq = Number(row.change_seq);
  return row.type === "signal"
    ? { type: "signal", changeSeq, ...signalFromColumns(row) }
    : { type: "message", changeSeq, ...messageFromColumns(row) };
}
