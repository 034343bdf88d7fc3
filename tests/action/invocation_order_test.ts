// The Tool-scope part of ADR-0047 D5's action order, recorded stage by stage:
// security pre hooks → user pre hooks → security again → the tool's own preprocessor →
// re-validation (X14) → function → the tool's own postprocessor → post hooks (X13),
// with error hooks (X12) on any failure (a denial is a decision, not a failure). The gate and
// tool.pre/tool.post belong to Branch.act.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { ActionManager, AgentSpec, type FunctionCalling, Tool } from "../../action/mod.ts";
import {
  GateDeniedError,
  PermissionDeniedError,
  ToolArgumentsError,
  ToolNotFoundError,
} from "../../core/mod.ts";

interface Plan {
  deny?: boolean;
  failPre?: boolean;
  badArgs?: boolean;
  failFunction?: boolean;
  failPost?: boolean;
  recover?: boolean;
}

function setup(plan: Plan): { manager: ActionManager; order: string[] } {
  const order: string[] = [];
  const spec = new AgentSpec()
    .securityPre("work", function policy({ args }) {
      order.push("security");
      if (plan.deny && args.n === 1) throw new PermissionDeniedError("n=1 is not allowed");
    })
    .pre("work", ({ args }) => {
      order.push("pre hook");
      if (plan.failPre) throw new Error("pre hook failed");
      if (plan.badArgs) return { decision: "allow", updatedArgs: { n: "one" } };
      return { decision: "allow", updatedArgs: { ...args, n: Number(args.n) + 1 } };
    })
    .post("work", ({ action, args, result }) => {
      order.push(`post hook ${action} n=${args.n}`);
      return { updatedResult: { result } };
    })
    .onError("work", ({ error }) => {
      order.push(`error hook ${(error as Error).name}`);
      return plan.recover ? { updatedResult: "recovered" } : undefined;
    });
  const manager = new ActionManager({ spec });
  manager.register(
    new Tool({
      name: "work",
      inputSchema: z.object({ n: z.number(), action: z.string().optional() }),
      preprocessor: () => {
        order.push("preprocessor");
      },
      execute: ({ n }) => {
        order.push("function");
        if (plan.failFunction) throw new RangeError("function failed");
        return n * 10;
      },
      postprocessor: () => {
        order.push("postprocessor");
        if (plan.failPost) throw new TypeError("postprocessor failed");
      },
    }),
  );
  return { manager, order };
}

// The statuses are what this file checks: failures resolve with the FAILED call.
const invoke = (manager: ActionManager, n: unknown = 1): Promise<FunctionCalling> =>
  manager.invoke({ function: "work", arguments: { n, action: "go" } }, { suppressErrors: true });

describe("Tool-scope invocation order (D5)", () => {
  it("records every stage in order on success", async () => {
    const { manager, order } = setup({});
    const call = await invoke(manager);
    assert.equal(call.status, "completed");
    assert.deepEqual(call.response, { result: 20 });
    assert.deepEqual(order, [
      "security",
      "pre hook",
      "security",
      "preprocessor",
      "function",
      "postprocessor",
      "post hook go n=2",
    ]);
  });

  it("a security denial stops before the user hooks; it is a decision, not a failure: no error hook sees it", async () => {
    const { manager, order } = setup({ deny: true, recover: true });
    const call = await invoke(manager);
    assert.equal(call.status, "failed");
    assert.ok(call.execution.error instanceof GateDeniedError);
    assert.equal((call.execution.error as GateDeniedError).message, "policy: n=1 is not allowed");
    assert.deepEqual(order, ["security"]);
  });

  it("an unknown tool rejects before any stage", async () => {
    const { manager, order } = setup({});
    await assert.rejects(manager.invoke({ function: "nope", arguments: {} }), ToolNotFoundError);
    assert.deepEqual(order, []);
  });

  it("invalid arguments reject at construction before any stage", async () => {
    const { manager, order } = setup({});
    await assert.rejects(invoke(manager, "x"), ToolArgumentsError);
    assert.deepEqual(order, []);
  });

  it("a failing pre hook skips the function and reaches the error hooks", async () => {
    const { manager, order } = setup({ failPre: true });
    const call = await invoke(manager);
    assert.equal(call.status, "failed");
    assert.equal((call.execution.error as Error).message, "pre hook failed");
    assert.deepEqual(order, ["security", "pre hook", "error hook Error"]);
  });

  it("arguments made invalid by a pre hook fail re-validation; the function does not run (X14)", async () => {
    const { manager, order } = setup({ badArgs: true });
    const call = await invoke(manager);
    assert.equal(call.status, "failed");
    assert.ok(call.execution.error instanceof ToolArgumentsError);
    assert.deepEqual(order, [
      "security",
      "pre hook",
      "security",
      "preprocessor",
      "error hook ToolArgumentsError",
    ]);
  });

  it("a failing function recovered by an error hook completes with the recovery (X12)", async () => {
    const { manager, order } = setup({ failFunction: true, recover: true });
    const call = await invoke(manager);
    assert.equal(call.status, "completed");
    assert.equal(call.response, "recovered");
    assert.deepEqual(order, [
      "security",
      "pre hook",
      "security",
      "preprocessor",
      "function",
      "error hook RangeError",
    ]);
  });

  it("a failing function not recovered ends FAILED with its error", async () => {
    const { manager, order } = setup({ failFunction: true });
    const call = await invoke(manager);
    assert.equal(call.status, "failed");
    assert.ok(call.execution.error instanceof RangeError);
    assert.equal(order.at(-1), "error hook RangeError");
  });

  it("a failing postprocessor skips the post hooks and reaches the error hooks", async () => {
    const { manager, order } = setup({ failPost: true });
    const call = await invoke(manager);
    assert.equal(call.status, "failed");
    assert.ok(call.execution.error instanceof TypeError);
    assert.deepEqual(order.slice(-3), ["function", "postprocessor", "error hook TypeError"]);
  });
});
