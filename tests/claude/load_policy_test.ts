// loadPolicy: the reasons a policy file cannot be used, as text a person and Claude Code can read.
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadPolicy, PolicyLoadError } from "../../claude/mod.ts";

const dir = mkdtempSync(join(tmpdir(), "hookscope-load-policy-"));
after(() => rmSync(dir, { recursive: true, force: true }));

describe("loadPolicy()", () => {
  it("a module that fails to load is a PolicyLoadError whose reason has no terminal colour codes", async () => {
    // As Deno words a bare import that no deno.json maps: coloured, with a hint.
    const file = join(dir, "coloured.mjs");
    writeFileSync(
      file,
      `throw new TypeError('Import "x" not a dependency\\n  \\u001b[0m\\u001b[36mhint:\\u001b[0m run deno add');`,
    );
    await assert.rejects(loadPolicy(file), (error: Error) => {
      assert.ok(error instanceof PolicyLoadError);
      assert.equal(
        error.message,
        `Cannot load policy ${
          JSON.stringify(file)
        }: the module failed to load: Import "x" not a dependency\n  hint: run deno add`,
      );
      return true;
    });
  });

  it("a module without a policy function says what it must export", async () => {
    const file = join(dir, "none.mjs");
    writeFileSync(file, "export const rules = [];");
    await assert.rejects(
      loadPolicy(file),
      /it must export a function named "policy"; got undefined/,
    );
  });
});
