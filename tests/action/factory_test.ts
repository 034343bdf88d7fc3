import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import {
  AgentSpec,
  attachToolHooks,
  chainErrorHooks,
  chainPostHooks,
  chainPreHooks,
  FunctionCalling,
  type PreToolHook,
  Tool,
} from "../../action/mod.ts";
import { codingSpec } from "../../action/coding/mod.ts";
import { GateDeniedError, PermissionDeniedError, ToolArgumentsError } from "../../core/mod.ts";

describe("chainPreHooks", () => {
  it("chainPreHooks() returns null without hooks", () => {
    assert.equal(chainPreHooks("t", [], []), null);
    assert.equal(chainPostHooks("t", []), null);
    assert.equal(chainErrorHooks("t", []), null);
  });

  it("chainPreHooks() runs security, user hooks in order, then security again on the final args", async () => {
    const order: string[] = [];
    const security: PreToolHook = (_t, _a, args) => {
      order.push(`sec:${args.v}`);
    };
    const chain = chainPreHooks("t", [security], [
      (_t, _a, args) => {
        order.push(`u1:${args.v}`);
        return { v: Number(args.v) + 1 };
      },
      (_t, _a, args) => {
        order.push(`u2:${args.v}`);
        return "ignored" as never;
      },
      (_t, _a, args) => {
        order.push(`u3:${args.v}`);
        return { v: Number(args.v) * 10 };
      },
    ])!;
    assert.deepEqual(await chain({ v: 1 }), { v: 20 });
    assert.deepEqual(order, ["sec:1", "u1:1", "u2:2", "u3:2", "sec:20"]);
  });

  it("chainPreHooks() runs security only once when there are no user hooks", async () => {
    let runs = 0;
    const chain = chainPreHooks("t", [() => {
      runs++;
    }], [])!;
    await chain({});
    assert.equal(runs, 1);
  });

  it("chainPreHooks() lets a security hook replace the args for later controls", async () => {
    const seen: unknown[] = [];
    const chain = chainPreHooks("t", [
      (_t, _a, args) => ({ ...args, redacted: true }),
      (_t, _a, args) => {
        seen.push(args.redacted);
      },
    ], [])!;
    assert.deepEqual(await chain({ x: 1 }), { x: 1, redacted: true });
    assert.deepEqual(seen, [true]);
  });

  it("chainPreHooks() turns a PermissionDeniedError into a GateDeniedError naming the control", async () => {
    function onlyReads(_t: string, action: string): void {
      if (action !== "read") throw new PermissionDeniedError(`action "${action}" is not allowed`);
    }
    let userRan = false;
    const chain = chainPreHooks("reader", [onlyReads], [() => {
      userRan = true;
    }])!;
    await assert.rejects(chain({ action: "write" }), (error) => {
      assert.ok(error instanceof GateDeniedError);
      assert.equal(error.control, "onlyReads");
      assert.equal(error.reason, 'action "write" is not allowed');
      assert.equal(error.message, 'onlyReads: action "write" is not allowed');
      return true;
    });
    assert.equal(userRan, false);
  });

  it("chainPreHooks() denies as evaluator error when a security hook throws anything else", async () => {
    const named = chainPreHooks("t", [function broken() {
      throw new TypeError("oops");
    }], [])!;
    await assert.rejects(named({}), {
      name: "GateDeniedError",
      message: "broken: evaluator error: oops",
    });
    const permissionLike = Object.assign(new Error("no access"), { name: "PermissionError" });
    const anonymous = chainPreHooks("t", [
      [() => {
        throw permissionLike;
      }][0],
    ], [])!;
    await assert.rejects(anonymous({}), { message: "anonymous: no access" });
    const rejecting = chainPreHooks("t", [async function later() {
      await Promise.resolve();
      throw "a string";
    }], [])!;
    await assert.rejects(rejecting({}), { message: "later: evaluator error: a string" });
  });

  it("chainPreHooks() denies in the second pass when a user hook rewrites into a forbidden value", async () => {
    function noRoot(_t: string, _a: string, args: Record<string, unknown>): void {
      if (args.path === "/") throw new PermissionDeniedError("root is off limits");
    }
    const chain = chainPreHooks("t", [noRoot], [() => ({ path: "/" })])!;
    await assert.rejects(chain({ path: "ok" }), { message: "noRoot: root is off limits" });
  });

  it("chainPreHooks() propagates a user hook's throw unchanged", async () => {
    const error = new SyntaxError("user");
    const chain = chainPreHooks("t", [], [() => {
      throw error;
    }])!;
    await assert.rejects(chain({}), (thrown) => thrown === error);
  });

  it("chainPreHooks() passes the action and a copy of the args", async () => {
    const original = { action: "grep", pattern: "x" };
    const chain = chainPreHooks("search", [], [(tool, action, args) => {
      assert.equal(tool, "search");
      assert.equal(action, "grep");
      args.pattern = "mutated";
    }])!;
    assert.deepEqual(await chain(original), { action: "grep", pattern: "x" });
    assert.equal(original.pattern, "x");
  });
});

describe("chainPostHooks and chainErrorHooks", () => {
  it("chainPostHooks() runs for non-object results with the real action and final args (X13)", async () => {
    const seen: unknown[] = [];
    const chain = chainPostHooks("t", [
      (tool, action, args, result) => {
        seen.push([tool, action, args, result]);
        return undefined;
      },
      (_t, _a, _args, result) => `${result}+`,
      (_t, _a, _args, result) => null === result ? "x" : `${result}+`,
    ])!;
    assert.equal(await chain("r", { action: "go", k: 1 }), "r++");
    assert.deepEqual(seen, [["t", "go", { action: "go", k: 1 }, "r"]]);
    assert.equal(await chainPostHooks("t", [() => null])!(5), null);
  });

  it("chainErrorHooks() stops at the first recovery", async () => {
    const order: string[] = [];
    const chain = chainErrorHooks("t", [
      () => {
        order.push("a");
      },
      () => {
        order.push("b");
        return 0;
      },
      () => {
        order.push("c");
        return 1;
      },
    ])!;
    assert.equal(await chain(new Error("x"), {}), 0);
    assert.deepEqual(order, ["a", "b"]);
  });
});

describe("attachToolHooks", () => {
  it("attachToolHooks() looks hooks up as '*', exact name, then '<name>_tool' (X15)", async () => {
    const order: string[] = [];
    const spec = new AgentSpec();
    for (const key of ["reader_tool", "reader", "*", "other"]) {
      spec.pre(key, (tool) => {
        order.push(`pre ${key} ${tool}`);
      });
      spec.post(key, () => {
        order.push(`post ${key}`);
      });
    }
    for (const name of ["reader", "reader_tool"]) {
      order.length = 0;
      const tool = attachToolHooks(new Tool({ name, func: () => "ok" }), spec);
      const call = new FunctionCalling({ tool, arguments: {} });
      await call.invoke();
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

  it("attachToolHooks() re-validates args replaced by a pre hook and skips the tool (X14)", async () => {
    let ran = false;
    const spec = new AgentSpec().pre("n", () => ({ n: "seven" }));
    const tool = attachToolHooks(
      new Tool({
        name: "n",
        requestOptions: z.object({ n: z.number() }),
        func: () => {
          ran = true;
        },
      }),
      spec,
    );
    const call = new FunctionCalling({ tool, arguments: { n: 7 } });
    await call.invoke();
    assert.equal(call.status, "failed");
    assert.ok(call.execution.error instanceof ToolArgumentsError);
    assert.equal(ran, false);
  });

  it("attachToolHooks() keeps the tool's own processors around the spec chains", async () => {
    const order: string[] = [];
    const spec = new AgentSpec()
      .pre("t", () => {
        order.push("spec pre");
      })
      .post("t", (_t, _a, _args, r) => {
        order.push("spec post");
        return `${r}|spec`;
      })
      .onError("t", (_t, _a, _args, error) => {
        order.push(`spec error ${(error as Error).message}`);
        return undefined;
      });
    const base = new Tool({
      name: "t",
      preprocessor: (args) => {
        order.push("own pre");
        return args;
      },
      func: ({ fail }) => {
        order.push("func");
        if (fail) throw new Error("failed");
        return "r";
      },
      postprocessor: (r) => {
        order.push("own post");
        return `${r}|own`;
      },
      errorProcessor: (error) => {
        order.push("own error");
        throw new Error(`wrapped ${(error as Error).message}`);
      },
    });
    const tool = attachToolHooks(base, spec);
    const ok = new FunctionCalling({ tool, arguments: {} });
    await ok.invoke();
    assert.equal(ok.response, "r|own|spec");
    assert.deepEqual(order, ["spec pre", "own pre", "func", "own post", "spec post"]);
    order.length = 0;
    const bad = new FunctionCalling({ tool, arguments: { fail: true } });
    await bad.invoke();
    assert.equal(bad.status, "failed");
    assert.equal((bad.execution.error as Error).message, "wrapped failed");
    assert.deepEqual(order, [
      "spec pre",
      "own pre",
      "func",
      "own error",
      "spec error wrapped failed",
    ]);
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
