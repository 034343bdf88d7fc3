import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { FunctionCalling, Tool } from "../../action/mod.ts";
import { ToolArgumentsError } from "../../core/mod.ts";

const schema = z.object({ n: z.number() });

describe("FunctionCalling", () => {
  it("FunctionCalling.invoke() runs preprocessor, function, postprocessor in order", async () => {
    const order: string[] = [];
    // Options a processor needs are closed over (the processors take one context object).
    const step = 10;
    const tag = "#";
    const tool = new Tool({
      name: "inc",
      inputSchema: schema,
      preprocessor: ({ args }) => {
        order.push(`pre:${args.n}:${step}`);
        return { decision: "allow", updatedArgs: { n: Number(args.n) + step } };
      },
      execute: ({ n }) => {
        order.push(`execute:${n}`);
        return n + 1;
      },
      postprocessor: ({ result, args }) => {
        order.push(`post:${result}:${tag}:${args.n}`);
        return { updatedResult: `${tag}${result}` };
      },
    });
    const call = new FunctionCalling({ tool, arguments: { n: 1 } });
    await call.invoke();
    assert.deepEqual(order, ["pre:1:10", "execute:11", "post:12:#:11"]);
    assert.equal(call.status, "completed");
    assert.equal(call.response, "#12");
    assert.deepEqual(call.arguments, { n: 11 });
  });

  it("new FunctionCalling() throws ToolArgumentsError with the zod issues", () => {
    const tool = new Tool({ name: "t", inputSchema: schema, execute: () => 1 });
    try {
      new FunctionCalling({ tool, arguments: { n: "x" } });
      assert.fail("expected a throw");
    } catch (error) {
      assert.ok(error instanceof ToolArgumentsError);
      assert.equal(error.toolName, "t");
      assert.deepEqual(error.issues[0].path, ["n"]);
      assert.equal(error.issues[0].code, "invalid_type");
    }
    assert.throws(() => new FunctionCalling({ tool, arguments: null as never }), {
      name: "ToolArgumentsError",
    });
  });

  it("FunctionCalling.invoke() re-validates after the preprocessor and skips the function (X14)", async () => {
    let ran = false;
    const tool = new Tool({
      name: "t",
      inputSchema: schema,
      preprocessor: () => ({ decision: "allow", updatedArgs: { n: "not a number" } }),
      execute: () => {
        ran = true;
        return 1;
      },
    });
    const call = new FunctionCalling({ tool, arguments: { n: 1 } });
    await call.invoke();
    assert.equal(ran, false);
    assert.equal(call.status, "failed");
    assert.ok(call.execution.error instanceof ToolArgumentsError);
    assert.match((call.execution.error as Error).message, /after preprocessing/);
  });

  it("FunctionCalling.invoke() captures a throwing function as FAILED without rejecting", async () => {
    const boom = new Error("boom");
    const tool = new Tool({ name: "t", execute: () => Promise.reject(boom) });
    const call = new FunctionCalling({ tool, arguments: {} });
    await call.invoke();
    assert.equal(call.status, "failed");
    assert.equal(call.execution.error, boom);
    assert.equal(call.response, null);
    assert.equal(typeof call.execution.durationMs, "number");
  });

  it("FunctionCalling.invoke() lets the error processor recover any failure (X12)", async () => {
    const stages = ["pre", "func", "post"] as const;
    for (const stage of stages) {
      const seen: unknown[] = [];
      const fail = (where: string) => {
        if (where === stage) throw new Error(`${stage} failed`);
      };
      const tool = new Tool({
        name: "t",
        preprocessor: () => {
          fail("pre");
        },
        execute: () => {
          fail("func");
          return "value";
        },
        postprocessor: ({ result }) => {
          fail("post");
          return { updatedResult: result };
        },
        errorProcessor: ({ error, args }) => {
          seen.push((error as Error).message, args);
          return { updatedResult: `recovered from ${(error as Error).message}` };
        },
      });
      const call = new FunctionCalling({ tool, arguments: { k: 1 } });
      await call.invoke();
      assert.equal(call.status, "completed", stage);
      assert.equal(call.response, `recovered from ${stage} failed`);
      assert.deepEqual(seen, [`${stage} failed`, { k: 1 }]);
    }
  });

  it("FunctionCalling.invoke() keeps the error when the error processor returns undefined", async () => {
    const tool = new Tool({
      name: "t",
      execute: () => {
        throw new RangeError("bad");
      },
      errorProcessor: () => undefined,
    });
    const call = new FunctionCalling({ tool, arguments: {} });
    await call.invoke();
    assert.equal(call.status, "failed");
    assert.ok(call.execution.error instanceof RangeError);
  });

  it("FunctionCalling.invoke() ends CANCELLED and rejects when the caller aborts", async () => {
    const controller = new AbortController();
    let errorProcessorRan = false;
    const tool = new Tool({
      name: "slow",
      execute: (_args, { signal }) =>
        new Promise((_resolve, reject) => {
          signal.addEventListener("abort", () => reject(signal.reason), { once: true });
        }),
      errorProcessor: () => {
        errorProcessorRan = true;
        return { updatedResult: "no" };
      },
    });
    const call = new FunctionCalling({ tool, arguments: {} });
    const running = call.invoke({ signal: controller.signal });
    controller.abort(new DOMException("stop", "AbortError"));
    await assert.rejects(running, { name: "AbortError" });
    assert.equal(call.status, "cancelled");
    assert.equal(errorProcessorRan, false);
  });

  it("FunctionCalling passes the signal and callId to the function", async () => {
    let seen: { signal: unknown; callId: unknown } | null = null;
    const tool = new Tool({
      name: "ctx",
      execute: (_args, context) => {
        seen = { signal: context.signal, callId: context.callId };
        return null;
      },
    });
    const call = new FunctionCalling({ tool, arguments: {}, callId: "c-1" });
    await call.invoke();
    assert.ok(seen!.signal instanceof AbortSignal);
    assert.equal(seen!.callId, "c-1");
    const json = call.toJSON();
    assert.equal(json.callId, "c-1");
    assert.equal(json.function, "ctx");
    assert.equal(json.kind, "FunctionCalling");
    assert.equal((json.execution as { status: string }).status, "completed");
    assert.equal("tool" in json, false);
    assert.doesNotThrow(() => JSON.stringify(json));
  });

  it("FunctionCalling.invoke() runs only once", async () => {
    let runs = 0;
    const tool = new Tool({ name: "once", execute: () => ++runs });
    const call = new FunctionCalling({ tool, arguments: {} });
    await call.invoke();
    await call.invoke();
    assert.equal(runs, 1);
  });
});
