// One meaning of "denied" and one writer per tool exchange: the gate, a tool.pre deny and an
// AgentSpec security hook deny with the same error family, signal and message to the model; a
// denied, a blocked and an approved call each write their exchange once (counted in the store).

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { AgentSpec, Tool } from "../../action/mod.ts";
import { PermissionDeniedError, SecurityDeniedError, ToolDeniedError } from "../../core/errors.ts";
import { MemoryStore } from "../../store/memory_store.ts";
import { FunctionEndpoint, IModel } from "../../service/mod.ts";
import { Session, ToolDenied } from "../../session/mod.ts";
import { countingStore } from "./_counting_store.ts";

type DenyPath = "gate" | "tool.pre" | "securityPre";

async function deniedBy(path: DenyPath, securityThrows: () => never = () => {
  throw new Error("no shell");
}) {
  const store = new MemoryStore();
  const session = new Session({ store });
  await session.start();
  if (path === "gate") session.gate(() => false);
  if (path === "tool.pre") {
    session.hooks.on("tool.pre", () => ({ decision: "deny", reason: "no shell" }), {
      name: "shellGuard",
    });
  }
  const spec = new AgentSpec({ name: "a" });
  if (path === "securityPre") {
    spec.securityPre("bash", function shellGuard() {
      securityThrows();
    });
  }
  const branch = session.newBranch({ spec });
  let ran = 0;
  branch.actions.register(new Tool({ name: "bash", execute: () => void ran++ }));
  const error = await branch.act({ function: "bash", arguments: { command: "ls" } }, {
    callId: "c1",
    suppressErrors: true,
  }).then(() => null, (e) => e);
  await session.drainSignals();
  await branch.drainSignals();
  const messages = await store.listMessages({ sessionId: session.id });
  return { error, ran, session, messages };
}

describe("one meaning of denied", () => {
  for (const path of ["gate", "tool.pre", "securityPre"] as const) {
    it(`a ${path} denial rejects with ToolDeniedError, records one ToolDenied, tells the model "Denied: …"`, async () => {
      const { error, ran, session, messages } = await deniedBy(path);
      assert.equal(ran, 0);
      assert.ok(error instanceof ToolDeniedError, String(error));
      assert.equal(error.toolName, "bash");
      assert.equal(error.callId, "c1");
      assert.equal(error.by, path === "gate" ? "gate" : path === "tool.pre" ? "hook" : "security");
      if (path === "securityPre") {
        assert.ok(error instanceof SecurityDeniedError);
        assert.equal(error.hook, "shellGuard");
      }
      const denied = session.observer.byType(ToolDenied);
      assert.equal(denied.length, 1);
      assert.equal((denied[0].data as { callId: string }).callId, "c1");
      assert.deepEqual(messages.map((m) => m.role), ["action_request", "action_response"]);
      const output = (messages[1].content as { output: { error: string; reason: string } }).output;
      assert.equal(output.error, `Denied: ${error.reason}`);
      assert.equal(output.reason, error.reason);
    });
  }
});

describe("one meaning of denied: the same reason reads the same everywhere", () => {
  it("a tool.pre deny and a securityPre PermissionDeniedError give the model the same message and record the same ToolDenied", async () => {
    const byHook = await deniedBy("tool.pre");
    const bySecurity = await deniedBy("securityPre", () => {
      throw new PermissionDeniedError("no shell");
    });
    for (const { error } of [byHook, bySecurity]) {
      assert.ok(error instanceof ToolDeniedError);
      assert.equal(error.reason, "no shell");
      assert.equal(error.hook, "shellGuard");
    }
    assert.deepEqual(bySecurity.messages[1].content, byHook.messages[1].content);
    assert.deepEqual(
      (bySecurity.messages[1].content as { output: unknown }).output,
      { error: "Denied: no shell", reason: "no shell" },
    );
    const recorded = (run: typeof byHook) =>
      run.session.observer.byType(ToolDenied).map((s) => s.data);
    assert.deepEqual(recorded(bySecurity), recorded(byHook));
  });
});

function scripted(calls: { id: string; name: string; args: unknown }[]): IModel {
  let turn = 0;
  return new IModel({
    model: "m",
    endpoint: new FunctionEndpoint({
      call: () =>
        turn++ === 0
          ? {
            choices: [{
              message: {
                content: "",
                tool_calls: calls.map((c) => ({
                  id: c.id,
                  function: { name: c.name, arguments: JSON.stringify(c.args) },
                })),
              },
            }],
          }
          : { choices: [{ message: { content: "done" } }] },
    }),
  });
}

/** `rm` is denied, `cat .env` blocked (the hook throws), `push` asks for a person. */
function denyBlockOrAsk(session: Session): void {
  session.hooks.on("tool.pre", ({ args }) => {
    const command = String((args as { command?: unknown }).command);
    if (command === "rm") return { decision: "deny", reason: "destructive" };
    if (command === "cat .env") throw new Error("secrets are off limits");
    if (command === "push") return { decision: "ask", reason: "needs a person" };
    return undefined;
  });
}

describe("one writer per tool exchange", () => {
  it("a denied, a blocked and an approved call of the agent loop each write their exchange once", async () => {
    const counted = countingStore(new MemoryStore());
    const session = new Session({ store: counted.store });
    await session.start();
    denyBlockOrAsk(session);
    const branch = session.newBranch({
      model: scripted([
        { id: "d1", name: "bash", args: { command: "rm" } },
        { id: "b1", name: "bash", args: { command: "cat .env" } },
        { id: "a1", name: "bash", args: { command: "push" } },
      ]),
    });
    const ran: string[] = [];
    branch.actions.register(
      new Tool({ name: "bash", execute: (a: { command: string }) => void ran.push(a.command) }),
    );
    const result = await branch.operate("go", { approve: () => true });
    assert.equal(result.stoppedBy, "answer");
    assert.deepEqual(ran, ["push"]);
    await session.drainSignals();
    await branch.drainSignals();
    const messages = await counted.store.listMessages({ sessionId: session.id });
    for (const callId of ["d1", "b1", "a1"]) {
      const of = messages.filter((m) => (m.content as { callId?: string })?.callId === callId);
      assert.deepEqual(
        of.map((m) => m.role),
        ["action_request", "action_response"],
        `call ${callId} is written once`,
      );
    }
    const outputs = messages.filter((m) => m.role === "action_response").map((m) =>
      (m.content as { output: unknown }).output
    );
    assert.deepEqual(outputs[0], { error: "Denied: destructive", reason: "destructive" });
    assert.deepEqual(outputs[1], { error: "Blocked by a tool.pre guard: secrets are off limits" });
    assert.equal(outputs[2], undefined);
    // The branch holds the same single exchange per call.
    assert.equal(branch.messages.filter((m) => m.role === "action_response").length, 3);
    for (const callId of ["d1", "b1", "a1"]) {
      const of = branch.messages.filter((m) =>
        (m.content as { callId?: string })?.callId === callId
      );
      assert.deepEqual(of.map((m) => m.role), ["action_request", "action_response"]);
    }
    // No message was sent to the store twice (not even as a repeat the store drops).
    assert.equal(counted.calls.get("insertMessage"), messages.length);
  });

  it("a denied, a blocked and an approved Branch.act() each write their exchange once", async () => {
    const counted = countingStore(new MemoryStore());
    const session = new Session({ store: counted.store });
    await session.start();
    denyBlockOrAsk(session);
    const branch = session.newBranch();
    branch.actions.register(new Tool({ name: "bash", execute: () => "ok" }));
    await session.drainSignals();
    for (const [callId, command] of [["d1", "rm"], ["b1", "cat .env"], ["a1", "push"]]) {
      counted.reset();
      await branch.act({ function: "bash", arguments: { command } }, {
        callId,
        approve: () => true,
      }).catch(() => {});
      await session.drainSignals();
      await branch.drainSignals();
      assert.equal(counted.calls.get("insertMessage"), 2, `call ${callId}: two message writes`);
      const stored = (await counted.store.listMessages({ sessionId: session.id })).filter((m) =>
        (m.content as { callId?: string })?.callId === callId
      );
      assert.deepEqual(stored.map((m) => m.role), ["action_request", "action_response"]);
      const held = branch.messages.filter((m) =>
        (m.content as { callId?: string })?.callId === callId
      );
      assert.deepEqual(held.map((m) => m.role), ["action_request", "action_response"]);
    }
  });
});

describe("the exchange write", () => {
  it("one act() sets the session's activity with its message writes, no separate touch", async () => {
    const counted = countingStore(new MemoryStore());
    const session = new Session({ store: counted.store });
    await session.start();
    const branch = session.newBranch();
    branch.actions.register(new Tool({ name: "add", execute: (a: { x: number }) => a.x + 1 }));
    await session.drainSignals();
    counted.reset();
    await branch.act({ function: "add", arguments: { x: 1 } });
    await session.drainSignals();
    await branch.drainSignals();
    assert.equal(counted.calls.get("insertMessage"), 2);
    assert.equal(counted.calls.get("touchSessionActivity"), undefined);
    const row = await counted.store.getSession(session.id);
    assert.equal(typeof row?.lastActivityAt, "number");
  });
});
