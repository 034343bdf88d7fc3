/**
 * `bash/echo`: one `echo ok` through the coding toolkit's bash tool (`ActionManager.invoke`),
 * run on the host (`bash-host`, `sandbox: { kind: "none" }`, the baseline) and inside bubblewrap
 * (`bash-sandboxed`, the default). The difference is the sandbox's cost per call: starting
 * bwrap, its namespaces and mounts, the pids cgroup and the wrapper shell.
 *
 * Needs permissions the other benches do not: run `bwrap`/`echo` and write the pids cgroup.
 *
 * ```sh
 * node_modules/.bin/deno bench --allow-all bench/sandbox_bench.ts
 * ```
 *
 * Without `run` permission (the bench task's narrow flags) it registers nothing and says why.
 *
 * @module
 */

import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ActionManager } from "../action/mod.ts";
import { CodingToolkit, detectSandbox } from "../action/coding/mod.ts";

const group = "bash/echo";
const permitted = Deno.permissions.querySync({ name: "run" }).state === "granted" &&
  Deno.permissions.querySync({ name: "write" }).state === "granted";

if (!permitted) {
  console.error(`Bench "${group}" skipped: run it with --allow-all (it starts bwrap and echo)`);
} else {
  const info = await detectSandbox();
  if (info.kind !== "bubblewrap") {
    throw new Error(`Bench "${group}" needs bubblewrap: ${info.reason}`);
  }
  const root = realpathSync(mkdtempSync(join(tmpdir(), "hookscope-bench-")));
  globalThis.addEventListener("unload", () => rmSync(root, { recursive: true, force: true }));
  // The workspace, and beside it the effects state of staged runs (not the default in $HOME).
  const ws = join(root, "ws");
  mkdirSync(ws);
  const effectsDir = join(root, "state");
  const managers = {
    "bash-host": new ActionManager(),
    "bash-sandboxed": new ActionManager(),
  };
  new CodingToolkit({ workspaceRoot: ws, effectsDir, tools: ["bash"], sandbox: { kind: "none" } })
    .bind(managers["bash-host"]);
  new CodingToolkit({ workspaceRoot: ws, effectsDir, tools: ["bash"] })
    .bind(managers["bash-sandboxed"]);
  for (const [name, manager] of Object.entries(managers)) {
    const expected = name === "bash-host" ? "none" : "bubblewrap";
    const call = await manager.invoke({ function: "bash", arguments: { command: "echo ok" } });
    const result = call.response as { stdout?: string; sandbox?: string } | undefined;
    if (call.status !== "completed" || result?.stdout !== "ok\n" || result.sandbox !== expected) {
      throw new Error(`Bench "${group}" is broken: ${name} ${JSON.stringify(result)}`);
    }
    Deno.bench({
      name,
      group,
      baseline: name === "bash-host",
      fn: async () => {
        await manager.invoke({ function: "bash", arguments: { command: "echo ok" } });
      },
    });
  }
}
