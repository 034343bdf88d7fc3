// SqliteStore on real SQLite files. Under Deno and Bun (and Node >= 22.5) every test runs for real;
// under Node 20, which has no node:sqlite, the tests assert the clear StoreUnavailableError instead.

import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFileSync, spawn } from "node:child_process";
import process from "node:process";
import { SqliteStore, StoreClosedError, StoreUnavailableError } from "../../store/sqlite/mod.ts";
import { MIGRATIONS, SCHEMA_VERSION } from "../../store/sqlite/_migrations.ts";
import { message, runStoreConformance } from "./conformance.ts";
import { sqliteMissing } from "../fixtures/sqlite_support.ts";

const dir = mkdtempSync(join(tmpdir(), "hookscope-sqlite-"));

/** How this runtime evaluates an ES module given as text. */
function childArgs(): string[] {
  if ("Deno" in globalThis) return ["eval"];
  if ("Bun" in globalThis) return ["-e"];
  // Node: keep flags such as --experimental-sqlite (Node 22.5 to 22.12) for the child, not the
  // test runner's (--test-isolation=none runs the test files in the node process itself).
  const keep = process.execArgv.filter((a) => !a.startsWith("--test"));
  return [...keep, "--input-type=module", "-e"];
}

/** Applies migration 1 the way SqliteStore does, holding the write lock for 600 ms. */
const holdLockScript = `
const env = process.env;
let db;
if (globalThis.Bun) {
  const { Database } = await import("bun:sqlite");
  db = new Database(env.DB_PATH, { create: true, readwrite: true });
} else {
  const { DatabaseSync } = await import("node:sqlite");
  db = new DatabaseSync(env.DB_PATH);
}
db.exec("PRAGMA journal_mode = WAL");
db.exec("BEGIN IMMEDIATE");
db.exec("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, description TEXT NOT NULL, applied_at REAL NOT NULL)");
for (const statement of JSON.parse(env.STATEMENTS)) db.exec(statement);
db.exec("INSERT INTO schema_version (version, description, applied_at) VALUES (1, 'by another process', 0)");
db.exec("PRAGMA user_version = 1");
console.log("locked");
await new Promise((resolve) => setTimeout(resolve, 600));
db.exec("COMMIT");
db.close();
`;
let counter = 0;
function freshPath(): string {
  counter += 1;
  return join(dir, `store-${counter}.db`);
}

if (sqliteMissing) {
  describe("SqliteStore on Node without node:sqlite", () => {
    after(() => rmSync(dir, { recursive: true, force: true }));
    it("SqliteStore.open() rejects with a StoreUnavailableError naming Node 22.5", async () => {
      await assert.rejects(SqliteStore.open(freshPath()), (error: unknown) => {
        assert.ok(error instanceof StoreUnavailableError);
        assert.match(error.message, /node:sqlite is not available in Node v20\./);
        assert.match(error.message, /Node >= 22\.5/);
        return true;
      });
    });
  });
} else {
  describe("SqliteStore", () => {
    after(() => rmSync(dir, { recursive: true, force: true }));
    runStoreConformance("SqliteStore", () => SqliteStore.open(freshPath()));
    it("SqliteStore persists sessions, messages in order and signals in sequence across close and reopen", async () => {
      const path = freshPath();
      const first = await SqliteStore.open(path);
      await first.createSession({
        id: "s1",
        status: "created",
        model: "m",
        metadata: { k: "v" },
      });
      await first.updateSession("s1", { status: "running", startedAt: 1234, totalCostUsd: 0.25 });
      await first.updateBranch("b1", { model: "m", systemMessageId: "m0" });
      for (let i = 0; i < 20; i++) {
        await first.insertMessage(message(`m${i}`, { content: { i, text: `"quoted" \\ ${i}` } }));
        await first.appendToSequence("b1-prog", `m${i}`);
        await first.insertSessionSignal({
          sessionId: "s1",
          kind: "MessageAdded",
          opId: "",
          ts: i,
          payload: { i },
        });
      }
      const before = {
        session: await first.getSession("s1"),
        branch: await first.getBranch("b1"),
        messages: await first.listMessages({ sessionId: "s1" }),
        sequence: await first.listMessages({ sequenceId: "b1-prog" }),
        signals: await first.listSessionSignals("s1"),
      };
      await first.close();

      const second = await SqliteStore.open(path);
      try {
        const afterReopen = {
          session: await second.getSession("s1"),
          branch: await second.getBranch("b1"),
          messages: await second.listMessages({ sessionId: "s1" }),
          sequence: await second.listMessages({ sequenceId: "b1-prog" }),
          signals: await second.listSessionSignals("s1"),
        };
        assert.deepEqual(afterReopen, before);
        assert.deepEqual(
          afterReopen.messages.map((m) => m.id),
          Array.from({ length: 20 }, (_, i) => `m${i}`),
        );
        assert.deepEqual(
          afterReopen.signals.map((s) => s.seq),
          Array.from({ length: 20 }, (_, i) => i + 1),
        );
        assert.equal(afterReopen.session?.totalCostUsd, 0.25);
        await second.insertSessionSignal({
          sessionId: "s1",
          kind: "K",
          opId: "",
          ts: 99,
          payload: {},
        });
        const last = (await second.listSessionSignals("s1", { afterSeq: 20 }))[0];
        assert.equal(last.seq, 21);
      } finally {
        await second.close();
      }
    });

    it("SqliteStore.open() applies the migrations in order, records them and uses WAL", async () => {
      const path = freshPath();
      const store = await SqliteStore.open(path);
      assert.deepEqual(store.info(), {
        path,
        schemaVersion: SCHEMA_VERSION,
        journalMode: "wal",
        synchronous: "normal",
        readOnly: false,
      });
      await store.close();
      const again = await SqliteStore.open(path, { synchronous: "full" });
      assert.equal(again.info().schemaVersion, SCHEMA_VERSION);
      assert.equal(again.info().synchronous, "full");
      await again.close();
      await assert.rejects(
        SqliteStore.open(path, { synchronous: "off" as "full" }),
        (error: unknown) => error instanceof TypeError && /synchronous must be/.test(error.message),
      );
      const { DatabaseSync } = await loadNodeSqliteForInspection();
      if (DatabaseSync) {
        const db = new DatabaseSync(path);
        const rows = db.prepare("SELECT version, description FROM schema_version ORDER BY version")
          .all();
        db.close();
        assert.deepEqual(
          rows.map((r: Record<string, unknown>) => r.version),
          MIGRATIONS.map((m) => m.version),
        );
      }
    });

    it("SqliteStore.open() waits for another process migrating the same new file and applies each migration once", async () => {
      const path = freshPath();
      // A child process (this runtime) applies migration 1 by hand and holds its write lock for a
      // while: our open reads version 0 before the child commits, then waits for the lock.
      const child = spawn(process.execPath, [...childArgs(), holdLockScript], {
        env: {
          ...process.env,
          DB_PATH: path,
          STATEMENTS: JSON.stringify(MIGRATIONS[0].statements),
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
      let stderr = "";
      child.stderr!.on("data", (chunk) => (stderr += String(chunk)));
      await new Promise<void>((resolve, reject) => {
        child.stdout!.on("data", (chunk) => {
          if (String(chunk).includes("locked")) resolve();
        });
        child.on("exit", (code) => reject(new Error(`child exited ${code}: ${stderr}`)));
      });
      const store = await SqliteStore.open(path);
      try {
        assert.equal(await exited, 0, stderr);
        assert.equal(store.info().schemaVersion, SCHEMA_VERSION);
        await store.createSession({ id: "s1", status: "created" });
        assert.equal((await store.getSession("s1"))?.status, "created");
      } finally {
        await store.close();
      }
      const { DatabaseSync } = await loadNodeSqliteForInspection();
      if (DatabaseSync) {
        const db = new DatabaseSync(path);
        const rows = db.prepare("SELECT version FROM schema_version ORDER BY version").all();
        db.close();
        assert.deepEqual(
          rows.map((r: Record<string, unknown>) => r.version),
          MIGRATIONS.map((m) => m.version),
        );
      }
    });

    it("SqliteStore.open() refuses a file whose schema is newer than it knows", {
      skip: (globalThis as { Bun?: unknown }).Bun !== undefined &&
        "Bun: the test edits the file through node:sqlite, which Bun lacks",
    }, async () => {
      const path = freshPath();
      const store = await SqliteStore.open(path);
      await store.close();
      const { DatabaseSync } = await loadNodeSqliteForInspection();
      const db = new DatabaseSync(path);
      db.exec("PRAGMA user_version = 99");
      db.close();
      await assert.rejects(
        SqliteStore.open(path),
        (error: unknown) =>
          error instanceof StoreUnavailableError &&
          new RegExp(`schema version 99 is newer than version ${SCHEMA_VERSION}`).test(
            error.message,
          ),
      );
    });

    it("SqliteStore.open() of a read-only file fails at open when writable and reads with readOnly: true", async () => {
      const path = freshPath();
      const writable = await SqliteStore.open(path);
      await writable.createSession({ id: "s1", status: "created" });
      await writable.close();
      // Make the file read-only: file modes for a user; for root (whom modes do not stop) the
      // immutable flag, or, where the file system has none, modes and a child process run as
      // an unprivileged user (setpriv).
      const root = process.getuid?.() === 0;
      let how: "mode" | "immutable" | "other-user" = root ? "immutable" : "mode";
      if (root) {
        try {
          execFileSync("chattr", ["+i", path], { stdio: "ignore" });
        } catch {
          how = "other-user";
        }
      }
      if (process.env.HOOKSCOPE_TEST_READONLY === "other-user" && how === "immutable") {
        execFileSync("chattr", ["-i", path]);
        how = "other-user";
      }
      if (how !== "immutable") chmodSync(path, 0o444);
      try {
        if (how === "other-user") {
          const result = await asOtherUser(path);
          assert.match(
            result.writable,
            /for writing: the file is read-only/,
            JSON.stringify(result),
          );
          assert.equal(result.readOnly, "created");
          return;
        }
        await assert.rejects(SqliteStore.open(path), (error: unknown) => {
          assert.ok(error instanceof StoreUnavailableError, String(error));
          assert.match(error.message, /for writing: the file is read-only/);
          assert.match(error.message, /readOnly: true/);
          return true;
        });
        const reader = await SqliteStore.open(path, { readOnly: true });
        assert.equal((await reader.getSession("s1"))?.status, "created");
        await reader.close();
      } finally {
        if (how === "immutable") execFileSync("chattr", ["-i", path]);
        else chmodSync(path, 0o644);
      }
    });

    it("SqliteStore marks a value cut by its depth or size limit in the stored row", async () => {
      const store = await SqliteStore.open(freshPath(), {
        limits: { maxDepth: 64, maxBytes: 65_536 },
      });
      try {
        let deep: Record<string, unknown> = { leaf: true };
        for (let i = 0; i < 100; i++) deep = { next: deep };
        await store.createSession({ id: "s1", status: "created" });
        await store.insertMessage({ ...message("deep"), content: deep });
        await store.insertMessage({ ...message("big"), content: "x".repeat(200_000) });
        await store.insertMessage({ ...message("fine"), content: { a: [1, 2, 3] } });
        const rows = await store.listMessages({});
        const byId = Object.fromEntries(rows.map((m) => [m.id, m.content]));
        const cutDeep = byId.deep as Record<string, unknown>;
        assert.equal(cutDeep.truncated, true);
        assert.equal(cutDeep.reason, "depth");
        assert.equal(cutDeep.limit, 64);
        const cutBig = byId.big as Record<string, unknown>;
        assert.equal(cutBig.truncated, true);
        assert.equal(cutBig.reason, "size");
        assert.equal(cutBig.originalBytes, 200_002);
        assert.ok(JSON.stringify(cutBig).length <= 65_536);
        assert.deepEqual(byId.fine, { a: [1, 2, 3] });
        await store.insertSessionSignal({
          sessionId: "s1",
          kind: "K",
          opId: "",
          ts: 1,
          payload: { deep },
        });
        const [signal] = await store.listSessionSignals("s1");
        assert.equal(signal.payload.truncated, true);
        assert.equal(signal.payload.reason, "depth");
      } finally {
        await store.close();
      }
      await assert.rejects(SqliteStore.open(freshPath(), { limits: { maxBytes: 0 } }), TypeError);
    });

    it("SqliteStore on a read-only file keeps reading, rejects writes clearly and loses nothing", async () => {
      const path = freshPath();
      const writable = await SqliteStore.open(path);
      await writable.createSession({ id: "s1", status: "created" });
      await writable.insertMessage(message("m1"));
      await writable.close();
      // Tests run as root here, where file modes do not stop writes: open the file read-only.
      const store = await SqliteStore.open(path, { readOnly: true });
      try {
        assert.equal(store.info().readOnly, true);
        await assert.rejects(
          store.insertMessage(message("m2")),
          (error: unknown) =>
            error instanceof StoreUnavailableError &&
            /^Cannot insert message: SQLite store ".*" failed: /.test(error.message) &&
            error.cause !== undefined,
        );
        await assert.rejects(
          store.updateSession("s1", { status: "running" }),
          StoreUnavailableError,
        );
        assert.deepEqual((await store.listMessages({})).map((m) => m.id), ["m1"]);
        assert.equal((await store.getSession("s1"))?.status, "created");
      } finally {
        await store.close();
      }
    });

    it("SqliteStore.open() rejects a path it cannot open with StoreUnavailableError", async () => {
      await assert.rejects(
        SqliteStore.open(join(dir, "missing-dir", "x.db")),
        (error: unknown) =>
          error instanceof StoreUnavailableError &&
          error.message.startsWith("Cannot open SQLite store"),
      );
      await assert.rejects(SqliteStore.open(""), TypeError);
    });

    it("SqliteStore rejects calls after close() and close() is idempotent", async () => {
      const store = await SqliteStore.open(freshPath());
      await store.close();
      await store.close();
      assert.equal(store.closed, true);
      assert.throws(() => store.info(), StoreClosedError);
      await assert.rejects(store.getSession("s1"), StoreClosedError);
    });
  });
}

// deno-lint-ignore no-explicit-any
async function loadNodeSqliteForInspection(): Promise<{ DatabaseSync?: any }> {
  if ((globalThis as { Bun?: unknown }).Bun !== undefined) return {};
  const name = ["node", "sqlite"].join(":");
  return await import(name);
}

/** Runs the `open-writable` child as user nobody (65534) and returns what it printed. */
async function asOtherUser(path: string): Promise<{ writable: string; readOnly: string }> {
  const { childCommand } = await import("../fixtures/store_fault_child.ts");
  const { chmodSync: chmod, mkdtempSync: mkdtemp } = await import("node:fs");
  const { dirname } = await import("node:path");
  // The user needs to reach the file and its folder (for the -wal and -shm files).
  chmod(dirname(path), 0o777);
  const home = mkdtemp(join(tmpdir(), "hookscope-nobody-"));
  chmod(home, 0o777);
  const [cmd, args] = childCommand(["open-writable", path]);
  const out = execFileSync(
    "setpriv",
    ["--reuid=65534", "--regid=65534", "--clear-groups", cmd, ...args],
    {
      env: {
        PATH: process.env.PATH ?? "",
        HOME: home,
        DENO_DIR: join(home, "deno"),
        NO_COLOR: "1",
      },
    },
  );
  return JSON.parse(String(out).trim().split("\n").pop() ?? "");
}
