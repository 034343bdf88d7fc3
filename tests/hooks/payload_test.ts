import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { HookBus, HookSignal } from "../../mod.ts";
import { renderJson } from "../../hooks/mod.ts";

describe("HookBus with hostile payloads", () => {
  it("cyclic, huge and odd payloads never break emit or the recorded HookSignal", async () => {
    const recorded: HookSignal[] = [];
    const bus = new HookBus({ emit: (s) => void recorded.push(s as HookSignal) });
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    const huge = {
      blob: "x".repeat(5_000_000),
      list: Array.from({ length: 100_000 }, (_, i) => i),
    };
    const odd = {
      big: 1n,
      sym: Symbol("s"),
      fn: () => 1,
      map: new Map([[1, 2]]),
      err: new Error("e"),
    };
    let handled = 0;
    bus.on("tool.post", () => void handled++);
    for (const payload of [cyclic, huge, odd]) {
      await bus.emit("tool.post", payload as never);
    }
    assert.equal(handled, 3);
    assert.equal(recorded.length, 3);
    for (const signal of recorded) {
      assert.ok(signal instanceof HookSignal);
      JSON.parse(renderJson(signal));
      JSON.parse(JSON.stringify(signal.toJSON()));
    }
    assert.equal(recorded[0].payload.self, cyclic);
  });

  it("property: any object payload is delivered unchanged to handlers and recorded", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(fc.string(), fc.anything(), { maxKeys: 6 }),
        async (payload) => {
          const recorded: HookSignal[] = [];
          const bus = new HookBus({ emit: (s) => void recorded.push(s as HookSignal) });
          let seen: unknown;
          bus.on("session.end", (p) => void (seen = p));
          await bus.emit("session.end", payload as never);
          assert.equal(seen, payload);
          assert.equal(recorded.length, 1);
          assert.deepEqual({ ...recorded[0].payload }, { ...payload });
        },
      ),
      { numRuns: 200 },
    );
  });
});
