// Hostile inputs that must neither hang nor exhaust the process: FIFOs, huge files, huge
// directories and hard links for the reader, editor and search; glob and regular-expression
// patterns with catastrophic backtracking and megabyte lines for search. Calls that could
// block asynchronously (a FIFO) are raced against a generous bound, so such a regression
// fails the test; a synchronous stall (backtracking) cannot be raced and hangs the runner
// until the test command's own timeout reports it.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { linkSync, mkdirSync, readFileSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ActionManager } from "../../../action/mod.ts";
import { MAX_LIST_ENTRIES, MAX_READ_BYTES } from "../../../action/coding/_reader.ts";
import { MAX_MATCH_CHARS } from "../../../action/coding/_search.ts";
import { makeSandbox, managerFor, type Result, run, type Sandbox } from "./_helpers.ts";

const HUNG = Symbol("hung");

/** The tool's result, or HUNG when it has not settled after 15 s (a generous bound). */
async function settled(promise: Promise<Result>): Promise<Result | typeof HUNG> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const bound = new Promise<typeof HUNG>((resolve) => {
    timer = setTimeout(() => resolve(HUNG), 15_000);
  });
  try {
    return await Promise.race([promise, bound]);
  } finally {
    clearTimeout(timer);
  }
}

/** Why the FIFO case cannot run here (no mkfifo on this host), or false. */
const noFifo: string | false = (() => {
  try {
    execFileSync("sh", ["-c", "command -v mkfifo"], { stdio: "ignore" });
    return false;
  } catch {
    return "no mkfifo on this host";
  }
})();

describe("CodingToolkit hostile input", () => {
  let box: Sandbox;
  let manager: ActionManager;
  before(() => {
    box = makeSandbox();
    manager = managerFor(box.ws);
    if (!noFifo) execFileSync("mkfifo", [join(box.ws, "pipe.txt")]);
  });
  after(() => box.cleanup());

  it(
    "reader, editor and search refuse a FIFO instead of blocking on it",
    { skip: noFifo },
    async () => {
      assert.deepEqual(
        await settled(run(manager, "reader", { action: "read", path: "pipe.txt" })),
        { success: false, error: "Not a regular file: pipe.txt" },
      );
      // Reading it first is impossible, so an overwrite stays refused; an edit is refused as such.
      assert.deepEqual(
        await settled(
          run(manager, "editor", {
            action: "edit",
            filePath: "pipe.txt",
            oldString: "a",
            newString: "b",
          }),
        ),
        { success: false, error: "Not a regular file: pipe.txt" },
      );
      const grep = await settled(
        run(manager, "search", { action: "grep", pattern: "x", path: "pipe.txt" }),
      );
      assert.notEqual(grep, HUNG);
      assert.deepEqual(grep, { success: true, content: "", totalMatches: 0, shown: 0 });
    },
  );

  it("reader refuses a file over its size bound without loading it", async () => {
    writeFileSync(join(box.ws, "huge.log"), "");
    // A sparse file: costs no disk, but loading it would allocate the whole size.
    truncateSync(join(box.ws, "huge.log"), MAX_READ_BYTES + 1);
    assert.deepEqual(await run(manager, "reader", { action: "read", path: "huge.log" }), {
      success: false,
      error: `File too large to read: huge.log (${
        MAX_READ_BYTES + 1
      } bytes; at most ${MAX_READ_BYTES})`,
    });
  });

  it("search find with a backtracking-prone glob finishes", async () => {
    writeFileSync(join(box.ws, "a".repeat(200)), "x\n");
    const result = await settled(
      run(manager, "search", { action: "find", pattern: "*a*a*a*a*a*a*a*a*a*b" }),
    );
    assert.notEqual(result, HUNG);
    assert.deepEqual(result, { success: true, content: "", totalFound: 0, shown: 0 });
    const include = await settled(run(manager, "search", {
      action: "grep",
      pattern: "x",
      include: "*a*a*a*a*a*a*a*a*a*b",
    }));
    assert.deepEqual(include, { success: true, content: "", totalMatches: 0, shown: 0 });
  });

  it("search find reports a glob whose braces expand too far as an invalid pattern", async () => {
    const result = await run(manager, "search", {
      action: "find",
      pattern: "*{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}",
    });
    assert.equal(result.success, false);
    assert.match(
      String(result.error),
      /^Invalid pattern: Cannot compile glob .*brace alternatives/,
    );
  });

  it("search grep runs backtracking-prone patterns in linear time and refuses what it cannot run", async () => {
    writeFileSync(join(box.ws, "redos.txt"), `${"a".repeat(5000)}!\n`);
    const cases: [string, boolean][] = [
      ["(a+)+$", false],
      ["(a|aa)*$", true],
      ["(?:a*b?)*$", true],
      ["(\\w+\\s?)+$", false],
      ["(a?){30}a{30}$", false],
      ["(?:ab?)+$", false],
      [".*.*.*x", false],
      ["a.*a.*!", true],
      [`${"a?".repeat(40)}${"a".repeat(40)}$`, false],
    ];
    for (const [pattern, found] of cases) {
      const result = await settled(
        run(manager, "search", { action: "grep", pattern, path: "redos.txt" }),
      );
      assert.notEqual(result, HUNG, pattern);
      assert.equal((result as Result).success, true, pattern);
      assert.equal((result as Result).totalMatches, found ? 1 : 0, pattern);
    }
    for (
      const pattern of [
        "(a)\\1",
        "(?<x>a)\\k<x>",
        "(?=a).*.*x",
        "(?=a)(?:x?y)",
        "a(?!b)",
        "(?<=a)b",
      ]
    ) {
      const result = await run(manager, "search", { action: "grep", pattern, path: "redos.txt" });
      assert.equal(result.success, false, pattern);
      assert.equal(result.patternError, "unsupported", pattern);
      assert.match(String(result.error), /^Unsupported pattern: .*RE2 syntax/, pattern);
    }
    for (
      const pattern of [
        "a+!$",
        "^(ab)?a{2,5}",
        "(foo)+|bar",
        "[(+*]+",
        "\\(a+\\)+",
        "(?:abc)+",
        "(a+){2}",
      ]
    ) {
      const result = await run(manager, "search", { action: "grep", pattern, path: "redos.txt" });
      assert.equal(result.success, true, pattern);
    }
  });

  it("reader list_dir returns a bounded listing of a huge directory", async () => {
    const dir = join(box.ws, "many");
    mkdirSync(dir);
    for (let i = 0; i < MAX_LIST_ENTRIES + 5; i++) {
      writeFileSync(join(dir, `f${String(i).padStart(5, "0")}`), "");
    }
    const result = await run(manager, "reader", { action: "list_dir", path: "many" });
    assert.equal(result.success, true);
    const entries = result.entries as string[];
    assert.equal(entries.length, MAX_LIST_ENTRIES);
    assert.equal(entries[0], "f00000");
    assert.equal(
      entries[MAX_LIST_ENTRIES - 1],
      `f${String(MAX_LIST_ENTRIES - 1).padStart(5, "0")}`,
    );
    assert.equal(result.totalEntries, MAX_LIST_ENTRIES + 5);
    assert.equal(result.truncated, true);
    const small = await run(manager, "reader", { action: "list_dir", path: "src" });
    assert.equal("truncated" in small, false);
  });

  it("reader and editor refuse a hard link to a file outside the workspace", async () => {
    const outsideFile = join(box.outside, "linked-target.txt");
    writeFileSync(outsideFile, "outside original\n");
    linkSync(outsideFile, join(box.ws, "hardlink.txt"));
    assert.deepEqual(await run(manager, "reader", { action: "read", path: "hardlink.txt" }), {
      success: false,
      error: "Refusing to access a hard-linked file: hardlink.txt (2 links)",
    });
    const error = "Refusing to modify a hard-linked file: hardlink.txt (2 links)";
    assert.deepEqual(
      await run(manager, "editor", { action: "write", filePath: "hardlink.txt", content: "x" }),
      { success: false, error },
    );
    assert.deepEqual(
      await run(manager, "editor", {
        action: "edit",
        filePath: "hardlink.txt",
        oldString: "original",
        newString: "changed",
      }),
      { success: false, error },
    );
    assert.equal(readFileSync(outsideFile, "utf8"), "outside original\n");
  });

  it("search grep matches a bounded prefix of a huge minified line instead of stalling", async () => {
    mkdirSync(join(box.ws, "dist"));
    // One 3 MB line: an unanchored `.*` pattern is quadratic in the line length.
    writeFileSync(join(box.ws, "dist", "bundle.js"), `${"a".repeat(3_000_000)}\n`);
    const result = await settled(
      run(manager, "search", { action: "grep", pattern: "a.*x", path: "dist" }),
    );
    assert.notEqual(result, HUNG);
    assert.deepEqual(result, { success: true, content: "", totalMatches: 0, shown: 0 });
    writeFileSync(
      join(box.ws, "dist", "bundle.js"),
      `start ${"a".repeat(MAX_MATCH_CHARS)} beyond\n`,
    );
    const prefix = await run(manager, "search", { action: "grep", pattern: "start", path: "dist" });
    assert.equal(prefix.totalMatches, 1);
    const beyond = await run(manager, "search", {
      action: "grep",
      pattern: "beyond",
      path: "dist",
    });
    assert.equal(beyond.totalMatches, 0);
  });
});
