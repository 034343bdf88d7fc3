// The fold of `tool.effects` hooks: a hook that never settles denies at its deadline, and the
// caller's abort ends the fold at once with its reason (and aborts the hook's signal).

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { decideEffects } from "../../../action/coding/effects_policy.ts";
import type { ToolEffectsPayload } from "../../../action/coding/file_change.ts";

const payload: ToolEffectsPayload = {
  toolName: "bash",
  callId: "call-1",
  args: { command: "true" },
  changes: [],
};

describe("decideEffects()", () => {
  it("denies when a hook never settles within its deadline", async () => {
    const verdict = await decideEffects(
      [function stuck() {
        return new Promise<never>(() => {});
      }],
      payload,
      { timeoutMs: 20 },
    );
    assert.equal(verdict.decision, "deny");
    assert.match(verdict.reason ?? "", /stuck failed: timed out after 20 ms/);
  });

  it("rejects with the caller's reason at once when the caller aborts", async () => {
    const controller = new AbortController();
    let hookSignal: AbortSignal | undefined;
    const deciding = decideEffects(
      [(p) => {
        hookSignal = p.signal;
        return new Promise<never>(() => {});
      }],
      payload,
      { timeoutMs: 600_000, signal: controller.signal },
    );
    setTimeout(() => controller.abort(new Error("run cancelled")), 20);
    await assert.rejects(deciding, /run cancelled/);
    assert.equal(hookSignal?.aborted, true);
  });

  it("a hook that answers allows, asks or denies", async () => {
    assert.equal(
      (await decideEffects([() => ({ decision: "allow" })], payload)).decision,
      "allow",
    );
    assert.equal(
      (await decideEffects([() => ({ decision: "deny", reason: "no" })], payload)).decision,
      "deny",
    );
  });
});
