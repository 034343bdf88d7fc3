import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import {
  ApprovalAnswered,
  ApprovalRequested,
  ApprovalRequiredError,
  HookBlocked,
  MemoryStore,
  PermissionDeniedError,
  Session,
  Tool,
  ToolArgumentsError,
  ToolDenied,
  ToolDeniedError,
  type ToolPreDecision,
  WouldAsk,
  WouldDeny,
} from "../../mod.ts";
import { secretsGuard } from "../../cli/agent_run.ts";

function setup(): {
  session: Session;
  branch: ReturnType<Session["newBranch"]>;
  ran: Record<string, unknown>[];
} {
  const session = new Session();
  const branch = session.newBranch();
  const ran: Record<string, unknown>[] = [];
  branch.actions.register(
    new Tool({
      name: "bash",
      inputSchema: z.object({ command: z.string() }),
      execute: (args: { command: string }) => {
        ran.push(args);
        return `ran ${args.command}`;
      },
    }),
  );
  return { session, branch, ran };
}

describe("tool.pre and tool.post carry the real values (X21)", () => {
  it("tool.pre gets a deep-frozen copy of the arguments, tool.post the arguments and result", async () => {
    const { session, branch } = setup();
    const seen: Record<string, unknown>[] = [];
    session.hooks.on("tool.pre", (payload) => {
      seen.push(payload);
      assert.throws(() => {
        (payload.args as Record<string, unknown>).command = "changed";
      }, TypeError);
    });
    session.hooks.on("tool.post", (payload) => void seen.push(payload));
    const long = "x".repeat(500);
    await branch.act({ function: "bash", arguments: { command: long } });
    assert.equal(seen[0].args && (seen[0].args as { command: string }).command, long);
    assert.ok(Object.isFrozen(seen[0].args));
    assert.equal((seen[0].argsSummary as string).length <= 200, true);
    assert.deepEqual(seen[0].source, { kind: "local" });
    assert.deepEqual(seen[1].args, { command: long });
    assert.equal(seen[1].result, `ran ${long}`);
    assert.equal(typeof seen[1].resultSummary, "string");
  });
});

describe("the bypass regression: guards written on real arguments", () => {
  const guard = ({ args }: { args: Readonly<Record<string, unknown>> }): ToolPreDecision => {
    const text = JSON.stringify(args);
    if (/rm\s+-rf/.test(text)) return { decision: "deny", reason: "destructive command" };
    if (/(^|[^\w.])\.env\b/.test(text)) return { decision: "deny", reason: "secrets" };
    return undefined;
  };
  for (
    const [label, args] of [
      ["200 spaces before rm -rf", { command: " ".repeat(200) + "rm -rf x" }],
      ["100 './' before .env", { command: "cat " + "./".repeat(100) + ".env" }],
      ["the command under another key", { command: "ls", extra: { deep: ["rm -rf /"] } }],
    ] as const
  ) {
    it(`blocks ${label}`, async () => {
      const { session, branch, ran } = setup();
      session.hooks.on("tool.pre", guard);
      await assert.rejects(
        branch.act({ function: "bash", arguments: args as Record<string, unknown> }),
        ToolDeniedError,
      );
      assert.equal(ran.length, 0);
    });
  }

  it("the CLI's secrets guard blocks padded paths and secrets under any key", async () => {
    for (
      const args of [
        { command: "cat " + "./".repeat(100) + ".env" },
        { path: "a", nested: { list: ["x", "/home/u/.ssh/id_rsa"] } },
        { command: " ".repeat(300) + "cat .netrc" },
      ]
    ) {
      const { session, branch, ran } = setup();
      session.hooks.on("tool.pre", secretsGuard);
      await assert.rejects(
        branch.act({ function: "bash", arguments: args }),
        /may not touch secrets/,
      );
      assert.equal(ran.length, 0);
    }
    assert.doesNotThrow(() => secretsGuard({ toolName: "reader", args: { path: "README.md" } }));
  });
});

describe("typed decisions on the act path (X22)", () => {
  it("deny rejects with ToolDeniedError, records a persisted ToolDenied, runs nothing", async () => {
    const store = new MemoryStore();
    const session = new Session({ store });
    await session.start();
    const branch = session.newBranch();
    let ran = 0;
    branch.actions.register(new Tool({ name: "bash", execute: () => void ran++ }));
    session.hooks.on(
      "tool.pre",
      () => ({ decision: "deny", reason: "no shell", interrupt: true }),
      {
        name: "shellGuard",
      },
    );
    const denied: ToolDenied[] = [];
    session.observe({ type: ToolDenied }, (s) => void denied.push(s));
    const error = await branch.act({ function: "bash", arguments: {} }, { callId: "call-1" })
      .then(() => null, (e) => e);
    assert.ok(error instanceof ToolDeniedError);
    assert.ok(error instanceof PermissionDeniedError);
    assert.equal(error.reason, "no shell");
    assert.equal(error.hook, "shellGuard");
    assert.equal(error.callId, "call-1");
    assert.equal(error.interrupt, true);
    assert.equal(ran, 0);
    await session.drainSignals();
    assert.equal(denied.length, 1);
    assert.deepEqual(denied[0].data, {
      callId: "call-1",
      toolName: "bash",
      reason: "no shell",
      hook: "shellGuard",
      shadow: false,
    });
    const rows = await store.listSessionSignals(session.id);
    const row = rows.find((r) => r.kind === "ToolDenied");
    assert.ok(row, "ToolDenied is persisted");
    assert.equal(row.opId, "call-1");
    // The act path writes the denied exchange itself, once.
    assert.deepEqual(branch.messages.map((m) => m.role), ["action_request", "action_response"]);
    assert.deepEqual((branch.messages[1].content as { output: unknown }).output, {
      error: "Denied: no shell",
      reason: "no shell",
    });
  });

  it("a denial is not hidden by a gate that refuses every signal", async () => {
    const { session, branch } = setup();
    const seen: unknown[] = [];
    session.observe({ type: ToolDenied }, (s) => void seen.push(s));
    session.hooks.on("tool.pre", () => ({ decision: "deny", reason: "r" }));
    session.gate((p) => (p as { function?: string })?.function === "bash"); // allows the call only
    await assert.rejects(
      branch.act({ function: "bash", arguments: { command: "ls" } }),
      ToolDeniedError,
    );
    await session.drainSignals();
    assert.equal(seen.length, 1);
  });

  it("a throwing handler keeps rejecting with its own error and records HookBlocked (X3)", async () => {
    const { session, branch, ran } = setup();
    const blocked: HookBlocked[] = [];
    session.observe({ type: HookBlocked }, (s) => void blocked.push(s));
    const boom = new RangeError("boom");
    session.hooks.on("tool.pre", () => ({ decision: "allow" }));
    session.hooks.on("tool.pre", () => {
      throw boom;
    });
    await assert.rejects(
      branch.act({ function: "bash", arguments: { command: "ls" } }),
      (e) => e === boom,
    );
    await session.drainSignals();
    assert.equal(blocked.length, 1);
    assert.equal(ran.length, 0);
  });

  it("rewrites compose in chain order; the tool gets the final, re-validated arguments", async () => {
    const { session, branch, ran } = setup();
    // Idempotent rewrites: each hook sees the final arguments again and leaves them.
    const flag = (flag: string) => ({ args }: { args: Readonly<Record<string, unknown>> }) => {
      const command = String(args.command);
      return { command: command.includes(` ${flag}`) ? command : `${command} ${flag}` };
    };
    session.hooks.on("tool.pre", (payload) => ({
      decision: "allow",
      updatedArgs: flag("-a")(payload),
    }));
    session.hooks.on("tool.pre", (payload) => ({
      decision: "allow",
      updatedArgs: flag("-l")(payload),
      context: "listing was widened",
    }));
    const result = await branch.act({ function: "bash", arguments: { command: "ls" } });
    assert.deepEqual(ran, [{ command: "ls -a -l" }]);
    assert.equal(result.output, "ran ls -a -l");
    assert.deepEqual(result.context, ["listing was widened"]);
    const response = branch.messages.at(-1)!.content as Record<string, unknown>;
    assert.deepEqual(response.context, ["listing was widened"]);
    assert.deepEqual(response.arguments, { command: "ls -a -l" });
  });

  it("rewritten arguments that fail the schema reject with ToolArgumentsError", async () => {
    const { session, branch, ran } = setup();
    session.hooks.on("tool.pre", () => ({ decision: "allow", updatedArgs: { command: 42 } }));
    await assert.rejects(
      branch.act({ function: "bash", arguments: { command: "ls" } }),
      ToolArgumentsError,
    );
    assert.equal(ran.length, 0);
  });

  it("a malformed decision fails closed with a TypeError naming the hook", async () => {
    const { session, branch, ran } = setup();
    session.hooks.on("tool.pre", () => ({ decision: "maybe" }) as never, { name: "odd" });
    await assert.rejects(branch.act({ function: "bash", arguments: { command: "ls" } }), /odd/);
    assert.equal(ran.length, 0);
  });

  it("StopHook ends the chain keeping the verdict so far", async () => {
    const { session, branch, ran } = setup();
    const { StopHook } = await import("../../mod.ts");
    session.hooks.on("tool.pre", () => ({ decision: "allow", updatedArgs: { command: "pwd" } }));
    session.hooks.on("tool.pre", () => {
      throw new StopHook();
    });
    session.hooks.on("tool.pre", () => ({ decision: "deny", reason: "never reached" }));
    await branch.act({ function: "bash", arguments: { command: "ls" } });
    assert.deepEqual(ran, [{ command: "pwd" }]);
  });

  it("tool.post updatedResult replaces the output; context is appended", async () => {
    const { session, branch } = setup();
    session.hooks.on("tool.post", ({ result }) => ({ updatedResult: `${result} (checked)` }));
    session.hooks.on("tool.post", ({ result }) => ({ context: `saw: ${result}` }));
    const result = await branch.act({ function: "bash", arguments: { command: "ls" } });
    assert.equal(result.output, "ran ls (checked)");
    assert.deepEqual(result.context, ["saw: ran ls (checked)"]);
    const response = branch.messages.at(-1)!.content as Record<string, unknown>;
    assert.equal(response.output, "ran ls (checked)");
  });
});

describe("tool.error context", () => {
  it('decide("tool.error") folds context in chain order, the first updatedResult recovers, and goes on past a throw', async () => {
    const { session } = setup();
    session.hooks.on("tool.error", () => ({ context: "first", updatedResult: "recovered" }));
    session.hooks.on("tool.error", () => {
      throw new Error("a broken reporter");
    }, { onFailure: "continue" });
    session.hooks.on("tool.error", ({ args }) => ({
      context: `args: ${JSON.stringify(args)}`,
      updatedResult: "a later recovery is not taken",
    }));
    session.hooks.on("tool.error", () => undefined);
    const call = { signal: new AbortController().signal, source: { kind: "local" } } as const;
    const fold = await session.hooks.decide("tool.error", {
      ...call,
      callId: "c1",
      toolName: "bash",
      args: { command: "ls" },
      error: new Error("boom"),
      durationMs: 1,
    });
    assert.deepEqual(fold, {
      recovered: true,
      result: "recovered",
      context: ["first", 'args: {"command":"ls"}'],
    });
    const none = await new Session().hooks.decide("tool.error", {
      ...call,
      callId: "c2",
      toolName: "bash",
      args: {},
      error: null,
      durationMs: null,
    });
    assert.deepEqual(none, { recovered: false, result: undefined, context: [] });
  });

  it("in the agent loop's act (suppressErrors) the context reaches the failed call's response", async () => {
    const { session, branch } = setup();
    branch.actions.register(
      new Tool({
        name: "flaky",
        requestOptions: z.object({ path: z.string() }),
        func: () => {
          throw new Error("ENOENT: no such file");
        },
      }),
    );
    const seen: unknown[] = [];
    session.hooks.on("tool.error", ({ toolName, args, error }) => {
      seen.push([toolName, args, (error as Error).message]);
      return { context: "the file was moved to src/" };
    });
    const result = await branch.act({ function: "flaky", arguments: { path: "a.ts" } }, {
      suppressErrors: true,
    });
    assert.deepEqual(seen, [["flaky", { path: "a.ts" }, "ENOENT: no such file"]]);
    assert.deepEqual(result.context, ["the file was moved to src/"]);
    const response = branch.messages.at(-1)!.content as Record<string, unknown>;
    assert.deepEqual(response.context, ["the file was moved to src/"]);
    assert.match(JSON.stringify(response.output), /ENOENT/);
    // Without suppressErrors the failure rejects, as before.
    await assert.rejects(branch.act({ function: "flaky", arguments: { path: "b.ts" } }), /ENOENT/);
  });
});

describe("ask and approvals on the act path", () => {
  it("without approve: ApprovalRequiredError with a PendingApproval; ApprovalRequested recorded", async () => {
    const { session, branch, ran } = setup();
    session.hooks.on("tool.pre", ({ args }) => ({
      decision: "ask",
      reason: "shell access",
      updatedArgs: {
        command: String(args.command).endsWith(" --dry-run")
          ? args.command
          : `${args.command} --dry-run`,
      },
    }));
    const requested: ApprovalRequested[] = [];
    session.observe({ type: ApprovalRequested }, (s) => void requested.push(s));
    const error = await branch.act(
      { function: "bash", arguments: { command: "make" } },
      { callId: "c9", runId: "run-1" },
    ).then(() => null, (e) => e);
    assert.ok(error instanceof ApprovalRequiredError);
    assert.equal(error.approval.runId, "run-1");
    assert.equal(error.approval.callId, "c9");
    assert.equal(error.approval.toolName, "bash");
    assert.equal(error.approval.sessionId, session.id);
    assert.equal(error.approval.branchId, branch.id);
    assert.equal(error.approval.reason, "shell access");
    assert.deepEqual(error.approval.args, { command: "make --dry-run" });
    assert.ok(Object.isFrozen(error.approval.args));
    assert.equal(ran.length, 0);
    await session.drainSignals();
    assert.equal(requested.length, 1);
    assert.equal((requested[0].data as { callId: string }).callId, "c9");
  });

  it("approve answering true runs the call; the answer is recorded with who answered", async () => {
    const { session, branch, ran } = setup();
    session.hooks.on("tool.pre", () => ({ decision: "ask" }));
    const answered: ApprovalAnswered[] = [];
    session.observe({ type: ApprovalAnswered }, (s) => void answered.push(s));
    const result = await branch.act({ function: "bash", arguments: { command: "ls" } }, {
      approve: (pending) => ({
        approve: true,
        by: "ana",
        updatedArgs: { command: `${pending.args.command} -1` },
      }),
    });
    assert.equal(result.output, "ran ls -1");
    assert.deepEqual(ran, [{ command: "ls -1" }]);
    await session.drainSignals();
    assert.equal(answered.length, 1);
    assert.equal((answered[0].data as { by: string }).by, "ana");
    assert.equal((answered[0].data as { approve: boolean }).approve, true);
  });

  it("approved arguments that fail the schema reject with ToolArgumentsError", async () => {
    const { session, branch, ran } = setup();
    session.hooks.on("tool.pre", () => ({ decision: "ask" }));
    await assert.rejects(
      branch.act({ function: "bash", arguments: { command: "ls" } }, {
        approve: () => ({ approve: true, updatedArgs: { command: ["no"] } }),
      }),
      ToolArgumentsError,
    );
    assert.equal(ran.length, 0);
  });

  it("approve answering false rejects with ToolDeniedError carrying the reason", async () => {
    const { session, branch, ran } = setup();
    session.hooks.on("tool.pre", () => ({ decision: "ask" }));
    await assert.rejects(
      branch.act({ function: "bash", arguments: { command: "ls" } }, {
        approve: () => ({ approve: false, reason: "not now", by: "bo" }),
      }),
      (e) => e instanceof ToolDeniedError && e.reason === "not now",
    );
    await assert.rejects(
      branch.act({ function: "bash", arguments: { command: "ls" } }, { approve: () => false }),
      ToolDeniedError,
    );
    assert.equal(ran.length, 0);
  });

  it("deny wins over an earlier ask, and approve is never asked", async () => {
    const { session, branch } = setup();
    session.hooks.on("tool.pre", () => ({ decision: "ask" }));
    session.hooks.on("tool.pre", () => ({ decision: "deny", reason: "policy" }));
    let asked = 0;
    await assert.rejects(
      branch.act({ function: "bash", arguments: { command: "ls" } }, {
        approve: () => (asked++, true),
      }),
      ToolDeniedError,
    );
    assert.equal(asked, 0);
  });

  it("a bad approve answer is a TypeError and the tool does not run", async () => {
    const { session, branch, ran } = setup();
    session.hooks.on("tool.pre", () => ({ decision: "ask" }));
    await assert.rejects(
      branch.act({ function: "bash", arguments: { command: "ls" } }, {
        approve: () => "yes" as never,
      }),
      TypeError,
    );
    assert.equal(ran.length, 0);
  });
});

describe("shadow mode", () => {
  it("records WouldDeny / WouldAsk and changes nothing", async () => {
    const { session, branch, ran } = setup();
    session.hooks.on("tool.pre", () => ({ decision: "deny", reason: "would block" }), {
      mode: "shadow",
      name: "trial",
    });
    session.hooks.on("tool.pre", () => ({ decision: "ask", updatedArgs: { command: "x" } }), {
      mode: "shadow",
    });
    session.hooks.on("tool.pre", () => {
      throw new Error("shadow crash");
    }, { mode: "shadow" });
    const would: unknown[] = [];
    session.observe({ type: WouldDeny }, (s) => void would.push(s));
    session.observe({ type: WouldAsk }, (s) => void would.push(s));
    const result = await branch.act({ function: "bash", arguments: { command: "ls" } });
    assert.equal(result.output, "ran ls");
    assert.deepEqual(ran, [{ command: "ls" }]);
    await session.drainSignals();
    assert.equal(would.length, 3);
    assert.deepEqual((would[0] as WouldDeny).data, {
      callId: (would[0] as WouldDeny).opId,
      toolName: "bash",
      reason: "would block",
      hook: "trial",
      shadow: true,
      point: "tool.pre",
    });
    assert.ok(would[1] instanceof WouldAsk);
    assert.equal(((would[1] as WouldAsk).data as { point?: string }).point, "tool.pre");
    assert.ok(would[2] instanceof WouldDeny);
  });
});
