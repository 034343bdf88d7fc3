// What model-chosen text and many registrations cost: tool-name globs match in O(glob × name)
// with no backtracking, and registering (or removing) tens of thousands of handlers is linear
// overall, while every emission still runs the snapshot it started with. Bounds are generous:
// they separate "returns at once" from the tens of seconds the old code took, never a speed.

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { globMatches } from "../../core/_glob.ts";
import { HookBus } from "../../hooks/mod.ts";
import { SessionObserver } from "../../session/mod.ts";
import { CALL } from "../_call_fields.ts";

const post = (toolName: string) => ({
  ...CALL,
  callId: "c",
  toolName,
  args: {},
  result: 1,
  resultSummary: "1",
  durationMs: 1,
});

const pre = (toolName: string) => ({ ...CALL, callId: "c", toolName, args: {}, argsSummary: "{}" });

/** The obvious (backtracking) reading of a glob, for short inputs only. */
function reference(glob: string, text: string): boolean {
  let source = "^";
  for (const ch of glob) {
    if (ch === "*") source += "[\\s\\S]*";
    else if (ch === "?") source += "[\\s\\S]";
    else source += ch.replace(/[\\^$.|+()[\]{}/*?-]/g, (c) => `\\${c}`);
  }
  return new RegExp(`${source}$`).test(text);
}

async function elapsed(work: () => unknown): Promise<number> {
  const start = performance.now();
  await work();
  return performance.now() - start;
}

describe("tool-name globs match in linear time", () => {
  it("globMatches() agrees with the backtracking reading on short inputs", () => {
    const alphabet = fc.constantFrom("a", "b", "_", "*", "?", ".", "\n");
    const text = fc.string({ unit: fc.constantFrom("a", "b", "_", ".", "\n", "*"), maxLength: 12 });
    fc.assert(
      fc.property(fc.string({ unit: alphabet, maxLength: 8 }), text, (glob, name) => {
        assert.equal(globMatches(glob, name), reference(glob, name), `${glob} vs ${name}`);
      }),
      { numRuns: 3000 },
    );
    assert.equal(globMatches("*_file", "write_file"), true);
    assert.equal(globMatches("ba?h", "bash"), true);
    assert.equal(globMatches("ba?h", "bah"), false);
    assert.equal(globMatches("", ""), true);
    assert.equal(globMatches("*", ""), true);
  });

  it("HookBus match '*_*_*_x' against a 10 000-character tool name returns within 2 s", async () => {
    const bus = new HookBus();
    const seen: string[] = [];
    bus.on("tool.post", (p) => {
      seen.push(p.toolName);
    }, { match: "*_*_*_x" });
    const name = "_".repeat(10_000);
    const ms = await elapsed(() => bus.emit("tool.post", post(name)));
    assert.ok(ms < 2_000, `the match took ${ms.toFixed(0)} ms`);
    assert.deepEqual(seen, []);
    await bus.emit("tool.post", post(`${name}x`));
    assert.equal(seen.length, 1);
  });

  it("a 12-star glob against a 10 000-character tool name returns within 2 s", async () => {
    const bus = new HookBus();
    let hits = 0;
    bus.on("tool.pre", () => {
      hits++;
    }, { match: `${"*a".repeat(12)}*b` });
    const ms = await elapsed(() => bus.emit("tool.pre", pre("a".repeat(10_000))));
    assert.ok(ms < 2_000, `the match took ${ms.toFixed(0)} ms`);
    assert.equal(hits, 0);
    await bus.emit("tool.pre", pre(`${"a".repeat(10_000)}b`));
    assert.equal(hits, 1);
  });
});

describe("registration is linear overall and keeps emission snapshots", () => {
  const N = 40_000;

  it(`HookBus registers and removes ${N} handlers within 10 s each`, async () => {
    const bus = new HookBus();
    let calls = 0;
    const handler = () => {
      calls++;
    };
    const disposers: (() => void)[] = [];
    const on = await elapsed(() => {
      for (let i = 0; i < N; i++) disposers.push(bus.on("tool.post", handler));
    });
    assert.ok(on < 10_000, `registering took ${on.toFixed(0)} ms`);
    assert.equal(bus.count("tool.post"), N);
    await bus.emit("tool.post", post("t"));
    assert.equal(calls, N);
    const off = await elapsed(() => {
      for (const dispose of disposers) dispose();
    });
    assert.ok(off < 10_000, `removing took ${off.toFixed(0)} ms`);
    assert.equal(bus.count("tool.post"), 0);

    const ranked = await elapsed(() => {
      for (let i = 0; i < N; i++) bus.on("tool.pre", handler, { priority: i % 5 });
    });
    assert.ok(ranked < 10_000, `registering with priorities took ${ranked.toFixed(0)} ms`);
    assert.equal(bus.count("tool.pre"), N);
  });

  it(`SessionObserver takes ${N} subscriptions and ${N} routes within 10 s each`, async () => {
    const observer = new SessionObserver();
    let calls = 0;
    const subscribe = await elapsed(() => {
      for (let i = 0; i < N; i++) {
        observer.observe({ where: () => true }, () => {
          calls++;
        });
      }
    });
    assert.ok(subscribe < 10_000, `observing took ${subscribe.toFixed(0)} ms`);
    const route = await elapsed(() => {
      for (let i = 0; i < N; i++) observer.route(() => i === 0, { into: "first" });
    });
    assert.ok(route < 10_000, `routing took ${route.toFixed(0)} ms`);
    await observer.emit({ n: 1 });
    assert.equal(calls, N);
    assert.equal(observer.routed("first").length, 1);
  });

  it("a handler added or removed while an emission is pending does not change that emission", async () => {
    const bus = new HookBus();
    const order: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => release = resolve);
    for (let i = 0; i < 3; i++) bus.on("tool.post", () => void order.push(`a${i}`));
    bus.on("tool.post", () => gate);
    const removed = () => void order.push("removed");
    bus.on("tool.post", removed);
    const pending = bus.emit("tool.post", post("t"));
    // Registrations in place after the copy: none of them reaches the pending emission.
    for (let i = 0; i < 3; i++) bus.on("tool.post", () => void order.push(`late${i}`));
    bus.off("tool.post", removed);
    release();
    await pending;
    assert.deepEqual(order, ["a0", "a1", "a2", "removed"]);
    order.length = 0;
    await bus.emit("tool.post", post("t"));
    assert.deepEqual(order, ["a0", "a1", "a2", "late0", "late1", "late2"]);
  });

  it("a handler that registers during a synchronous emission runs from the next one", async () => {
    for (const options of [undefined, { match: "t" }]) {
      const bus = new HookBus();
      const order: string[] = [];
      let first = true;
      bus.on("tool.post", () => {
        order.push("first");
        if (!first) return;
        first = false;
        // Two registrations: the second one changes the copy made by the first in place.
        bus.on("tool.post", () => void order.push("added"));
        bus.on("tool.post", () => void order.push("also"));
      }, options);
      await bus.emit("tool.post", post("t"));
      assert.deepEqual(order, ["first"], JSON.stringify(options));
      await bus.emit("tool.post", post("t"));
      assert.deepEqual(order, ["first", "first", "added", "also"]);
    }
  });

  it("decide() keeps its snapshot when a tool.pre handler registers more", async () => {
    const bus = new HookBus();
    const seen: string[] = [];
    bus.on("tool.pre", () => {
      seen.push("one");
      bus.on("tool.pre", () => {
        seen.push("late");
        return { decision: "deny", reason: "late" };
      });
      return undefined;
    });
    const first = await bus.decide("tool.pre", pre("t"));
    assert.equal(first.verdict, "none");
    assert.deepEqual(seen, ["one"]);
    const second = await bus.decide("tool.pre", pre("t"));
    assert.equal(second.verdict, "deny");
  });

  it("an observer subscription added during delivery sees the next event only", async () => {
    const observer = new SessionObserver();
    const seen: string[] = [];
    observer.observe({ where: () => true }, (p) => {
      seen.push(`a:${(p as { n: number }).n}`);
      if (seen.length === 1) {
        observer.observe(
          { where: () => true },
          (q) => void seen.push(`b:${(q as { n: number }).n}`),
        );
        observer.route(() => true, { into: "late" });
      }
    });
    await observer.emit({ n: 1 });
    await observer.emit({ n: 2 });
    assert.deepEqual(seen, ["a:1", "a:2", "b:2"]);
    assert.equal(observer.routed("late").length, 1);
  });
});
