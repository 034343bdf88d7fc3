import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { HookBus, HookConfigError, HookTimeoutError, registerHandler } from "../../mod.ts";
import { buildSessionBus, loadHookEntries } from "../../hooks/mod.ts";
import { CALL } from "../_call_fields.ts";

const POST = (toolName: string) => ({
  ...CALL,
  callId: "c",
  toolName,
  args: {},
  result: 1,
  resultSummary: "1",
  durationMs: 1,
});
const PRE = (toolName: string, args: Record<string, unknown> = {}) => ({
  ...CALL,
  callId: "c",
  toolName,
  args,
  argsSummary: "",
});

describe("HookBus.on() options", () => {
  it("priority: higher runs first, ties and plain handlers keep registration order", async () => {
    const bus = new HookBus();
    const order: string[] = [];
    bus.on("tool.post", () => void order.push("a0"));
    bus.on("tool.post", () => void order.push("b5"), { priority: 5 });
    bus.on("tool.post", () => void order.push("c0"));
    bus.on("tool.post", () => void order.push("d5"), { priority: 5 });
    bus.on("tool.post", () => void order.push("e-1"), { priority: -1 });
    bus.on("tool.post", () => void order.push("f9"), { priority: 9 });
    await bus.emit("tool.post", POST("t"));
    assert.deepEqual(order, ["f9", "b5", "d5", "a0", "c0", "e-1"]);
    assert.equal(bus.handlersFor("tool.post").length, 6);
  });

  it("match: a glob, a RegExp or a predicate on the tool name", async () => {
    const bus = new HookBus();
    const seen: string[] = [];
    bus.on("tool.post", ({ toolName }) => void seen.push(`glob:${toolName}`), { match: "mcp__*" });
    bus.on("tool.post", ({ toolName }) => void seen.push(`re:${toolName}`), { match: /^ba/g });
    bus.on("tool.post", ({ toolName }) => void seen.push(`fn:${toolName}`), {
      match: (p) => (p as { toolName: string }).toolName.length === 6,
    });
    for (const name of ["mcp__files", "bash", "bash", "reader", "mcp_x"]) {
      await bus.emit("tool.post", POST(name));
    }
    assert.deepEqual(seen, ["glob:mcp__files", "re:bash", "re:bash", "fn:reader"]);
  });

  it("match with a string or RegExp on a non-tool point is a TypeError", () => {
    const bus = new HookBus();
    assert.throws(() => bus.on("session.start", () => {}, { match: "x" }), TypeError);
    bus.on("session.start", () => {}, { match: () => true });
    assert.equal(bus.count("session.start"), 1);
  });

  it("once: removed after its first run", async () => {
    const bus = new HookBus();
    let runs = 0;
    bus.on("tool.post", () => void runs++, { once: true });
    await bus.emit("tool.post", POST("t"));
    await bus.emit("tool.post", POST("t"));
    assert.equal(runs, 1);
    assert.equal(bus.count("tool.post"), 0);
  });

  it("signal: removed when aborted; an aborted signal registers nothing", async () => {
    const bus = new HookBus();
    const controller = new AbortController();
    let runs = 0;
    bus.on("tool.post", () => void runs++, { signal: controller.signal });
    await bus.emit("tool.post", POST("t"));
    controller.abort();
    await bus.emit("tool.post", POST("t"));
    assert.equal(runs, 1);
    assert.equal(bus.count("tool.post"), 0);
    bus.on("tool.post", () => void runs++, { signal: controller.signal });
    assert.equal(bus.count("tool.post"), 0);
  });

  it("timeoutMs: a tool.pre handler that never settles fails closed with HookTimeoutError", async () => {
    const bus = new HookBus();
    bus.on("tool.pre", () => new Promise(() => {}), { timeoutMs: 20, name: "stuck" });
    const fold = await bus.decide("tool.pre", PRE("t"));
    assert.ok(fold.error instanceof HookTimeoutError);
    assert.equal(fold.error.point, "tool.pre");
    assert.equal(fold.error.hook, "stuck");
    assert.equal(fold.error.timeoutMs, 20);
    await assert.rejects(bus.emit("tool.pre", PRE("t")), HookTimeoutError);
  });

  it("onFailure: continue skips a failing or timed-out tool.pre handler", async () => {
    const bus = new HookBus(null, { onError: () => {} });
    bus.on("tool.pre", () => new Promise(() => {}), { timeoutMs: 20, onFailure: "continue" });
    bus.on("tool.pre", () => {
      throw new Error("flaky");
    }, { onFailure: "continue" });
    bus.on("tool.pre", () => ({ decision: "allow", updatedArgs: { ok: true } }));
    const fold = await bus.decide("tool.pre", PRE("t"));
    assert.equal(fold.error, undefined);
    assert.equal(fold.verdict, "allow");
    assert.deepEqual(fold.updatedArgs, { ok: true });
  });

  it("onFailure: block at tool.post rejects the emission", async () => {
    const bus = new HookBus();
    bus.on("tool.post", () => {
      throw new Error("must stop");
    }, { onFailure: "block" });
    await assert.rejects(bus.emit("tool.post", POST("t")), /must stop/);
  });

  it("a timed-out handler elsewhere is reported and the chain goes on", async () => {
    const reported: unknown[] = [];
    const bus = new HookBus(null, { onError: (e) => void reported.push(e) });
    let after = 0;
    bus.on("tool.post", () => new Promise(() => {}), { timeoutMs: 20 });
    bus.on("tool.post", () => void after++);
    await bus.emit("tool.post", POST("t"));
    assert.equal(after, 1);
    assert.ok(reported[0] instanceof HookTimeoutError);
  });

  it("an emission given a signal rejects at once when it aborts, naming the handler", async () => {
    const bus = new HookBus();
    bus.on("message.add", () => new Promise(() => {}), { name: "slowPersist" });
    const controller = new AbortController();
    const pending = bus.emit("message.add", {
      branchId: "b",
      message: { id: "m", role: "user", content: "" },
    }, { signal: controller.signal });
    controller.abort(new Error("stop"));
    await assert.rejects(
      pending,
      (e: Error) => e.name === "AbortError" && /slowPersist/.test(e.message),
    );
  });

  it("bad options are TypeErrors before anything is registered", () => {
    const bus = new HookBus();
    for (
      const bad of [
        { priority: Number.NaN },
        { timeoutMs: 0 },
        { onFailure: "ignore" },
        { mode: "dry" },
        { name: "" },
        { once: "yes" },
        { match: 42 },
        { unknownKey: true },
      ]
    ) {
      assert.throws(() => bus.on("tool.pre", () => {}, bad as never), TypeError);
    }
    assert.equal(bus.count("tool.pre"), 0);
  });

  it("an emission without EmitOptions on an option chain hands a failure or a promise on mid-chain", async () => {
    const reported: unknown[] = [];
    const bus = new HookBus(null, { onError: (e) => void reported.push(e) });
    const order: string[] = [];
    bus.on("tool.post", () => void order.push("once"), { once: true, priority: 5 });
    bus.on("tool.post", () => void order.push("other tool"), { match: "other" });
    bus.on("tool.post", () => {
      order.push("throws");
      throw new Error("isolated");
    }, { match: "t*" });
    bus.on("tool.post", () => Promise.resolve().then(() => void order.push("async")), {
      match: "t",
    });
    bus.on("tool.post", () => void order.push("after"), { match: "t" });
    const first = bus.emit("tool.post", POST("t"));
    // The sync prefix ran before emit returned, up to the handler that returned a promise.
    assert.deepEqual(order, ["once", "throws"]);
    await first;
    await bus.emit("tool.post", POST("t"));
    assert.deepEqual(order, ["once", "throws", "async", "after", "throws", "async", "after"]);
    assert.equal(reported.length, 2);
    assert.match(String(reported[0]), /isolated/);

    // A gate point blocks: a throwing guard rejects emit, the rest of the chain does not run.
    let ran = false;
    bus.on("tool.pre", () => {
      throw new Error("refused");
    }, { match: "t" });
    bus.on("tool.pre", () => void (ran = true), { match: "t" });
    await assert.rejects(bus.emit("tool.pre", PRE("t")), /refused/);
    assert.equal(ran, false);
  });

  it("a chain without options still takes the plain path and keeps its semantics", async () => {
    const bus = new HookBus();
    const order: number[] = [];
    bus.on("tool.post", () => void order.push(1));
    bus.on("tool.post", () => Promise.resolve().then(() => void order.push(2)));
    await bus.emit("tool.post", POST("t"));
    assert.deepEqual(order, [1, 2]);
    const fold = await bus.decide("tool.pre", PRE("t"));
    assert.equal(fold.verdict, "none");
    // No decision returned: the same shared, frozen result every time (nothing allocated).
    bus.on("tool.pre", () => undefined);
    const again = await bus.decide("tool.pre", PRE("t"));
    assert.equal(again, fold);
    assert.ok(Object.isFrozen(again));
  });
});

describe("declarative hook options (loader)", () => {
  it("config entries may be { handler, …options } objects beside plain names", async () => {
    const order: string[] = [];
    registerHandler("optsFirst", () => void order.push("first"));
    registerHandler("optsPlain", () => void order.push("plain"));
    registerHandler("optsBashOnly", () => void order.push("bash"));
    const bus = buildSessionBus({
      "tool.post": [
        "optsPlain",
        { handler: "optsFirst", priority: 10 },
        { handler: "optsBashOnly", match: "ba*", once: true },
      ],
    });
    await bus.emit("tool.post", POST("bash"));
    await bus.emit("tool.post", POST("bash"));
    assert.deepEqual(order, ["first", "plain", "bash", "first", "plain"]);
    const entries = loadHookEntries({ "tool.pre": [{ handler: "optsFirst", mode: "shadow" }] });
    assert.deepEqual(entries.get("tool.pre")![0].options, { mode: "shadow", name: "optsFirst" });
  });

  it("bad option values are HookConfigErrors", () => {
    registerHandler("optsAny", () => {});
    for (
      const bad of [
        { handler: "optsAny", priority: "high" },
        { handler: "optsAny", timeoutMs: -1 },
        { handler: "optsAny", onFailure: "retry" },
        { handler: "optsAny", mode: "log" },
        { handler: "optsAny", bogus: 1 },
        { handler: 7 },
        { priority: 1 },
      ]
    ) {
      assert.throws(() => loadHookEntries({ "tool.pre": [bad as never] }), HookConfigError);
    }
    assert.throws(
      () => loadHookEntries({ "session.start": [{ handler: "optsAny", match: "x" }] }),
      HookConfigError,
    );
  });
});
