import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Signal } from "../../core/mod.ts";
import {
  createMessage,
  GateDenied,
  HookBlocked,
  MessageAdded,
  toMessageRecord,
  toolInvocation,
} from "../../session/mod.ts";

describe("session signals", () => {
  it("MessageAdded and GateDenied are Signals carrying their data", () => {
    const message = createMessage({ role: "user", content: "hi" }, "b1");
    const added = new MessageAdded({ data: message });
    assert.ok(added instanceof Signal);
    assert.equal(added.data, message);
    const denied = new GateDenied({ data: toolInvocation("t") });
    assert.ok(denied instanceof Signal);
    assert.equal((denied.data as { function: string }).function, "t");
  });

  it("HookBlocked keeps point, callId, toolName and the error's name and message only", () => {
    class GuardError extends Error {
      override name = "GuardError";
      secret = "kept out";
    }
    const blocked = new HookBlocked({
      point: "tool.pre",
      callId: "c1",
      toolName: "bash",
      error: new GuardError("denied"),
      emitterRole: "guard",
    });
    assert.deepEqual(
      [blocked.point, blocked.callId, blocked.toolName, blocked.opId, blocked.emitterRole],
      ["tool.pre", "c1", "bash", "c1", "guard"],
    );
    assert.deepEqual(blocked.error, { name: "GuardError", message: "denied" });
    assert.ok(Object.isFrozen(blocked.error));
    assert.deepEqual(
      new HookBlocked({ point: "tool.pre", callId: "c", toolName: "t", error: "plain" }).error,
      {
        name: "Error",
        message: "plain",
      },
    );
    assert.throws(
      () => new HookBlocked({ point: "tool.pre", toolName: "t", error: 1 } as never),
      TypeError,
    );
  });

  it("toolInvocation() freezes a shallow copy and turns non-object arguments into {}", () => {
    const args = { path: "/tmp" };
    const invocation = toolInvocation("reader", args, "b1");
    args.path = "/etc";
    assert.deepEqual(invocation, {
      function: "reader",
      arguments: { path: "/tmp" },
      branchId: "b1",
    });
    assert.ok(Object.isFrozen(invocation) && Object.isFrozen(invocation.arguments));
    assert.deepEqual(toolInvocation("t", [1, 2]).arguments, {});
    assert.deepEqual(toolInvocation("t", "x").arguments, {});
    assert.throws(() => toolInvocation(""), TypeError);
  });
});

describe("messages", () => {
  it("createMessage() validates role, action content, sender and recipient", () => {
    assert.throws(
      () => createMessage({ role: "user", content: "", sender: 1 as never }),
      TypeError,
    );
    assert.throws(() => createMessage({ role: "action_response", content: "text" }), TypeError);
    assert.throws(
      () => createMessage({ role: "action_request", content: { function: "f", arguments: [] } }),
      TypeError,
    );
    const response = createMessage({
      role: "action_response",
      content: { function: "f", arguments: {}, output: 1, callId: "c" },
    });
    assert.equal(response.branchId, null);
    assert.equal(createMessage({ role: "assistant", content: undefined }).content, null);
  });

  it("toMessageRecord() makes content JSON-safe and carries the session id", () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const message = createMessage({ role: "user", content: cyclic, recipient: "bot" }, "b1", {
      id: "m1",
      createdAt: 3,
    });
    assert.deepEqual(toMessageRecord(message, "s1"), {
      id: "m1",
      role: "user",
      content: { self: "[Circular]" },
      sender: null,
      recipient: "bot",
      branchId: "b1",
      sessionId: "s1",
      createdAt: 3,
    });
  });
});
