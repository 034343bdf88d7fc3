// search: RE2 patterns that freeze a backtracking engine finish within the search budget; hard
// links, protected files under any name and JavaScript-only syntax are refused or skipped.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { linkSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ActionManager } from "../../../action/mod.ts";
import { MAX_PATTERN_PROGRAM, SEARCH_TIME_BUDGET_MS } from "../../../action/coding/_search.ts";
import { makeSandbox, managerFor, type Result, run, type Sandbox } from "./_helpers.ts";

/** Patterns that freeze a backtracking RegExp (the four, then our own worst cases). */
const FREEZING: readonly (readonly [pattern: string, file: string, found: boolean])[] = [
  ["a{0,16}a{0,16}a{0,16}a{0,16}a{0,16}a{0,16}a{0,16}b", "a200.txt", false],
  ["((a?){16}){16}b", "a200.txt", false],
  ["(.{0,16}){16}x", "a200.txt", false],
  ["(\\w{1,16}){16}$", "a200.txt", true],
  ["(?:a?){600}a{600}", "a10k.txt", true],
  ["(?:a?){16}(?:a?){16}(?:a?){16}(?:a?){16}(?:a?){16}(?:a?){16}a{96}$", "a10k.txt", true],
  ["(?:\\w|\\W){1,1000}$", "a10k.txt", true],
  ["(\\w{1,16}){16}$", "words.txt", false],
  ["(?:[a-z]{0,20}\\d?){25}$", "a10k.txt", true],
  ["(a+)+$", "a10k.txt", true],
  ["(a|aa)*c", "a10k.txt", false],
  ["(?:\\w*\\s?){300}$", "words.txt", true],
];

describe("search safety", () => {
  let box: Sandbox;
  let manager: ActionManager;

  before(() => {
    box = makeSandbox();
    writeFileSync(join(box.ws, "a200.txt"), `${"a".repeat(200)}\n`);
    // 40 lines of 10 000 characters: every line is matched (up to the per-line bound).
    writeFileSync(join(box.ws, "a10k.txt"), `${"a".repeat(10_000)}\n`.repeat(40));
    let words = "";
    for (let i = 0; i < 10_000; i++) words += "ab_cd ef9"[i % 9];
    writeFileSync(join(box.ws, "words.txt"), `${words}\n`.repeat(100));
    manager = managerFor(box.ws);
  });

  after(() => box.cleanup());

  it("the freezing patterns finish within the search budget, with correct results", async () => {
    const times: string[] = [];
    for (const [pattern, file, found] of FREEZING) {
      const started = Date.now();
      const result = await run(manager, "search", { action: "grep", pattern, path: file });
      const elapsed = Date.now() - started;
      times.push(`${pattern} on ${file}: ${elapsed} ms`);
      assert.equal(result.success, true, `${pattern}: ${result.error}`);
      assert.equal(result.timedOut, undefined, pattern);
      assert.equal((result.totalMatches as number) > 0, found, pattern);
      // A generous bound: the search's own budget (20 s); the measured times are far below.
      assert.ok(elapsed < SEARCH_TIME_BUDGET_MS, `${pattern}: ${elapsed} ms`);
    }
    if (process.env.HOOKSCOPE_PRINT_TIMES) console.log(times.join("\n"));
  });

  it("a search lets timers run while it matches (the process is never held)", async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    try {
      const result = await run(manager, "search", {
        action: "grep",
        pattern: "(?:a?){600}a{600}",
        path: "a10k.txt",
      });
      assert.equal(result.success, true);
    } finally {
      clearInterval(timer);
    }
    assert.ok(ticks > 0, "no timer ran during the search");
  });

  it("a pattern compiled past the program bound is refused as too complex", async () => {
    const result = await run(manager, "search", {
      action: "grep",
      pattern: "(?:a?){1000}a{1000}",
      path: "a200.txt",
    });
    assert.equal(result.success, false);
    assert.equal(result.patternError, "too_complex");
    assert.match(String(result.error), new RegExp(`at most ${MAX_PATTERN_PROGRAM}`));
  });

  it("backreferences and lookaround get a typed unsupported error; bad syntax a syntax error", async () => {
    for (const pattern of ["(a)\\1", "(?=a)b", "(?!a)b", "(?<=a)b", "(?<!a)b", "(?<n>a)\\k<n>"]) {
      const result = await run(manager, "search", { action: "grep", pattern, path: "a200.txt" });
      assert.equal(result.success, false, pattern);
      assert.equal(result.patternError, "unsupported", pattern);
      assert.match(String(result.error), /RE2 syntax/, pattern);
    }
    const bad = await run(manager, "search", { action: "grep", pattern: "a(", path: "a200.txt" });
    assert.equal(bad.patternError, "syntax");
    assert.match(String(bad.error), /^Invalid pattern: /);
  });

  it("any pattern text gives a result or a typed pattern error, never a hang or a throw", async () => {
    const piece = fc.constantFrom(
      "a",
      "b",
      "\\w",
      "\\d",
      ".",
      "*",
      "+",
      "?",
      "{0,16}",
      "{2}",
      "(",
      ")",
      "(?:",
      "|",
      "[",
      "]",
      "^",
      "$",
      "\\1",
      "(?=",
      "(?<=",
      "\\",
      "{",
      "}",
      "-",
      "a?",
      "(a?){16}",
    );
    await fc.assert(
      fc.asyncProperty(fc.array(piece, { minLength: 1, maxLength: 12 }), async (parts) => {
        const pattern = parts.join("");
        const result = await run(manager, "search", { action: "grep", pattern, path: "a200.txt" });
        if (result.success) {
          assert.equal(typeof result.totalMatches, "number", pattern);
        } else {
          assert.ok(
            ["syntax", "unsupported", "too_complex"].includes(String(result.patternError)),
            `${pattern}: ${result.error}`,
          );
        }
      }),
      { numRuns: 150 },
    );
  });

  it("search never returns the contents of protected files, under any name", async () => {
    const dir = join(box.ws, "conf");
    mkdirSync(dir);
    const names = [
      ".env",
      ".env.local",
      ".env.production",
      ".ENV.Development",
      "prod.env",
      "server.pem",
      "tls.key",
      "id_rsa",
      "id_ed25519.old",
      ".netrc",
      ".npmrc",
    ];
    for (const name of names) writeFileSync(join(dir, name), "TOKEN=hunter2-secret\n");
    writeFileSync(join(dir, "visible.txt"), "TOKEN=visible\n");
    const grep = await run(manager, "search", { action: "grep", pattern: "TOKEN", path: "conf" });
    assert.equal(grep.success, true);
    assert.equal(grep.content, "conf/visible.txt:1:TOKEN=visible");
    assert.doesNotMatch(JSON.stringify(grep), /hunter2/);
    // The reader refuses the same names (one shared list).
    for (const name of names) {
      const read = await run(manager, "reader", { action: "read", path: `conf/${name}` });
      assert.equal(read.success, false, name);
      assert.match(String(read.error), /protected path/, name);
    }
  });

  it("search skips hard-linked files and symlinks, so nothing outside is read", async () => {
    const dir = join(box.ws, "links");
    mkdirSync(dir);
    writeFileSync(join(box.outside, "hard-secret.txt"), "LINKED=outside-bytes\n");
    linkSync(join(box.outside, "hard-secret.txt"), join(dir, "hard.txt"));
    symlinkSync(join(box.outside, "hard-secret.txt"), join(dir, "soft.txt"));
    writeFileSync(join(dir, "plain.txt"), "LINKED=inside\n");
    const grep = await run(manager, "search", { action: "grep", pattern: "LINKED", path: "links" });
    assert.equal(grep.success, true);
    assert.equal(grep.content, "links/plain.txt:1:LINKED=inside");
    const single = await run(manager, "search", {
      action: "grep",
      pattern: "LINKED",
      path: "links/hard.txt",
    });
    assert.doesNotMatch(JSON.stringify(single), /outside-bytes/);
    const read: Result = await run(manager, "reader", { action: "read", path: "links/hard.txt" });
    assert.equal(read.success, false);
    assert.match(String(read.error), /hard-linked file/);
  });
});
