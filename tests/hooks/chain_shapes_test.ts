import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { HookBus, StopHook } from "../../mod.ts";
import { CALL } from "../_call_fields.ts";

// `emit` runs a chain synchronously and hands over to the async loop at the first handler that
// throws or returns a thenable; chains of async functions take their own awaiting loop.
// These tests walk every length around the hand-over points and every position of the unusual
// handler, so each path keeps the same order, isolation, StopHook and blocking rules.

const TOOL_POST = {
  ...CALL,
  callId: "c1",
  toolName: "reader",
  args: {},
  result: "ok",
  resultSummary: "ok",
  durationMs: 1,
};
const TOOL_PRE = { ...CALL, toolName: "reader", callId: "c1", args: {}, argsSummary: "{}" };
const LENGTHS = [1, 2, 3, 5, 19, 20, 21, 25];

type Kind = "sync" | "thenable" | "async" | "throw" | "stop" | "reject" | "asyncStop";

function handler(seen: number[], at: number, kind: Kind): () => unknown {
  switch (kind) {
    case "sync":
      return () => void seen.push(at);
    case "thenable":
      return () => {
        seen.push(at);
        return { then: (resolve: () => void) => resolve() };
      };
    case "async":
      // deno-lint-ignore require-await
      return async () => void seen.push(at);
    case "throw":
      return () => {
        seen.push(at);
        throw new Error(`boom ${at}`);
      };
    case "stop":
      return () => {
        seen.push(at);
        throw new StopHook();
      };
    case "asyncStop":
      // deno-lint-ignore require-await
      return async () => {
        seen.push(at);
        throw new StopHook();
      };
    case "reject":
      // deno-lint-ignore require-await
      return async () => {
        seen.push(at);
        throw new Error(`boom ${at}`);
      };
  }
}

function busWith(
  n: number,
  special: number,
  kind: Kind,
  rest: Kind,
  errors: unknown[],
): { bus: HookBus; seen: number[] } {
  const seen: number[] = [];
  const bus = new HookBus(null, { onError: (error) => void errors.push(error) });
  for (let i = 0; i < n; i++) {
    const h = handler(seen, i, i === special ? kind : rest);
    bus.on("tool.post", h as never);
    bus.on("tool.pre", h as never);
  }
  return { bus, seen };
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

describe("HookBus chain shapes", () => {
  for (const rest of ["sync", "async"] as const) {
    it(`every handler runs once, in order, whatever the length (${rest} handlers)`, async () => {
      for (const n of LENGTHS) {
        const { bus, seen } = busWith(n, -1, "sync", rest, []);
        await bus.emit("tool.post", TOOL_POST);
        assert.deepEqual(seen, range(n), `n=${n}`);
      }
    });

    it(`a throwing handler is reported and the rest run, at any position (${rest})`, async () => {
      for (const n of LENGTHS) {
        for (const at of new Set([0, 1, n - 2, n - 1].filter((i) => i >= 0 && i < n))) {
          for (const kind of ["throw", "reject"] as const) {
            const errors: unknown[] = [];
            const { bus, seen } = busWith(n, at, kind, rest, errors);
            await bus.emit("tool.post", TOOL_POST);
            assert.deepEqual(seen, range(n), `n=${n} at=${at} ${kind}`);
            assert.deepEqual(errors.map((e) => (e as Error).message), [`boom ${at}`]);
          }
        }
      }
    });

    it(`StopHook ends the chain at any position (${rest})`, async () => {
      for (const n of LENGTHS) {
        for (const at of new Set([0, 1, n - 1].filter((i) => i >= 0 && i < n))) {
          for (const kind of ["stop", "asyncStop"] as const) {
            const errors: unknown[] = [];
            const { bus, seen } = busWith(n, at, kind, rest, errors);
            await bus.emit("tool.post", TOOL_POST);
            assert.deepEqual(seen, range(at + 1), `n=${n} at=${at} ${kind}`);
            assert.deepEqual(errors, []);
          }
        }
      }
    });

    it(`a blocking failure rejects and stops the chain at any position (${rest})`, async () => {
      for (const n of LENGTHS) {
        for (const at of new Set([0, n - 1])) {
          for (const kind of ["throw", "reject"] as const) {
            const { bus, seen } = busWith(n, at, kind, rest, []);
            await assert.rejects(bus.emit("tool.pre", TOOL_PRE), { message: `boom ${at}` });
            assert.deepEqual(seen, range(at + 1), `n=${n} at=${at} ${kind}`);
          }
        }
      }
    });
  }

  it("a non-promise thenable anywhere hands over to the awaiting loop", async () => {
    for (const n of LENGTHS) {
      for (const at of new Set([0, 1, n - 1])) {
        const { bus, seen } = busWith(n, at, "thenable", "sync", []);
        await bus.emit("tool.post", TOOL_POST);
        assert.deepEqual(seen, range(n), `n=${n} at=${at}`);
      }
    }
  });

  it("a chain of async functions with one plain function in it still awaits in order", async () => {
    const order: string[] = [];
    const bus = new HookBus();
    bus.on("tool.post", async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      order.push("slow async");
    });
    bus.on("tool.post", () => void order.push("plain"));
    // deno-lint-ignore require-await
    bus.on("tool.post", async () => void order.push("async"));
    await bus.emit("tool.post", TOOL_POST);
    assert.deepEqual(order, ["slow async", "plain", "async"]);
  });

  it("a handler added during an emission does not run in it", async () => {
    const bus = new HookBus();
    const seen: string[] = [];
    bus.on("tool.post", async () => {
      await Promise.resolve();
      seen.push("first");
      bus.on("tool.post", () => void seen.push("late"));
    });
    // deno-lint-ignore require-await
    bus.on("tool.post", async () => void seen.push("second"));
    await bus.emit("tool.post", TOOL_POST);
    assert.deepEqual(seen, ["first", "second"]);
    seen.length = 0;
    await bus.emit("tool.post", TOOL_POST);
    assert.deepEqual(seen, ["first", "second", "late"]);
  });
});
