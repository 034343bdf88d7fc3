// PostgreSQL writers of different sessions commit in parallel (no lock of the schema is held
// through a commit), while a session's signals stay numbered in commit order and subscribers
// still see every change once, in change order; and a schema written by the previous version
// migrates with its data.

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { PostgresStore, type StoreChange } from "../../store/postgres/mod.ts";
import { PG_MIGRATIONS } from "../../store/postgres/_migrations.ts";
import { Session } from "../../session/mod.ts";
import {
  adminSql,
  assertPostgresAnswers,
  dropSchemas,
  freshSchema,
  PG_URL,
  schemaAtVersion,
} from "./postgres_fixture.ts";

const admin = adminSql(4);
const schemas = new Set<string>();
const stores: PostgresStore[] = [];

async function open(schema: string): Promise<PostgresStore> {
  schemas.add(schema);
  const store = await PostgresStore.open(PG_URL, { schema });
  stores.push(store);
  return store;
}

function signal(sessionId: string, i: number) {
  return { sessionId, kind: "K", opId: "", ts: i, payload: { i } };
}

/** Resolves with "pending" when `promise` has not settled after `ms`. */
async function settledWithin<T>(promise: Promise<T>, ms: number): Promise<T | "pending"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const result = await Promise.race([
    promise,
    new Promise<"pending">((resolve) => {
      timer = setTimeout(() => resolve("pending"), ms);
    }),
  ]);
  clearTimeout(timer);
  return result;
}

async function take(iterator: AsyncIterator<StoreChange>, n: number): Promise<StoreChange[]> {
  const out: StoreChange[] = [];
  while (out.length < n) {
    const next = await settledWithin(iterator.next(), 30_000);
    if (next === "pending") throw new Error(`only ${out.length} of ${n} changes within 30 s`);
    if (next.done) throw new Error(`subscription ended after ${out.length} of ${n} changes`);
    out.push(next.value);
  }
  return out;
}

/** The arguments of append_changes for one signal (see _migrations.ts). */
function oneSignal(sessionId: string, step: number): string {
  return "'{}'::int[], '{}'::text[], '{}'::text[], '{}'::text[], '{}'::text[], '{}'::text[], " +
    "'{}'::text[], '{}'::text[], '{}'::float8[], ARRAY[1], ARRAY[gen_random_uuid()], " +
    `ARRAY['${sessionId}'], ARRAY['K'], ARRAY['""'], ARRAY[0::float8], ARRAY['{"i":${step}}']`;
}

describe("PostgresStore with parallel writers", () => {
  before(() => assertPostgresAnswers(admin));
  after(async () => {
    for (const store of stores) await store.close().catch(() => {});
    await dropSchemas(admin, schemas).catch(() => {});
    await admin.end({ timeout: 5 });
  });

  it("a write left uncommitted holds up writers of its own session only; subscribers get both in change order", async () => {
    const schema = freshSchema();
    const writer = await open(schema);
    const reader = await open(schema);
    const subscription = reader.subscribe({ afterSeq: 0 });
    await subscription.ready;
    const slow = await admin.reserve();
    try {
      await slow.unsafe("BEGIN");
      await slow.unsafe(`SELECT "${schema}".append_changes(${oneSignal("slow", 0)})`);
      // Another session's write commits while that transaction is open (before, every writer of
      // the schema waited for the counter row the open transaction held).
      const other = await settledWithin(writer.insertSessionSignal(signal("other", 1)), 20_000);
      assert.notEqual(other, "pending", "a writer of another session waited for the open one");
      // A write to the same session waits for it: its seq comes after the open one's.
      const same = writer.insertSessionSignal(signal("slow", 2));
      assert.equal(await settledWithin(same, 300), "pending");
      await slow.unsafe("COMMIT");
      await same;
    } finally {
      slow.release();
    }
    const seen = await take(subscription, 3);
    // The open transaction took its change number first, so it is delivered first, although it
    // committed after the other session's write: nothing is skipped or repeated.
    assert.deepEqual(
      seen.map((c) => c.type === "signal" && [c.sessionId, c.seq, c.payload.i]),
      [["slow", 1, 0], ["other", 1, 1], ["slow", 2, 2]],
    );
    assert.ok(seen[0].changeSeq < seen[1].changeSeq && seen[1].changeSeq < seen[2].changeSeq);
    assert.deepEqual((await writer.listSessionSignals("slow")).map((s) => s.payload.i), [0, 2]);
    await subscription.return();
  });

  it("a subscription started while a write is open still delivers that write once it commits", async () => {
    const schema = freshSchema();
    const writer = await open(schema);
    const reader = await open(schema);
    const slow = await admin.reserve();
    let subscription;
    try {
      await slow.unsafe("BEGIN");
      await slow.unsafe(`SELECT "${schema}".append_changes(${oneSignal("a", 0)})`);
      subscription = reader.subscribe({});
      await subscription.ready;
      await writer.insertSessionSignal(signal("b", 1));
      await slow.unsafe("COMMIT");
    } finally {
      slow.release();
    }
    // The open write was committed after the subscription started: it is delivered. Nobody
    // notified for it here (it was written by hand), so the subscription found it by looking
    // again while the later change was held behind it.
    const seen = await take(subscription, 2);
    assert.deepEqual(seen.map((c) => c.sessionId), ["a", "b"]);
    await subscription.return();
  });

  it("a version-2 schema with data migrates: old change numbers stay, new ones follow, sessions get rows", async () => {
    const schema = freshSchema();
    schemas.add(schema);
    const q = `"${schema}"`;
    await schemaAtVersion(admin, schema, 2);
    // Written by the version-2 function, which took its channel first and made no session rows.
    for (const step of [0, 1]) {
      await admin.unsafe(
        `SELECT ${q}.append_changes('hookscope_old', ${oneSignal("old", step)})`,
      );
    }
    const store = await open(schema);
    const [{ version }] = await admin.unsafe(
      `SELECT max(version)::int AS version FROM ${q}.schema_migrations`,
    );
    assert.equal(version, PG_MIGRATIONS[PG_MIGRATIONS.length - 1].version);
    await store.insertSessionSignal(signal("old", 2));
    await store.insertSessionSignal(signal("new", 3));
    const signals = await store.listSessionSignals("old");
    assert.deepEqual(signals.map((s) => [s.seq, s.payload.i]), [[1, 0], [2, 1], [3, 2]]);
    const seen = await take(store.subscribe({ afterSeq: 0 }), 4);
    assert.deepEqual(seen.map((c) => c.changeSeq).slice(0, 2), [1, 2]);
    assert.ok(seen.every((c, i) => i === 0 || c.changeSeq > seen[i - 1].changeSeq));
    assert.deepEqual(seen.map((c) => c.type === "signal" && c.payload.i), [0, 1, 2, 3]);
    assert.deepEqual(await store.listSessions(), [
      { id: "old", status: "created" },
      { id: "new", status: "created" },
    ]);
    // The session written before the upgrade, never started, can be restored.
    const restored = await Session.restore(store, "old");
    assert.equal(restored.id, "old");
  });
});
