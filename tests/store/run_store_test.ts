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
import { runRunConformance } from "./conformance_runs.ts";
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
