// PostgresStore on the real PostgreSQL server (HOOKSCOPE_PG_URL, default the local trust-auth
// server). Each store gets a fresh schema, dropped at the end. When PostgreSQL does not answer,
// every test fails with a message that says how to start it.

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  PostgresStore,
  type StoreChange,
  StoreClosedError,
  StoreUnavailableError,
} from "../../store/postgres/mod.ts";
import { PG_MIGRATIONS } from "../../store/postgres/_migrations.ts";
import { message, runStoreConformance } from "./conformance.ts";
import { runRunConformance } from "./conformance_runs.ts";
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

async function open(
  schema = freshSchema(),
  options: Parameters<typeof PostgresStore.open>[1] = {},
): Promise<PostgresStore> {
  schemas.add(schema);
  const store = await PostgresStore.open(PG_URL, { schema, ...options });
  stores.push(store);
  return store;
}

function signal(sessionId: string, i: number) {
  return { sessionId, kind: "K", opId: `op${i}`, ts: i, payload: { i } };
}

/** Collects `n` changes from a subscription, failing after a generous deadline. */
async function take(
  iterator: AsyncIterator<StoreChange>,
  n: number,
  ms = 20_000,
): Promise<StoreChange[]> {
  const out: StoreChange[] = [];
  const deadline = Date.now() + ms;
  while (out.length < n) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const next = await Promise.race([
      iterator.next(),
      new Promise<"timeout">((resolve) => {
        timer = setTimeout(() => resolve("timeout"), Math.max(0, deadline - Date.now()));
      }),
    ]);
    clearTimeout(timer);
    if (next === "timeout") throw new Error(`only ${out.length} of ${n} changes within ${ms} ms`);
    if (next.done) throw new Error(`subscription ended after ${out.length} of ${n} changes`);
    out.push(next.value);
  }
  return out;
}

describe("PostgresStore", () => {
  before(() => assertPostgresAnswers(admin));
  after(async () => {
    for (const store of stores) await store.close().catch(() => {});
    await dropSchemas(admin, schemas).catch(() => {});
    await admin.end({ timeout: 5 });
  });

  it("PostgreSQL answers at the test URL", async () => {
    await assertPostgresAnswers(admin);
  });

  runStoreConformance("PostgresStore", () => open());
  runRunConformance(
    "PostgresStore",
    () => open(),
    (first) => open((first as PostgresStore).info().schema, { max: 2 }),
  );

  it("PostgresStore.open() rejects a malformed URL or option with a TypeError", async () => {
    await assert.rejects(PostgresStore.open("mysql://x"), TypeError);
    await assert.rejects(PostgresStore.open(PG_URL, { schema: 'a"; DROP' }), TypeError);
    await assert.rejects(PostgresStore.open(PG_URL, { schema: "1abc" }), TypeError);
    await assert.rejects(PostgresStore.open(PG_URL, { max: 0 }), TypeError);
    await assert.rejects(PostgresStore.open(PG_URL, { timeoutMs: -1 }), TypeError);
    // The driver's connect timer would fire at once: the store could never connect.
    await assert.rejects(
      PostgresStore.open(PG_URL, { timeoutMs: 3e9 }),
      /^TypeError: Cannot open PostgreSQL store: timeoutMs must be at most 2147483647 \(about 24\.8 days\); got 3000000000$/,
    );
    await assert.rejects(
      PostgresStore.open(PG_URL, { synchronousCommit: "local" as "on" }),
      /synchronousCommit must be "on" or "off"/,
    );
  });

  it('PostgresStore with synchronousCommit: "off" stores and reads as with the default', async () => {
    const schema = freshSchema();
    const fast = await open(schema, { synchronousCommit: "off" });
    const durable = await open(schema, { synchronousCommit: "on" });
    await fast.insertSessionSignal(signal("async", 1));
    await durable.insertSessionSignal(signal("async", 2));
    assert.deepEqual((await durable.listSessionSignals("async")).map((row) => row.seq), [1, 2]);
    assert.deepEqual((await fast.listSessionSignals("async")).map((row) => row.opId), [
      "op1",
      "op2",
    ]);
  });

  it("PostgresStore.open() of a server that refuses rejects with StoreUnavailableError naming the URL", async () => {
    await assert.rejects(
      PostgresStore.open("postgres://root:secret@127.0.0.1:1/test", { timeoutMs: 5_000 }),
      (error: unknown) => {
        assert.ok(error instanceof StoreUnavailableError);
        assert.match(error.message, /^Cannot open PostgreSQL store "postgres:\/\/root:\*\*\*@127/);
        assert.doesNotMatch(error.message, /secret/);
        return true;
      },
    );
  });

  it("PostgresStore.open() by eight connections at once on a new schema migrates it once", async () => {
    const schema = freshSchema();
    const opened = await Promise.all(
      Array.from({ length: 8 }, () => open(schema, { max: 1 })),
    );
    const rows = await admin.unsafe(
      `SELECT version FROM "${schema}".schema_migrations ORDER BY version`,
    );
    assert.deepEqual(rows.map((r) => r.version), PG_MIGRATIONS.map((m) => m.version));
    await opened[0].createSession({ id: "s1", status: "created" });
    assert.equal((await opened[7].getSession("s1"))?.status, "created");
  });

  it("PostgresStore.open() refuses a schema written by a newer version, and migrate: false a missing one", async () => {
    const schema = freshSchema();
    await open(schema);
    await admin.unsafe(
      `INSERT INTO "${schema}".schema_migrations (version, description) VALUES (999, 'future')`,
    );
    await assert.rejects(open(schema), (error: unknown) => {
      assert.ok(error instanceof StoreUnavailableError);
      assert.match(error.message, /version 999, newer than version \d+/);
      return true;
    });
    await assert.rejects(open(freshSchema(), { migrate: false }), (error: unknown) => {
      assert.ok(error instanceof StoreUnavailableError);
      assert.match(error.message, /does not exist or holds no hookscope tables/);
      return true;
    });
  });

  it("PostgresStore.open() migrates a version 3 schema: messages then set the session's activity, and the previous version's append still works", async () => {
    const schema = freshSchema();
    schemas.add(schema);
    const q = `"${schema}"`;
    await schemaAtVersion(admin, schema, 3);
    // What a process of the previous version sends: the 16-argument append.
    const oldAppend = (id: string) =>
      admin.unsafe(
        `SELECT ${q}.append_changes($1::int[], $2::text[], $3::text[], $4::text[], $5::text[], ` +
          "$6::text[], $7::text[], $8::text[], $9::float8[], $10::int[], $11::uuid[], " +
          "$12::text[], $13::text[], $14::text[], $15::float8[], $16::text[]) AS last",
        [
          [1],
          [id],
          ["user"],
          ['"hi"'],
          [null],
          [null],
          ["b1"],
          ["old"],
          [1],
          [],
          [],
          [],
          [],
          [],
          [],
          [],
        ] as never[],
      );
    await oldAppend("m-old-1");
    const store = await open(schema);
    const [{ version }] = await admin.unsafe(
      `SELECT max(version)::int AS version FROM ${q}.schema_migrations`,
    );
    assert.equal(version, PG_MIGRATIONS[PG_MIGRATIONS.length - 1].version);
    const before = Date.now();
    await store.insertMessage(message("m-new", { sessionId: "old" }));
    const at = (await store.getSession("old"))?.lastActivityAt;
    assert.ok(typeof at === "number" && at >= before && at <= Date.now());
    await store.updateSession("old", { lastActivityAt: 5 });
    await oldAppend("m-old-2");
    assert.equal((await store.getSession("old"))?.lastActivityAt, 5);
    assert.deepEqual(
      (await store.listMessages({ sessionId: "old" })).map((m) => m.id),
      ["m-old-1", "m-new", "m-old-2"],
    );
  });

  it("PostgresStore.open() takes the schema from the URL's ?schema= parameter", async () => {
    const schema = freshSchema();
    schemas.add(schema);
    const store = await PostgresStore.open(`${PG_URL}?schema=${schema}`);
    stores.push(store);
    assert.equal(store.info().schema, schema);
    const [row] = await admin`SELECT 1 AS found FROM pg_namespace WHERE nspname = ${schema}`;
    assert.equal(row?.found, 1);
  });

  it("PostgresStore rejects ids PostgreSQL cannot hold with a TypeError and stores nothing", async () => {
    const store = await open();
    await assert.rejects(store.createSession({ id: "a\u0000b", status: "x" }), TypeError);
    await assert.rejects(store.insertMessage(message("m\ud800")), TypeError);
    await assert.rejects(
      store.insertSessionSignal({ ...signal("s\u0000", 1) }),
      TypeError,
    );
    assert.deepEqual(await store.listSessions(), []);
    assert.deepEqual(await store.listMessages({}), []);
  });

  it("PostgresStore keeps per-session seq contiguous with four stores writing three sessions at once", async () => {
    const schema = freshSchema();
    const writers = await Promise.all(Array.from({ length: 4 }, () => open(schema, { max: 2 })));
    const writes: Promise<void>[] = [];
    for (let i = 0; i < 600; i++) {
      const store = writers[i % 4];
      writes.push(store.insertSessionSignal(signal(`s${i % 3}`, i)));
      if (i % 50 === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    }
    await Promise.all(writes);
    for (const session of ["s0", "s1", "s2"]) {
      const rows = await writers[0].listSessionSignals(session);
      assert.deepEqual(rows.map((r) => r.seq), Array.from({ length: 200 }, (_, i) => i + 1));
      assert.equal(new Set(rows.map((r) => r.payload.i)).size, 200);
    }
  });

  it("PostgresStore.listSessionSignals() takes any afterSeq number, as the other stores do", async () => {
    const store = await open();
    for (let i = 0; i < 3; i++) await store.insertSessionSignal(signal("s1", i));
    const seqs = async (afterSeq: number) =>
      (await store.listSessionSignals("s1", { afterSeq })).map((r) => r.seq);
    assert.deepEqual(await seqs(1.5), [2, 3]);
    assert.deepEqual(await seqs(-Infinity), [1, 2, 3]);
    assert.deepEqual(await seqs(Infinity), []);
  });

  it("PostgresStore sends signals that arrive during a write in one batch", async () => {
    const store = await open();
    const before = store.info();
    await Promise.all(
      Array.from({ length: 300 }, (_, i) => store.insertSessionSignal(signal("s1", i))),
    );
    const afterInfo = store.info();
    assert.equal(afterInfo.writtenRows - before.writtenRows, 300);
    assert.ok(
      afterInfo.writeBatches - before.writeBatches <= 2,
      `${afterInfo.writeBatches - before.writeBatches} batches for 300 signals`,
    );
    const rows = await store.listSessionSignals("s1");
    assert.deepEqual(rows.map((r) => r.payload.i), Array.from({ length: 300 }, (_, i) => i));
  });

  it("PostgresStore.subscribe() replays from afterSeq, then follows writes by another store live", async () => {
    const schema = freshSchema();
    const reader = await open(schema);
    const writer = await open(schema);
    await writer.insertMessage(message("m0", { sessionId: "s1" }));
    await writer.insertSessionSignal(signal("s1", 0));
    const subscription = reader.subscribe({ afterSeq: 0 });
    const first = await take(subscription, 2);
    assert.deepEqual(first.map((c) => c.type), ["message", "signal"]);
    // Change numbers increase; they are not contiguous (see change_horizon in _migrations.ts).
    assert.ok(first[0].changeSeq > 0 && first[0].changeSeq < first[1].changeSeq);
    assert.equal(first[0].type === "message" && first[0].content, "content of m0");
    assert.deepEqual(first[1], {
      type: "signal",
      changeSeq: first[1].changeSeq,
      seq: 1,
      sessionId: "s1",
      kind: "K",
      opId: "op0",
      ts: 0,
      payload: { i: 0 },
    });
    const more = take(subscription, 3);
    await writer.insertSessionSignal(signal("s2", 1));
    await writer.insertMessage(message("m1", { sessionId: null }));
    await writer.insertSessionSignal(signal("s1", 2));
    const live = await more;
    assert.ok(
      live.every((c, i) => c.changeSeq > (i === 0 ? first[1] : live[i - 1]).changeSeq),
      JSON.stringify(live.map((c) => c.changeSeq)),
    );
    assert.deepEqual(live.map((c) => c.sessionId), ["s2", null, "s1"]);
    await subscription.return();
    assert.deepEqual(await subscription.next(), { done: true, value: undefined });
  });

  it("PostgresStore.subscribe({ sessionId }) sees only that session; without afterSeq only new changes", async () => {
    const schema = freshSchema();
    const reader = await open(schema);
    const writer = await open(schema);
    await writer.insertSessionSignal(signal("a", 0));
    const subscription = reader.subscribe({ sessionId: "a" });
    assert.ok(Number.isSafeInteger(await subscription.ready));
    const pending = take(subscription, 2);
    await writer.insertSessionSignal(signal("b", 1));
    await writer.insertMessage(message("ma", { sessionId: "a" }));
    await writer.insertSessionSignal(signal("a", 2));
    const seen = await pending;
    assert.deepEqual(seen.map((c) => [c.type, c.sessionId]), [["message", "a"], ["signal", "a"]]);
    assert.equal(seen[1].type === "signal" && seen[1].seq, 2);
    await subscription.return();
  });

  it("PostgresStore.subscribe() loses and repeats nothing while 1 000 signals from four stores pile up unread", async () => {
    const schema = freshSchema();
    const reader = await open(schema);
    const writers = await Promise.all(Array.from({ length: 4 }, () => open(schema, { max: 2 })));
    const subscription = reader.subscribe({});
    await subscription.ready;
    await Promise.all(
      writers.map((writer, w) =>
        Promise.all(
          Array.from(
            { length: 250 },
            (_, i) => writer.insertSessionSignal(signal(`s${w}`, w * 1000 + i)),
          ),
        )
      ),
    );
    const seen = await take(subscription, 1000, 60_000);
    assert.ok(
      seen.every((c, i) => i === 0 || c.changeSeq > seen[i - 1].changeSeq),
      "change numbers increase",
    );
    const per = new Map<string, number[]>();
    for (const change of seen) {
      assert.equal(change.type, "signal");
      if (change.type !== "signal") continue;
      per.set(change.sessionId, [...(per.get(change.sessionId) ?? []), change.seq]);
    }
    for (const seqs of per.values()) {
      assert.deepEqual(seqs, Array.from({ length: 250 }, (_, i) => i + 1));
    }
    await subscription.return();
  });

  it("PostgresStore notifies only while a store listens on the schema; a subscriber that starts later still gets every write", async () => {
    const schema = freshSchema();
    const writer = await open(schema);
    const reader = await open(schema);
    const heard: string[] = [];
    // A plain LISTEN connection is not a store's listener (its application_name is not the
    // channel): the writer sees no one listening and sends nothing.
    const raw = await admin.listen(writer.info().channel, (payload) => heard.push(payload));
    try {
      for (let i = 0; i < 5; i++) await writer.insertSessionSignal(signal("quiet", i));
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.deepEqual(heard, []);
      const subscription = reader.subscribe({ sessionId: "quiet", afterSeq: 0 });
      await subscription.ready;
      assert.deepEqual((await take(subscription, 5)).map((c) => c.type === "signal" && c.seq), [
        1,
        2,
        3,
        4,
        5,
      ]);
      const next = take(subscription, 1);
      await writer.insertSessionSignal(signal("quiet", 5));
      const [live] = await next;
      assert.equal(live.type === "signal" && live.seq, 6);
      // With a store listening, the writer notifies (the plain connection overhears it).
      for (let i = 0; i < 100 && heard.length === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.ok(heard.length > 0, "no notification while a store listened");
      assert.match(heard[heard.length - 1], /"s":\["quiet"\]/);
      await subscription.return();
    } finally {
      await raw.unlisten();
    }
  });

  it("PostgresStore.subscribe() ends on abort, and return() stops listening", async () => {
    const store = await open();
    const controller = new AbortController();
    const subscription = store.subscribe({ signal: controller.signal });
    await subscription.ready;
    const channel = store.info().channel;
    const listening = async () =>
      (await admin`SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND query = ${`listen "${channel}"`}`)[0].n;
    assert.equal(await listening(), 1);
    const pending = subscription.next();
    controller.abort();
    assert.deepEqual(await pending, { done: true, value: undefined });
    const deadline = Date.now() + 10_000;
    while (await listening() !== 0) {
      assert.ok(Date.now() < deadline, "the listener still listens 10 s after abort");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const already = new AbortController();
    already.abort();
    const never = store.subscribe({ signal: already.signal });
    assert.deepEqual(await never.next(), { done: true, value: undefined });
    assert.throws(() => store.subscribe({ afterSeq: -1 }), TypeError);
    await store.close();
    assert.throws(() => store.subscribe({}), StoreClosedError);
  });

  it("PostgresStore.close() ends open subscriptions and waits for queued writes", async () => {
    const store = await open();
    const subscription = store.subscribe({ afterSeq: 0 });
    await subscription.ready;
    const pending = subscription.next();
    const writes = Array.from({ length: 50 }, (_, i) => store.insertSessionSignal(signal("s", i)));
    await store.close();
    await Promise.all(writes);
    const result = await pending;
    assert.ok(result.done === true || result.value.type === "signal");
    const check = await open(store.info().schema);
    assert.equal((await check.listSessionSignals("s")).length, 50);
  });

  it("PostgresStore reports a terminated connection, retries, and keeps every acknowledged write once", async () => {
    const schema = freshSchema();
    const reported: Error[] = [];
    const store = await open(schema, { max: 3, onError: (error) => reported.push(error) });
    await store.createSession({ id: "s1", status: "created" });
    const acknowledged: number[] = [];
    const writes: Promise<void>[] = [];
    let killed = 0;
    for (let round = 0; round < 10; round++) {
      for (let i = 0; i < 40; i++) {
        const n = round * 40 + i;
        writes.push(
          store.insertSessionSignal(signal("s1", n)).then(() => {
            acknowledged.push(n);
          }),
        );
        writes.push(store.insertMessage(message(`m${n}`)));
      }
      writes.push(store.updateSession("s1", { numTurns: round }));
      // Terminate every backend of this store's pool while its writes are in flight.
      const rows = await admin`SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid()
          AND query LIKE ${`%"${schema}"%`}`;
      killed += rows.length;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await Promise.all(writes);
    assert.ok(killed > 0, "no backend was terminated");
    assert.ok(reported.length > 0, "the dropped connections were not reported");
    assert.ok(
      reported.every((e) => e instanceof StoreUnavailableError && /retrying/.test(e.message)),
    );
    const rows = await store.listSessionSignals("s1");
    assert.equal(acknowledged.length, 400);
    assert.deepEqual(rows.map((r) => r.seq), Array.from({ length: 400 }, (_, i) => i + 1));
    assert.deepEqual(
      rows.map((r) => r.payload.i).sort((a, b) => Number(a) - Number(b)),
      Array.from({ length: 400 }, (_, i) => i),
    );
    assert.equal((await store.listMessages({})).length, 400);
    assert.equal((await store.getSession("s1"))?.numTurns, 9);
  });
});
