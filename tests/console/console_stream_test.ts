// The console's live stream over MemoryStore (read on every tick) and a SQLite file written by a
// second connection (probed with PRAGMA data_version). PostgreSQL: console_stream_pg_test.ts.

import { after } from "node:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryStore } from "../../store/memory_store.ts";
import { SqliteStore } from "../../store/sqlite/mod.ts";
import { streamCases } from "./_stream_cases.ts";

const dir = mkdtempSync(join(tmpdir(), "hookscope-stream-"));
after(() => rmSync(dir, { recursive: true, force: true }));

streamCases("MemoryStore", () => {
  const store = new MemoryStore();
  return Promise.resolve({ reader: store, writer: store, feed: "poll" });
});

const hasSqlite = await SqliteStore.open(":memory:").then(
  (store) => store.close().then(() => true),
  () => false,
);
let n = 0;
if (hasSqlite) {
  streamCases("SqliteStore, another connection writes", async () => {
    const path = join(dir, `stream-${++n}.db`);
    const writer = await SqliteStore.open(path);
    const reader = await SqliteStore.open(path);
    return { reader, writer, feed: "probe" };
  });
}
