// Session.restore: a session rebuilt from its store, with its branches and messages, writing
// nothing while restoring (MemoryStore, and a real SQLite file reopened).

import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryStore, Session, type SessionStore, Tool } from "../../mod.ts";
import { SessionNotFoundError } from "../../session/mod.ts";
import { SqliteStore } from "../../store/sqlite/mod.ts";
import { sqliteMissing } from "../fixtures/sqlite_support.ts";

const dir = mkdtempSync(join(tmpdir(), "hookscope-restore-"));
after(() => rmSync(dir, { recursive: true, force: true }));

async function recordSession(store: SessionStore): Promise<{ id: string; branches: string[] }> {
  const session = new Session({ store, defaultBranch: false });
  await session.start();
  const main = session.newBranch({ name: "main", system: "be brief" });
  const side = session.newBranch({ name: "side" });
  await main.addMessage({ role: "user", content: "hi" });
  await side.addMessage({ role: "user", content: { nested: [1, "two"] } });
  await main.addMessage({ role: "assistant", content: "hello" });
  await main.addMessage({
    role: "action_request",
    content: { function: "echo", arguments: { v: 1 }, callId: "c1" },
  });
  await main.addMessage({
    role: "action_response",
    content: { function: "echo", arguments: { v: 1 }, output: 1, callId: "c1" },
  });
  await session.drainSignals();
  return { id: session.id, branches: [main.id, side.id] };
}

async function snapshot(store: SessionStore, sessionId: string) {
  return {
    session: await store.getSession(sessionId),
    messages: await store.listMessages({ sessionId }),
    signals: await store.listSessionSignals(sessionId),
  };
}

async function checkRestore(store: SessionStore, reopen: () => Promise<SessionStore>) {
  const recorded = await recordSession(store);
  const before = await snapshot(store, recorded.id);
  const again = await reopen();
  const echo = new Tool({ name: "echo", execute: (a: Record<string, unknown>) => a.v });
  const restored = await Session.restore(again, recorded.id, {
    tools: [echo],
    branch: (_branchId, row) => (row?.agentName === "side" ? { name: "renamed side" } : undefined),
  });
  assert.equal(restored.id, recorded.id);
  assert.equal(restored.store, again);
  assert.deepEqual(restored.branches.map((b) => b.id), recorded.branches);
  const [main, side] = restored.branches;
  assert.equal(restored.defaultBranch.id, main.id);
  assert.equal(main.name, "main");
  assert.equal(side.name, "renamed side");
  assert.deepEqual(main.messages.map((m) => m.role), [
    "system",
    "user",
    "assistant",
    "action_request",
    "action_response",
  ]);
  const stored = before.messages.filter((m) => m.branchId === main.id);
  assert.deepEqual(
    main.messages.map((m) => [m.id, m.createdAt, m.content]),
    stored.map((m) => [
      m.id,
      m.createdAt,
      m.content,
    ]),
  );
  assert.deepEqual(side.messages[0].content, { nested: [1, "two"] });
  assert.ok(main.actions.has("echo"));
  assert.equal((await main.act({ function: "echo", arguments: { v: 7 } })).output, 7);
  await restored.drainSignals();
  // Restoring wrote nothing; the act above added exactly its two messages.
  const afterRestore = await snapshot(again, recorded.id);
  assert.deepEqual(afterRestore.messages.slice(0, before.messages.length), before.messages);
  assert.equal(afterRestore.messages.length, before.messages.length + 2);
  assert.deepEqual(afterRestore.signals.slice(0, before.signals.length), before.signals);
  return again;
}

describe("Session.restore()", () => {
  it("Session.restore() rebuilds branches and messages from a MemoryStore and writes nothing while restoring", async () => {
    const store = new MemoryStore();
    await checkRestore(store, () => Promise.resolve(store));
  });

  it("Session.restore() rejects an unknown session and bad arguments clearly", async () => {
    const store = new MemoryStore();
    await assert.rejects(
      Session.restore(store, "ghost"),
      (error: unknown) => error instanceof SessionNotFoundError && error.sessionId === "ghost",
    );
    await assert.rejects(Session.restore(store, ""), TypeError);
    await assert.rejects(Session.restore({} as never, "s1"), TypeError);
    await store.createSession({ id: "s1", status: "created" });
    await assert.rejects(Session.restore(store, "s1", { branch: 3 } as never), TypeError);
    const empty = await Session.restore(store, "s1");
    assert.equal(empty.id, "s1");
  });

  if (!sqliteMissing) {
    it("Session.restore() rebuilds a session from a reopened SQLite file", async () => {
      const path = join(dir, "restore.db");
      const first = await SqliteStore.open(path);
      let second: SessionStore | undefined;
      try {
        second = await checkRestore(first, async () => {
          await first.close();
          return await SqliteStore.open(path);
        });
      } finally {
        await second?.close();
        await first.close();
      }
    });
  }
});
