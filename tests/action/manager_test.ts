import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { ActionManager, AgentSpec, FunctionCalling, Tool } from "../../action/mod.ts";
import { guardDestructive } from "../../action/coding/mod.ts";
import { GateDeniedError, ToolArgumentsError, ToolNotFoundError } from "../../core/mod.ts";

function echoTool(name = "echo", record?: string[]): Tool {
  return new Tool({
    name,
    inputSchema: z.object({ text: z.string() }),
    execute: ({ text }) => {
      record?.push(`execute:${text}`);
      return text;
    },
  });
}

describe("ActionManager", () => {
  it("ActionManager.register() refuses a duplicate name unless update is set", () => {
    const manager = new ActionManager();
    manager.register(echoTool());
    assert.throws(() => manager.register(echoTool()), {
      message:
        'Cannot register tool: "echo" is already registered (pass update: true to replace it)',
    });
    const replacement = echoTool();
    manager.register(replacement, { update: true });
    assert.equal(manager.get("echo"), replacement);
    assert.equal(manager.tools.length, 1);
    assert.equal(manager.has("echo"), true);
    assert.throws(() => manager.register({} as Tool), TypeError);
  });

  it("ActionManager.schemas() lists each tool's function schema", () => {
    const manager = new ActionManager();
    manager.register(echoTool("a"));
    manager.register(echoTool("b"));
    assert.deepEqual(
      manager.schemas().map((s) => (s.function as { name: string }).name),
      ["a", "b"],
    );
  });

  it("ActionManager.invoke() rejects with ToolNotFoundError for an unknown tool", async () => {
    const manager = new ActionManager();
    manager.register(echoTool());
    await assert.rejects(manager.invoke({ function: "missing", arguments: {} }), (error) => {
      assert.ok(error instanceof ToolNotFoundError);
      assert.equal(error.toolName, "missing");
      assert.match(error.message, /^Function "missing" is not registered; registered: "echo"$/);
      return true;
    });
  });

  it("ActionManager.invoke() rejects with ToolArgumentsError and does not run the tool", async () => {
    const record: string[] = [];
    const manager = new ActionManager();
    manager.register(echoTool("echo", record));
    await assert.rejects(
      manager.invoke({ function: "echo", arguments: { text: 5 } }),
      ToolArgumentsError,
    );
    assert.deepEqual(record, []);
  });

  it("ActionManager.invoke() rejects a malformed request with TypeError", async () => {
    const manager = new ActionManager();
    await assert.rejects(manager.invoke(null as never), TypeError);
    await assert.rejects(manager.invoke({ function: 3 } as never), TypeError);
  });

  it("ActionManager.invoke() rejects with the tool's error; suppressErrors resolves the FAILED call", async () => {
    const manager = new ActionManager();
    manager.register(
      new Tool({
        name: "bad",
        execute: () => {
          throw new Error("broken");
        },
      }),
    );
    await assert.rejects(manager.invoke({ function: "bad", arguments: {} }), { message: "broken" });
    const call = await manager.invoke({ function: "bad", arguments: {} }, { suppressErrors: true });
    assert.ok(call instanceof FunctionCalling);
    assert.equal(call.status, "failed");
    assert.equal((call.execution.error as Error).message, "broken");
  });

  it("ActionManager with a spec runs the tool scope alone: security, pre, function, post", async () => {
    const order: string[] = [];
    const spec = new AgentSpec()
      .securityPre("echo", function audit({ args }) {
        order.push(`security:${args.text}`);
      })
      .pre("echo", ({ toolName: tool, args }) => {
        order.push(`pre:${tool}`);
        return {
          decision: "allow",
          updatedArgs: { ...args, text: String(args.text).toUpperCase() },
        };
      })
      .post("echo", ({ args, result }) => {
        order.push(`post:${args.text}`);
        return { updatedResult: { wrapped: result } };
      });
    const manager = new ActionManager({ spec });
    manager.register(echoTool("echo", order));
    const call = await manager.invoke({ function: "echo", arguments: { text: "hi" } });
    assert.equal(call.status, "completed");
    assert.deepEqual(call.response, { wrapped: "HI" });
    assert.deepEqual(order, ["security:hi", "pre:echo", "security:HI", "execute:HI", "post:HI"]);
  });

  it("ActionManager with a spec rejects a guard denial with GateDeniedError (FAILED when suppressed)", async () => {
    const record: string[] = [];
    const spec = new AgentSpec().securityPre("*", guardDestructive);
    const manager = new ActionManager({ spec });
    manager.register(
      new Tool({
        name: "bash",
        execute: ({ command }) => {
          record.push(String(command));
          return "ran";
        },
      }),
    );
    await assert.rejects(
      manager.invoke({ function: "bash", arguments: { command: "git push --force" } }),
      GateDeniedError,
    );
    const call = await manager.invoke({
      function: "bash",
      arguments: { command: "git push --force" },
    }, { suppressErrors: true });
    assert.equal(call.status, "failed");
    const error = call.execution.error as GateDeniedError;
    assert.ok(error instanceof GateDeniedError);
    assert.equal(error.control, "guardDestructive");
    assert.match(error.reason, /^Blocked destructive command: git push --force\n/);
    assert.deepEqual(record, []);
  });

  it("ActionManager attaches the spec to tools registered later and to hooks added later (X16)", async () => {
    const spec = new AgentSpec();
    const manager = new ActionManager({ spec });
    manager.register(echoTool("first"));
    spec.post("*", ({ result }) => ({ updatedResult: `${result}!` }));
    manager.register(echoTool("second"));
    const a = await manager.invoke({ function: "first", arguments: { text: "a" } });
    const b = await manager.invoke({ function: "second", arguments: { text: "b" } });
    assert.equal(a.response, "a!");
    assert.equal(b.response, "b!");
  });

  it("ActionManager.register() with update keeps exactly one chain", async () => {
    let runs = 0;
    const spec = new AgentSpec().pre("echo", () => {
      runs++;
    });
    const manager = new ActionManager({ spec });
    manager.register(echoTool());
    manager.register(manager.get("echo")!, { update: true });
    const other = new ActionManager({ spec });
    other.register(manager.get("echo")!);
    await manager.invoke({ function: "echo", arguments: { text: "x" } });
    assert.equal(runs, 1);
    await other.invoke({ function: "echo", arguments: { text: "x" } });
    assert.equal(runs, 2);
  });

  it("ActionManager with a spec runs error hooks and recovers (X12)", async () => {
    const spec = new AgentSpec().onError("flaky", ({ toolName: tool, action, args, error }) => ({
      updatedResult: { tool, action, args, recovered: (error as Error).message },
    }));
    const manager = new ActionManager({ spec });
    manager.register(
      new Tool({
        name: "flaky",
        execute: () => {
          throw new Error("nope");
        },
      }),
    );
    const call = await manager.invoke({ function: "flaky", arguments: { action: "go" } });
    assert.equal(call.status, "completed");
    assert.deepEqual(call.response, {
      tool: "flaky",
      action: "go",
      args: { action: "go" },
      recovered: "nope",
    });
  });

  it("ActionManager passes callId to the tool and rejects on abort", async () => {
    const manager = new ActionManager();
    let seen: string | undefined;
    manager.register(
      new Tool({
        name: "wait",
        execute: (_args, { signal, callId }) => {
          seen = callId;
          return new Promise((_r, reject) =>
            signal.addEventListener("abort", () => reject(signal.reason))
          );
        },
      }),
    );
    const controller = new AbortController();
    const pending = manager.invoke({ function: "wait" }, {
      signal: controller.signal,
      callId: "id-9",
    });
    setTimeout(() => controller.abort(new DOMException("stop", "AbortError")), 10);
    await assert.rejects(pending, { name: "AbortError" });
    assert.equal(seen, "id-9");
  });
});

describe("ActionManager layering", () => {
  it("ActionManager with a spec wraps a tool that carries another spec once, outer chain first", async () => {
    const order: string[] = [];
    const inner = new AgentSpec()
      .pre("t", () => {
        order.push("inner pre");
      })
      .post("t", () => {
        order.push("inner post");
      });
    const outer = new AgentSpec()
      .pre("t", () => {
        order.push("outer pre");
      })
      .post("t", () => {
        order.push("outer post");
      });
    const innerManager = new ActionManager({ spec: inner });
    innerManager.register(new Tool({ name: "t", execute: () => order.push("func") }));
    const tool = innerManager.get("t")!;
    const plain = new ActionManager();
    plain.register(tool);
    assert.equal(plain.get("t"), tool);
    const manager = new ActionManager({ spec: outer });
    manager.register(tool);
    manager.register(manager.get("t")!, { update: true });
    await manager.invoke({ function: "t" });
    assert.deepEqual(order, ["outer pre", "inner pre", "func", "inner post", "outer post"]);
    assert.equal(manager.get("t")!.execute, tool.execute);
  });
});
