import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeSandbox, managerFor, run, type Sandbox } from "./_helpers.ts";
import type { ActionManager } from "../../../action/mod.ts";

describe("CodingToolkit search", () => {
  let box: Sandbox;
  let manager: ActionManager;
  before(() => {
    box = makeSandbox();
    const w = (rel: string, text: string) => {
      mkdirSync(join(box.ws, rel, ".."), { recursive: true });
      writeFileSync(join(box.ws, rel), text);
    };
    w("src/a.ts", "const alpha = 1;\nexport function needle() {}\n");
    w("src/b.py", "def needle():\n    pass\n# needle again\n");
    w("docs/readme.md", "no match here\n");
    w("node_modules/pkg/index.ts", "needle in node_modules\n");
    w(".git/config", "needle in git\n");
    w("bin/data.bin", "needle\0binary");
    writeFileSync(join(box.outside, "leak.ts"), "needle outside\n");
    symlinkSync(box.outside, join(box.ws, "linked-out"));
    manager = managerFor(box.ws);
  });
  after(() => box.cleanup());

  it("search grep finds lines with numbers, skipping binaries, .git, node_modules and symlinks", async () => {
    const result = await run(manager, "search", { action: "grep", pattern: "needle" });
    assert.equal(result.success, true);
    assert.deepEqual(String(result.content).split("\n"), [
      "src/a.ts:2:export function needle() {}",
      "src/b.py:1:def needle():",
      "src/b.py:3:# needle again",
    ]);
    assert.equal(result.totalMatches, 3);
    assert.equal(result.shown, 3);
  });

  it("search grep honours include, path and maxResults, and takes JavaScript regular expressions", async () => {
    const py = await run(manager, "search", {
      action: "grep",
      pattern: "^def\\s+\\w+",
      include: "b.p?",
    });
    assert.equal(py.content, "src/b.py:1:def needle():");
    const limited = await run(manager, "search", {
      action: "grep",
      pattern: "needle",
      path: "src",
      maxResults: 1,
    });
    assert.equal(limited.totalMatches, 3);
    assert.equal(limited.shown, 1);
    const braces = await run(manager, "search", {
      action: "grep",
      pattern: "needle",
      include: "*.{ts,md}",
    });
    assert.equal(braces.content, "src/a.ts:2:export function needle() {}");
  });

  it("search grep reports an invalid pattern as a failure", async () => {
    const result = await run(manager, "search", { action: "grep", pattern: "(unclosed" });
    assert.equal(result.success, false);
    assert.match(String(result.error), /^Invalid pattern: /);
  });

  it("search find matches names by glob or substring", async () => {
    const glob = await run(manager, "search", { action: "find", pattern: "*.py" });
    assert.equal(glob.content, "src/b.py\nsrc/main.py");
    const sub = await run(manager, "search", { action: "find", pattern: "read" });
    assert.equal(sub.content, "docs/readme.md");
    const dirs = await run(manager, "search", { action: "find", pattern: "src" });
    assert.equal(dirs.content, "src/");
    const capped = await run(manager, "search", { action: "find", pattern: "*", maxResults: 2 });
    assert.equal(capped.shown, 2);
    assert.ok(Number(capped.totalFound) > 2);
  });

  it("search refuses paths outside the workspace", async () => {
    for (
      const path of ["..", "../outside", "/etc", "linked-out", "linked-out/leak.ts", "../ws-evil"]
    ) {
      const result = await run(manager, "search", { action: "grep", pattern: "needle", path });
      assert.equal(result.success, false, path);
      assert.equal(result.error, `Path escapes workspace root: ${path}`);
    }
  });

  it("search grep does not count the end of a file's final newline as an empty line", async () => {
    writeFileSync(join(box.ws, "docs", "two.txt"), "one\n\nthree\n");
    const empty = await run(manager, "search", {
      action: "grep",
      pattern: "^$",
      path: "docs/two.txt",
    });
    assert.equal(empty.content, "docs/two.txt:2:");
    assert.equal(empty.totalMatches, 1);
  });

  it("search grep never reads protected files such as .env or id_rsa", async () => {
    writeFileSync(join(box.ws, ".env"), "API_TOKEN=sk-hookscope-secret\n");
    mkdirSync(join(box.ws, "keys"), { recursive: true });
    writeFileSync(join(box.ws, "keys", "ID_RSA"), "sk-hookscope-secret key\n");
    const result = await run(manager, "search", { action: "grep", pattern: "sk-hookscope" });
    assert.deepEqual(result, { success: true, content: "", totalMatches: 0, shown: 0 });
    const named = await run(manager, "search", { action: "grep", pattern: "x", path: ".env" });
    assert.deepEqual(named, { success: false, error: "Refusing to access protected path: '.env'" });
  });
});
