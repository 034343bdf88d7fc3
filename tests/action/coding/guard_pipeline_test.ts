// Every destructive corpus entry that only targets a throwaway directory goes through the real
// pipeline: the coding preset (codingSpec: the command guard on bash), the bash tool and
// its bubblewrap sandbox. Nothing inside the workspace may be destroyed and nothing outside may
// change. A control run without the guard shows the same pipeline would destroy the directory.
// Needs `bwrap` (Debian package bubblewrap; .ci/setup/10-bubblewrap.sh installs it).
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { ActionManager } from "../../../action/mod.ts";
import { codingSpec, CodingToolkit, detectSandbox } from "../../../action/coding/mod.ts";
import { DESTRUCTIVE_COMMANDS } from "../../fixtures/command_corpus.ts";
import { makeSandbox, type Sandbox, snapshot } from "./_helpers.ts";

function fillVictim(ws: string): void {
  mkdirSync(join(ws, "victim", "sub"), { recursive: true });
  writeFileSync(join(ws, "victim", "file"), "precious\n");
  writeFileSync(join(ws, "victim", "sub", "deep.txt"), "precious too\n");
  writeFileSync(join(ws, "list.txt"), "victim\n");
}

function pipeline(ws: string, secure: boolean): ActionManager {
  const spec = codingSpec({ cwd: ws, secure });
  const manager = new ActionManager();
  new CodingToolkit({
    workspaceRoot: ws,
    spec,
    tools: ["bash"],
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    // The judge is what this corpus tests: effects off (with them on it is advice only).
    sandbox: { maxProcesses: 64, effects: "direct" },
  }).bind(manager);
  return manager;
}

describe("destructive corpus through the coding pipeline (preset + bash tool + sandbox)", () => {
  let box: Sandbox;
  before(async () => {
    const info = await detectSandbox();
    assert.equal(info.kind, "bubblewrap", `bubblewrap must be installed: ${info.reason}`);
    box = makeSandbox();
    fillVictim(box.ws);
  });
  after(() => box?.cleanup());

  const local = DESTRUCTIVE_COMMANDS.filter((entry) => entry.local);

  it("the corpus has throwaway-directory entries to run", () => {
    assert.ok(local.length >= 100, String(local.length));
  });

  it("each one is denied by the guard; the workspace and the outside stay as they were", async () => {
    const manager = pipeline(box.ws, true);
    const insideBefore = snapshot(box.ws);
    const outsideBefore = snapshot(box.outside);
    const problems: string[] = [];
    for (const entry of local) {
      const call = await manager.invoke({
        function: "bash",
        arguments: { command: entry.command },
      }, { suppressErrors: true });
      const error = call.execution.error as Error | undefined;
      if (call.status !== "failed" || error?.name !== "SecurityDeniedError") {
        problems.push(`${JSON.stringify(entry.command)}: ${call.status} ${error?.message ?? ""}`);
      }
      if (!existsSync(join(box.ws, "victim", "sub", "deep.txt"))) {
        problems.push(`${JSON.stringify(entry.command)} destroyed victim/`);
        fillVictim(box.ws);
      }
    }
    assert.deepEqual(problems, []);
    assert.deepEqual(snapshot(box.ws), insideBefore);
    assert.deepEqual(snapshot(box.outside), outsideBefore);
  });

  it("a # comment: the guard judges and the bash tool runs the same words (victim intact)", async () => {
    // bash drops `# -delete` as a comment, so the guard judged `find victim`; the bash tool
    // runs that parse, never `find victim '#' -delete`.
    const manager = pipeline(box.ws, true);
    const insideBefore = snapshot(box.ws);
    const problems: string[] = [];
    for (
      const command of [
        "find victim # -delete",
        "find victim #-delete",
        "find victim -type f # -delete",
        "find victim -name file # -delete",
        "find victim/sub # -delete",
        "rm victim/none # -r victim",
        "rm -f victim/none # -r victim",
      ]
    ) {
      const call = await manager.invoke({ function: "bash", arguments: { command } }, {
        suppressErrors: true,
      });
      if (call.status !== "completed") {
        problems.push(`${command}: ${call.status} ${(call.execution.error as Error)?.message}`);
      }
      if (!existsSync(join(box.ws, "victim", "sub", "deep.txt"))) {
        problems.push(`${command} destroyed victim/`);
        fillVictim(box.ws);
      }
    }
    assert.deepEqual(problems, []);
    assert.deepEqual(snapshot(box.ws), insideBefore);
  });

  it("control: without the guard the same pipeline destroys the directory (sandboxed)", async () => {
    const manager = pipeline(box.ws, false);
    const outsideBefore = snapshot(box.outside);
    const call = await manager.invoke({ function: "bash", arguments: { command: "rm -r victim" } });
    assert.equal(call.status, "completed", String(call.execution.error));
    assert.equal((call.response as { success: boolean }).success, true);
    assert.equal(existsSync(join(box.ws, "victim")), false);
    assert.deepEqual(snapshot(box.outside), outsideBefore);
    fillVictim(box.ws);
  });
});
