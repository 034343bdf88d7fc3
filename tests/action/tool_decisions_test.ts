// Tool-scope hooks (a `Tool`'s processors, an `AgentSpec`'s hooks) return the decision vocabulary
// of the session's `tool.*` hooks: deny, ask, allow with `updatedArgs` and `context`,
// `updatedResult` after the call and on a failure. A return in the shape before 0.3 (arguments or
// a result returned bare) is refused with a `ToolHookReturnError` that says how to migrate.

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import {
  ActionManager,
  AgentSpec,
  ApprovalRequiredError,
  FunctionCalling,
  type PendingApproval,
  SecurityDeniedError,
  Tool,
  ToolDeniedError,
  ToolHookReturnError,
} from "../../action/mod.ts";

function managerWith(spec: AgentSpec, ran: unknown[] = []): ActionManager {
  const manager = new ActionManager({ spec });
  manager.register(
    new Tool({
      name: "t",
      inputSchema: z.object({ v: z.string() }),
      execute: (args) => {
        ran.push(args.v);
        return `ran ${args.v}`;
      },
    }),
  );
  return manager;
}

describe("Tool-scope decisions", () => {
  it("a pre hook's deny rejects with ToolDeniedError naming the hook; a security hook's with SecurityDeniedError", async () => {
    const ran: unknown[] = [];
    const spec = new AgentSpec().pre("t", function noX({ args }) {
      return args.v === "x" ? { decision: "deny", reason: "no x", interrupt: true } : undefined;
    });
    const error = await managerWith(spec, ran).invoke(
      { function: "t", arguments: { v: "x" } },
      { callId: "c1" },
    ).then(() => null, (e: unknown) => e);
    assert.ok(error instanceof ToolDeniedError);
    assert.ok(!(error instanceof SecurityDeniedError));
    assert.deepEqual(
      [error.toolName, error.callId, error.reason, error.hook, error.by, error.interrupt],
      ["t", "c1", "no x", "noX", "hook", true],
    );
    const security = new AgentSpec().securityPre("t", function guard() {
      return { decision: "deny", reason: "never" };
    });
    const denied = await managerWith(security, ran).invoke(
      { function: "t", arguments: { v: "y" } },
      { callId: "c2" },
    ).then(() => null, (e: unknown) => e);
    assert.ok(denied instanceof SecurityDeniedError);
    assert.deepEqual(
      [denied.control, denied.reason, denied.by, denied.toolName, denied.callId],
      ["guard", "never", "security", "t", "c2"],
    );
    assert.deepEqual(ran, []);
  });

  it("a deny later in the chain wins over an ask before it: nobody is asked", async () => {
    const asked: PendingApproval[] = [];
    const spec = new AgentSpec()
      .pre("t", () => ({ decision: "ask", reason: "check" }))
      .pre("t", () => ({ decision: "deny", reason: "no" }));
    await assert.rejects(
      managerWith(spec).invoke({ function: "t", arguments: { v: "a" } }, {
        approve: (pending) => {
          asked.push(pending);
          return true;
        },
      }),
      { name: "ToolDeniedError", message: 'Tool "t" denied by anonymous: no' },
    );
    assert.deepEqual(asked, []);
  });

  it("an ask without an approver rejects with ApprovalRequiredError naming the asking hook; nothing runs", async () => {
    const ran: unknown[] = [];
    const spec = new AgentSpec()
      .pre("t", function needsPerson() {
        return { decision: "ask", reason: "a person decides" };
      })
      .pre("t", function second() {
        return { decision: "ask", reason: "also" };
      });
    const error = await managerWith(spec, ran).invoke(
      { function: "t", arguments: { v: "a" } },
      { callId: "c3" },
    ).then(() => null, (e: unknown) => e);
    assert.ok(error instanceof ApprovalRequiredError);
    const approval = error.approval;
    assert.deepEqual(
      [approval.runId, approval.callId, approval.toolName, approval.reason, approval.policy],
      ["", "c3", "t", "a person decides", "needsPerson"],
    );
    assert.deepEqual(approval.args, { v: "a" });
    assert.match(approval.argsHash, /^[0-9a-f]{64}$/);
    assert.ok(Object.isFrozen(approval.args));
    assert.deepEqual(ran, []);
  });

  it("an ask's terms reach the pending approval: the earliest expiry, the answerers every ask allows", async () => {
    const before = Date.now();
    const spec = new AgentSpec()
      .pre("t", () => ({ decision: "ask", expiresInMs: 60_000, answerableBy: ["ana", "bo"] }))
      .pre("t", () => ({ decision: "ask", expiresInMs: 1_000, answerableBy: ["bo", "cy"] }));
    const error = await managerWith(spec).invoke({ function: "t", arguments: { v: "a" } })
      .then(() => null, (e: unknown) => e);
    assert.ok(error instanceof ApprovalRequiredError);
    assert.deepEqual(error.approval.answerableBy, ["bo"]);
    const expiresAt = error.approval.expiresAt!;
    assert.ok(expiresAt >= before + 1_000 && expiresAt < before + 60_000, String(expiresAt));
    const disjoint = new AgentSpec()
      .pre("t", () => ({ decision: "ask", answerableBy: ["ana"] }))
      .pre("t", function other() {
        return { decision: "ask", answerableBy: ["cy"] };
      });
    await assert.rejects(
      managerWith(disjoint).invoke({ function: "t", arguments: { v: "a" } }),
      { name: "ToolDeniedError", message: /nobody may answer/ },
    );
    await assert.rejects(
      managerWith(new AgentSpec().pre("t", () => ({ decision: "ask", answerableBy: [] }))).invoke(
        { function: "t", arguments: { v: "a" } },
      ),
      { name: "ToolHookReturnError", message: /answerableBy must be a non-empty array/ },
    );
  });

  it("an ask answered by invoke's approve runs once; a rejection denies (by approval)", async () => {
    const ran: unknown[] = [];
    const spec = new AgentSpec().pre("t", () => ({ decision: "ask" }));
    const manager = managerWith(spec, ran);
    const call = await manager.invoke({ function: "t", arguments: { v: "a" } }, {
      approve: () => true,
    });
    assert.equal(call.response, "ran a");
    const rejected = await manager.invoke({ function: "t", arguments: { v: "b" } }, {
      approve: () => ({ approve: false, reason: "not now", by: "ana", interrupt: true }),
    }).then(() => null, (e: unknown) => e);
    assert.ok(rejected instanceof ToolDeniedError);
    assert.deepEqual(
      [rejected.by, rejected.hook, rejected.reason, rejected.interrupt],
      ["approval", "approval by ana", "not now", true],
    );
    assert.deepEqual(ran, ["a"]);
  });

  it("invoke's approve is held to the ask's terms: an expired wait and an answerer not named deny", async () => {
    const ran: unknown[] = [];
    // "late" expires in 50 ms; the others wait a minute for ana (a slow machine changes nothing).
    const spec = new AgentSpec().pre(
      "t",
      ({ args }) => ({
        decision: "ask",
        expiresInMs: args.v === "late" ? 50 : 60_000,
        answerableBy: ["ana"],
      }),
    );
    const manager = managerWith(spec, ran);
    let handlerSignal: AbortSignal | undefined;
    const expired = await manager.invoke({ function: "t", arguments: { v: "late" } }, {
      approve: (_pending, { signal }) => {
        handlerSignal = signal;
        return new Promise(() => {}); // a person who never answers
      },
    }).then(() => null, (e: unknown) => e);
    assert.ok(expired instanceof ToolDeniedError, String(expired));
    assert.deepEqual([expired.reason, expired.hook], ["expired", "approval by hookscope"]);
    assert.equal(handlerSignal?.aborted, true, "the handler is told the approval expired");
    const stranger = await manager.invoke({ function: "t", arguments: { v: "m" } }, {
      approve: () => ({ approve: true, by: "mallory" }),
    }).then(() => null, (e: unknown) => e);
    assert.ok(stranger instanceof ToolDeniedError, String(stranger));
    assert.match(stranger.reason, /not allowed: "mallory" may not answer it; who may: "ana"/);
    const ana = await manager.invoke({ function: "t", arguments: { v: "a" } }, {
      approve: () => ({ approve: true, by: "ana" }),
    });
    assert.equal(ana.response, "ran a");
    assert.deepEqual(ran, ["a"]);
  });

  it("arguments an approver edits are judged by the chain again: validated, denied, or run", async () => {
    const ran: unknown[] = [];
    const seen: unknown[] = [];
    const spec = new AgentSpec().pre("t", ({ args }) => {
      seen.push(args.v);
      if (args.v === "forbidden") return { decision: "deny", reason: "forbidden" };
      return args.v === "ask" ? { decision: "ask" } : undefined;
    });
    const manager = managerWith(spec, ran);
    const edited = await manager.invoke({ function: "t", arguments: { v: "ask" } }, {
      approve: () => ({ approve: true, updatedArgs: { v: "edited" } }),
    });
    assert.equal(edited.response, "ran edited");
    assert.deepEqual(edited.arguments, { v: "edited" });
    assert.deepEqual(seen, ["ask", "edited"]);
    await assert.rejects(
      manager.invoke({ function: "t", arguments: { v: "ask" } }, {
        approve: () => ({ approve: true, updatedArgs: { v: "forbidden" } }),
      }),
      { name: "ToolDeniedError", message: /forbidden/ },
    );
    const invalid = await manager.invoke({ function: "t", arguments: { v: "ask" } }, {
      approve: () => ({ approve: true, updatedArgs: { v: 1 } }),
      suppressErrors: true,
    });
    assert.equal(invalid.status, "failed");
    assert.equal((invalid.execution.error as Error).name, "ToolArgumentsError");
    assert.match((invalid.execution.error as Error).message, /after approval/);
    assert.deepEqual(ran, ["edited"]);
  });

  it("a chain that rewrites the approved arguments and asks about them denies: nobody approved that", async () => {
    const spec = new AgentSpec().pre("t", ({ args }) => ({
      decision: "ask",
      updatedArgs: { v: `${String(args.v).replace(/!*$/, "")}!` },
    }));
    let asked = 0;
    await assert.rejects(
      managerWith(spec).invoke({ function: "t", arguments: { v: "a" } }, {
        approve: () => {
          asked++;
          return { approve: true, updatedArgs: { v: "b" } };
        },
      }),
      { name: "ToolDeniedError", message: /rewrote the approved arguments/ },
    );
    assert.equal(asked, 1);
  });

  it("context strings of allow, post and error decisions collect on the call, each once", async () => {
    const spec = new AgentSpec()
      .securityPre("t", () => ({ decision: "allow", context: "checked" }))
      .pre("t", () => ({ decision: "allow", context: "pre said" }))
      .post("t", ({ result }) => ({ updatedResult: `${result}!`, context: "post said" }));
    const call = await managerWith(spec).invoke({ function: "t", arguments: { v: "a" } });
    assert.equal(call.response, "ran a!");
    assert.deepEqual(call.context, ["checked", "pre said", "post said"]);
    const failing = new Tool({
      name: "f",
      execute: () => {
        throw new Error("boom");
      },
      errorProcessor: () => ({ context: "the tool failed, retry later" }),
    });
    const failed = new FunctionCalling({ tool: failing, arguments: {} });
    await failed.invoke();
    assert.equal(failed.status, "failed");
    assert.deepEqual(failed.context, ["the tool failed, retry later"]);
    const plain = new FunctionCalling({
      tool: new Tool({ name: "p", execute: () => 1 }),
      arguments: {},
    });
    await plain.invoke();
    assert.deepEqual(plain.context, []);
  });

  it("a Tool's own processors return the same decisions", async () => {
    const ran: unknown[] = [];
    const tool = new Tool({
      name: "own",
      inputSchema: z.object({ v: z.string() }),
      execute: ({ v }) => {
        ran.push(v);
        return v;
      },
      preprocessor: function ownGate({ args }) {
        if (args.v === "no") return { decision: "deny", reason: "own no" };
        if (args.v === "ask") return { decision: "ask", reason: "own ask" };
        return { decision: "allow", updatedArgs: { v: `${args.v}+` }, context: "own pre" };
      },
      postprocessor: ({ result }) => ({ updatedResult: `<${result}>` }),
    });
    const ok = new FunctionCalling({ tool, arguments: { v: "a" }, callId: "o1" });
    await ok.invoke();
    assert.equal(ok.response, "<a+>");
    assert.deepEqual(ok.context, ["own pre"]);
    const no = new FunctionCalling({ tool, arguments: { v: "no" }, callId: "o2" });
    await no.invoke();
    assert.ok(no.execution.error instanceof ToolDeniedError);
    assert.equal((no.execution.error as ToolDeniedError).hook, "ownGate");
    const ask = new FunctionCalling({ tool, arguments: { v: "ask" }, callId: "o3" });
    await ask.invoke();
    assert.ok(ask.execution.error instanceof ApprovalRequiredError);
    const approved = new FunctionCalling({ tool, arguments: { v: "ask" }, callId: "o4" });
    await approved.invoke({ approve: () => true });
    assert.equal(approved.response, "<ask>");
    assert.deepEqual(ran, ["a+", "ask"]);
  });

  it("a denial and a pending approval are decisions, not failures: no error hook or error processor sees them", async () => {
    const seen: unknown[] = [];
    const spec = new AgentSpec()
      .pre(
        "t",
        ({ args }) => args.v === "deny" ? { decision: "deny", reason: "no" } : { decision: "ask" },
      )
      .onError("t", ({ error }) => {
        seen.push(error);
        return { updatedResult: "recovered" };
      });
    const manager = managerWith(spec);
    await assert.rejects(
      manager.invoke({ function: "t", arguments: { v: "deny" } }),
      ToolDeniedError,
    );
    await assert.rejects(
      manager.invoke({ function: "t", arguments: { v: "ask" } }),
      ApprovalRequiredError,
    );
    assert.deepEqual(seen, []);
  });
});

describe("Tool-scope hooks in the shape before 0.3 are refused, not misread", () => {
  it("a pre hook that returns the arguments bare: ToolHookReturnError, the tool does not run", async () => {
    const ran: unknown[] = [];
    const spec = new AgentSpec().pre("t", function rewrite({ args }) {
      return { ...args, v: "rewritten" } as never;
    });
    const error = await managerWith(spec, ran).invoke({ function: "t", arguments: { v: "a" } })
      .then(() => null, (e: unknown) => e);
    assert.ok(error instanceof ToolHookReturnError);
    assert.ok(error instanceof TypeError);
    assert.equal(error.phase, "pre");
    assert.equal(error.hook, "rewrite");
    assert.equal(
      error.message,
      'Cannot apply pre hook "rewrite" of tool "t": it returned an object without "decision" (the arguments, as before 0.3?); return { decision: "allow", updatedArgs } to rewrite them',
    );
    assert.deepEqual(ran, []);
  });

  it("a security pre hook's bare return is the same error (the call fails closed, not as a denial)", async () => {
    const ran: unknown[] = [];
    const spec = new AgentSpec().securityPre("t", ({ args }) => ({ ...args }) as never);
    await assert.rejects(
      managerWith(spec, ran).invoke({ function: "t", arguments: { v: "a" } }),
      { name: "ToolHookReturnError", message: /^Cannot apply security pre hook of tool "t"/ },
    );
    assert.deepEqual(ran, []);
  });

  it("a post hook or an error hook that returns a value bare: ToolHookReturnError saying to return { updatedResult }", async () => {
    const post = new AgentSpec().post("t", ({ result }) => `${result}!` as never);
    await assert.rejects(
      managerWith(post).invoke({ function: "t", arguments: { v: "a" } }),
      {
        name: "ToolHookReturnError",
        message:
          'Cannot apply post hook of tool "t": it returned a string (the result, as before 0.3?); return { updatedResult } or nothing',
      },
    );
    const objectResult = new AgentSpec().post("t", () => ({ text: "x" }) as never);
    await assert.rejects(
      managerWith(objectResult).invoke({ function: "t", arguments: { v: "a" } }),
      { name: "ToolHookReturnError", message: /an object with "text"/ },
    );
    const error = new AgentSpec().onError("f", () => "fallback" as never);
    const manager = new ActionManager({ spec: error });
    manager.register(
      new Tool({
        name: "f",
        execute: () => {
          throw new Error("boom");
        },
      }),
    );
    await assert.rejects(manager.invoke({ function: "f" }), {
      name: "ToolHookReturnError",
      message: /return \{ updatedResult \} to recover, or nothing/,
    });
  });

  it("a preprocessor that returns new arguments bare, and processors of more than one parameter", async () => {
    const bare = new Tool({
      name: "b",
      execute: () => 1,
      preprocessor: ({ args }) => ({ ...args, extra: 1 }) as never,
    });
    const call = new FunctionCalling({ tool: bare, arguments: {} });
    await call.invoke();
    assert.equal(call.status, "failed");
    assert.equal((call.execution.error as Error).name, "ToolHookReturnError");
    assert.match((call.execution.error as Error).message, /^Cannot apply preprocessor of tool "b"/);
    assert.throws(
      () =>
        new Tool({
          name: "x",
          execute: () => 1,
          preprocessor: ((args: unknown, _options: unknown) => args) as never,
        }),
      {
        name: "TypeError",
        message:
          'Cannot create tool "x": preprocessor declares 2 parameters; a processor takes one context object and returns a decision since 0.3 ((context) => { decision: "allow", updatedArgs }; read the arguments from context.args)',
      },
    );
    assert.throws(
      () =>
        new Tool({
          name: "x",
          execute: () => 1,
          errorProcessor: ((error: unknown, _args: unknown, _context: unknown) => error) as never,
        }),
      { message: /errorProcessor declares 3 parameters.*the error from context\.error/ },
    );
    assert.throws(
      () => new Tool({ name: "x", execute: () => 1, preprocessorOptions: { a: 1 } } as never),
      {
        message:
          'Cannot create tool "x": preprocessorOptions was removed in 0.3; a processor takes one context object, so close over its options instead',
      },
    );
  });

  it("malformed decisions say what is wrong", async () => {
    const cases: [unknown, RegExp][] = [
      [{ decision: "deny" }, /a deny needs a non-empty string reason/],
      [{ decision: "alow" }, /decision must be "allow", "ask" or "deny"; got "alow"/],
      [{ decision: "allow", context: 1 }, /context must be a string/],
      [{ decision: "allow", updatedArgs: [1] }, /updatedArgs must be a plain object/],
      ["yes", /it returned a string; return a decision or nothing/],
    ];
    for (const [decision, message] of cases) {
      const spec = new AgentSpec().pre("t", () => decision as never);
      await assert.rejects(
        managerWith(spec).invoke({ function: "t", arguments: { v: "a" } }),
        { name: "ToolHookReturnError", message },
        String(message),
      );
    }
  });
});
