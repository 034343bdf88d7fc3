// One batch of queued message and signal writes as the arguments of the schema's
// `append_changes` function (one array per column, see _migrations.ts). Private to the store.

import type { MessageRecord, SignalInsert } from "../session_store.ts";
import { encodeText } from "../_sql.ts";

/** One queued message or signal write. */
export type Change =
  | { readonly kind: "message"; readonly row: MessageRecord }
  | { readonly kind: "signal"; readonly writeId: string; readonly row: SignalInsert };

/** Most rows in one batch (`append_changes` takes at most 1023). */
export const MAX_BATCH = 1000;

/** The statement that appends one batch and returns its last change number as `last`. */
export function appendText(q: string): string {
  return `SELECT ${q}.append_changes(` +
    "$1::int[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], " +
    "$8::text[], $9::float8[], $10::int[], $11::uuid[], $12::text[], $13::text[], " +
    "$14::text[], $15::float8[], $16::text[], $17::float8) AS last";
}

/** The parameters of {@linkcode appendText} for one batch. */
export interface AppendBatch {
  /** What the batch does, for messages ("insert 3 messages and 2 session signals"). */
  readonly what: string;
  /** The 16 arrays and the time of the write, in the function's parameter order. */
  readonly params: readonly unknown[];
  /** The session of every row (`null`: a message of no session), for the notification. */
  readonly sessions: readonly (string | null)[];
}

/**
 * Turns a batch into column arrays, in arrival order (ordinals 1, 2, 3, …). A message id given
 * twice in one batch is sent once: the first wins, as in two separate inserts. `at` (default:
 * now) becomes the `last_activity_at` of the sessions whose new messages the batch stores.
 */
export function appendBatch(batch: readonly Change[], at: number = Date.now()): AppendBatch {
  const seen = new Set<string>();
  const m = {
    ord: [] as number[],
    id: [] as string[],
    role: [] as string[],
    content: [] as string[],
    sender: [] as (string | null)[],
    recipient: [] as (string | null)[],
    branch: [] as (string | null)[],
    session: [] as (string | null)[],
    created: [] as number[],
  };
  const s = {
    ord: [] as number[],
    write: [] as string[],
    session: [] as string[],
    kind: [] as string[],
    op: [] as string[],
    ts: [] as number[],
    payload: [] as string[],
  };
  batch.forEach((change, index) => {
    const ord = index + 1;
    if (change.kind === "message") {
      const row = change.row;
      if (seen.has(row.id)) return;
      seen.add(row.id);
      m.ord.push(ord);
      m.id.push(row.id);
      m.role.push(row.role);
      m.content.push(JSON.stringify(row.content));
      m.sender.push(encodeText(row.sender));
      m.recipient.push(encodeText(row.recipient));
      m.branch.push(row.branchId);
      m.session.push(row.sessionId);
      m.created.push(row.createdAt);
    } else {
      const row = change.row;
      s.ord.push(ord);
      s.write.push(change.writeId);
      s.session.push(row.sessionId);
      s.kind.push(row.kind);
      s.op.push(encodeText(row.opId) as string);
      s.ts.push(row.ts);
      s.payload.push(JSON.stringify(row.payload));
    }
  });
  const what = s.ord.length === 0
    ? (m.ord.length === 1 ? "insert message" : `insert ${m.ord.length} messages`)
    : m.ord.length === 0
    ? (s.ord.length === 1 ? "insert session signal" : `insert ${s.ord.length} session signals`)
    : `insert ${m.ord.length} messages and ${s.ord.length} session signals`;
  return {
    what,
    params: [
      m.ord,
      m.id,
      m.role,
      m.content,
      m.sender,
      m.recipient,
      m.branch,
      m.session,
      m.created,
      s.ord,
      s.write,
      s.session,
      s.kind,
      s.op,
      s.ts,
      s.payload,
      at,
    ],
    sessions: [...m.session, ...s.session],
  };
}
