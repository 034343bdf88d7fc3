/**
 * Staged runs (`effects: "overlay"`): what they cost.
 *
 * - `effects/echo`: one `echo ok` through the bash tool inside bubblewrap, written directly
 *   (`bash-direct`, `sandbox: { effects: "direct" }`, the baseline) and staged
 *   (`bash-staged`, the default: unshare, overlay mount, the opaque-directory listing, reading
 *   an empty change set).
 * - `effects/commit`: committing a change set read from an upper layer (the workspace state
 *   checked again, checkpoint, journal, stage, rename): 100 new 1 KiB files (`100-files`, per file = time / 100), one new
 *   16 MiB file (`16-mib`, per MiB = time / 16) and a 16 MiB file replacing one of 16 MiB
 *   (`16-mib-replaced`: the checkpoint copies the old bytes first), each on the workspace's
 *   file system.
 *
 * ```sh
 * node_modules/.bin/deno bench --allow-all bench/effects_bench.ts
 * ```
 *
 * Needs root (or user namespaces), bwrap and overlayfs; without `run` permission it registers
 * nothing and says why.
 *
 * @module
 */

import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ActionManager } from "../action/mod.ts";
import { CodingToolkit, detectSandbox } from "../action/coding/mod.ts";
import { lowerState, readChangeSet } from "../action/coding/_changes.ts";
import { commitChanges, effectsStore } from "../action/coding/_commit.ts";

const permitted = Deno.permissions.querySync({ name: "run" }).state === "granted" &&
  Deno.permissions.querySync({ name: "write" }).state === "granted";

if (!permitted) {
  console.error(`Bench "effects" skipped: run it with --allow-all (it starts bwrap and mounts)`);
} else {
  const info = await detectSandbox();
  if (info.kind !== "bubblewrap" || info.effects !== "overlay") {
    throw new Error(`Bench "effects" needs bubblewrap and overlayfs: ${info.effectsReason}`);
  }
  const root = realpathSync(mkdtempSync(join(tmpdir(), "hookscope-effects-bench-")));
  globalThis.addEventListener("unload", () => rmSync(root, { recursive: true, force: true }));
  const ws = join(root, "ws");
  mkdirSync(ws);
  const state = join(root, "state");
  for (const effects of ["direct", "overlay"] as const) {
    const manager = new ActionManager();
    new CodingToolkit({
      workspaceRoot: ws,
      tools: ["bash"],
      sandbox: { effects },
      effectsDir: state,
    })
      .bind(manager);
    const call = await manager.invoke({ function: "bash", arguments: { command: "echo ok" } });
    const result = call.response as { stdout?: string; effects?: string } | undefined;
    if (result?.stdout !== "ok\n" || (effects === "overlay") !== (result.effects === "overlay")) {
      throw new Error(`Bench "effects/echo" is broken: ${effects} ${JSON.stringify(result)}`);
    }
    Deno.bench({
      name: effects === "direct" ? "bash-direct" : "bash-staged",
      group: "effects/echo",
      baseline: effects === "direct",
      fn: async () => {
        await manager.invoke({ function: "bash", arguments: { command: "echo ok" } });
      },
    });
  }
  const store = effectsStore(state, ws);
  let round = 0;
  const commitBench = (
    name: string,
    fill: (upper: string) => void,
    prepare?: () => void,
  ) =>
    Deno.bench({
      name,
      group: "effects/commit",
      fn: async (b) => {
        const upper = join(root, `upper-${++round}`);
        mkdirSync(upper);
        prepare?.();
        fill(upper);
        const set = await readChangeSet(upper, ws, new Set());
        const lower = await lowerState(ws, set.plan);
        b.start();
        // As the bash tool commits: the workspace state checked again, a checkpoint, the journal.
        await commitChanges(store, { callId: `bench-${round}`, toolName: "bash", ...set, lower });
        b.end();
        rmSync(upper, { recursive: true, force: true });
        rmSync(join(ws, `r${round}`), { recursive: true, force: true });
      },
    });
  const kib = "x".repeat(1024);
  commitBench("100-files", (upper) => {
    mkdirSync(join(upper, `r${round}`));
    for (let i = 0; i < 100; i++) writeFileSync(join(upper, `r${round}`, `f${i}`), kib);
  });
  const mib16 = new Uint8Array(16 * 1024 * 1024).fill(7);
  commitBench("16-mib", (upper) => {
    mkdirSync(join(upper, `r${round}`));
    writeFileSync(join(upper, `r${round}`, "big"), mib16);
  });
  const other16 = new Uint8Array(16 * 1024 * 1024).fill(9);
  commitBench("16-mib-replaced", (upper) => {
    mkdirSync(join(upper, `r${round}`));
    writeFileSync(join(upper, `r${round}`, "big"), mib16);
  }, () => {
    mkdirSync(join(ws, `r${round}`));
    writeFileSync(join(ws, `r${round}`, "big"), other16);
  });
}
