// What the CLI accepts from the command line, checked in real subprocesses: edited arguments an
// approval would have to cut, database files that are not hookscope's, a console open to the
// network without a token, and malformed ports.

import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import process from "node:process";
import { SqliteStore } from "../../store/sqlite/mod.ts";
import { sqliteMissing } from "../fixtures/sqlite_support.ts";
import { waitingRun } from "../store/conformance_runs.ts";

const ROOT = resolve(import.meta.dirname ?? new URL(".", import.meta.url).pathname, "../..");
const DENO = join(ROOT, "node_modules", ".bin", "deno");
// A real SQLite file written by another application (tables `users` and `sessions`).
const OTHER_APP_DB = join(ROOT, "tests", "fixtures", "other_app.sqlite");
const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "hookscope-cli-inputs-"));
  dirs.push(dir);
  return dir;
}
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/**
 * Runs `hookscope ARGS` in its own process, with `input` on stdin; killed after 30 s (a command
 * that should have refused to start and serves instead ends there, with a null code).
 */
function hookscope(
  args: string[],
  env: Record<string, string | undefined> = {},
  input?: string,
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolvePromise, reject) => {
    // Its own process group, so that the timeout kills the deno binary too, not only the npm
    // launcher that runs it.
    const child = spawn(DENO, ["run", "-A", join(ROOT, "cli/main.ts"), ...args], {
      env: { ...process.env, NO_COLOR: "1", ...env },
      stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
      detached: true,
    });
    if (input !== undefined) child.stdin!.end(input);
    let out = "";
    let err = "";
    child.stdout!.on("data", (chunk) => (out += String(chunk)));
    child.stderr!.on("data", (chunk) => (err += String(chunk)));
    const timer = setTimeout(() => process.kill(-child.pid!, "SIGKILL"), 30_000);
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
  it("refuses edited arguments the store would have to cut (exit 2, nothing stored)", {
    timeout: 120_000,
  }, async () => {
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

describe("a database that is not hookscope's", () => {
  /**
   * Another application's SQLite file (one `customers` table, made by `node:sqlite` in a Deno
   * process), a copy of the fixture, and a policy that decides nothing.
   */
  function foreignSetup(): { dir: string; db: string; fixture: string; policy: string } {
    const dir = tempDir();
    const db = join(dir, "foreign.db");
    const made = spawnSync(DENO, [
      "eval",
      `import { DatabaseSync } from "node:sqlite";
       const db = new DatabaseSync(${JSON.stringify(db)});
       db.exec("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)");
       db.exec("INSERT INTO customers (name) VALUES ('ann')");
       db.close();`,
    ], { timeout: 30_000, encoding: "utf8" });
    assert.equal(made.status, 0, made.stderr);
    const fixture = join(dir, "other_app.db");
    copyFileSync(OTHER_APP_DB, fixture);
    const policy = join(dir, "policy.ts");
    writeFileSync(policy, "export const policy = () => {};\n");
    return { dir, db, fixture, policy };
  }

  it("hook --db and serve --db refuse another application's SQLite file and change nothing in it", {
    timeout: 120_000,
  }, async () => {
    const { db, fixture, policy } = foreignSetup();
    const before = readFileSync(db);
    const fixtureBefore = readFileSync(fixture);
    const event = JSON.stringify({
      session_id: "s1",
      hook_event_name: "PreToolUse",
      tool_name: "Bash",
      tool_input: { command: "ls" },
      tool_use_id: "toolu_1",
    });
    const hook = await hookscope(["hook", "--policy", policy, "--db", db], {}, event);
    // Fails closed: the call is denied, the reason names the file.
    assert.equal(JSON.parse(hook.out).hookSpecificOutput?.permissionDecision, "deny", hook.out);
    assert.match(
      hook.err,
      /it is not a hookscope session database \(.*another application's file\?\)/,
    );
    const other = await hookscope(["hook", "--policy", policy, "--db", fixture], {}, event);
    assert.match(other.err, /it is not a hookscope session database/);
    assert.deepEqual(readFileSync(fixture), fixtureBefore);
    const serve = await hookscope(["serve", "--policy", policy, "--db", db, "--port", "0"]);
    assert.equal(serve.code, 1, serve.out + serve.err);
    assert.match(serve.err, /it is not a hookscope session database/);
    assert.doesNotMatch(serve.out, /listening/);
    assert.deepEqual(readFileSync(db), before);
    assert.equal(existsSync(`${db}-wal`), false);
  });

  it(
    "console refuses another application's file, and a file that does not exist (saying how to make one)",
    { timeout: 120_000 },
    async () => {
      const { dir, db } = foreignSetup();
      const before = readFileSync(db);
      const foreign = await hookscope(["console", db, "--port", "0"]);
      assert.equal(foreign.code, 1, foreign.out + foreign.err);
      assert.match(foreign.err, /it is not a hookscope session database/);
      assert.deepEqual(readFileSync(db), before);
      const typo = join(dir, "typo.db");
      const missing = await hookscope(["console", typo, "--port", "0"]);
      assert.equal(missing.code, 1, missing.out + missing.err);
      assert.match(missing.err, /no file there/);
      assert.match(missing.err, /'hookscope hook --db FILE'/);
      assert.equal(existsSync(typo), false);
    },
  );
});

/** An empty hookscope session database at `path`, made by a Deno process (any runtime has one). */
function emptyHookscopeDb(path: string): string {
  const made = spawnSync(DENO, [
    "eval",
    `import { SqliteStore } from ${JSON.stringify(join(ROOT, "store/sqlite/mod.ts"))};
     await (await SqliteStore.open(${JSON.stringify(path)})).close();`,
  ], { timeout: 30_000, encoding: "utf8" });
  assert.equal(made.status, 0, made.stderr);
  return path;
}

describe("hookscope console without a token", () => {
  it("refuses a non-loopback --host, and a --token-env naming an unset variable (exit 2)", {
    timeout: 120_000,
  }, async () => {
    const db = emptyHookscopeDb(join(tempDir(), "sessions.db"));
    const open = await hookscope(["console", db, "--host", "0.0.0.0", "--port", "0"], {
      HOOKSCOPE_CONSOLE_TOKEN: undefined,
    });
    assert.equal(open.code, 2, open.out + open.err);
    assert.match(open.err, /--host 0\.0\.0\.0 is not a loopback address: set a token/);
    assert.doesNotMatch(open.out, /listening/);
    const unset = await hookscope(["console", db, "--port", "0", "--token-env", "NO_SUCH_TOKEN"], {
      NO_SUCH_TOKEN: undefined,
    });
    assert.equal(unset.code, 2, unset.out + unset.err);
    assert.match(unset.err, /the environment variable NO_SUCH_TOKEN is empty/);
    assert.doesNotMatch(unset.out, /listening/);
  });
});

describe("hookscope --port and messages", () => {
  it("serve and console take only a decimal --port from 0 to 65535 (exit 2 otherwise)", {
    timeout: 120_000,
  }, async () => {
    const dir = tempDir();
    const policy = join(dir, "policy.ts");
    writeFileSync(policy, "export const policy = () => {};\n");
    const db = emptyHookscopeDb(join(dir, "sessions.db"));
    for (const port of ["0x4e21", "", "1e3", " 80", "65536", "-1"]) {
      const serve = await hookscope(["serve", "--policy", policy, "--db", db, `--port=${port}`]);
      assert.equal(serve.code, 2, `serve --port ${JSON.stringify(port)}: ${serve.out}${serve.err}`);
      assert.match(serve.err, /hookscope serve: --port must be a decimal integer from 0 to 65535/);
      assert.doesNotMatch(serve.out, /listening/);
      const console = await hookscope(["console", db, `--port=${port}`]);
      assert.equal(console.code, 2, `console --port ${JSON.stringify(port)}: ${console.err}`);
      assert.match(console.err, /hookscope console: --port must be a decimal integer/);
    }
  });

  it(
    "hook-forwarder names itself once when it will not overwrite a file",
    { timeout: 120_000 },
    async () => {
      const dir = tempDir();
      const out = join(dir, "mine.sh");
      writeFileSync(out, "#!/bin/sh\necho mine\n");
      const result = await hookscope([
        "hook-forwarder",
        "--server",
        "http://127.0.0.1:8787",
        "--out",
        out,
      ]);
      assert.equal(result.code, 1, result.err);
      assert.equal(
        result.err.trim(),
        `hookscope hook-forwarder: ${out} exists and is not a forwarder this command wrote; give another --out`,
      );
      assert.equal(readFileSync(out, "utf8"), "#!/bin/sh\necho mine\n");
    },
  );
});
