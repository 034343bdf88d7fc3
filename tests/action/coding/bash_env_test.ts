import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import { ActionManager } from "../../../action/mod.ts";
import { CodingToolkit, SAFE_ENV_KEYS } from "../../../action/coding/mod.ts";
import { makeSandbox } from "./_helpers.ts";

const box = makeSandbox();
after(() => box.cleanup());

async function envSeenBy(options: ConstructorParameters<typeof CodingToolkit>[0]) {
  const manager = new ActionManager();
  for (
    const tool of new CodingToolkit({
      workspaceRoot: box.ws,
      effectsDir: box.effectsDir,
      ...options,
    }).bind()
  ) {
    manager.register(tool);
  }
  const call = await manager.invoke({
    function: "bash",
    arguments: { command: `node -e "console.log(JSON.stringify(process.env))"` },
  });
  const result = call.response as { success: boolean; stdout: string; stderr: string };
  assert.equal(result.success, true, result.stderr);
  return JSON.parse(result.stdout) as Record<string, string>;
}

describe("CodingToolkit bash environment", () => {
  it("bash commands do not see the host's secrets by default, only the safe variables", async () => {
    process.env.HOOKSCOPE_TEST_SECRET = "sk-should-not-leak";
    try {
      const env = await envSeenBy({});
      assert.equal(env.HOOKSCOPE_TEST_SECRET, undefined);
      for (const key of Object.keys(env)) {
        assert.ok(
          SAFE_ENV_KEYS.includes(key) || !(key in process.env),
          `unexpected host key ${key}`,
        );
      }
      assert.equal(env.PATH, process.env.PATH);
    } finally {
      delete process.env.HOOKSCOPE_TEST_SECRET;
    }
  });

  it('env: "inherit" passes the whole host environment; an object is used as given', async () => {
    process.env.HOOKSCOPE_TEST_SECRET = "visible-when-inherited";
    try {
      assert.equal(
        (await envSeenBy({ env: "inherit" })).HOOKSCOPE_TEST_SECRET,
        "visible-when-inherited",
      );
      const exact = await envSeenBy({ env: { PATH: process.env.PATH ?? "", ONLY: "this" } });
      assert.equal(exact.ONLY, "this");
      assert.equal(exact.HOOKSCOPE_TEST_SECRET, undefined);
    } finally {
      delete process.env.HOOKSCOPE_TEST_SECRET;
    }
  });

  it("a malformed env option is a TypeError at construction", () => {
    assert.throws(() => new CodingToolkit({ env: "all" as never }), TypeError);
    assert.throws(() => new CodingToolkit({ env: { A: 1 } as never }), TypeError);
    assert.throws(() => new CodingToolkit({ env: null as never }), TypeError);
  });
});
