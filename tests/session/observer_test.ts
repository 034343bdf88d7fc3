import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Signal } from "../../core/mod.ts";
import { HookBus, HookSignal } from "../../hooks/mod.ts";
import { MemoryStore } from "../../store/mod.ts";
import {
  GateDenied,
  HookBlocked,
  MessageAdded,
  Session,
  SessionObserver,
  toolInvocation,
} from "../../session/mod.ts";
import { CALL } from "../_call_fields.ts";

class Plan {
  steps: number;
  constructor(steps: number) {
    this.steps = steps;
  }
}

function collectingObserver(): { observer: SessionObserver; errors: [unknown, string][] } {
  const errors: [unknown, string][] = [];
  const observer = new SessionObserver({ onError: (error, where) => errors.push([error, where]) });
  return { observer, errors };
}

const tick = (ms = 5) => new Promise((resolve) => setTimeout(resolve, ms));

describe("SessionObserver.emit() order (ADR-0047 D3)", () => {
  it("SessionObserver.emit() coerces a non-element value to Signal({ data })", async () => {
    const { observer } = collectingObserver();
    await observer.emit({ a: 1 });
    const [stored] = observer.events;
    assert.ok(stored instanceof Signal);
    assert.deepEqual((stored as Signal).data, { a: 1 });
    const own = new Signal({ data: 2 });
    await observer.emit(own);
    assert.equal(observer.events[1], own);
  });

  it("SessionObserver.emit() asks the gate about the payload, not the envelope", async () => {
    const { observer } = collectingObserver();
    const seen: unknown[] = [];
    observer.gate((payload) => {
      seen.push(payload);
      return true;
    });
    await observer.emit(new Signal({ data: "inner" }));
    assert.deepEqual(seen, ["inner"]);
  });

  it("SessionObserver.emit() stores a denied event but routes and delivers nothing", async () => {
    const { observer } = collectingObserver();
    const delivered: unknown[] = [];
    observer.observe({ type: Signal }, (s) => delivered.push(s));
    observer.route(() => true, { into: "all" });
    observer.gate(() => false);
    assert.deepEqual(await observer.emit("x"), []);
    assert.equal(observer.events.length, 1);
    assert.deepEqual(observer.routed("all"), []);
    assert.deepEqual(delivered, []);
    assert.equal(observer.byType(Signal).length, 1);
  });

  it("SessionObserver.emit() appends allowed events to routes before any subscriber runs", async () => {
    const { observer } = collectingObserver();
    let streamedWhenCalled = -1;
    observer.route((p) => p === "r", { into: "r" });
    observer.observe({ where: (p) => p === "r" }, () => {
      streamedWhenCalled = observer.routed("r").length;
    });
    await observer.emit("r");
    assert.equal(streamedWhenCalled, 1);
  });

  it("SessionObserver.emit() calls subscribers in registration order and gathers async ones concurrently", async () => {
    const { observer } = collectingObserver();
    const log: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    observer.observe({ type: Signal }, async () => {
      log.push("a1 start");
      await gate;
      log.push("a1 end");
      return "a1";
    });
    observer.observe({ type: Signal }, () => {
      log.push("s1");
      return "s1";
    });
    // deno-lint-ignore require-await
    observer.observe({ type: Signal }, async () => {
      log.push("a2 start");
      release();
      return "a2";
    });
    observer.observe({ type: Signal }, () => "s2");
    const results = await observer.emit("x");
    assert.deepEqual(log, ["a1 start", "s1", "a2 start", "a1 end"]);
    assert.deepEqual(results, ["s1", "s2", "a1", "a2"]);
  });

  it("SessionObserver.emit() resolves to sync results followed by async results", async () => {
    const { observer } = collectingObserver();
    // deno-lint-ignore require-await
    observer.observe({ role: "r" }, async () => 1);
    observer.observe({ role: "r" }, () => 2);
    assert.deepEqual(await observer.emit(new Signal({ data: 0, emitterRole: "r" })), [2, 1]);
  });

  it("SessionObserver.emit() does not deliver a HookSignal the gate denies, but keeps it (D3)", async () => {
    const { observer } = collectingObserver();
    const delivered: unknown[] = [];
    observer.observe({ type: HookSignal }, (s) => delivered.push(s));
    observer.gate((p) => !(p instanceof HookSignal && p.point === "tool.post"));
    const bus = new HookBus(observer);
    await bus.emit("tool.post", {
      ...CALL,
      callId: "c",
      toolName: "t",
      args: {},
      result: "",
      resultSummary: "",
      durationMs: 1,
    });
    await bus.emit("session.start", { sessionId: "s1" });
    assert.equal(observer.byType(HookSignal).length, 2);
    assert.deepEqual(delivered.map((s) => (s as HookSignal).point), ["session.start"]);
  });
});

describe("SessionObserver filters", () => {
  it("observe({ type }) receives the instance payload, matching field values and the envelope", async () => {
    const { observer } = collectingObserver();
    const plans: Plan[] = [];
    const numbers: unknown[] = [];
    const adds: unknown[] = [];
    observer.observe({ type: Plan }, (p) => plans.push(p));
    observer.observe({ type: Number }, (n) => numbers.push(n));
    observer.observe({ type: MessageAdded }, (s) => adds.push(s));
    await observer.emit(new Signal({ data: new Plan(1) }));
    await observer.emit({ a: new Plan(2), b: new Plan(3), c: 4 });
    const added = new MessageAdded({ data: { id: "m" } });
    await observer.emit(added);
    assert.deepEqual(plans.map((p) => p.steps), [1, 2, 3]);
    assert.deepEqual(numbers, []); // 4 is a primitive, not a Number instance
    assert.deepEqual(adds, [added]);
  });

  it("observe({ role }) checks the envelope's emitterRole and receives the payload", async () => {
    const { observer } = collectingObserver();
    const seen: unknown[] = [];
    observer.observe({ role: "planner" }, (v) => seen.push(v));
    await observer.emit(new Signal({ data: "p", emitterRole: "planner" }));
    await observer.emit(new Signal({ data: "q", emitterRole: "critic" }));
    const bare = new Signal({ emitterRole: "planner" });
    await observer.emit(bare);
    assert.deepEqual(seen, ["p", bare]);
  });

  it("observe() AND-composes type, where and role on the payload", async () => {
    const { observer } = collectingObserver();
    const seen: number[] = [];
    observer.observe(
      { type: Plan, where: (p) => (p as Plan).steps > 1, role: "planner" },
      (p) => seen.push(p.steps),
    );
    await observer.emit(new Signal({ data: new Plan(2), emitterRole: "planner" }));
    await observer.emit(new Signal({ data: new Plan(1), emitterRole: "planner" }));
    await observer.emit(new Signal({ data: new Plan(3), emitterRole: "critic" }));
    await observer.emit(new Signal({ data: { inner: new Plan(5) }, emitterRole: "planner" }));
    assert.deepEqual(seen, [2]);
  });

  it("observe() rejects a spec without conditions and bad handlers, registering nothing", async () => {
    const { observer } = collectingObserver();
    assert.throws(() => observer.observe({}, () => {}), TypeError);
    assert.throws(() => observer.observe({ type: 1 as never }, () => {}), TypeError);
    assert.throws(() => observer.observe({ role: "r" }, null as never), TypeError);
    assert.deepEqual(await observer.emit("x"), []);
  });

  it("unobserve() removes every subscription of a handler and returns the count", async () => {
    const { observer } = collectingObserver();
    const handler = () => 1;
    observer.observe({ type: Signal }, handler);
    observer.observe({ role: "r" }, handler);
    const other = observer.observe({ type: Signal }, () => 2);
    assert.equal(observer.unobserve(handler), 2);
    assert.equal(observer.unobserve(handler), 0);
    assert.deepEqual(await observer.emit("x"), [2]);
    assert.equal(other(), 1);
    assert.equal(other(), 0);
  });

  it("SessionObserver hands gates, routes and predicates the signal itself when data is null (X19)", async () => {
    const { observer } = collectingObserver();
    const gated: unknown[] = [];
    const routed: unknown[] = [];
    const predicated: unknown[] = [];
    observer.gate((p) => {
      gated.push(p);
      return true;
    });
    observer.route((p) => {
      routed.push(p);
      return false;
    }, { into: "x" });
    observer.observe({ where: (p) => (predicated.push(p), true) }, () => {});
    const signal = new HookSignal({ point: "session.start", payload: { sessionId: "s" } });
    await observer.emit(signal);
    assert.deepEqual([gated[0], routed[0], predicated[0]], [signal, signal, signal]);
  });

  it("byType() lists stored events, allowed or gated, with the envelope fallback", async () => {
    const { observer } = collectingObserver();
    observer.gate((p) => p !== "deny");
    await observer.emit("deny");
    await observer.emit(new Signal({ data: new Plan(1) }));
    assert.equal(observer.byType(Signal).length, 2);
    assert.deepEqual(observer.byType(Plan).map((p) => p.steps), [1]);
  });

  it("observer handlers get the Session as context, else the observer", async () => {
    const session = new Session();
    let context: unknown;
    session.observe({ type: Signal }, (_v, c) => {
      context = c;
    });
    await session.emit("x");
    assert.equal(context, session);
    const { observer } = collectingObserver();
    observer.observe({ type: Signal }, (_v, c) => {
      context = c;
    });
    await observer.emit("x");
    assert.equal(context, observer);
  });
});

describe("SessionObserver failure isolation (X10)", () => {
  it("SessionObserver.emit() isolates a throwing subscriber: stored, others run, onError told", async () => {
    const { observer, errors } = collectingObserver();
    const boom = new Error("boom");
    observer.observe({ type: Signal }, () => {
      throw boom;
    });
    // deno-lint-ignore require-await
    observer.observe({ type: Signal }, async () => {
      throw new Error("async boom");
    });
    observer.observe({ type: Signal }, () => "ok");
    assert.deepEqual(await observer.emit("x"), ["ok"]);
    assert.equal(observer.events.length, 1);
    assert.deepEqual(errors.map(([e, w]) => [(e as Error).message, w]), [
      ["boom", "subscriber"],
      ["async boom", "subscriber"],
    ]);
  });

  it("SessionObserver.emit() isolates a throwing route condition and predicate", async () => {
    const { observer, errors } = collectingObserver();
    observer.route(() => {
      throw new Error("route");
    }, { into: "a" });
    observer.route(() => true, { into: "b" });
    observer.observe({
      where: () => {
        throw new Error("where");
      },
    }, () => "never");
    observer.observe({ type: Signal }, () => "ok");
    assert.deepEqual(await observer.emit("x"), ["ok"]);
    assert.equal(observer.routed("b").length, 1);
    assert.deepEqual(errors.map(([, w]) => w), ["route", "where"]);
  });

  it("SessionObserver.emit() survives a hostile payload that throws on inspection", async () => {
    const { observer, errors } = collectingObserver();
    const hostile = new Proxy({}, {
      ownKeys() {
        throw new Error("no keys");
      },
      getPrototypeOf() {
        throw new Error("no prototype");
      },
    });
    observer.observe({ type: Plan }, () => "plan");
    observer.observe({ where: () => true }, () => "ok");
    assert.deepEqual(await observer.emit(new Signal({ data: hostile })), ["ok"]);
    assert.equal(observer.events.length, 1);
    assert.deepEqual(observer.byType(Plan), []);
    assert.ok(errors.length >= 1);
  });

  it("SessionObserver.emit() survives an onError that throws", async () => {
    const observer = new SessionObserver({
      onError: () => {
        throw new Error("reporter");
      },
    });
    observer.observe({ type: Signal }, () => {
      throw new Error("x");
    });
    assert.deepEqual(await observer.emit("x"), []);
  });
});

describe("SessionObserver gate and authorize (X4)", () => {
  it("authorize() is true without a gate and records nothing", async () => {
    const { observer } = collectingObserver();
    assert.equal(await observer.authorize(toolInvocation("t")), true);
    assert.equal(observer.events.length, 0);
  });

  it("authorize() denial stores, delivers and persists GateDenied even though the gate denies everything", async () => {
    const store = new MemoryStore();
    const { observer } = collectingObserver();
    observer.bindDbPersistence("s1", store);
    const delivered: GateDenied[] = [];
    observer.observe({ type: GateDenied }, (s) => delivered.push(s));
    observer.gate(() => false);
    const action = toolInvocation("bash", { command: "rm -rf /" }, "b1");
    assert.equal(await observer.authorize(action), false);
    assert.equal(delivered.length, 1);
    assert.equal(delivered[0].data, action);
    assert.equal(observer.byType(GateDenied).length, 1);
    const rows = await store.listSessionSignals("s1");
    assert.deepEqual(rows.map((r) => r.kind), ["GateDenied"]);
    assert.deepEqual((rows[0].payload.data as { function: string }).function, "bash");
  });

  it("authorize() fails closed when the gate throws or rejects, reporting it", async () => {
    const { observer, errors } = collectingObserver();
    observer.gate(() => {
      throw new Error("sync");
    });
    assert.equal(await observer.authorize("a"), false);
    observer.gate(() => Promise.reject(new Error("async")));
    assert.equal(await observer.authorize("b"), false);
    // deno-lint-ignore require-await
    observer.gate(async (p) => p === "ok");
    assert.equal(await observer.authorize("ok"), true);
    assert.deepEqual(errors.map(([e, w]) => [(e as Error).message, w]), [["sync", "gate"], [
      "async",
      "gate",
    ]]);
    assert.equal(observer.byType(GateDenied).length, 2);
  });

  it("the gate never suppresses HookBlocked audit signals", async () => {
    const { observer } = collectingObserver();
    const seen: unknown[] = [];
    let asked = 0;
    observer.gate(() => {
      asked++;
      return false;
    });
    observer.observe({ type: HookBlocked }, (s) => seen.push(s));
    await observer.emit(
      new HookBlocked({ point: "tool.pre", callId: "c", toolName: "t", error: "no" }),
    );
    assert.equal(seen.length, 1);
    assert.equal(asked, 0);
  });

  it("an async gate is awaited and a denial still stores the event", async () => {
    const { observer } = collectingObserver();
    observer.gate(async (p) => {
      await tick(1);
      return p === "yes";
    });
    observer.observe({ type: Signal }, () => "delivered");
    assert.deepEqual(await observer.emit("no"), []);
    assert.deepEqual(await observer.emit("yes"), ["delivered"]);
    assert.equal(observer.events.length, 2);
  });
});

describe("SessionObserver persistence", () => {
  it("bindDbPersistence() writes one sanitized row per signal with kind and opId", async () => {
    const store = new MemoryStore();
    const { observer } = collectingObserver();
    observer.bindDbPersistence("s1", store);
    await observer.emit({ step: 1 });
    await observer.emit(
      new HookBlocked({ point: "tool.pre", callId: "c9", toolName: "t", error: "x" }),
    );
    await observer.emit(new Plan(1)); // not an element: wrapped in a Signal
    const rows = await store.listSessionSignals("s1");
    assert.deepEqual(rows.map((r) => [r.kind, r.opId]), [["Signal", ""], ["HookBlocked", "c9"], [
      "Signal",
      "",
    ]]);
    assert.deepEqual(rows[0].payload.data, { step: 1 });
    assert.deepEqual(await observer.emit("y"), [], "persistence adds no result");
  });

  it("unbindDbPersistence() stops writing and binding again replaces the binding", async () => {
    const a = new MemoryStore();
    const b = new MemoryStore();
    const { observer } = collectingObserver();
    observer.bindDbPersistence("s1", a);
    observer.bindDbPersistence("s1", b);
    await observer.emit("one");
    observer.unbindDbPersistence();
    observer.unbindDbPersistence();
    await observer.emit("two");
    assert.equal((await a.listSessionSignals("s1")).length, 0);
    assert.equal((await b.listSessionSignals("s1")).length, 1);
    assert.throws(() => observer.bindDbPersistence("s1"), TypeError);
  });

  it("a failing store never breaks emit: the failure goes to onError and stored rows stay", async () => {
    const store = new MemoryStore();
    const { observer, errors } = collectingObserver();
    observer.bindDbPersistence("s1", store);
    observer.observe({ type: Signal }, () => "still delivered");
    await observer.emit("before");
    const rowsBefore = await store.listSessionSignals("s1");
    const failing = {
      insertSessionSignal: () => Promise.reject(new Error("disk full")),
    } as unknown as MemoryStore;
    observer.bindDbPersistence("s1", failing);
    assert.deepEqual(await observer.emit("after"), ["still delivered"]);
    assert.deepEqual(errors.map(([e, w]) => [(e as Error).message, w]), [["disk full", "persist"]]);
    assert.deepEqual(await store.listSessionSignals("s1"), rowsBefore);
    assert.equal(observer.events.length, 2);
  });
});

describe("SessionObserver maxEvents", () => {
  it("maxEvents evicts the oldest events from events, streams and byType but not from the store", async () => {
    const store = new MemoryStore();
    const observer = new SessionObserver({ maxEvents: 3 });
    observer.bindDbPersistence("s1", store);
    observer.route((p) => typeof p === "number" && p % 2 === 0, { into: "even" });
    for (let i = 0; i < 10; i++) await observer.emit(i);
    assert.deepEqual(observer.events.map((e) => (e as Signal).data), [7, 8, 9]);
    assert.deepEqual(observer.routed("even").map((e) => (e as Signal).data), [8]);
    assert.equal(observer.byType(Signal).length, 3);
    assert.equal((await store.listSessionSignals("s1")).length, 10);
  });

  it("maxEvents evicts only the oldest emission of an envelope emitted twice from streams", async () => {
    const observer = new SessionObserver({ maxEvents: 3 });
    observer.route(() => true, { into: "all" });
    observer.route((p) => p === "twice", { into: "all" }); // one emission, two entries
    const again = new Signal({ data: 1 });
    await observer.emit(again);
    await observer.emit(again);
    await observer.emit("twice");
    await observer.emit(3); // evicts the first emission of `again` only
    assert.deepEqual(observer.events, [again, observer.events[1], observer.events[2]]);
    assert.deepEqual(observer.routed("all").map((e) => (e as Signal).data), [
      1,
      "twice",
      "twice",
      3,
    ]);
    await observer.emit(4); // evicts the second emission of `again`
    await observer.emit(5); // evicts "twice": both of its entries
    assert.deepEqual(observer.routed("all").map((e) => (e as Signal).data), [3, 4, 5]);
  });

  it("maxEvents keeps streams aligned with events across compaction", async () => {
    const observer = new SessionObserver({ maxEvents: 4 });
    observer.route((p) => (p as number) % 3 === 0, { into: "threes" });
    for (let i = 0; i < 5000; i++) await observer.emit(i);
    assert.deepEqual(observer.routed("threes").map((e) => (e as Signal).data), [4998]);
    assert.deepEqual(observer.events.map((e) => (e as Signal).data), [4996, 4997, 4998, 4999]);
  });

  it("maxEvents stays exact across many evictions", async () => {
    const observer = new SessionObserver({ maxEvents: 5 });
    for (let i = 0; i < 5000; i++) await observer.emit(i);
    assert.deepEqual(observer.events.map((e) => (e as Signal).data), [
      4995,
      4996,
      4997,
      4998,
      4999,
    ]);
  });

  it("maxEvents must be a positive integer", () => {
    assert.throws(() => new SessionObserver({ maxEvents: 0 }), RangeError);
    assert.throws(() => new SessionObserver({ maxEvents: 2.5 }), RangeError);
    assert.equal(new SessionObserver().maxEvents, Infinity);
  });
});

describe("SessionObserver records hook signals from a bus", () => {
  it("a bus records a HookSignal with a frozen copy of the payload, even with nothing subscribed", async () => {
    const observer = new SessionObserver();
    const bus = new HookBus(observer);
    const payload = { sessionId: "s1", nested: { a: 1 } };
    const before = Date.now();
    await bus.emit("session.start", payload);
    const after = Date.now();
    payload.sessionId = "changed";
    const [signal] = observer.events as HookSignal[];
    assert.ok(signal instanceof HookSignal);
    assert.equal(signal.point, "session.start");
    assert.equal(signal.payload.sessionId, "s1");
    assert.equal(signal.payload.nested, payload.nested);
    assert.notEqual(signal.payload, payload);
    assert.ok(Object.isFrozen(signal.payload));
    assert.ok(signal.createdAt >= before && signal.createdAt <= after);
    assert.equal(signal.data, null);
  });

  it("every read of a recorded hook signal gives the same object", async () => {
    const observer = new SessionObserver();
    const bus = new HookBus(observer);
    await bus.emit("session.start", { sessionId: "s1" });
    const first = observer.events[0];
    assert.equal(observer.events[0], first);
    assert.equal(observer.byType(HookSignal)[0], first);
    assert.equal((first as HookSignal).id, (observer.events[0] as HookSignal).id);
  });

  it("a frozen payload is recorded as is", async () => {
    const observer = new SessionObserver();
    const bus = new HookBus(observer);
    const payload = Object.freeze({ sessionId: "s1" });
    await bus.emit("session.start", payload);
    assert.equal((observer.events[0] as HookSignal).payload, payload);
  });

  it("hook signals recorded before a subscriber, route or gate stay readable; later ones reach them", async () => {
    const observer = new SessionObserver({ maxEvents: 3 });
    const bus = new HookBus(observer);
    await bus.emit("session.start", { sessionId: "early" });
    const seen: string[] = [];
    observer.observe({ type: HookSignal }, (s) => void seen.push(s.payload.sessionId as string));
    observer.route((p) => p instanceof HookSignal, { into: "hooks" });
    await bus.emit("session.start", { sessionId: "late" });
    assert.deepEqual(seen, ["late"]);
    assert.deepEqual(
      observer.routed("hooks").map((s) => (s as HookSignal).payload.sessionId),
      ["late"],
    );
    assert.deepEqual(
      observer.events.map((s) => (s as HookSignal).payload.sessionId),
      ["early", "late"],
    );
    observer.gate(() => false);
    await bus.emit("session.start", { sessionId: "gated" });
    await bus.emit("session.start", { sessionId: "evicts early" });
    assert.deepEqual(
      observer.byType(HookSignal).map((s) => s.payload.sessionId),
      ["late", "gated", "evicts early"],
    );
    assert.deepEqual(seen, ["late"]);
  });

  it("a tool.* payload is recorded without its signal, as it was at emit time, read late or at once", async () => {
    for (const subscribed of [false, true]) {
      const observer = new SessionObserver();
      const seen: HookSignal[] = [];
      if (subscribed) observer.observe({ type: HookSignal }, (s) => void seen.push(s));
      const bus = new HookBus(observer);
      const payload: Record<string, unknown> = {
        ...CALL,
        toolName: "t",
        callId: "c",
        args: {},
        argsSummary: "",
      };
      await bus.emit("tool.pre", payload as never);
      payload.toolName = "changed after emit";
      delete payload.callId;
      const recorded = observer.byType(HookSignal)[0];
      assert.deepEqual(Object.keys(recorded.payload), [
        "source",
        "toolName",
        "callId",
        "args",
        "argsSummary",
      ]);
      assert.equal(recorded.payload.toolName, "t");
      assert.ok(Object.isFrozen(recorded.payload));
      assert.equal(recorded.payload.signal, undefined);
      assert.equal(JSON.parse(JSON.stringify(recorded.toJSON())).payload.callId, "c");
      if (subscribed) assert.equal(seen[0], recorded);
    }
  });

  it("hook signals evicted unread leave the newest maxEvents, in order", async () => {
    const observer = new SessionObserver({ maxEvents: 2 });
    const bus = new HookBus(observer);
    for (let i = 0; i < 2000; i++) await bus.emit("session.start", { sessionId: `s${i}` });
    assert.deepEqual(
      observer.events.map((s) => (s as HookSignal).payload.sessionId),
      ["s1998", "s1999"],
    );
  });
});
