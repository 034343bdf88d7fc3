// The run/approval conformance suite for MemoryStore and SqliteStore (real SQLite files; two
// connections to one file race their claims). Under Node 20, which has no node:sqlite, the SQLite
// part asserts the clear StoreUnavailableError instead.

import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryStore } from "../../store/mod.ts";
import { SqliteStore, StoreUnavailableError } from "../../store/sqlite/mod.ts";
import { runRunConformance, waitingRun } from "./conformance_runs.ts";
import { openDriver } from "../../store/sqlite/_driver.ts";
import { normalizeAnswer, withAnswer } from "../../store/_runs.ts";
import { ApprovalConflictError } from "../../store/store_errors.ts";
import { sqliteMissing } from "../fixtures/sqlite_support.ts";

runRunConformance("MemoryStore", () => Promise.resolve(new MemoryStore()));

const dir = mkdtempSync(join(tmpdir(), "hookscope-runs-"));
let counter = 0;
const paths = new WeakMap<object, string>();

if (sqliteMissing) {
  describe("SqliteStore runs on Node without node:sqlite", () => {
    after(() => rmSync(dir, { recursive: true, force: true }));
    it("SqliteStore.open() rejects with a StoreUnavailableError naming Node 22.5", async () => {
      await assert.rejects(SqliteStore.open(join(dir, "x.db")), (error: unknown) => {
        assert.ok(error instanceof StoreUnavailableError);
        assert.match(error.message, /Node >= 22\.5/);
        return true;
      });
    });
  });
} else {
  runRunConformance(
    "SqliteStore",
    async () => {
      counter += 1;
      const path = join(dir, `runs-${counter}.db`);
      const store = await SqliteStore.open(path);
      paths.set(store, path);
      return store;
    },
    (first) => SqliteStore.open(paths.get(first)!),
    () => rmSync(dir, { recursive: true, force: true }),
  );
}

if (!sqliteMissing) {
  describe("SqliteStore runs on a file of the previous schema", () => {
    it("SqliteStore opens a schema-2 file read-only with no runs; a writable open adds the runs table and rows of sessions that only had data", async () => {
      const path = join(mkdtempSync(join(tmpdir(), "hookscope-runs-v2-")), "old.db");
      const fresh = await SqliteStore.open(path);
      await fresh.createSession({ id: "s1", status: "completed" });
      await fresh.insertMessage({
        id: "m1",
        role: "user",
        content: "hi",
        sender: null,
        recipient: null,
        branchId: "b1",
        sessionId: "orphan",
        createdAt: 1,
      });
      await fresh.close();
      // Turn the file back into what version 2 wrote: no runs table, user_version 2.
      const db = await openDriver(path, false);
      db.exec("DROP TABLE runs");
      db.exec("DELETE FROM schema_version WHERE version >= 3");
      db.exec("DELETE FROM sessions WHERE id = 'orphan'"); // version 2 wrote no row for it
      db.exec("PRAGMA user_version = 2");
      db.close();

      const reader = await SqliteStore.open(path, { readOnly: true });
      try {
        assert.equal(reader.info().schemaVersion, 2);
        assert.equal((await reader.getSession("s1"))?.status, "completed");
        assert.equal(await reader.getSession("orphan"), undefined);
        assert.deepEqual(await reader.listPendingApprovals(), []);
        assert.equal(await reader.getRun("r1"), undefined);
        await assert.rejects(reader.saveRun(waitingRun("r1")), StoreUnavailableError);
      } finally {
        await reader.close();
      }
      const writer = await SqliteStore.open(path);
      try {
        assert.equal(writer.info().schemaVersion, 4);
        assert.deepEqual(await writer.getSession("orphan"), { id: "orphan", status: "created" });
        await writer.saveRun(waitingRun("r1"));
        assert.equal((await writer.getRun("r1"))?.status, "waiting_approval");
      } finally {
        await writer.close();
        rmSync(join(path, ".."), { recursive: true, force: true });
      }
    });
  });
}

describe("withAnswer: a store's own retry against a replay", () => {
  it("a retry that finds its own answer succeeds; the same answer from a new call is refused, even in the same millisecond", () => {
    const run = waitingRun("r1");
    const answer = normalizeAnswer({ approve: true, by: "ana" }, "answer approval", 1_000);
    const stored = withAnswer(run, "c1", answer, 1_000)!;
    assert.equal(stored.answers.c1.by, "ana");
    // The retry of the same write (its first attempt committed unheard): the stored run.
    assert.equal(withAnswer(stored, "c1", answer, 1_000, true), stored);
    // A new call with an equal answer, same millisecond: a replay, refused.
    assert.throws(
      () => withAnswer(stored, "c1", answer, 1_000),
      (error: unknown) =>
        error instanceof ApprovalConflictError && error.why === "already_answered",
    );
    // A retry carrying another answer is refused too.
    assert.throws(
      () => withAnswer(stored, "c1", { ...answer, by: "bo" }, 1_000, true),
      (error: unknown) =>
        error instanceof ApprovalConflictError && error.why === "already_answered",
    );
  });
});
