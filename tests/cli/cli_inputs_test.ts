// What the CLI accepts from the command line, checked in real subprocesses: edited arguments an
// approval would have to cut, database files that are not hookscope's, a console open to the
// network without a token, and malformed ports.

import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import process from "node:process";
import { SqliteStore } from "../../store/sqlite/mod.ts";
import { sqliteMissing } from "../fixtures/sqlite_support.ts";
import { waitingRun } from "../store/conformance_runs.ts";

const ROOT = resolve(import.meta.dirname ?? new URL(".", import.meta.url).pathname, "../..");
const DENO = join(ROOT, "node_modules", ".bin", "deno");
const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "hookscope-cli-inputs-"));
  dirs.push(dir);
  return dir;
}
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Runs `hookscope ARGS` in its own process (killed after 60 s). */
function hookscope(
  args: string[],
  env: Record<string, string | undefined> = {},
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolvePromise, reject) => {
    // Its own process group, so that the timeout kills the deno binary too, not only the npm
    // launcher that runs it.
    const child = spawn(DENO, ["run", "-A", join(ROOT, "cli/main.ts"), ...args], {
      env: { ...process.env, NO_COLOR: "1", ...env },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let out = "";
    let err = "";
    child.stdout!.on("data", (chunk) => (out += String(chunk)));
    child.stderr!.on("data", (chunk) => (err += String(chunk)));
    const timer = setTimeout(() => process.kill(-child.pid!, "SIGKILL"), 60_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolvePromise({ code, out, err });
    });
  });
}

/** A SQLite session database with run r1 waiting for call c1. */
async function waitingDb(): Promise<string> {
  const db = join(tempDir(), "p.db");
  const store = await SqliteStore.open(db);
  await store.saveRun(waitingRun("r1"));
  await store.close();
  return db;
}

describe("hookscope approve --args", { skip: sqliteMissing }, () => {
  it("refuses edited arguments the store would have to cut (exit 2, nothing stored)", async () => {
    const db = await waitingDb();
    const nest = (levels: number) => `${'{"a":'.repeat(levels - 1)}{}${"}".repeat(levels - 1)}`;
    const cases: [string, RegExp][] = [
      [
        `{"list":[${Array.from({ length: 1500 }, (_, i) => i).join(",")}]}`,
        /args\.list is an array of 1500 items \(at most 1000\)/,
      ],
      [nest(70), /nests deeper than 64 levels/],
      [
        JSON.stringify(Object.fromEntries(Array.from({ length: 1200 }, (_, i) => [`k${i}`, i]))),
        /args is an object of 1200 keys \(at most 1000\)/,
      ],
    ];
    for (const [args, message] of cases) {
      const result = await hookscope(["approve", db, "c1", "--args", args, "--json"]);
      assert.equal(result.code, 2, result.err);
      assert.match(result.err, /^hookscope approve: .*--args must be plain JSON/m);
      assert.match(result.err, message);
      assert.equal(result.out, "");
    }
    const store = await SqliteStore.open(db, { readOnly: true });
    try {
      assert.deepEqual((await store.getRun("r1"))?.answers, {});
    } finally {
      await store.close();
    }
    // At the limits: stored as given.
    const edge = JSON.stringify({ deep: JSON.parse(nest(63)), list: [...Array(1000).keys()] });
    const ok = await hookscope(["approve", db, "c1", "--args", edge, "--json"]);
    assert.equal(ok.code, 0, ok.err);
    assert.deepEqual(JSON.parse(ok.out).answer.updatedArgs, JSON.parse(edge));
  });
});
