// kill -9 during a commit, 50 times: the workspace is always either as before or fully
// committed once recoverEffects() ran (what the next toolkit start does). Real processes,
// real SIGKILL. Needs root for mknod of the overlay whiteouts the child stages.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import process from "node:process";
import { effectsStore, recoverEffects } from "../../../action/coding/_commit.ts";
import { treeHash } from "./_helpers.ts";

const CHILD = fileURLToPath(new URL("./_effects_commit_child.ts", import.meta.url));

function childArgv(): string[] {
  const g = globalThis as { Deno?: unknown; Bun?: unknown };
  if (g.Deno) return [process.execPath, "run", "-A", CHILD];
  if (g.Bun) return [process.execPath, CHILD];
  return [process.execPath, "--import", "tsx", CHILD];
}

function fillWorkspace(ws: string): void {
  rmSync(ws, { recursive: true, force: true });
  mkdirSync(join(ws, "m"), { recursive: true });
  mkdirSync(join(ws, "d"));
  mkdirSync(join(ws, "r", "inside"), { recursive: true });
  for (let i = 0; i < 60; i++) writeFileSync(join(ws, "m", `f${i}.txt`), `old ${i}\n`.repeat(80));
  for (let i = 0; i < 60; i++) writeFileSync(join(ws, "d", `f${i}.txt`), `doomed ${i}\n`);
  writeFileSync(join(ws, "r", "inside", "x"), "replaced directory\n");
  writeFileSync(join(ws, "keep.txt"), "untouched\n");
}

/** Runs the child; kills it `killAfterMs` after it reports ready (never, when undefined). */
function runChild(
  ws: string,
  base: string,
  killAfterMs?: number,
): Promise<{ ms: number; done: boolean }> {
  return new Promise((resolve, reject) => {
    const [cmd, ...args] = childArgv();
    const child = spawn(cmd, [...args, ws, base], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    let readyAt = 0;
    const deadline = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.stderr.on("data", (chunk) => (err += chunk));
    child.stdout.on("data", (chunk) => {
      out += chunk;
      if (!readyAt && out.includes("ready\n")) {
        readyAt = Date.now();
        if (killAfterMs !== undefined) setTimeout(() => child.kill("SIGKILL"), killAfterMs);
      }
    });
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(deadline);
      if (killAfterMs === undefined && code !== 0) {
        reject(new Error(`child failed (${code ?? signal}): ${err}`));
        return;
      }
      resolve({ ms: Date.now() - readyAt, done: out.includes("done\n") });
    });
  });
}

describe("kill -9 during a commit", () => {
  let base: string;
  before(() => {
    base = realpathSync(mkdtempSync(join(tmpdir(), "hookscope-crash-")));
  });
  after(() => rmSync(base, { recursive: true, force: true }));

  it("50 kills at random points leave the workspace as before or fully committed", async () => {
    const ws = join(base, "ws");
    fillWorkspace(ws);
    const beforeHash = treeHash(ws, false);
    const reference = await runChild(ws, join(base, "ref-state"));
    assert.equal(reference.done, true);
    const afterHash = treeHash(ws, false);
    assert.notEqual(afterHash, beforeHash);
    const outcomes = { before: 0, after: 0 };
    const window = Math.max(20, reference.ms * 1.3);
    for (let round = 0; round < 50; round++) {
      fillWorkspace(ws);
      const state = join(base, `state-${round}`);
      await runChild(ws, state, Math.floor((round / 49) * window));
      await recoverEffects(effectsStore(state, ws));
      const hash = treeHash(ws, false);
      if (hash === beforeHash) outcomes.before++;
      else if (hash === afterHash) outcomes.after++;
      else assert.fail(`round ${round}: the workspace is half committed`);
    }
    // Both ends were reached: some kills landed before the commit point, some after.
    assert.ok(outcomes.before > 0 && outcomes.after > 0, JSON.stringify(outcomes));
    console.log(`kill -9 outcomes: ${JSON.stringify(outcomes)}, commit ${reference.ms} ms`);
  });
});
