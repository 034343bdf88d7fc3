import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import {
  ActionManager,
  AgentSpec,
  type ErrorToolHookContext,
  FunctionCalling,
  type PostToolHookContext,
  type PreToolHook,
  Tool,
  type ToolHookContext,
} from "../../action/mod.ts";
import { codingSpec } from "../../action/coding/mod.ts";
import { GateDeniedError, PermissionDeniedError, ToolArgumentsError } from "../../core/mod.ts";

/** Registers `execute` as tool `name` on a manager carrying `spec`. */
function managerWith(
  spec: AgentSpec,
  name = "t",
  execute: Tool["execute"] = (args) => args,
): ActionManager {
  const manager = new ActionManager({ spec });
  manager.register(new Tool({ name, execute }));
  return manager;
}

describe("Tool-scope pre chains (security, user, security again)", () => {
  it("runs security, user hooks in order, then security again on the final args", async () => {
    const order: string[] = [];
    const spec = new AgentSpec()
      .securityPre("t", ({ args }) => {
        order.push(`sec:${args.v}`);
      })
      .pre("t", ({ args }) => {
        order.push(`u1:${args.v}`);
        return { decision: "allow", updatedArgs: { v: Number(args.v) + 1 } };
      })
      .pre("t", ({ args }) => {
        order.push(`u2:${args.v}`);
        return undefined;
      })
      .pre("t", ({ args }) => {
        order.push(`u3:${args.v}`);
        return { decision: "allow", updatedArgs: { v: Number(args.v) * 10 } };
      });
    const call = await managerWith(spec).invoke({ function: "t", arguments: { v: 1 } });
    assert.deepEqual(call.response, { v: 20 });
    assert.deepEqual(order, ["sec:1", "u1:1", "u2:2", "u3:2", "sec:20"]);
  });

  it("runs security only once when there are no user hooks", async () => {
    let runs = 0;
    const spec = new AgentSpec().securityPre("t", () => {
      runs++;
    });
    await managerWith(spec).invoke({ function: "t" });
    assert.equal(runs, 1);
  });

  it("lets a security hook replace the args for later controls", async () => {
    const seen: unknown[] = [];
    const spec = new AgentSpec()
      .securityPre("t", ({ args }) => ({
        decision: "allow",
        updatedArgs: { ...args, redacted: true },
      }))
      .securityPre("t", ({ args }) => {
        seen.push(args.redacted);
      });
    const call = await managerWith(spec).invoke({ function: "t", arguments: { x: 1 } });
    assert.deepEqual(call.response, { x: 1, redacted: true });
    assert.deepEqual(seen, [true]);
  });

  it("turns a PermissionDeniedError into a GateDeniedError naming the control, and rejects", async () => {
    function onlyReads({ action }: ToolHookContext): void {
      if (action !== "read") throw new PermissionDeniedError(`action "${action}" is not allowed`);
    }
    let userRan = false;
    let toolRan = false;
    const spec = new AgentSpec().securityPre("reader", onlyReads).pre("reader", () => {
      userRan = true;
    });
    const manager = managerWith(spec, "reader", () => {
      toolRan = true;
    });
    await assert.rejects(
      manager.invoke({ function: "reader", arguments: { action: "write" } }),
      (error) => {
        assert.ok(error instanceof GateDeniedError);
        assert.equal(error.control, "onlyReads");
        assert.equal(error.reason, 'action "write" is not allowed');
        assert.equal(error.message, 'onlyReads: action "write" is not allowed');
        return true;
      },
    );
    assert.equal(userRan, false);
    assert.equal(toolRan, false);
    const kept = await manager.invoke(
      { function: "reader", arguments: { action: "write" } },
      { suppressErrors: true },
    );
    assert.equal(kept.status, "failed");
    assert.ok(kept.execution.error instanceof GateDeniedError);
  });

  it("denies as evaluator error when a security hook throws anything else", async () => {
    const broken = new AgentSpec().securityPre("t", function broken() {
      throw new TypeError("oops");
    });
    await assert.rejects(managerWith(broken).invoke({ function: "t" }), {
      name: "SecurityDeniedError",
      message: "broken: evaluator error: oops",
    });
    const permissionLike = Object.assign(new Error("no access"), { name: "PermissionError" });
    const anonymous = new AgentSpec().securityPre(
      "t",
      [() => {
        throw permissionLike;
      }][0],
    );
    await assert.rejects(managerWith(anonymous).invoke({ function: "t" }), {
      message: "anonymous: no access",
    });
    const rejecting = new AgentSpec().securityPre("t", async function later() {
      await Promise.resolve();
      throw "a string";
    });
    await assert.rejects(managerWith(rejecting).invoke({ function: "t" }), {
      message: "later: evaluator error: a string",
    });
  });

  it("denies in the second pass when a user hook rewrites into a forbidden value", async () => {
    function noRoot({ args }: ToolHookContext): void {
      if (args.path === "/") throw new PermissionDeniedError("root is off limits");
    }
    const spec = new AgentSpec().securityPre("t", noRoot).pre("t", () => ({
      decision: "allow",
      updatedArgs: { path: "/" },
    }));
    await assert.rejects(managerWith(spec).invoke({ function: "t", arguments: { path: "ok" } }), {
      message: "noRoot: root is off limits",
    });
  });

  it("propagates a user hook's throw unchanged", async () => {
    const error = new SyntaxError("user");
    const spec = new AgentSpec().pre("t", () => {
      throw error;
    });
    await assert.rejects(managerWith(spec).invoke({ function: "t" }), (thrown) => thrown === error);
  });

  it("gives each hook the canonical name, the action and its own copy of the args", async () => {
    const original = { action: "grep", pattern: "x" };
    const spec = new AgentSpec().pre("search", (context) => {
      assert.equal(context.toolName, "search");
      assert.equal(context.action, "grep");
      context.args.pattern = "mutated";
    });
    const call = await managerWith(spec, "search_tool").invoke({
      function: "search_tool",
      arguments: original,
    });
    assert.deepEqual(call.response, { action: "grep", pattern: "x" });
    assert.equal(original.pattern, "x");
  });
});

describe("Tool-scope hook context", () => {
  it("carries one callId and the call's signal through pre, post and error hooks", async () => {
    const seen: Array<[string, string, AbortSignal]> = [];
    const spec = new AgentSpec()
      .securityPre("*", ({ callId, signal }) => {
        seen.push(["sec", callId, signal]);
      })
      .pre("*", ({ callId, signal }) => {
        seen.push(["pre", callId, signal]);
      })
      .post("*", ({ callId, signal }) => {
        seen.push(["post", callId, signal]);
      })
      .onError("*", ({ callId, signal, error }) => {
        seen.push(["error", callId, signal]);
        return { updatedResult: `recovered: ${(error as Error).message}` };
      });
    const manager = new ActionManager({ spec });
    manager.register(new Tool({ name: "ok", execute: () => "fine" }));
    manager.register(
      new Tool({
        name: "bad",
        execute: () => {
          throw new Error("boom");
        },
      }),
    );
    const controller = new AbortController();
    await manager.invoke({ function: "ok" }, { callId: "call-1", signal: controller.signal });
    assert.deepEqual(seen.map(([phase, id]) => `${phase} ${id}`), [
      "sec call-1",
      "pre call-1",
      "sec call-1",
      "post call-1",
    ]);
    assert.ok(seen.every(([, , signal]) => signal === controller.signal));
    seen.length = 0;
    const recovered = await manager.invoke({ function: "bad" });
    assert.equal(recovered.response, "recovered: boom");
    // Without a caller-supplied id, every hook sees the FunctionCalling's own id.
    assert.deepEqual(seen.map(([phase]) => phase), ["sec", "pre", "sec", "error"]);
    assert.ok(seen.every(([, id]) => id === recovered.id));
    assert.equal(recovered.callId, undefined);
  });

  it("gives post hooks the result so far and the final args; error hooks the failure", async () => {
    const posts: PostToolHookContext[] = [];
    const errors: ErrorToolHookContext[] = [];
    const spec = new AgentSpec()
      .pre("t", ({ args }) => ({ decision: "allow", updatedArgs: { ...args, k: 2 } }))
      .post("t", (context) => {
        posts.push(context);
        return undefined;
      })
      .post("t", ({ result }) => ({ updatedResult: `${result}+` }))
      .post("t", ({ result }) => ({ updatedResult: result === null ? "x" : `${result}+` }))
      .onError("t", (context) => {
        errors.push(context);
        return undefined;
      });
    const manager = managerWith(spec, "t", ({ fail }) => {
      if (fail) throw new RangeError("bad");
      return "r";
    });
    const call = await manager.invoke({ function: "t", arguments: { action: "go", k: 1 } });
    assert.equal(call.response, "r++");
    assert.equal(posts.length, 1);
    assert.equal(posts[0].toolName, "t");
    assert.equal(posts[0].action, "go");
    assert.deepEqual(posts[0].args, { action: "go", k: 2 });
    assert.equal(posts[0].result, "r");
    await assert.rejects(manager.invoke({ function: "t", arguments: { fail: true } }), RangeError);
    assert.equal(errors.length, 1);
    assert.ok(errors[0].error instanceof RangeError);
    assert.deepEqual(errors[0].args, { fail: true, k: 2 });
  });

  it("stops at the first error hook that recovers", async () => {
    const order: string[] = [];
    const spec = new AgentSpec()
      .onError("t", () => {
        order.push("a");
      })
      .onError("t", () => {
        order.push("b");
        return { updatedResult: 0 };
      })
      .onError("t", () => {
        order.push("c");
        return { updatedResult: 1 };
      });
    const manager = managerWith(spec, "t", () => {
      throw new Error("x");
    });
    const call = await manager.invoke({ function: "t" });
    assert.equal(call.response, 0);
    assert.deepEqual(order, ["a", "b"]);
  });

  it("lets a hook that waits on the signal end when the call is aborted", async () => {
    // The call itself stops waiting at the abort either way; the hook must see it too.
    let seen: unknown;
    const spec = new AgentSpec().pre("t", ({ signal }) =>
      new Promise<void>((_resolve, reject) => {
        signal.addEventListener("abort", () => reject(seen = signal.reason), { once: true });
      }));
    const controller = new AbortController();
    const pending = managerWith(spec).invoke({ function: "t" }, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error("stop")), 10);
    await assert.rejects(pending, { message: "stop" });
    assert.equal((seen as Error)?.message, "stop");
  });
});

describe("attaching a spec", () => {
  it("looks hooks up as '*', exact name, then '<name>_tool'", async () => {
    const order: string[] = [];
    const spec = new AgentSpec();
    for (const key of ["reader_tool", "reader", "*", "other"]) {
      spec.pre(key, ({ toolName }) => {
        order.push(`pre ${key} ${toolName}`);
      });
      spec.post(key, () => {
        order.push(`post ${key}`);
      });
    }
    for (const name of ["reader", "reader_tool"]) {
      order.length = 0;
      const call = await managerWith(spec, name, () => "ok").invoke({ function: name });
      assert.equal(call.status, "completed");
      assert.deepEqual(order, [
        "pre * reader",
        "pre reader reader",
        "pre reader_tool reader",
        "post *",
        "post reader",
        "post reader_tool",
      ], name);
    }
  });

  it("re-validates args replaced by a pre hook and skips the tool", async () => {
    let ran = false;
    const spec = new AgentSpec().pre(
      "n",
      () => ({ decision: "allow", updatedArgs: { n: "seven" } }),
    );
    const manager = new ActionManager({ spec });
    manager.register(
      new Tool({
        name: "n",
        inputSchema: z.object({ n: z.number() }),
        execute: () => {
          ran = true;
        },
      }),
    );
    const call = await manager.invoke({ function: "n", arguments: { n: 7 } }, {
      suppressErrors: true,
    });
    assert.equal(call.status, "failed");
    assert.ok(call.execution.error instanceof ToolArgumentsError);
    assert.equal(ran, false);
  });

  it("keeps the tool's own processors around the spec chains", async () => {
    const order: string[] = [];
    const spec = new AgentSpec()
      .pre("t", () => {
        order.push("spec pre");
      })
      .post("t", ({ result }) => {
        order.push("spec post");
        return { updatedResult: `${result}|spec` };
      })
      .onError("t", ({ error }) => {
        order.push(`spec error ${(error as Error).message}`);
        return undefined;
      });
    const base = new Tool({
      name: "t",
      preprocessor: () => {
        order.push("own pre");
      },
      execute: ({ fail }) => {
        order.push("func");
        if (fail) throw new Error("failed");
        return "r";
      },
      postprocessor: ({ result }) => {
        order.push("own post");
        return { updatedResult: `${result}|own` };
      },
      errorProcessor: ({ error }) => {
        order.push("own error");
        throw new Error(`wrapped ${(error as Error).message}`);
      },
    });
    const manager = new ActionManager({ spec });
    manager.register(base);
    const ok = await manager.invoke({ function: "t" });
    assert.equal(ok.response, "r|own|spec");
    assert.deepEqual(order, ["spec pre", "own pre", "func", "own post", "spec post"]);
    order.length = 0;
    await assert.rejects(manager.invoke({ function: "t", arguments: { fail: true } }), {
      message: "wrapped failed",
    });
    assert.deepEqual(order, [
      "spec pre",
      "own pre",
      "func",
      "own error",
      "spec error wrapped failed",
    ]);
  });

  it("a FunctionCalling of a registered tool runs the chains on its own invoke()", async () => {
    const spec = new AgentSpec().post("t", ({ result }) => ({ updatedResult: `${result}!` }));
    const manager = managerWith(spec, "t", () => "hi");
    const call = new FunctionCalling({ tool: manager.get("t")!, arguments: {} });
    await call.invoke();
    assert.equal(call.response, "hi!");
  });

  it("AgentSpec rejects a bad tool name or handler", () => {
    const spec = new AgentSpec();
    assert.throws(() => spec.pre("", () => {}), TypeError);
    assert.throws(() => spec.post("x", "nope" as never), {
      message: 'Cannot add post hook for "x": handler must be a function',
    });
    assert.deepEqual(spec.registered(), []);
  });

  it("codingSpec() installs guards only in securityPre buckets, or none when not secure", () => {
    const spec = codingSpec({ cwd: "/ws" });
    assert.equal(spec.role, "implementer");
    assert.deepEqual(spec.tools, ["coding"]);
    assert.equal(
      spec.registered("securityPre", "reader")[0].handler,
      spec.registered("securityPre", "editor")[0].handler,
    );
    assert.equal(spec.registered("securityPre", "bash")[0].handler.name, "guardDestructive");
    assert.equal(spec.registered("securityPre", "reader")[0].handler.name, "guardPaths");
    assert.deepEqual(codingSpec({ secure: false }).registered(), []);
  });
});

// A PreToolHook written against the context type compiles and can be shared between specs.
const shared: PreToolHook = ({ args }) => ({ decision: "allow", updatedArgs: { ...args } });
void shared;
