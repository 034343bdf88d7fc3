// A Claude hook timeout longer than a timer can hold (2^31 - 1 ms): a configuration that asks for
// one is refused when it is loaded, naming the hook; and a command hook run with one is not timed
// out at once (setTimeout fires such a delay after 1 ms), it runs with no deadline.

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { claudeCodeHooks, ClaudeHookConfigError, readClaudeHooks } from "../../claude/mod.ts";
import { runHook } from "../../claude/_run_hook.ts";

const settings = (timeout: number) => ({
  hooks: {
    PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command" as const, command: "exit 0" }] }],
    PostToolUse: [{ hooks: [{ type: "http" as const, url: "http://127.0.0.1:9/", timeout }] }],
  },
});

describe("Claude hook timeouts above 2^31 - 1 ms", () => {
  let dir = "";
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "hookscope-hook-timeouts-"));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("a configuration with one is refused when loaded, naming the hook", () => {
    const refused = (error: unknown): boolean => {
      assert.ok(error instanceof ClaudeHookConfigError);
      assert.equal(error.at, "hooks.PostToolUse[0].hooks[0]");
      assert.match(
        error.message,
        /^Cannot load Claude hooks: hooks\.PostToolUse\[0\]\.hooks\[0\]: timeout must be at most 2147483 seconds .*; got 3000000$/,
      );
      return true;
    };
    assert.throws(() => readClaudeHooks(settings(3_000_000)), refused);
    assert.throws(() => claudeCodeHooks(settings(3_000_000)), refused);
    // The longest a timer holds is accepted.
    assert.equal(readClaudeHooks(settings(2_147_483)).length, 2);
  });

  it("a command hook run with one runs to its end instead of timing out at once", async () => {
    for (
      const [hook, timeoutMs] of [
        [{ type: "command" as const, command: "sleep 0.2; echo done" }, 3e9],
        [{ type: "command" as const, command: "sleep 0.2; echo done", timeout: 3_000_000 }, 60_000],
      ] as const
    ) {
      const answer = await runHook(hook, "{}", { cwd: dir, env: {}, timeoutMs });
      assert.equal(answer.code, 0);
      assert.equal(answer.stdout, "done\n");
    }
  });
});
