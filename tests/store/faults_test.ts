// Store faults with real processes and a real file system: a writer killed with SIGKILL at random
// points, many processes opening one new file at once, and a disk that fills and frees again.
// Node 20 has no node:sqlite: there these tests are replaced by the clear refusal (see
// tests/fixtures/sqlite_support.ts); they run for real under Deno, Bun and Node >= 22.5.

import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { Session } from "../../session/mod.ts";
import type { SessionStore, SignalInsert } from "../../store/mod.ts";
import { MemoryStore } from "../../store/mod.ts";
import { SqliteStore, StoreUnavailableError } from "../../store/sqlite/mod.ts";
import { openDriver } from "../../store/sqlite/_driver.ts";
import { childCommand } from "../fixtures/store_fault_child.ts";
import { sqliteMissing } from "../fixtures/sqlite_support.ts";

/** Trials of the kill test; `scripts/faults.ts` runs more (FAULT_TRIALS). */
const KILL_TRIALS = Number(process.env.FAULT_TRIALS ?? 20);
/** Opens per process in the concurrent-open test (4 processes). */
const OPENS_PER_PROCESS = Number(process.env.FAULT_OPENS ?? 250);

/** Integrity, signal sequences and opIds of the writer's database. */
export async function inspect(
  path: string,
): Promise<{ integrity: string; seqs: number[]; ops: number[] }> {
  const db = await openDriver(path, false);
  try {
    const integrity = String(db.get("PRAGMA integrity_check")?.integrity_check);
    const rows = db.all("SELECT seq, op_id FROM session_signals ORDER BY seq");
    return {
      integrity,
      seqs: rows.map((r) => Number(r.seq)),
      ops: rows.map((r) => Number(JSON.parse(String(r.op_id)))),
    };
  } finally {
    db.close();
  }
}

/** Starts a writer, kills it with SIGKILL after `acks` acknowledgements; returns the last ack. */
function killWriter(path: string, acks: number, extraMs: number): Promise<number> {
  return new Promise((done, fail) => {
    const [cmd, args] = childCommand(["writer", path]);
    const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"] });
    let last = 0;
    let seen = 0;
    let buffer = "";
    let err = "";
    let killing = false;
    const guard = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.stdout.on("data", (data) => {
      buffer += data;
      let nl: number;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        const m = /^ack (\d+)$/.exec(line);
        if (!m) continue;
        last = Number(m[1]);
        if (++seen >= acks && !killing) {
          killing = true;
          setTimeout(() => child.kill("SIGKILL"), extraMs);
        }
      }
    });
    child.stderr.on("data", (data) => err += data);
    child.on("error", fail);
    child.on("close", (_code, signal) => {
      clearTimeout(guard);
      // Acks printed before the kill but read after it count too: they were acknowledged.
      const m = buffer.match(/ack (\d+)\n/g);
      if (m) last = Number(m[m.length - 1].slice(4));
      if (signal !== "SIGKILL") fail(new Error(`writer ended without SIGKILL: ${err}`));
      else done(last);
    });
  });
}

function runOpener(
  dir: string,
  count: number,
  startAt: number,
): Promise<{ ok: number; failed: string[] }> {
  return new Promise((done, fail) => {
    const [cmd, args] = childCommand(["opener", dir, String(count), String(startAt)]);
    const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => out += d);
    child.stderr.on("data", (d) => err += d);
    child.on("error", fail);
    child.on("close", (code) => {
      try {
        done(JSON.parse(out.trim().split("\n").pop() ?? ""));
      } catch {
        fail(new Error(`opener exited ${code}: ${err}${out}`));
      }
    });
  });
}

/** Mounts a small tmpfs (root, Linux); `undefined` where the machine does not allow it. */
function mountTmpfs(dir: string, size: string): (() => void) | undefined {
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir], { stdio: "ignore" });
    return () => execFileSync("umount", [dir], { stdio: "ignore" });
  } catch {
    return undefined;
  }
}

/** Fills the file system at `dir` up to ENOSPC; returns the filler's path. */
function fill(dir: string): string {
  const filler = join(dir, "filler.bin");
  const block = new Uint8Array(64 * 1024).fill(7);
  writeFileSync(filler, "");
  for (let i = 0; i < 100_000; i++) {
    try {
      writeFileSync(filler, block, { flag: "a" });
    } catch {
      break;
    }
  }
  // The last partial block: fill byte by byte in small steps so nothing is left.
  for (const size of [4096, 512, 1]) {
    for (let i = 0; i < 10_000; i++) {
      try {
        writeFileSync(filler, block.subarray(0, size), { flag: "a" });
      } catch {
        break;
      }
    }
  }
  return filler;
}

/** A store whose writes throw ENOSPC while `full` is set (where no tmpfs can be mounted). */
class FillingStore extends MemoryStore {
  full = false;
  override insertSessionSignal(row: SignalInsert): Promise<void> {
    if (this.full) {
      const error = new Error("database or disk is full") as Error & { code: string };
      error.code = "SQLITE_FULL";
      return Promise.reject(
        new StoreUnavailableError("Cannot insert session signal: disk full", { cause: error }),
      );
    }
    return super.insertSessionSignal(row);
  }
}

describe("SqliteStore under faults (real processes)", () => {
  const dir = mkdtempSync(join(tmpdir(), "hookscope-faults-"));
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

  it(`kill -9 of a writer at random points (${KILL_TRIALS} trials) leaves an intact database, contiguous sequences and every acknowledged write`, async () => {
    const path = join(dir, "killed.db");
    let acked = 0;
    for (let trial = 0; trial < KILL_TRIALS; trial++) {
      const acks = 1 + Math.floor(Math.random() * 40);
      const extra = Math.floor(Math.random() * 15);
      const last = await killWriter(path, acks, extra);
      assert.ok(last >= acked, `trial ${trial}: acks went back from ${acked} to ${last}`);
      acked = last;
      const { integrity, seqs, ops } = await inspect(path);
      assert.equal(integrity, "ok", `trial ${trial}`);
      assert.deepEqual(seqs, seqs.map((_, i) => i + 1), `trial ${trial}: seq has a gap`);
      assert.deepEqual(ops, ops.map((_, i) => i + 1), `trial ${trial}: opIds have a gap`);
      assert.ok(seqs.length >= acked, `trial ${trial}: ack ${acked} lost (${seqs.length} rows)`);
    }
  });

  it(`${4 * OPENS_PER_PROCESS} opens of new files by 4 processes at once all succeed`, async () => {
    const opens = join(dir, "opens");
    mkdirSync(opens);
    const startAt = Date.now() + 2000;
    const results = await Promise.all(
      [0, 1, 2, 3].map(() => runOpener(opens, OPENS_PER_PROCESS, startAt)),
    );
    assert.deepEqual(results.flatMap((r) => r.failed), []);
    assert.equal(results.reduce((n, r) => n + r.ok, 0), 4 * OPENS_PER_PROCESS);
  });

  it("a disk that fills keeps the session working, reports the failure, and persists again once space returns", async () => {
    const mountPoint = join(dir, "small");
    mkdirSync(mountPoint);
    const unmount = mountTmpfs(mountPoint, "1m");
    const errors: [unknown, string][] = [];
    let store: SessionStore;
    let fillUp: () => void;
    let free: () => void;
    if (unmount) {
      store = await SqliteStore.open(join(mountPoint, "full.db"));
      let filler = "";
      fillUp = () => filler = fill(mountPoint);
      free = () => unlinkSync(filler);
    } else {
      // No tmpfs here (not root, or no mount permission): a store whose writes throw.
      const filling = new FillingStore();
      store = filling;
      fillUp = () => filling.full = true;
      free = () => filling.full = false;
    }
    console.log(`# disk-full test on ${unmount ? "a 1 MiB tmpfs" : "a store whose writes throw"}`);
    try {
      const session = new Session({ store, onError: (e, where) => void errors.push([e, where]) });
      await session.start({ model: "m", provider: "p", agentName: "a" });
      for (let i = 0; i < 5; i++) await session.emit({ phase: "before", i });
      await session.drainSignals();
      fillUp();
      const big = "z".repeat(8 * 1024);
      for (let i = 0; i < 40; i++) {
        const results = await session.emit({ phase: "full", i, big });
        assert.ok(Array.isArray(results)); // emit still resolves: the session keeps working
      }
      await session.drainSignals();
      assert.ok(errors.length > 0, "the full disk was reported");
      assert.ok(
        errors.every(([, where]) => where === "persist"),
        JSON.stringify(errors.map((e) => e[1])),
      );
      assert.ok(errors.every(([e]) => e instanceof StoreUnavailableError), String(errors[0][0]));
      free();
      for (let i = 0; i < 5; i++) await session.emit({ phase: "after", i });
      await session.drainSignals();
      const rows = await store.listSessionSignals(session.id);
      const phases = rows.map((r) => (r.payload.data as { phase?: string } | undefined)?.phase);
      assert.equal(phases.filter((p) => p === "before").length, 5);
      assert.equal(phases.filter((p) => p === "after").length, 5, "persistence resumed");
      assert.deepEqual(rows.map((r) => r.seq), rows.map((_, i) => i + 1));
      await session.end({ status: "completed" });
      await store.close();
    } finally {
      unmount?.();
    }
  });
});
