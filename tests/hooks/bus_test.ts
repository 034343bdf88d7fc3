import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  HOOK_POINTS,
  HookBus,
  type HookContext,
  HookPoint,
  HookSignal,
  StopHook,
  UnknownHookPointError,
} from "../../mod.ts";
import { HOOK_POINT_WIRING, isHookPoint, toHookPoint } from "../../hooks/mod.ts";
import { CALL } from "../_call_fields.ts";

function recordingSink() {
  const events: unknown[] = [];
  return { events, emit: (event: unknown) => void events.push(event) };
}

const TOOL_POST = {
  ...CALL,
  callId: "c1",
  toolName: "reader",
  args: {},
  result: "ok",
  resultSummary: "ok",
  durationMs: 1,
};

describe("HookPoint vocabulary", () => {
  it("HOOK_POINTS pins exactly the twelve values in order", () => {
    assert.deepEqual([...HOOK_POINTS], [
      "session.start",
      "session.end",
      "branch.create",
      "api.pre_call",
      "api.post_call",
      "api.stream_chunk",
      "tool.pre",
      "tool.post",
      "tool.error",
      "message.add",
      "artifact.created",
      "tool.effects",
    ]);
    assert.deepEqual(Object.values(HookPoint), [...HOOK_POINTS]);
  });

  it("toHookPoint() accepts exact values and rejects names, padding and non-strings", () => {
    for (const point of HOOK_POINTS) assert.equal(toHookPoint(point), point);
    for (const bad of ["SESSION_START", "", "session.start ", "Session.Start", "tool"]) {
      assert.throws(() => toHookPoint(bad), (error: unknown) => {
        assert.ok(error instanceof UnknownHookPointError);
        assert.ok(error instanceof RangeError);
        assert.match(error.message, /valid points: "session\.start"/);
        assert.equal(error.point, bad);
        return true;
      });
    }
    for (const bad of [1, null, undefined, {}, Symbol("x")]) {
      assert.throws(() => toHookPoint(bad as unknown as string), UnknownHookPointError);
      assert.equal(isHookPoint(bad), false);
    }
  });

  it("HOOK_POINT_WIRING covers every point and keeps artifact.created dormant", () => {
    assert.deepEqual(Object.keys(HOOK_POINT_WIRING).sort(), [...HOOK_POINTS].sort());
    assert.equal(HOOK_POINT_WIRING["artifact.created"].wired, false);
    const blocking = HOOK_POINTS.filter((p) => HOOK_POINT_WIRING[p].blocking);
    assert.deepEqual(blocking, ["tool.pre", "tool.effects"]);
  });
});

describe("HookBus registration and miss semantics (ADR D2)", () => {
  it("HookBus.on() rejects unknown point strings before registering anything", () => {
    const bus = new HookBus();
    for (const bad of ["SESSION_START", "", "session.start "]) {
      assert.throws(() => bus.on(bad as never, () => {}), UnknownHookPointError);
      assert.throws(() => bus.off(bad as never, () => {}), UnknownHookPointError);
      assert.throws(() => bus.handlersFor(bad as never), UnknownHookPointError);
    }
    for (const point of HOOK_POINTS) assert.equal(bus.handlersFor(point).length, 0);
  });

  it("HookBus.emit() and blockingEmit() reject unknown points and run nothing", async () => {
    const bus = new HookBus(recordingSink());
    let ran = 0;
    bus.on("session.start", () => void ran++);
    await assert.rejects(bus.emit("SESSION_START" as never, {} as never), UnknownHookPointError);
    await assert.rejects(
      bus.blockingEmit("session.start " as never, {} as never),
      UnknownHookPointError,
    );
    await assert.rejects(bus.emit(42 as never, {} as never), UnknownHookPointError);
    assert.equal(ran, 0);
  });

  it("HookBus.on() rejects non-function handlers with a TypeError and changes nothing", () => {
    const bus = new HookBus();
    for (const bad of [null, undefined, "persistMessage", 1, {}]) {
      assert.throws(() => bus.on("session.start", bad as never), TypeError);
    }
    assert.equal(bus.handlersFor("session.start").length, 0);
  });

  it("HookBus accepts HookPoint members and exact value strings alike", async () => {
    const bus = new HookBus();
    const seen: string[] = [];
    bus.on(HookPoint.SESSION_END, () => void seen.push("member"));
    bus.on("session.end", () => void seen.push("string"));
    await bus.emit(HookPoint.SESSION_END, { sessionId: "s" });
    assert.deepEqual(seen, ["member", "string"]);
  });

  it("HookBus.on() appends duplicates, and each registration runs", async () => {
    const bus = new HookBus();
    let calls = 0;
    const handler = () => void calls++;
    bus.on("tool.post", handler);
    bus.on("tool.post", handler);
    await bus.emit("tool.post", TOOL_POST);
    assert.equal(calls, 2);
  });

  it("HookBus.off() removes the first equal registration; misses are no-ops", async () => {
    const bus = new HookBus();
    const order: string[] = [];
    const a = () => void order.push("a");
    const b = () => void order.push("b");
    bus.on("tool.post", a);
    bus.on("tool.post", b);
    bus.on("tool.post", a);
    bus.off("tool.post", a);
    assert.deepEqual(bus.handlersFor("tool.post"), [b, a]);
    bus.off("tool.post", () => {});
    bus.off("session.start", a);
    await bus.emit("tool.post", TOOL_POST);
    assert.deepEqual(order, ["b", "a"]);
  });

  it("HookBus.on() returns a disposer that removes that registration once", () => {
    const bus = new HookBus();
    const handler = () => {};
    const dispose1 = bus.on("tool.post", handler);
    bus.on("tool.post", handler);
    dispose1();
    dispose1();
    assert.equal(bus.handlersFor("tool.post").length, 1);
  });

  it("HookBus.handlersFor() returns a copy", () => {
    const bus = new HookBus();
    const handler = () => {};
    bus.on("tool.post", handler);
    const copy = bus.handlersFor("tool.post");
    copy.push(() => {});
    copy.length = 0;
    assert.deepEqual(bus.handlersFor("tool.post"), [handler]);
  });

  it("HookBus.emit() snapshots the chain: changes by a running handler affect later emissions", async () => {
    const bus = new HookBus();
    const order: string[] = [];
    const late = () => void order.push("late");
    const second = () => void order.push("second");
    bus.on("tool.post", () => {
      order.push("first");
      bus.on("tool.post", late);
      bus.off("tool.post", second);
    });
    bus.on("tool.post", second);
    await bus.emit("tool.post", TOOL_POST);
    assert.deepEqual(order, ["first", "second"]);
    order.length = 0;
    await bus.emit("tool.post", TOOL_POST);
    assert.deepEqual(order, ["first", "late"]);
  });

  it("HookBus.emit() with no handlers is valid and a bound bus still records the point", async () => {
    const sink = recordingSink();
    const bus = new HookBus(sink);
    await bus.emit("session.start", { sessionId: "s1" });
    assert.equal(sink.events.length, 1);
    const signal = sink.events[0] as HookSignal;
    assert.ok(signal instanceof HookSignal);
    assert.equal(signal.point, "session.start");
    assert.deepEqual(signal.payload, { sessionId: "s1" });
    assert.equal(signal.data, null);
  });
});

describe("HookBus dispatch and error semantics (ADR D2)", () => {
  it("HookBus.emit() awaits handlers sequentially in registration order, sync and async mixed", async () => {
    const bus = new HookBus();
    const order: string[] = [];
    bus.on("session.end", async () => {
      await new Promise((r) => setTimeout(r, 20));
      order.push("slow async");
    });
    bus.on("session.end", () => void order.push("sync"));
    bus.on("session.end", async () => {
      await Promise.resolve();
      order.push("fast async");
    });
    bus.on("session.end", () => ({
      then: (resolve: (v: unknown) => void) => {
        order.push("thenable");
        resolve(1);
      },
    }));
    bus.on("session.end", () => void order.push("last"));
    await bus.emit("session.end", { sessionId: "s" });
    assert.deepEqual(order, ["slow async", "sync", "fast async", "thenable", "last"]);
  });

  it("HookBus.emit() passes the payload and the context to each handler", async () => {
    const bus = new HookBus(null, { sessionId: "s9" });
    const payload = { sessionId: "s9", model: "m" };
    const seen: [unknown, HookContext][] = [];
    bus.on("session.start", (p, c) => void seen.push([p, c]));
    await bus.emit("session.start", payload);
    assert.equal(seen[0][0], payload);
    assert.equal(seen[0][1].bus, bus);
    assert.equal(seen[0][1].sessionId, "s9");
  });

  it("HookBus.emit() stops siblings on StopHook, swallows it, and still records", async () => {
    const sink = recordingSink();
    const bus = new HookBus(sink);
    const order: number[] = [];
    bus.on("tool.post", () => void order.push(1));
    bus.on("tool.post", async () => {
      order.push(2);
      await Promise.resolve();
      throw new StopHook();
    });
    bus.on("tool.post", () => void order.push(3));
    await bus.emit("tool.post", TOOL_POST);
    assert.deepEqual(order, [1, 2]);
    assert.equal(sink.events.length, 1);
  });

  it("HookBus.emit() isolates other failures: reported, next handler runs, chain recorded", async () => {
    const failures: [unknown, unknown][] = [];
    const sink = recordingSink();
    const bus = new HookBus(sink, { onError: (e, where) => void failures.push([e, where]) });
    const order: string[] = [];
    const boom = new Error("boom");
    bus.on("session.end", () => {
      throw boom;
    });
    bus.on("session.end", async () => {
      order.push("after sync failure");
      await Promise.resolve();
      throw new Error("async boom");
    });
    bus.on("session.end", () => void order.push("last"));
    await bus.emit("session.end", { sessionId: "s" });
    assert.deepEqual(order, ["after sync failure", "last"]);
    assert.equal(failures.length, 2);
    assert.equal(failures[0][0], boom);
    assert.deepEqual(failures[0][1], { point: "session.end", stage: "handler" });
    assert.equal(sink.events.length, 1);
  });

  it("HookBus.emit(tool.pre) delegates to blockingEmit: a failure rejects, later handlers skip, nothing recorded", async () => {
    const sink = recordingSink();
    const bus = new HookBus(sink);
    const order: string[] = [];
    const denied = new Error("denied");
    bus.on("tool.pre", () => void order.push("first"));
    bus.on("tool.pre", async () => {
      await Promise.resolve();
      throw denied;
    });
    bus.on("tool.pre", () => void order.push("never"));
    await assert.rejects(
      bus.emit("tool.pre", { ...CALL, toolName: "bash", callId: "c", args: {}, argsSummary: "" }),
      (e) => e === denied,
    );
    assert.deepEqual(order, ["first"]);
    assert.equal(sink.events.length, 0);
  });

  it("HookBus.emit(tool.pre) rejects on a synchronous throw too", async () => {
    const bus = new HookBus(recordingSink());
    bus.on("tool.pre", () => {
      throw new TypeError("sync guard");
    });
    await assert.rejects(
      bus.emit("tool.pre", { ...CALL, toolName: "x", callId: "c", args: {}, argsSummary: "" }),
      TypeError,
    );
  });

  it("HookBus StopHook at tool.pre only stops siblings; the emit resolves and is recorded", async () => {
    const sink = recordingSink();
    const bus = new HookBus(sink);
    const order: string[] = [];
    bus.on("tool.pre", () => {
      order.push("stop");
      throw new StopHook();
    });
    bus.on("tool.pre", () => void order.push("never"));
    await bus.emit("tool.pre", { ...CALL, toolName: "x", callId: "c", args: {}, argsSummary: "" });
    assert.deepEqual(order, ["stop"]);
    assert.equal(sink.events.length, 1);
    assert.equal((sink.events[0] as HookSignal).point, "tool.pre");
  });

  it("HookBus.blockingEmit() propagates failures at any point", async () => {
    const bus = new HookBus();
    bus.on("session.start", () => {
      throw new Error("strict");
    });
    await assert.rejects(bus.blockingEmit("session.start", { sessionId: "s" }), /strict/);
  });

  it("HookBus records after the whole chain, with a frozen shallow copy of the payload", async () => {
    const order: string[] = [];
    const bus = new HookBus({ emit: () => void order.push("recorded") });
    bus.on("session.start", async () => {
      await new Promise((r) => setTimeout(r, 5));
      order.push("handler");
    });
    const payload = { sessionId: "s1", nested: { a: 1 } };
    let signal: HookSignal | undefined;
    bus.bind({
      emit: (s: unknown) => {
        order.push("recorded");
        signal = s as HookSignal;
      },
    });
    await bus.emit("session.start", payload);
    assert.deepEqual(order, ["handler", "recorded"]);
    assert.notEqual(signal!.payload, payload);
    assert.equal(signal!.payload.nested, payload.nested);
    assert.ok(Object.isFrozen(signal!.payload));
    payload.sessionId = "changed";
    assert.equal(signal!.payload.sessionId, "s1");
  });

  it("HookBus observer recording is best effort: sync and async observer failures are reported, not thrown", async () => {
    const failures: unknown[] = [];
    const bus = new HookBus({
      emit: () => {
        throw new Error("observer down");
      },
    }, { onError: (e, where) => void failures.push([String(e), where.stage]) });
    await bus.emit("session.start", { sessionId: "s" });
    bus.bind({ emit: () => Promise.reject(new Error("async observer down")) });
    await bus.emit("tool.pre", { ...CALL, toolName: "t", callId: "c", args: {}, argsSummary: "" });
    assert.deepEqual(failures, [
      ["Error: observer down", "record"],
      ["Error: async observer down", "record"],
    ]);
  });

  it("HookBus.emit() awaits an async observer before resolving", async () => {
    const recorded: unknown[] = [];
    const bus = new HookBus({
      emit: async (s: unknown) => {
        await new Promise((r) => setTimeout(r, 10));
        recorded.push(s);
      },
    });
    await bus.emit("session.end", { sessionId: "s" });
    assert.equal(recorded.length, 1);
  });

  it("HookBus message.add runs its handlers but never records a HookSignal, on either path (X9)", async () => {
    const sink = recordingSink();
    const bus = new HookBus(sink);
    let calls = 0;
    bus.on("message.add", () => void calls++);
    const payload = { branchId: "b", message: { id: "m", role: "user", content: "hi" } };
    await bus.emit("message.add", payload);
    await bus.blockingEmit("message.add", payload);
    assert.equal(calls, 2);
    assert.equal(sink.events.length, 0);
    await bus.blockingEmit("session.start", { sessionId: "s" });
    assert.equal(sink.events.length, 1);
  });

  it("HookBus.bind() replaces, clears and validates the observer", async () => {
    const a = recordingSink();
    const b = recordingSink();
    const bus = new HookBus(a);
    assert.equal(bus.bind(b), bus);
    await bus.emit("session.start", { sessionId: "s" });
    bus.bind(null);
    await bus.emit("session.start", { sessionId: "s" });
    assert.equal(a.events.length, 0);
    assert.equal(b.events.length, 1);
    assert.equal(bus.observer, null);
    assert.throws(() => bus.bind({} as never), TypeError);
    assert.throws(() => new HookBus({ emit: 1 } as never), TypeError);
  });

  it("HookBus survives a throwing onError reporter", async () => {
    const bus = new HookBus(null, {
      onError: () => {
        throw new Error("reporter broken");
      },
    });
    let after = false;
    bus.on("session.end", () => {
      throw new Error("x");
    });
    bus.on("session.end", () => void (after = true));
    await bus.emit("session.end", { sessionId: "s" });
    assert.equal(after, true);
  });
});
