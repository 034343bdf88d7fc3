// claudeAgentHooks' options: a bad event name, a non-list, a session that is not a Session, an
// unknown option key or a timeout no timer can hold throws at once (a policy that silently never
// ran failed open); good options answer through the session's policy.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Session } from "../../mod.ts";
import { claudeAgentHooks } from "../../claude/mod.ts";

const preToolUse = {
  session_id: "s",
  hook_event_name: "PreToolUse",
  tool_name: "Write",
  tool_input: { file_path: "a" },
  tool_use_id: "t1",
};

describe("claudeAgentHooks options", () => {
  it("refuses an event name it does not know, naming it and the known ones", () => {
    assert.throws(
      () => claudeAgentHooks(new Session(), { events: ["PreTooluse"] }),
      (error: unknown) =>
        error instanceof TypeError &&
        /^Cannot make Claude Agent SDK hooks: unknown event "PreTooluse" in events; valid: PreToolUse, /
          .test(error.message) &&
        error.message.includes("PermissionDenied"),
    );
    assert.throws(
      () => claudeAgentHooks(new Session(), { events: ["PreToolUse", 7 as never] }),
      /unknown event \(number\) in events/,
    );
  });

  it("refuses events that are not a list (a string would be split into letters)", () => {
    assert.throws(
      () => claudeAgentHooks(new Session(), { events: "PreToolUse" as never }),
      /Cannot make Claude Agent SDK hooks: events must be a list of event names; got "PreToolUse"/,
    );
  });

  it("refuses a session that is not a Session", () => {
    for (const bad of [{}, null, undefined, "s"]) {
      assert.throws(
        () => claudeAgentHooks(bad as never),
        (error: unknown) =>
          error instanceof TypeError &&
          error.message.startsWith(
            "Cannot make Claude Agent SDK hooks: session must be a Session; got ",
          ),
      );
    }
  });

  it("refuses options that are not an object and unknown option keys", () => {
    assert.throws(
      () => claudeAgentHooks(new Session(), "PreToolUse" as never),
      /options must be an object; got "PreToolUse"/,
    );
    assert.throws(
      () => claudeAgentHooks(new Session(), { event: ["PreToolUse"] } as never),
      /unknown option "event"; valid options: events, timeoutMs/,
    );
  });

  it("refuses a timeout above what a timer can hold (2^31 - 1 ms)", () => {
    assert.throws(
      () => claudeAgentHooks(new Session(), { timeoutMs: 3e9 }),
      /timeoutMs must be at most 2147483647 .*; got 3000000000/,
    );
    const hooks = claudeAgentHooks(new Session(), { timeoutMs: 2_147_483_647 });
    assert.ok(hooks.PreToolUse);
  });

  it("answers the listed events (known ones without a counterpart are accepted)", async () => {
    const session = new Session();
    session.hooks.on("tool.pre", () => ({ decision: "deny", reason: "read-only today" }));
    const hooks = claudeAgentHooks(session, { events: ["PreToolUse", "Stop"] });
    assert.deepEqual(Object.keys(hooks), ["PreToolUse", "Stop"]);
    const [callback] = hooks.PreToolUse[0].hooks;
    const output = await callback(preToolUse, "t1", { signal: new AbortController().signal });
    assert.deepEqual(output.hookSpecificOutput, {
      hookEventName: "PreToolUse",
      permissionDecision: "deny",
      permissionDecisionReason: "read-only today",
    });
    assert.deepEqual(Object.keys(claudeAgentHooks(session)), [
      "PreToolUse",
      "PostToolUse",
      "PostToolUseFailure",
      "UserPromptSubmit",
      "SessionStart",
      "SessionEnd",
      "PermissionDenied",
    ]);
  });
});
