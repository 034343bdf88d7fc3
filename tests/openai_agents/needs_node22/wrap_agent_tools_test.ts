import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { run } from "@openai/agents";
import { MemoryStore, Session } from "../../../mod.ts";
import { answerApproval, wrapAgentTools } from "../../../openai-agents/mod.ts";
import { makeAgent, ScriptedModel, toolOutputs } from "./_agent.ts";

// The real `run` loop of @openai/agents (tool execution, needsApproval, interruptions, RunState)
// with a local model implementing the SDK's own Model interface.

function signals(session: Session): { kind: string; data: Record<string, unknown> }[] {
  return session.observer.events.map((e) => ({
    kind: (e as object).constructor.name,
    data: (e as { data?: Record<string, unknown> }).data ?? {},
  }));
}

function kinds(session: Session): string[] {
  return signals(session).map((s) => s.kind).filter((k) =>
    k !== "MessageAdded" && k !== "HookSignal"
  );
}

describe("wrapAgentTools in an @openai/agents run", () => {
  it("a denied call never runs and the model gets the reason as the tool output", async () => {
    const ran: unknown[] = [];
    const session = new Session({ store: new MemoryStore() });
    session.hooks.on(
      "tool.pre",
      ({ toolName, args }) =>
        toolName === "remove" && String(args.path).startsWith("/")
          ? { decision: "deny", reason: "absolute paths are off limits" }
          : undefined,
    );
    const model = new ScriptedModel([
      {
        calls: [
          { id: "c1", name: "read", args: { path: "notes.txt" } },
          { id: "c2", name: "remove", args: { path: "/etc" } },
        ],
      },
      { text: "tidied" },
    ]);
    const agent = wrapAgentTools(makeAgent(model, ran), { session });
    const result = await run(agent, "tidy up");
    await session.drainSignals();
    assert.equal(result.finalOutput, "tidied");
    assert.deepEqual(ran, [{ read: "notes.txt" }]);
    assert.deepEqual(toolOutputs(model), {
      c1: "contents of notes.txt",
      c2: "Tool call denied: absolute paths are off limits",
    });
    const denied = signals(session).filter((s) => s.kind === "ToolDenied");
    assert.equal(denied.length, 1);
    assert.equal(denied[0].data.callId, "c2");
    assert.equal(denied[0].data.reason, "absolute paths are off limits");
  });

  it("an allowed call with updatedArgs runs with the rewritten arguments", async () => {
    const ran: unknown[] = [];
    const session = new Session({ store: new MemoryStore() });
    session.hooks.on(
      "tool.pre",
      ({ toolName, args }) =>
        toolName === "read" && !String(args.path).startsWith("sandbox/")
          ? {
            decision: "allow",
            updatedArgs: { path: `sandbox/${args.path}` },
            context: "read from the sandbox",
          }
          : undefined,
    );
    const model = new ScriptedModel([
      { calls: [{ id: "c1", name: "read", args: { path: "notes.txt" } }] },
      { text: "read it" },
    ]);
    const agent = wrapAgentTools(makeAgent(model, ran), { session });
    const result = await run(agent, "read the notes");
    await session.drainSignals();
    assert.equal(result.finalOutput, "read it");
    assert.deepEqual(ran, [{ read: "sandbox/notes.txt" }]);
    assert.deepEqual(toolOutputs(model), {
      c1: "contents of sandbox/notes.txt\n\nread from the sandbox",
    });
    // The call is recorded on the wrapper's branch of the session, with the arguments that ran.
    const branch = session.branches.find((b) => b.name === "openai-agents")!;
    const response = branch.messages.find((m) => m.role === "action_response")!;
    const content = response.content as { callId?: unknown; arguments?: unknown };
    assert.equal(content.callId, "c1");
    assert.deepEqual(content.arguments, { path: "sandbox/notes.txt" });
  });

  it("an ask interrupts the run; the approved call runs once on resume, recorded", async () => {
    const ran: unknown[] = [];
    const session = new Session({ store: new MemoryStore() });
    session.hooks.on(
      "tool.pre",
      ({ toolName }) =>
        toolName === "remove" ? { decision: "ask", reason: "removes a file" } : undefined,
    );
    const model = new ScriptedModel([
      { calls: [{ id: "c1", name: "remove", args: { path: "old.log" } }] },
      { text: "removed" },
    ]);
    const agent = wrapAgentTools(makeAgent(model, ran), { session, approvedBy: "ops" });
    const first = await run(agent, "remove old.log");
    await session.drainSignals();
    assert.equal(first.interruptions.length, 1);
    assert.equal(first.interruptions[0].name, "remove");
    assert.deepEqual(ran, []);
    const asked = signals(session).filter((s) => s.kind === "ApprovalRequested");
    assert.equal(asked.length, 1);
    assert.equal(asked[0].data.callId, "c1");
    assert.equal(asked[0].data.reason, "removes a file");
    assert.deepEqual(asked[0].data.args, { path: "old.log" });

    await answerApproval(first.state, first.interruptions[0], { approve: true, by: "ana" });
    const second = await run(agent, first.state);
    await session.drainSignals();
    assert.equal(second.finalOutput, "removed");
    assert.deepEqual(ran, [{ remove: "old.log" }]);
    assert.deepEqual(toolOutputs(model), { c1: "removed old.log" });
    const answered = signals(session).filter((s) => s.kind === "ApprovalAnswered");
    assert.equal(answered.length, 1);
    assert.equal(answered[0].data.approve, true);
    assert.equal(answered[0].data.by, "ana");
  });

  it("a rejection is recorded like an approval and the model gets the reason", async () => {
    const ran: unknown[] = [];
    const session = new Session({ store: new MemoryStore() });
    session.hooks.on("tool.pre", () => ({ decision: "ask", reason: "every call" }));
    const model = new ScriptedModel([
      { calls: [{ id: "c1", name: "remove", args: { path: "old.log" } }] },
      { text: "left it" },
    ]);
    const agent = wrapAgentTools(makeAgent(model, ran), { session });
    const first = await run(agent, "remove old.log");
    await answerApproval(first.state, first.interruptions[0], {
      approve: false,
      reason: "keep the logs",
    });
    const second = await run(agent, first.state);
    await session.drainSignals();
    assert.equal(second.finalOutput, "left it");
    assert.deepEqual(ran, []);
    assert.deepEqual(toolOutputs(model), { c1: "Tool call denied: keep the logs" });
    assert.deepEqual(kinds(session), [
      "ApprovalRequested",
      "ApprovalRequested",
      "ApprovalAnswered",
      "ToolDenied",
    ]);
    const answered = signals(session).find((s) => s.kind === "ApprovalAnswered")!;
    assert.equal(answered.data.approve, false);
    assert.equal(answered.data.reason, "keep the logs");
    assert.equal(answered.data.by, "openai-agents");
  });

  it("refuses what it cannot wrap or answer, with typed errors", async () => {
    const model = new ScriptedModel([]);
    assert.throws(() => wrapAgentTools({} as never), TypeError);
    const agent = makeAgent(model, []);
    const twice = agent.clone({ tools: [...agent.tools, agent.tools[0]] });
    assert.throws(() => wrapAgentTools(twice), /two function tools are named "read"/);
    const session = new Session();
    session.hooks.on("tool.pre", () => ({ decision: "ask" }));
    const wrapped = wrapAgentTools(
      makeAgent(
        new ScriptedModel([{ calls: [{ id: "c1", name: "read", args: { path: "a" } }] }]),
        [],
      ),
      { session },
    );
    const first = await run(wrapped, "read a");
    await assert.rejects(
      answerApproval(first.state, first.interruptions[0], {
        approve: true,
        updatedArgs: { path: "b" },
      }),
      /no updatedArgs/,
    );
    await assert.rejects(
      answerApproval(first.state, first.interruptions[0], "yes" as never),
      TypeError,
    );
    // The original agent is not changed.
    assert.notEqual(wrapped.tools[0], agent.tools[0]);
    assert.equal(typeof agent.tools[0], "object");
  });
});
