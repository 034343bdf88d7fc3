// The store conformance suite: every SessionStore implementation runs these same tests.

import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import type { MessageRecord, SessionStore } from "../../store/mod.ts";
import { StoreClosedError, StoreConflictError } from "../../store/mod.ts";
import { Session } from "../../session/mod.ts";
import { waitingRun } from "./conformance_runs.ts";

/** Makes a fresh, empty store. */
export type StoreFactory = () => Promise<SessionStore>;

/** A message record with defaults. */
export function message(id: string, init: Partial<MessageRecord> = {}): MessageRecord {
  return {
    id,
    role: "user",
    content: `content of ${id}`,
    sender: null,
    recipient: null,
    branchId: "b1",
    sessionId: "s1",
    createdAt: 1_700_000_000_000,
    ...init,
  };
}

/**
 * Registers the conformance `describe` block for a store. `cleanup` runs once after the block.
 */
export function runStoreConformance(
  name: string,
  factory: StoreFactory,
  cleanup?: () => Promise<void> | void,
): void {
  describe(`${name} conformance`, () => {
    const opened: SessionStore[] = [];
    async function open(): Promise<SessionStore> {
      const store = await factory();
      opened.push(store);
      return store;
    }
    after(async () => {
      for (const store of opened) await store.close().catch(() => {});
      await cleanup?.();
    });

    it(`${name}.createSession() stores a row that getSession() returns with nulls omitted`, async () => {
      const store = await open();
      await store.createSession({
        id: "s1",
        status: "created",
        model: "gpt",
        provider: null,
        metadata: { a: [1, "x"] },
        startedAt: 5,
      });
      assert.deepEqual(await store.getSession("s1"), {
        id: "s1",
        status: "created",
        startedAt: 5,
        model: "gpt",
        metadata: { a: [1, "x"] },
      });
      assert.equal(await store.getSession("nope"), undefined);
    });

    it(`${name}.listSessions() returns every row in creation order, as copies`, async () => {
      const store = await open();
      assert.deepEqual(await store.listSessions(), []);
      for (const id of ["zeta", "alpha", "mid"]) {
        await store.createSession({ id, status: "created", model: null });
      }
      await store.updateSession("alpha", { status: "running" });
      const rows = await store.listSessions();
      assert.deepEqual(rows.map((r) => r.id), ["zeta", "alpha", "mid"]);
      assert.equal(rows[1].status, "running");
      assert.equal("model" in rows[0], false);
      rows[0].status = "mutated";
      assert.equal((await store.getSession("zeta"))?.status, "created");
    });

    it(`${name}.createSession() of an existing id rejects and keeps the stored row`, async () => {
      const store = await open();
      await store.createSession({ id: "s1", status: "created", model: "a" });
      await assert.rejects(
        store.createSession({ id: "s1", status: "running", model: "b" }),
        (error: unknown) =>
          error instanceof StoreConflictError && error.id === "s1" &&
          error.message === 'Cannot create session: id "s1" already exists',
      );
      assert.deepEqual(await store.getSession("s1"), { id: "s1", status: "created", model: "a" });
    });

    it(`${name} rejects malformed rows with a TypeError and stores nothing`, async () => {
      const store = await open();
      const bad: Array<() => Promise<unknown>> = [
        () => store.createSession({ id: "", status: "created" }),
        () => store.createSession({ id: "s1" } as never),
        () => store.createSession({ id: "s1", status: "x", inputTokens: "many" } as never),
        () => store.createSession({ id: "s1", status: "x", bogus: 1 } as never),
        () => store.insertMessage({ ...message("m1"), role: "robot" } as never),
        () => store.insertMessage({ ...message("m1"), createdAt: Number.NaN }),
        () => store.insertMessage({ ...message("m1"), sender: 3 } as never),
        () =>
          store.insertSessionSignal({ sessionId: "s1", kind: "", opId: "", ts: 1, payload: {} }),
        () =>
          store.insertSessionSignal({
            sessionId: "s1",
            kind: "K",
            opId: "",
            ts: 1,
            payload: [] as never,
          }),
        () => store.appendToSequence("", "m1"),
        () => store.listSessionSignals("s1", { limit: -1 }),
      ];
      for (const attempt of bad) await assert.rejects(attempt(), TypeError);
      assert.equal(await store.getSession("s1"), undefined);
      assert.deepEqual(await store.listMessages({}), []);
      assert.deepEqual(await store.listSessionSignals("s1"), []);
    });

    it(`${name} rejects a session id with a control character (a NUL was stored as "a\\x00b" and listed as "a")`, async () => {
      const store = await open();
      for (const id of ["a\u0000b", "a\nb", "a\u007fb", "a\u009bb"]) {
        await assert.rejects(
          store.createSession({ id, status: "created" }),
          (error: unknown) =>
            error instanceof TypeError &&
            /id must not contain control characters/.test(error.message),
        );
        await assert.rejects(store.getSession(id), /control characters/);
        await assert.rejects(
          store.insertMessage(message("m1", { sessionId: id })),
          /sessionId must not contain control characters/,
        );
        await assert.rejects(
          store.insertSessionSignal({ sessionId: id, kind: "K", opId: "", ts: 1, payload: {} }),
          /sessionId must not contain control characters/,
        );
      }
      assert.deepEqual(await store.listSessions(), []);
      assert.deepEqual(await store.listMessages({}), []);
      // Other characters stay as they are.
      await store.createSession({ id: "a b/é", status: "created" });
      assert.deepEqual((await store.listSessions()).map((row) => row.id), ["a b/é"]);
    });

    it(`${name}.updateSession() merges fields; an unknown id changes nothing`, async () => {
      const store = await open();
      await store.createSession({ id: "s1", status: "created", model: "a" });
      await store.updateSession("s1", { status: "running", statusReasonCode: "run.started.ok" });
      await store.updateSession("s1", { model: null, inputTokens: 10 });
      await store.updateSession("ghost", { status: "running" });
      assert.deepEqual(await store.getSession("s1"), {
        id: "s1",
        status: "running",
        statusReasonCode: "run.started.ok",
        inputTokens: 10,
      });
      assert.equal(await store.getSession("ghost"), undefined);
      await assert.rejects(store.updateSession("s1", { status: null } as never), TypeError);
      assert.equal((await store.getSession("s1"))?.status, "running");
    });

    it(`${name}.touchSessionActivity() sets lastActivityAt to now`, async () => {
      const store = await open();
      await store.createSession({ id: "s1", status: "created" });
      const before = Date.now();
      await store.touchSessionActivity("s1");
      const at = (await store.getSession("s1"))?.lastActivityAt;
      assert.equal(typeof at, "number");
      assert.ok((at as number) >= before && (at as number) <= Date.now());
      await store.touchSessionActivity("ghost");
      assert.equal(await store.getSession("ghost"), undefined);
    });

    it(`${name}.insertMessage() of a new message sets its session's lastActivityAt`, async () => {
      const store = await open();
      await store.createSession({ id: "s1", status: "created" });
      assert.equal((await store.getSession("s1"))?.lastActivityAt, undefined);
      const before = Date.now();
      await store.insertMessage(message("m1"));
      const at = (await store.getSession("s1"))?.lastActivityAt;
      assert.equal(typeof at, "number");
      assert.ok((at as number) >= before && (at as number) <= Date.now());
      // The same id again is not new: nothing changes.
      await store.updateSession("s1", { lastActivityAt: 5 });
      await store.insertMessage(message("m1"));
      assert.equal((await store.getSession("s1"))?.lastActivityAt, 5);
      await store.insertMessage(message("m2"));
      assert.ok(((await store.getSession("s1"))?.lastActivityAt as number) >= before);
      // A session without a row gets one, with the activity of its first message; messages
      // written together (one batch where the store batches) set each of their sessions.
      await Promise.all([
        store.insertMessage(message("m3", { sessionId: "s2" })),
        store.insertMessage(message("m4", { sessionId: "s3" })),
        store.insertMessage(message("m5", { sessionId: "s2" })),
        store.insertMessage(message("m6", { sessionId: null })),
      ]);
      for (const id of ["s2", "s3"]) {
        const row = await store.getSession(id);
        assert.equal(row?.status, "created");
        assert.ok((row?.lastActivityAt as number) >= before);
      }
    });

    it(`${name}.updateBranch() creates the row when absent and merges later fields`, async () => {
      const store = await open();
      assert.equal(await store.getBranch("b1"), undefined);
      await store.updateBranch("b1", { model: "m", provider: null });
      await store.updateBranch("b1", { systemMessageId: "m1", model: "n" });
      assert.deepEqual(await store.getBranch("b1"), {
        id: "b1",
        model: "n",
        provider: null,
        systemMessageId: "m1",
      });
    });

    it(`${name}.insertMessage() stores the same id once and lists in insertion order`, async () => {
      const store = await open();
      await store.insertMessage(message("m2"));
      await store.insertMessage(message("m1", { branchId: "b2", role: "assistant" }));
      await store.insertMessage(message("m2", { content: "changed" }));
      await store.insertMessage(message("m3", { sessionId: "s2", branchId: null }));
      assert.deepEqual((await store.listMessages({})).map((m) => m.id), ["m2", "m1", "m3"]);
      assert.equal((await store.listMessages({}))[0].content, "content of m2");
      assert.deepEqual((await store.listMessages({ sessionId: "s1" })).map((m) => m.id), [
        "m2",
        "m1",
      ]);
      assert.deepEqual((await store.listMessages({ branchId: "b2" })).map((m) => m.id), ["m1"]);
      assert.deepEqual(
        (await store.listMessages({ sessionId: "s1", branchId: "b1" })).map((m) => m.id),
        ["m2"],
      );
      assert.deepEqual(await store.listMessages({ sessionId: "s2" }), [
        message("m3", { sessionId: "s2", branchId: null }),
      ]);
    });

    it(`${name}.appendToSequence() orders listMessages({ sequenceId }) without repeats`, async () => {
      const store = await open();
      for (const id of ["m1", "m2", "m3"]) await store.insertMessage(message(id));
      await store.appendToSequence("p1", "m3");
      await store.appendToSequence("p1", "m1");
      await store.appendToSequence("p1", "m3");
      await store.appendToSequence("p2", "m2");
      assert.deepEqual((await store.listMessages({ sequenceId: "p1" })).map((m) => m.id), [
        "m3",
        "m1",
      ]);
      assert.deepEqual(await store.listMessages({ sequenceId: "p1", branchId: "other" }), []);
      assert.deepEqual(await store.listMessages({ sequenceId: "none" }), []);
    });

    it(`${name} keeps deep copies: mutating arguments or results changes nothing stored`, async () => {
      const store = await open();
      const metadata = { nested: { a: 1 } };
      await store.createSession({ id: "s1", status: "created", metadata: metadata });
      metadata.nested.a = 2;
      const row = await store.getSession("s1");
      (row!.metadata as { nested: { a: number } }).nested.a = 3;
      assert.deepEqual((await store.getSession("s1"))?.metadata, { nested: { a: 1 } });

      const content = { parts: ["x"] };
      await store.insertMessage(message("m1", { content }));
      content.parts.push("y");
      const [listed] = await store.listMessages({});
      (listed.content as { parts: string[] }).parts.push("z");
      assert.deepEqual((await store.listMessages({}))[0].content, { parts: ["x"] });

      const payload = { list: [1] };
      await store.insertSessionSignal({ sessionId: "s1", kind: "K", opId: "", ts: 1, payload });
      payload.list.push(2);
      const [signal] = await store.listSessionSignals("s1");
      (signal.payload.list as number[]).push(3);
      assert.deepEqual((await store.listSessionSignals("s1"))[0].payload, { list: [1] });

      const fields = { tags: ["a"] };
      await store.updateBranch("b1", fields);
      fields.tags.push("b");
      const branch = await store.getBranch("b1");
      (branch!.tags as string[]).push("c");
      assert.deepEqual((await store.getBranch("b1"))?.tags, ["a"]);
    });

    it(`${name}.insertSessionSignal() assigns increasing seq; list filters by session, afterSeq, limit`, async () => {
      const store = await open();
      for (let i = 0; i < 6; i++) {
        await store.insertSessionSignal({
          sessionId: i % 2 === 0 ? "s1" : "s2",
          kind: "K",
          opId: `op${i}`,
          ts: 100 + i,
          payload: { i },
        });
      }
      const s1 = await store.listSessionSignals("s1");
      assert.deepEqual(s1.map((r) => r.payload.i), [0, 2, 4]);
      for (let i = 1; i < s1.length; i++) assert.ok(s1[i].seq > s1[i - 1].seq);
      assert.deepEqual(s1[0], {
        seq: s1[0].seq,
        sessionId: "s1",
        kind: "K",
        opId: "op0",
        ts: 100,
        payload: { i: 0 },
      });
      const after = await store.listSessionSignals("s1", { afterSeq: s1[0].seq });
      assert.deepEqual(after.map((r) => r.payload.i), [2, 4]);
      assert.deepEqual(
        (await store.listSessionSignals("s1", { afterSeq: s1[0].seq, limit: 1 })).map((r) =>
          r.payload.i
        ),
        [2],
      );
      assert.deepEqual(await store.listSessionSignals("s3"), []);
      assert.deepEqual(await store.listSessionSignals("s1", { limit: 0 }), []);
      assert.equal((await store.listSessionSignals("s1", { limit: Infinity })).length, 3);
    });

    it(`${name}.listSessionSignals() rejects a limit that is negative, fractional or not a number`, async () => {
      const store = await open();
      await store.insertSessionSignal({ sessionId: "s1", kind: "K", opId: "", ts: 1, payload: {} });
      for (const limit of [0.5, 1.5, -1, NaN, "2"]) {
        await assert.rejects(
          store.listSessionSignals("s1", { limit: limit as number }),
          TypeError,
          `limit ${String(limit)}`,
        );
      }
    });

    it(`${name} rejects every call after close() with StoreClosedError`, async () => {
      const store = await open();
      await store.createSession({ id: "s1", status: "created" });
      await store.close();
      const calls: Array<() => Promise<unknown>> = [
        () => store.createSession({ id: "s2", status: "created" }),
        () => store.getSession("s1"),
        () => store.updateSession("s1", { status: "running" }),
        () => store.touchSessionActivity("s1"),
        () => store.updateBranch("b1", {}),
        () => store.getBranch("b1"),
        () => store.insertMessage(message("m1")),
        () => store.appendToSequence("p1", "m1"),
        () => store.listMessages({}),
        () =>
          store.insertSessionSignal({ sessionId: "s1", kind: "K", opId: "", ts: 1, payload: {} }),
        () => store.listSessionSignals("s1"),
      ];
      for (const call of calls) {
        await assert.rejects(
          call(),
          (error: unknown) =>
            error instanceof StoreClosedError &&
            /^Cannot [a-z ]+: the [A-Za-z ]+ is closed$/.test(error.message),
        );
      }
      await store.close();
    });

    it(`${name}: a session's first message, signal or run creates its row (once); an existing row is kept`, async () => {
      const store = await open();
      await store.insertMessage(message("m1", { sessionId: "by-message" }));
      await store.insertMessage(message("m2", { sessionId: "by-message" }));
      await store.insertMessage(message("m3", { sessionId: null }));
      await store.insertSessionSignal({
        sessionId: "by-signal",
        kind: "K",
        opId: "",
        ts: 1,
        payload: {},
      });
      await store.saveRun(waitingRun("r1", { sessionId: "by-run" }));
      await store.saveRun(waitingRun("r2", { sessionId: null }));
      await store.createSession({ id: "explicit", status: "running", model: "m" });
      await store.insertMessage(message("m4", { sessionId: "explicit" }));
      const rows = await store.listSessions();
      // A message sets its session's activity; a signal or a run does not.
      assert.deepEqual(rows.map((row) => typeof row.lastActivityAt), [
        "number",
        "undefined",
        "undefined",
        "number",
      ]);
      assert.deepEqual(rows.map(({ lastActivityAt: _, ...row }) => row), [
        { id: "by-message", status: "created" },
        { id: "by-signal", status: "created" },
        { id: "by-run", status: "created" },
        { id: "explicit", status: "running", model: "m" },
      ]);
      // The row is the one start() would have made: createSession of it is a conflict, and
      // updateSession fills it in.
      await assert.rejects(
        store.createSession({ id: "by-signal", status: "running" }),
        StoreConflictError,
      );
      await store.updateSession("by-signal", { status: "running", model: "m" });
      assert.deepEqual(await store.getSession("by-signal"), {
        id: "by-signal",
        status: "running",
        model: "m",
      });
    });

    it(`${name}: Session.restore() brings back a session whose messages were written without start()`, async () => {
      const store = await open();
      const first = new Session({ store });
      await first.defaultBranch.addMessage({ role: "user", content: "hi" });
      await first.defaultBranch.addMessage({ role: "assistant", content: "hello" });
      await first.drainSignals();
      assert.equal((await store.getSession(first.id))?.status, "created");
      const again = await Session.restore(store, first.id);
      assert.equal(again.id, first.id);
      assert.equal(again.defaultBranch.id, first.defaultBranch.id);
      assert.deepEqual(again.defaultBranch.messages.map((m) => m.content), ["hi", "hello"]);
      // start() on the restored session keeps the row and the messages.
      await again.start();
      assert.equal((await store.listSessions()).filter((row) => row.id === first.id).length, 1);
      assert.equal((await store.listMessages({ sessionId: first.id })).length, 2);
    });

    it(`${name} loses and duplicates nothing under 500 concurrent writes`, async () => {
      const store = await open();
      await store.createSession({ id: "s1", status: "created" });
      const writes: Promise<void>[] = [];
      for (let i = 0; i < 500; i++) {
        writes.push(store.insertMessage(message(`m${i}`)));
        writes.push(store.appendToSequence("p1", `m${i}`));
        writes.push(
          store.insertSessionSignal({
            sessionId: "s1",
            kind: "K",
            opId: "",
            ts: i,
            payload: { i },
          }),
        );
      }
      await Promise.all(writes);
      const messages = await store.listMessages({ sequenceId: "p1" });
      assert.equal(new Set(messages.map((m) => m.id)).size, 500);
      const signals = await store.listSessionSignals("s1");
      assert.equal(signals.length, 500);
      assert.equal(new Set(signals.map((s) => s.seq)).size, 500);
      assert.deepEqual(
        signals.map((s) => s.payload.i).sort((a, b) => Number(a) - Number(b)),
        Array.from({ length: 500 }, (_, i) => i),
      );
    });

    it(`${name} round-trips arbitrary JSON content and payloads unchanged`, async () => {
      const store = await open();
      let n = 0;
      await fc.assert(
        fc.asyncProperty(fc.jsonValue(), fc.string({ unit: "binary" }), async (value, text) => {
          n += 1;
          const id = `m${n}`;
          // JSON round-trip normalizes -0 to 0, which is what any JSON store keeps.
          const content = JSON.parse(JSON.stringify({ value, text }));
          await store.insertMessage(message(id, { content, sender: text, sessionId: "prop" }));
          await store.insertSessionSignal({
            sessionId: "prop",
            kind: "K",
            opId: text,
            ts: n,
            payload: content,
          });
          const [stored] = await store.listMessages({ sequenceId: undefined, sessionId: "prop" })
            .then((all) => all.filter((m) => m.id === id));
          assert.deepEqual(stored.content, content);
          assert.equal(stored.sender, text);
          const rows = await store.listSessionSignals("prop");
          assert.deepEqual(rows[rows.length - 1].payload, content);
          assert.equal(rows[rows.length - 1].opId, text);
        }),
        { numRuns: 60 },
      );
    });
  });
}
