// SqliteStore waits for another connection's write lock without blocking the thread, commits the
// writes that waited in call order (one failing write rejects alone), and four processes writing
// one file at once lose no write.

import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { StoreConflictError } from "../../store/mod.ts";
import { SqliteStore } from "../../store/sqlite/mod.ts";
import { openDriver } from "../../store/sqlite/_driver.ts";
import { sqliteMissing } from "../fixtures/sqlite_support.ts";
import { runnerArgs } from "./postgres_fixture.ts";

const skip = sqliteMissing ? "node:sqlite needs Node >= 22.5" : false;
const dir = mkdtempSync(join(tmpdir(), "hookscope-sqlite-lock-"));
const CHILD = fileURLToPath(new URL("./sqlite_writer_child.ts", import.meta.url));

describe("SqliteStore under lock contention", () => {
  after(() => rmSync(dir, { recursive: true, force: true }));

  it(
    "writes wait for a lock held by another connection without blocking the thread, then commit in call order",
    {
      skip,
    },
    async () => {
      const path = join(dir, "held.db");
      const store = await SqliteStore.open(path, { busyTimeoutMs: 20_000 });
      await store.createSession({ id: "s1", status: "running" });
      const holder = await openDriver(path, false);
      holder.exec("BEGIN IMMEDIATE");
      const settled: string[] = [];
      const writes = [
        store.insertSessionSignal({ sessionId: "s1", kind: "A", opId: "", ts: 1, payload: {} })
          .then(() => settled.push("A")),
        store.createSession({ id: "s1", status: "created" }).then(
          () => settled.push("conflict resolved?"),
          (error: unknown) =>
            settled.push(error instanceof StoreConflictError ? "conflict" : "other"),
        ),
        store.insertSessionSignal({ sessionId: "s1", kind: "B", opId: "", ts: 2, payload: {} })
          .then(() => settled.push("B")),
      ];
      // The timer runs while the writes wait: the thread is not blocked in SQLite's busy handler.
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.deepEqual(settled, []);
      holder.exec("COMMIT");
      await Promise.all(writes);
      assert.deepEqual(settled, ["A", "conflict", "B"]);
      const signals = await store.listSessionSignals("s1");
      assert.deepEqual(signals.map((s) => s.kind), ["A", "B"]);
      assert.equal((await store.getSession("s1"))?.status, "running");
      holder.close();
      await store.close();
    },
  );

  it("a write that cannot get the lock within busyTimeoutMs rejects, and the store goes on", {
    skip,
  }, async () => {
    const path = join(dir, "timeout.db");
    const store = await SqliteStore.open(path, { busyTimeoutMs: 300 });
    const holder = await openDriver(path, false);
    holder.exec("BEGIN IMMEDIATE");
    await assert.rejects(
      store.insertSessionSignal({ sessionId: "s1", kind: "A", opId: "", ts: 1, payload: {} }),
      /database is locked/,
    );
    holder.exec("COMMIT");
    holder.close();
    await store.insertSessionSignal({ sessionId: "s1", kind: "B", opId: "", ts: 2, payload: {} });
    assert.deepEqual((await store.listSessionSignals("s1")).map((s) => s.kind), ["B"]);
    await store.close();
  });

  it("four processes writing one file at once lose no write and keep each one's order", {
    skip,
  }, async () => {
    const path = join(dir, "shared.db");
    await (await SqliteStore.open(path)).close();
    const { command, args } = runnerArgs(CHILD);
    const results = await Promise.all(
      Array.from(
        { length: 4 },
        (_, w) =>
          new Promise<{ failed: number; firstError: string }>((resolve, reject) => {
            const child = spawn(command, [...args, path, `w${w}`], {
              stdio: ["ignore", "pipe", "pipe"],
              env: { ...process.env, NO_COLOR: "1" },
            });
            let out = "";
            let err = "";
            child.stdout!.setEncoding("utf8").on("data", (chunk: string) => void (out += chunk));
            child.stderr!.setEncoding("utf8").on("data", (chunk: string) => void (err += chunk));
            const timer = setTimeout(() => child.kill("SIGKILL"), 300_000);
            child.on("exit", (code) => {
              clearTimeout(timer);
              const line = out.split("\n").find((l) => l.startsWith("RESULT "));
              if (code !== 0 || line === undefined) {
                reject(new Error(`writer ${w} exited ${code}: ${err}`));
              } else resolve(JSON.parse(line.slice(7)));
            });
          }),
      ),
    );
    assert.deepEqual(
      results.map((r) => r.failed),
      [0, 0, 0, 0],
      results.map((r) => r.firstError).join("; "),
    );
    const store = await SqliteStore.open(path);
    for (let w = 0; w < 4; w++) {
      const signals = await store.listSessionSignals(`w${w}`);
      assert.deepEqual(signals.map((s) => s.payload.i), Array.from({ length: 400 }, (_, i) => i));
    }
    await store.close();
  });
});
