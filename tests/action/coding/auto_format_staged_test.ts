// The formatter is staged like bash: autoFormat runs it against a copy-on-write view of the
// workspace, writes its output there, and the change set goes through the same tool.effects
// decision and journaled commit (with a checkpoint that undo restores). Real bubblewrap, real
// overlayfs, a real formatter subprocess (tests/fixtures/formatter.mjs under node).
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, lstatSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import process from "node:process";
import {
  autoFormat,
  CodingToolkit,
  detectSandbox,
  type FileChange,
} from "../../../action/coding/mod.ts";
import { AgentSpec } from "../../../action/mod.ts";
import { Session } from "../../../session/mod.ts";
import { makeSandbox, type Sandbox, snapshot, treeHash } from "./_helpers.ts";

const formatter = fileURLToPath(new URL("../../fixtures/formatter.mjs", import.meta.url));
const MESSY = "a = 1   \nb = 2\t\n\n\n";
const CLEAN = "a = 1\nb = 2\n";

interface Record {
  status: string;
  reason?: string;
  effects?: string;
  changes?: FileChange[];
  checkpoint?: string;
}

describe("autoFormat staged (effects: overlay)", () => {
  let box: Sandbox;
  let state: string;
  before(async () => {
    const info = await detectSandbox();
    assert.equal(info.kind, "bubblewrap", `bubblewrap must be installed: ${info.reason}`);
    assert.equal(info.effects, "overlay", `overlayfs must mount: ${info.effectsReason}`);
    box = makeSandbox();
    state = join(box.base, "state");
  });
  after(() => box?.cleanup());

  const write = (name: string, text: string) => {
    writeFileSync(join(box.ws, name), text);
    return name;
  };
  const read = (name: string) => readFileSync(join(box.ws, name), "utf8");
  const hook = (argv: string[] = []) =>
    autoFormat({
      cwd: box.ws,
      sandbox: { readable: [dirname(formatter)] },
      formatters: { ".py": ["node", formatter, ...argv] },
      effectsDir: state,
    });
  const format = async (h: ReturnType<typeof autoFormat>, file: string, extra = {}) =>
    ((await h({ args: { filePath: file }, result: { success: true }, ...extra }))
      ?.updatedResult as { autoFormat: Record }).autoFormat;

  it("formats through a change set and a checkpoint the toolkit can undo", async () => {
    const file = write("staged.py", MESSY);
    const record = await format(hook(), file, { callId: "f1" });
    assert.equal(record.status, "formatted", JSON.stringify(record));
    assert.equal(record.effects, "overlay");
    assert.deepEqual(record.changes, [{
      path: "staged.py",
      kind: "modified",
      type: "file",
      bytesBefore: MESSY.length,
      bytesAfter: CLEAN.length,
    }]);
    assert.equal(typeof record.checkpoint, "string");
    assert.equal(read(file), CLEAN);
    const toolkit = new CodingToolkit({ workspaceRoot: box.ws, effectsDir: state, tools: [] });
    const [checkpoint] = (await toolkit.checkpoints()).filter((c) => c.callId === "f1");
    assert.equal(checkpoint.toolName, "autoFormat");
    await toolkit.undo("f1");
    assert.equal(read(file), MESSY);
  });

  it("what the formatter writes besides its output is in the change set too, and a deny discards it all", async () => {
    const file = write("side.py", MESSY);
    const before = treeHash(box.ws);
    const seen: FileChange[][] = [];
    const session = new Session();
    session.hooks.on("tool.effects", ({ toolName, changes }) => {
      if (toolName !== "autoFormat") return undefined;
      seen.push([...changes]);
      return { decision: "deny", reason: "no cache files" };
    });
    const branch = session.newBranch({
      spec: new AgentSpec().post("editor", hook(["--write", join(box.ws, "cache.txt")])),
    });
    new CodingToolkit({
      workspaceRoot: box.ws,
      effectsDir: state,
      tools: ["editor"],
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    }).bind(branch);
    const acted = await branch.act({
      function: "editor",
      arguments: { action: "write", filePath: "new.py", content: MESSY },
    });
    const record = (acted.output as { autoFormat: Record }).autoFormat;
    assert.equal(record.status, "skipped", JSON.stringify(record));
    assert.match(String(record.reason), /not applied: no cache files/);
    assert.deepEqual(seen[0].map((c) => `${c.kind} ${c.path}`), [
      "created cache.txt",
      "modified new.py",
    ]);
    // The editor's own write stands (it is not staged); the formatter's changes do not.
    assert.equal(read("new.py"), MESSY);
    assert.equal(existsSync(join(box.ws, "cache.txt")), false);
    assert.equal(read(file), MESSY);
    assert.notEqual(treeHash(box.ws), before); // new.py, written by the editor
  });

  it("a formatter that leaves a symlink at the file cannot redirect the write", async () => {
    const file = write("linked.py", MESSY);
    const outsideBefore = snapshot(box.outside);
    const record = await format(
      hook(["--symlink", join(box.ws, file), join(box.outside, "secret.txt")]),
      file,
    );
    assert.equal(record.status, "formatted", JSON.stringify(record));
    assert.equal(lstatSync(join(box.ws, file)).isFile(), true);
    assert.equal(read(file), CLEAN);
    assert.deepEqual(snapshot(box.outside), outsideBefore);
  });

  it("the formatter's own writes to the file stay in its staged view; its output commits", async () => {
    const file = write("raced.py", MESSY);
    const record = await format(hook(["--append", join(box.ws, file)]), file);
    assert.equal(record.status, "formatted", JSON.stringify(record));
    assert.equal(read(file), CLEAN);
  });

  it("a change to the workspace file while the formatter ran is not overwritten", async () => {
    const file = write("changed.py", MESSY);
    // The formatter takes 3 s; the file changes in the workspace 0.5 s after the hook read it.
    const pending = format(hook(["--sleep", "3000"]), file);
    await new Promise((resolve) => setTimeout(resolve, 500));
    writeFileSync(join(box.ws, file), MESSY + "x = 3\n");
    const record = await pending;
    assert.equal(record.status, "failed", JSON.stringify(record));
    assert.match(String(record.reason), /File changed while formatting/);
    assert.equal(read(file), MESSY + "x = 3\n");
  });
});
