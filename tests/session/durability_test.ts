// A Session persisted to a real SQLite file, and stores that fail while persistence is bound.
// Under Deno and Bun (and Node >= 22.5) everything runs for real; Node 20 has no node:sqlite, so
// there the SQLite tests assert the clear StoreUnavailableError instead (the MemoryStore fault
// tests below run everywhere).

import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryStore, StoreClosedError } from "../../store/mod.ts";
import { SqliteStore, StoreUnavailableError } from "../../store/sqlite/mod.ts";
import { MessageAdded, Session } from "../../session/mod.ts";
import { logger, type LogRecord } from "../../core/mod.ts";
import { sqliteMissing } from "../fixtures/sqlite_support.ts";

function recorder(): { errors: [unknown, string][]; onError: (e: unknown, w: string) => void } {
  const errors: [unknown, string][] = [];
  return { errors, onError: (error, where) => void errors.push([error, where]) };
}

describe("Session durability on SQLite", () => {
  const dir = mkdtempSync(join(tmpdir(), "hookscope-session-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  if (sqliteMissing) {
    it("SqliteStore.open() on Node 20 rejects with a StoreUnavailableError naming Node 22.5", async () => {
      await assert.rejects(
        SqliteStore.open(join(dir, "x.db")),
        (error: unknown) =>
          error instanceof StoreUnavailableError && /Node >= 22\.5/.test(error.message),
      );
    });
    return;
  }

  it("a Session persisted to SQLite reads back equal after close and reopen", async () => {
    const path = join(dir, "durable.db");
    const store = await SqliteStore.open(path);
    const session = new Session({ store });
    await session.start({ model: "m", provider: "p", agentName: "a" });
    const main = session.defaultBranch;
    const side = session.newBranch({ name: "side" });
    for (let i = 0; i < 10; i++) {
      await main.addMessage({
        role: i % 2 ? "assistant" : "user",
        content: { i, text: `"q" \\ ${i} é😀` },
      });
    }
    await side.addMessage({ role: "system", content: "rules" });
    await session.emit({ custom: true });
    await session.end({ status: "completed", inputTokens: 3 });
    await session.drainSignals();
    const before = {
      session: await store.getSession(session.id),
      main: await store.listMessages({ branchId: main.id }),
      side: await store.listMessages({ branchId: side.id }),
      sideBranch: await store.getBranch(side.id),
      signals: await store.listSessionSignals(session.id),
    };
    await store.close();

    const reopened = await SqliteStore.open(path);
    try {
      const afterReopen = {
        session: await reopened.getSession(session.id),
        main: await reopened.listMessages({ branchId: main.id }),
        side: await reopened.listMessages({ branchId: side.id }),
        sideBranch: await reopened.getBranch(side.id),
        signals: await reopened.listSessionSignals(session.id),
      };
      assert.deepEqual(afterReopen, before);
      assert.equal(afterReopen.session?.status, "completed");
      assert.equal(afterReopen.session?.inputTokens, 3);
      assert.deepEqual(afterReopen.main.map((m) => m.id), main.messages.map((m) => m.id));
      assert.deepEqual(afterReopen.main.map((m) => m.content), main.messages.map((m) => m.content));
      assert.equal(afterReopen.sideBranch?.agentName, "side");
      assert.equal(afterReopen.sideBranch?.systemMessageId, side.messages[0].id);
      const seqs = afterReopen.signals.map((s) => s.seq);
      assert.deepEqual(seqs, [...seqs].sort((a, b) => a - b));
      const kinds = afterReopen.signals.map((s) => s.kind);
      assert.equal(kinds.filter((k) => k === "MessageAdded").length, 11);
      assert.ok(kinds.includes("HookSignal"));
      assert.ok(kinds.includes("Signal"));
      const added = afterReopen.signals.find((s) => s.kind === "MessageAdded")!;
      assert.equal((added.payload.messageRef as { id: string }).id, main.messages[0].id);
    } finally {
      await reopened.close();
    }
  });

  it("1 000 concurrent emits and addMessages on a SQLite-backed session lose and duplicate nothing", async () => {
    const store = await SqliteStore.open(join(dir, "concurrent.db"));
    try {
      const session = new Session({ store });
      await session.start();
      const branch = session.defaultBranch;
      const work: Promise<unknown>[] = [];
      for (let i = 0; i < 1000; i++) {
        work.push(session.emit({ i }));
        work.push(branch.addMessage({ role: "user", content: i }));
      }
      await Promise.all(work);
      await session.drainSignals();
      const rows = await store.listMessages({ sessionId: session.id });
      assert.deepEqual(rows.map((r) => r.id), branch.messages.map((m) => m.id));
      assert.equal(new Set(rows.map((r) => r.content)).size, 1000);
      const signals = await store.listSessionSignals(session.id);
      const custom = signals.filter((s) => s.kind === "Signal").map((s) =>
        (s.payload.data as { i: number }).i
      );
      assert.deepEqual(custom.sort((a, b) => a - b), Array.from({ length: 1000 }, (_, i) => i));
      assert.equal(signals.filter((s) => s.kind === "MessageAdded").length, 1000);
      assert.equal(new Set(signals.map((s) => s.seq)).size, signals.length);
    } finally {
      await store.close();
    }
  });

  it("a closed SQLite store never breaks emit or addMessage; failures reach onError; rows stay", async () => {
    const path = join(dir, "closed.db");
    const store = await SqliteStore.open(path);
    const { errors, onError } = recorder();
    const session = new Session({ store, onError });
    await session.start();
    const branch = session.defaultBranch;
    await branch.addMessage({ role: "user", content: "kept" });
    await session.drainSignals();
    const keptSignals = (await store.listSessionSignals(session.id)).length;
    await store.close();
    assert.deepEqual(await session.emit("after close"), []);
    const message = await branch.addMessage({ role: "user", content: "lost but harmless" });
    await session.drainSignals();
    assert.equal(branch.messages.at(-1), message);
    assert.ok(errors.length >= 2);
    assert.ok(errors.every(([e]) => e instanceof StoreClosedError));
    assert.ok(errors.some(([, w]) => w === "persist"));
    assert.ok(errors.some(([, w]) => w === "hook message.add"));
    const reopened = await SqliteStore.open(path);
    try {
      assert.deepEqual(
        (await reopened.listMessages({ sessionId: session.id })).map((m) => m.content),
        ["kept"],
      );
      assert.equal((await reopened.listSessionSignals(session.id)).length, keptSignals);
    } finally {
      await reopened.close();
    }
  });

  it("a read-only SQLite file never breaks emit or addMessage; failures reach onError; rows stay", async () => {
    const path = join(dir, "readonly.db");
    const writable = await SqliteStore.open(path);
    const first = new Session({ store: writable, id: "ro-session" });
    await first.start();
    await first.defaultBranch.addMessage({ role: "user", content: "stored" });
    await first.drainSignals();
    const stored = await writable.listSessionSignals("ro-session");
    await writable.close();

    // Tests run as root here, where file modes do not stop writes: open the file read-only.
    const readOnly = await SqliteStore.open(path, { readOnly: true });
    try {
      const { errors, onError } = recorder();
      const session = new Session({ store: readOnly, id: "ro-session", onError });
      await session.start();
      session.observe({ type: MessageAdded }, () => "delivered");
      assert.deepEqual(await session.emit("x"), []);
      await session.defaultBranch.addMessage({ role: "user", content: "not stored" });
      await session.drainSignals();
      assert.ok(errors.length > 0);
      assert.ok(errors.every(([e]) => e instanceof StoreUnavailableError));
      assert.deepEqual(
        (await readOnly.listMessages({ sessionId: "ro-session" })).map((m) => m.content),
        ["stored"],
      );
      assert.deepEqual(await readOnly.listSessionSignals("ro-session"), stored);
    } finally {
      await readOnly.close();
    }
  });
});

describe("Session faults with a failing store", () => {
  it("a MemoryStore closed mid-session never breaks emit or addMessage and reports through onError", async () => {
    const store = new MemoryStore();
    const { errors, onError } = recorder();
    const session = new Session({ store, onError });
    await session.start();
    await store.close();
    const branch = session.defaultBranch;
    await branch.addMessage({ role: "user", content: "x" });
    await session.emit("y");
    await session.end();
    await session.drainSignals();
    assert.equal(branch.messages.length, 1);
    assert.ok(errors.length >= 3);
    assert.ok(errors.every(([e]) => e instanceof StoreClosedError));
  });

  it("the default onError reports each failure kind loudly once, and every failure at warn level", async () => {
    // A failure kind no other test produces (kinds are remembered per process).
    const letters = Array.from(
      { length: 8 },
      () => String.fromCharCode(97 + Math.floor(Math.random() * 26)),
    );
    const name = `DiskGone_${letters.join("")}`;
    class FailingStore extends MemoryStore {
      override insertSessionSignal(): Promise<void> {
        const error = new Error("disk is gone");
        error.name = name;
        return Promise.reject(error);
      }
    }
    const records: LogRecord[] = [];
    logger.configure({ level: "warn", sink: (record) => records.push(record) });
    try {
      const session = new Session({ store: new FailingStore() });
      for (let i = 0; i < 5; i++) await session.emit({ i });
      await session.drainSignals();
      const mine = records.filter((r) =>
        String(r.message).includes(name) || (r.details as Error)?.name === name
      );
      assert.equal(mine.filter((r) => r.level === "error").length, 1, JSON.stringify(mine));
      assert.match(
        mine.find((r) => r.level === "error")!.message,
        /persist failed: DiskGone_\w+: disk is gone/,
      );
      assert.ok(mine.filter((r) => r.level === "warn").length >= 4);
    } finally {
      logger.configure({ level: "silent", sink: null });
    }
    // With the logger quiet (the default), the first failure of a new kind goes to console.error.
    const printed: string[] = [];
    const original = console.error;
    console.error = (...args: unknown[]) => void printed.push(args.map(String).join(" "));
    try {
      class OtherStore extends MemoryStore {
        override insertSessionSignal(): Promise<void> {
          const error = new Error("quota exceeded");
          error.name = `${name}_quiet`;
          return Promise.reject(error);
        }
      }
      const session = new Session({ store: new OtherStore() });
      for (let i = 0; i < 3; i++) await session.emit({ i });
      await session.drainSignals();
    } finally {
      console.error = original;
    }
    assert.equal(
      printed.filter((line) => line.includes(`${name}_quiet`)).length,
      1,
      printed.join("\n"),
    );
  });

  it("arguments nested past the depth limit are stored marked as cut, not silently", async () => {
    const store = new MemoryStore();
    const session = new Session({ store });
    await session.start();
    let deep: Record<string, unknown> = { leaf: "bottom" };
    for (let i = 0; i < 100; i++) deep = { next: deep };
    await session.defaultBranch.addMessage({ role: "user", content: { args: deep } });
    await session.emit({ args: deep });
    await session.drainSignals();
    const [row] = await store.listMessages({ sessionId: session.id });
    const content = row.content as Record<string, unknown>;
    assert.equal(content.truncated, true);
    assert.equal(content.reason, "depth");
    const signals = await store.listSessionSignals(session.id);
    assert.ok(
      signals.some((s) => s.payload.truncated === true),
      JSON.stringify(signals.map((s) => s.kind)),
    );
    await store.close();
  });
});
