import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import {
  AgentSpec,
  Branch,
  GateDenied,
  HookBlocked,
  HookSignal,
  MemoryStore,
  Session,
  Tool,
  ToolArgumentsError,
  type ToolErrorDecision,
  type ToolInvocation,
  ToolNotFoundError,
} from "../../mod.ts";
import { FunctionCalling } from "../../action/mod.ts";
import { ToolDeniedError } from "../../core/errors.ts";
import { ToolDenied } from "../../session/signal.ts";

interface Rig {
  session: Session;
  branch: Branch;
  stages: string[];
  payloads: Record<string, Record<string, unknown>>;
}

interface RigOptions {
  deny?: boolean;
  guardThrows?: boolean;
  preprocessorThrows?: boolean;
  functionThrows?: boolean;
  postprocessorThrows?: boolean;
  errorHook?: (error: unknown) => ToolErrorDecision;
  preprocessorArgs?: (args: Record<string, unknown>) => Record<string, unknown>;
}

function rig(options: RigOptions = {}): Rig {
  const stages: string[] = [];
  const payloads: Record<string, Record<string, unknown>> = {};
  const session = new Session();
  session.gate((payload) => {
    if ((payload as ToolInvocation)?.function === "write") {
      stages.push("gate");
      return !options.deny;
    }
    return true;
  });
  const spec = new AgentSpec({ name: "rig" });
  if (options.errorHook) {
    spec.onError("write", ({ error }) => {
      stages.push("error hook");
      return options.errorHook!(error);
    });
  }
  const branch = session.newBranch({ spec });
  session.hooks.on("tool.pre", (payload) => {
    stages.push("tool.pre");
    payloads["tool.pre"] = payload as Record<string, unknown>;
    if (options.guardThrows) throw new Error("guard says no");
  });
  session.hooks.on("tool.post", (payload) => {
    stages.push("tool.post");
    payloads["tool.post"] = payload as Record<string, unknown>;
  });
  session.hooks.on("tool.error", (payload) => {
    stages.push("tool.error");
    payloads["tool.error"] = payload as Record<string, unknown>;
  });
  branch.actions.register(
    new Tool({
      name: "write",
      inputSchema: z.object({ path: z.string(), text: z.string() }),
      preprocessor: ({ args }) => {
        stages.push("preprocessor");
        if (options.preprocessorThrows) throw new Error("preprocessor broke");
        return options.preprocessorArgs
          ? { decision: "allow", updatedArgs: options.preprocessorArgs(args) }
          : undefined;
      },
      execute: (args: { path: string; text: string }) => {
        stages.push("function");
        if (options.functionThrows) throw new Error("disk full");
        return { written: args.text.length, path: args.path };
      },
      postprocessor: () => {
        stages.push("postprocessor");
        if (options.postprocessorThrows) throw new Error("postprocessor broke");
      },
    }),
  );
  return { session, branch, stages, payloads };
}

const REQUEST = { function: "write", arguments: { path: "a.txt", text: "hello" } };

describe("Branch.act() in the D5 order", () => {
  it("Branch.act() runs gate → tool.pre → preprocessor → function → postprocessor → tool.post", async () => {
    const { branch, session, stages, payloads } = rig();
    const result = await branch.act(REQUEST);
    assert.deepEqual(stages, [
      "gate",
      "tool.pre",
      "preprocessor",
      "function",
      "postprocessor",
      "tool.post",
    ]);
    assert.deepEqual(result, {
      function: "write",
      arguments: REQUEST.arguments,
      output: { written: 5, path: "a.txt" },
    });
    const pre = payloads["tool.pre"];
    const post = payloads["tool.post"];
    assert.match(String(pre.callId), /^[0-9a-f-]{36}$/);
    assert.equal(pre.callId, post.callId);
    assert.equal(pre.toolName, "write");
    assert.equal(pre.argsSummary, '{"path":"a.txt","text":"hello"}');
    assert.equal(pre.branchId, branch.id);
    assert.equal(post.resultSummary, '{"written":5,"path":"a.txt"}');
    assert.equal(typeof post.durationMs, "number");
    const roles = branch.messages.map((m) => m.role);
    assert.deepEqual(roles.slice(-2), ["action_request", "action_response"]);
    const response = branch.messages.at(-1)!.content as Record<string, unknown>;
    assert.equal(response.callId, pre.callId);
    assert.deepEqual(response.output, { written: 5, path: "a.txt" });
    await session.drainSignals();
    await branch.drainSignals();
    assert.equal(session.observer.byType(FunctionCalling).length, 1);
    const points = session.observer.byType(HookSignal).map((s) => s.point);
    assert.ok(points.includes("tool.pre") && points.includes("tool.post"));
  });

  it("Branch.act() summaries are cut to 200 characters", async () => {
    const { branch, payloads } = rig();
    await branch.act({ function: "write", arguments: { path: "big", text: "x".repeat(1000) } });
    assert.equal(String(payloads["tool.pre"].argsSummary).length, 200);
    assert.ok(String(payloads["tool.post"].resultSummary).length <= 200);
  });

  it("gate denial: GateDenied and ToolDenied recorded, rejects with ToolDeniedError, messages added, no hook point fires", async () => {
    const { branch, session, stages } = rig({ deny: true });
    const error = await branch.act(REQUEST, { callId: "g1" }).then(() => null, (e) => e);
    assert.ok(error instanceof ToolDeniedError);
    assert.equal(error.by, "gate");
    assert.equal(error.reason, "denied by governance gate");
    assert.equal(error.callId, "g1");
    assert.deepEqual(stages, ["gate"]);
    assert.deepEqual(branch.messages.slice(-2).map((m) => m.role), [
      "action_request",
      "action_response",
    ]);
    assert.deepEqual((branch.messages.at(-1)!.content as { output: unknown }).output, {
      error: "Denied: denied by governance gate",
      reason: "denied by governance gate",
    });
    await session.drainSignals();
    assert.equal(session.observer.byType(ToolDenied).length, 1);
    const denied = session.observer.byType(GateDenied);
    assert.equal(denied.length, 1);
    assert.equal((denied[0].data as ToolInvocation).function, "write");
    assert.equal(
      session.observer.byType(HookSignal).filter((s) => s.point === "tool.pre").length,
      0,
    );
  });

  it("guard throw: rejects with the guard's error, HookBlocked audit, no tool, no tool.error, the blocked exchange written once (X3)", async () => {
    const { branch, session, stages } = rig({ guardThrows: true });
    const before = branch.messages.length;
    await assert.rejects(branch.act(REQUEST, { suppressErrors: true }), /guard says no/);
    assert.deepEqual(stages, ["gate", "tool.pre"]);
    assert.equal(branch.messages.length, before + 2);
    assert.deepEqual((branch.messages.at(-1)!.content as { output: unknown }).output, {
      error: "Blocked by a tool.pre guard: guard says no",
    });
    const blocked = session.observer.byType(HookBlocked);
    assert.equal(blocked.length, 1);
    assert.equal(blocked[0].toolName, "write");
    assert.equal(blocked[0].point, "tool.pre");
    assert.deepEqual(blocked[0].error, { name: "Error", message: "guard says no" });
    assert.equal(
      session.observer.byType(HookSignal).filter((s) => s.point === "tool.pre").length,
      0,
    );
  });

  it("unknown tool: tool.error with ToolNotFoundError, then rejection (X8)", async () => {
    const { branch, stages, payloads } = rig();
    await assert.rejects(branch.act({ function: "nope", arguments: {} }), ToolNotFoundError);
    assert.deepEqual(stages, ["tool.pre", "tool.error"]);
    assert.ok(payloads["tool.error"].error instanceof ToolNotFoundError);
    assert.equal(payloads["tool.error"].callId, payloads["tool.pre"].callId);
  });

  it("invalid arguments: tool.error with ToolArgumentsError; suppressErrors gives the error output", async () => {
    const { branch, stages, payloads } = rig();
    const result = await branch.act(
      { function: "write", arguments: { path: 1 } },
      { suppressErrors: true },
    );
    assert.deepEqual(stages, ["gate", "tool.pre", "tool.error"]);
    assert.ok(payloads["tool.error"].error instanceof ToolArgumentsError);
    const output = result.output as { error: string; message: string };
    assert.match(output.error, /Invalid arguments for tool "write"/);
    assert.equal(output.message, `Error invoking action 'write': ${output.error}`);
    assert.equal(branch.messages.at(-1)!.role, "action_response");
  });

  it("failing preprocessor: tool.error, the function never runs (X8)", async () => {
    const { branch, stages, payloads } = rig({ preprocessorThrows: true });
    await assert.rejects(branch.act(REQUEST), /preprocessor broke/);
    assert.deepEqual(stages, ["gate", "tool.pre", "preprocessor", "tool.error"]);
    assert.match(String((payloads["tool.error"].error as Error).message), /preprocessor broke/);
    assert.equal(payloads["tool.post"], undefined);
  });

  it("arguments replaced by the preprocessor are validated again (X14)", async () => {
    const { branch, stages, payloads } = rig({ preprocessorArgs: () => ({ path: 42 }) });
    await assert.rejects(branch.act(REQUEST), ToolArgumentsError);
    assert.deepEqual(stages, ["gate", "tool.pre", "preprocessor", "tool.error"]);
    assert.ok(payloads["tool.error"].error instanceof ToolArgumentsError);
  });

  it("failing function without recovery: tool.error and rejection", async () => {
    const { branch, stages } = rig({ functionThrows: true });
    await assert.rejects(branch.act(REQUEST), /disk full/);
    assert.deepEqual(stages, ["gate", "tool.pre", "preprocessor", "function", "tool.error"]);
  });

  it("failing function with an error hook that recovers: tool.post with the recovered result (X12)", async () => {
    const { branch, stages, payloads } = rig({
      functionThrows: true,
      errorHook: (error) => ({ updatedResult: { recovered: String((error as Error).message) } }),
    });
    const result = await branch.act(REQUEST);
    assert.deepEqual(result.output, { recovered: "disk full" });
    assert.deepEqual(stages, [
      "gate",
      "tool.pre",
      "preprocessor",
      "function",
      "error hook",
      "tool.post",
    ]);
    assert.equal(payloads["tool.post"].resultSummary, '{"recovered":"disk full"}');
  });

  it("failing function with an error hook that does not recover: tool.error", async () => {
    const { branch, stages } = rig({ functionThrows: true, errorHook: () => undefined });
    await assert.rejects(branch.act(REQUEST), /disk full/);
    assert.deepEqual(stages, [
      "gate",
      "tool.pre",
      "preprocessor",
      "function",
      "error hook",
      "tool.error",
    ]);
  });

  it("failing postprocessor: tool.error, no tool.post", async () => {
    const { branch, stages } = rig({ postprocessorThrows: true });
    await assert.rejects(branch.act(REQUEST), /postprocessor broke/);
    assert.deepEqual(stages, [
      "gate",
      "tool.pre",
      "preprocessor",
      "function",
      "postprocessor",
      "tool.error",
    ]);
  });

  it("a malformed request is a TypeError before anything runs", async () => {
    const { branch, stages } = rig();
    for (
      const bad of [null, {}, { function: "write" }, { function: "", arguments: {} }, {
        function: "write",
        arguments: [],
      }]
    ) {
      await assert.rejects(branch.act(bad as never), TypeError);
    }
    await assert.rejects(branch.act(REQUEST, { callId: "" }), TypeError);
    assert.deepEqual(stages, []);
  });

  it("an aborted call rejects even with suppressErrors and fires tool.error", async () => {
    const session = new Session();
    const branch = session.newBranch();
    const errors: unknown[] = [];
    session.hooks.on("tool.error", (p) => void errors.push(p.error));
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    branch.actions.register(
      new Tool({
        name: "wait",
        execute: (_args, context) =>
          new Promise((_, reject) => {
            context.signal.addEventListener("abort", () => reject(context.signal.reason));
            started();
          }),
      }),
    );
    const controller = new AbortController();
    const pending = branch.act({ function: "wait", arguments: {} }, {
      suppressErrors: true,
      signal: controller.signal,
    });
    await running; // abort while the tool runs, whatever the machine's speed
    controller.abort(new Error("user stop"));
    await assert.rejects(pending, /user stop/);
    assert.equal(errors.length, 1);
  });
});

describe("Branch.act() without a session, and actAll()", () => {
  it("a standalone branch runs the tool with its hook chains and emits nothing", async () => {
    const spec = new AgentSpec().pre("echo", ({ args }) => ({
      decision: "allow",
      updatedArgs: { ...args, v: `${args.v}!` },
    }));
    const branch = new Branch({ spec });
    branch.actions.register(
      new Tool({ name: "echo", execute: (a: Record<string, unknown>) => a.v }),
    );
    assert.equal(branch.hooks, null);
    const result = await branch.act({ function: "echo", arguments: { v: "hi" } });
    assert.equal(result.output, "hi!");
  });

  it("actAll() rejects an unknown strategy before anything runs", async () => {
    const { branch, stages } = rig();
    await assert.rejects(branch.actAll([REQUEST], { strategy: "parallel" as never }), TypeError);
    assert.deepEqual(stages, []);
  });

  it("actAll() sequential keeps order and suppresses errors by default", async () => {
    const { branch } = rig();
    const results = await branch.actAll([
      REQUEST,
      { function: "missing", arguments: {} },
      { function: "write", arguments: { path: "b", text: "xy" } },
    ], { strategy: "sequential" });
    assert.deepEqual(results.map((r) => r.function), ["write", "missing", "write"]);
    assert.match(String((results[1].output as { error: string }).error), /not registered/);
    assert.deepEqual(results[2].output, { written: 2, path: "b" });
  });

  it("actAll() concurrent runs every request", async () => {
    const { branch, payloads } = rig();
    const results = await branch.actAll(
      Array.from(
        { length: 10 },
        (_, i) => ({ function: "write", arguments: { path: `f${i}`, text: "x" } }),
      ),
    );
    assert.equal(results.length, 10);
    assert.equal(new Set(results.map((r) => (r.output as { path: string }).path)).size, 10);
    assert.ok(payloads["tool.post"]);
  });

  it("a session with a store persists the audit trail of a blocked call", async () => {
    const store = new MemoryStore();
    const session = new Session({ store });
    const branch = session.newBranch();
    session.hooks.on("tool.pre", () => {
      throw new Error("nope");
    });
    branch.actions.register(new Tool({ name: "t", execute: () => 1 }));
    await assert.rejects(branch.act({ function: "t", arguments: {} }));
    await session.drainSignals();
    const kinds = (await store.listSessionSignals(session.id)).map((r) => r.kind);
    assert.ok(kinds.includes("HookBlocked"), kinds.join(","));
  });
});
