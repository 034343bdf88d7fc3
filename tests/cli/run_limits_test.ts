// `hookscope run` against hostile servers: a stalled server ends the run within the idle
// timeout with a clear message, and a server echoing the API key gets it back in no output line
// and no stored row. The CLI runs as a real Deno subprocess (it needs SQLite on every runtime).

import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import process from "node:process";
import { encodingsOf, startHostileServer } from "../fixtures/hostile_server.ts";

const ROOT = resolve(import.meta.dirname ?? new URL(".", import.meta.url).pathname, "../..");
const DENO = join(ROOT, "node_modules", ".bin", "deno");
const KEY = "sk-proj/Run+Key=Leak_9876543210abcdef";
const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function cli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((done, fail) => {
    const child = spawn(DENO, ["run", "-A", join(ROOT, "cli/main.ts"), ...args], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "/tmp",
        NO_COLOR: "1",
        ...env,
      },
      // Its own process group: the guard below must kill the deno binary, not only the npm
      // launcher that runs it (which would leave the pipes open and the test waiting).
      detached: true,
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => out += d);
    child.stderr.on("data", (d) => err += d);
    // A generous outer bound: the test fails (instead of hanging) if the run never ends.
    const guard = setTimeout(() => process.kill(-child.pid!, "SIGKILL"), 60_000);
    child.on("error", fail);
    child.on("close", (code) => {
      clearTimeout(guard);
      done({ code, out, err });
    });
  });
}

function leaks(text: string): string[] {
  const lower = text.toLowerCase();
  return Object.entries(encodingsOf(KEY))
    .filter(([, encoded]) => lower.includes(encoded.toLowerCase()))
    .map(([name]) => name);
}

describe("hookscope run against hostile servers", () => {
  it("a server that drips one byte every 500 ms ends the run at --idle-timeout with a clear message", async () => {
    const server = await startHostileServer({ mode: "drip", dripMs: 500 });
    try {
      const dir = mkdtempSync(join(tmpdir(), "hookscope-run-"));
      dirs.push(dir);
      const result = await cli([
        "run",
        "--base-url",
        server.baseURL,
        "--model",
        "m",
        "--workspace",
        dir,
        "--db",
        join(dir, "runs.db"),
        "--idle-timeout",
        "300",
      ], {});
      assert.equal(result.code, 1, result.err);
      assert.match(result.err, /The agent run failed: Endpoint sent nothing for 300 ms/);
    } finally {
      await server.close();
    }
  });

  it("a 401 echoing the key in every encoding: no output line and no stored row carries it", async () => {
    const server = await startHostileServer({ mode: "echo" });
    try {
      const dir = mkdtempSync(join(tmpdir(), "hookscope-run-"));
      dirs.push(dir);
      const db = join(dir, "runs.db");
      const result = await cli(
        ["run", "--base-url", server.baseURL, "--model", "m", "--workspace", dir, "--db", db],
        { HOOKSCOPE_API_KEY: KEY },
      );
      assert.equal(result.code, 1, result.err);
      assert.match(result.err, /status 401/);
      assert.deepEqual(leaks(result.out + result.err), []);
      const file = new TextDecoder().decode(readFileSync(db));
      assert.match(file, /status 401/);
      assert.deepEqual(leaks(file), []);
    } finally {
      await server.close();
    }
  });

  it("a key with a line break inside is refused without printing it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hookscope-run-"));
    dirs.push(dir);
    const server = await startHostileServer({ mode: "echo" });
    try {
      const result = await cli(
        [
          "run",
          "--base-url",
          server.baseURL,
          "--model",
          "m",
          "--workspace",
          dir,
          "--db",
          join(dir, "r.db"),
        ],
        { HOOKSCOPE_API_KEY: "sk-first-half\nsecond-half-of-key" },
      );
      assert.equal(result.code, 1, result.err);
      assert.match(result.err, /invalid apiKey \(it contains a line break\)/);
      assert.doesNotMatch(result.out + result.err, /first-half|second-half/);
    } finally {
      await server.close();
    }
  });
});
