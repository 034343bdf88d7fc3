// The session's tool.effects handlers are folded as its tool.pre handlers are: through the bus,
// with their registration options. A shadow-mode handler's deny or ask on a change set is
// recorded (WouldDeny / WouldAsk) and never applied. A tool reaches the fold through the act
// path's effects channel (ToolContext.effects), as the coding toolkit's staged bash does; here a
// tool asks it directly (the staged bash itself is tests/action/coding/effects_test.ts).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { HookBus, Session, Tool, WouldAsk, WouldDeny } from "../../mod.ts";
import type { EffectsVerdict, FileChange } from "../../action/coding/mod.ts";
import { decideOnBus } from "../../action/coding/_effects_bus.ts";

const REMOVAL: readonly FileChange[] = [{ path: "notes.md", kind: "deleted", bytesBefore: 5 }];

/** A session whose tool "stage" asks the act path's effects channel about REMOVAL. */
function staging(): { session: Session; verdict: () => Promise<EffectsVerdict> } {
  const session = new Session();
  session.defaultBranch.actions.register(
    new Tool({
      name: "stage",
      execute: async (_args, context) => {
        const channel = context.effects;
        assert.ok(channel, "the act path hands the tool its effects channel");
        const payload = {
          toolName: "stage",
          callId: context.callId ?? "",
          args: {},
          changes: REMOVAL,
        };
        return await channel.decide(payload, []);
      },
    }),
  );
  return {
    session,
    verdict: async () =>
      (await session.defaultBranch.act({ function: "stage", arguments: {} }))
        .output as EffectsVerdict,
  };
}

function recorded(session: Session): { wouldDeny: unknown[]; wouldAsk: unknown[] } {
  const wouldDeny: unknown[] = [];
  const wouldAsk: unknown[] = [];
  session.observe({ type: WouldDeny }, (signal) => void wouldDeny.push(signal.data));
  session.observe({ type: WouldAsk }, (signal) => void wouldAsk.push(signal.data));
  return { wouldDeny, wouldAsk };
}

describe("tool.effects handlers in shadow mode", () => {
  it("a shadow deny and a shadow ask are recorded, not applied: no opinion commits", async () => {
    const { session, verdict } = staging();
    const { wouldDeny, wouldAsk } = recorded(session);
    session.hooks.on("tool.effects", () => ({ decision: "deny", reason: "docs are frozen" }), {
      mode: "shadow",
      name: "docs-freeze",
    });
    session.hooks.on("tool.effects", () => ({ decision: "ask", reason: "deletions need a look" }), {
      mode: "shadow",
      name: "deletions",
    });
    assert.deepEqual(await verdict(), { decision: "none" });
    await session.drainSignals();
    assert.equal(wouldDeny.length, 1);
    assert.deepEqual(
      { ...(wouldDeny[0] as object), callId: undefined },
      {
        callId: undefined,
        toolName: "stage",
        reason: "docs are frozen",
        hook: "docs-freeze",
        shadow: true,
        point: "tool.effects",
      },
    );
    assert.equal(wouldAsk.length, 1);
    assert.equal((wouldAsk[0] as { hook?: string }).hook, "deletions");
    assert.equal((wouldAsk[0] as { point?: string }).point, "tool.effects");
  });

  it("a shadow handler that throws is recorded as WouldDeny; the enforced handlers still decide", async () => {
    const { session, verdict } = staging();
    const { wouldDeny } = recorded(session);
    session.hooks.on("tool.effects", () => {
      throw new Error("rule bug");
    }, { mode: "shadow", name: "buggy" });
    session.hooks.on("tool.effects", () => ({ decision: "allow" }), { name: "fine" });
    assert.equal((await verdict()).decision, "allow");
    await session.drainSignals();
    assert.deepEqual(wouldDeny.map((d) => (d as { reason?: string }).reason), ["rule bug"]);
  });

  it("an enforced deny still denies, and shadow verdicts beside it are recorded", async () => {
    const { session, verdict } = staging();
    const { wouldAsk } = recorded(session);
    session.hooks.on("tool.effects", () => ({ decision: "ask" }), { mode: "shadow", name: "s" });
    session.hooks.on("tool.effects", () => ({ decision: "deny", reason: "no deletions" }), {
      name: "keep",
    });
    assert.deepEqual(await verdict(), { decision: "deny", reason: "no deletions", hook: "keep" });
    await session.drainSignals();
    assert.equal(wouldAsk.length, 1);
  });

  it("the other options hold too: match, and a handler's timeoutMs fails closed", async () => {
    const { session, verdict } = staging();
    let ran = 0;
    session.hooks.on("tool.effects", () => void ran++, { match: "bash" });
    assert.deepEqual(await verdict(), { decision: "none" });
    assert.equal(ran, 0, "a handler matched to bash does not see the stage tool's change set");
    session.hooks.on("tool.effects", () => new Promise(() => {}), { timeoutMs: 20, name: "stuck" });
    const stuck = await verdict();
    assert.equal(stuck.decision, "deny");
    assert.equal(stuck.hook, "stuck");
    assert.match(stuck.reason ?? "", /^The tool\.effects hook stuck failed: .*20 ms/);
  });
});

describe('HookBus.decide("tool.effects")', () => {
  const payload = { toolName: "bash", callId: "c1", args: {}, changes: REMOVAL };

  it("folds as tool.pre does: deny > ask > allow, shadow verdicts collected", async () => {
    const bus = new HookBus();
    bus.on("tool.effects", () => ({ decision: "allow" }));
    bus.on("tool.effects", () => ({ decision: "ask", reason: "look" }), { name: "asker" });
    bus.on("tool.effects", () => ({ decision: "deny", reason: "x" }), {
      mode: "shadow",
      name: "s",
    });
    const fold = await bus.decide("tool.effects", payload);
    assert.equal(fold.verdict, "ask");
    assert.equal(fold.reason, "look");
    assert.deepEqual(fold.shadow, [{ decision: "deny", reason: "x", hook: "s" }]);
  });

  it("emit() is blocking at tool.effects, as at tool.pre", async () => {
    const bus = new HookBus();
    bus.on("tool.effects", () => {
      throw new Error("blocked");
    });
    await assert.rejects(bus.emit("tool.effects", payload), /blocked/);
  });

  it("decideOnBus() turns a failed handler into a deny naming it and passes shadow verdicts on", async () => {
    const bus = new HookBus();
    bus.on("tool.effects", () => ({ decision: "ask" }), { mode: "shadow", name: "s" });
    bus.on("tool.effects", () => {
      throw new Error("boom");
    }, { name: "broken" });
    const { verdict, shadow } = await decideOnBus(bus, payload);
    assert.deepEqual(verdict, {
      decision: "deny",
      reason: "The tool.effects hook broken failed: boom",
      hook: "broken",
    });
    assert.deepEqual(shadow, [{ decision: "ask", hook: "s" }]);
    // An unnamed handler's decision is recorded under the point's name.
    const anonymous = new HookBus();
    anonymous.on("tool.effects", () => ({ decision: "deny", reason: "no" }));
    assert.deepEqual((await decideOnBus(anonymous, payload)).verdict, {
      decision: "deny",
      reason: "no",
      hook: "tool.effects handler",
    });
    assert.deepEqual(await decideOnBus(new HookBus(), payload), {
      verdict: { decision: "none" },
      shadow: [],
    });
  });

  it("decideOnBus() rejects with the caller's reason when its signal aborts", async () => {
    const bus = new HookBus();
    bus.on("tool.effects", () => new Promise(() => {}));
    const controller = new AbortController();
    const deciding = decideOnBus(bus, payload, controller.signal);
    controller.abort(new Error("run cancelled"));
    await assert.rejects(deciding, /run cancelled/);
  });
});
