/**
 * An A/B run of the bus hot paths (the runner and its arguments: `_ab.ts`):
 *
 * ```sh
 * deno run -A bench/bus_ab.ts /tmp/before [rounds] [after-checkout] [--only=<regexp>]
 * ```
 *
 * Scenarios (k = 5 handlers, the cases of `emit_bench.ts`, `blocking_bench.ts` and
 * `decision_fold_bench.ts`):
 * - `emit-zero`: the synchronous call of `emit` on a point with no handlers (not awaited);
 * - `emit-sync/5` / `emit-async/5`: `await emit("tool.post")` through 5 sync / async handlers;
 * - `emit-options/5`: the same 5 sync handlers registered with `priority` and `match` (the
 *   option-aware loop);
 * - `blocking/5`: `blockingEmit("tool.pre")` through 5 guards that pass;
 * - `decision-verdicts/5`: `decide("tool.pre")`, 5 handlers that allow;
 * - `decision-fold/5`: `decide("tool.pre")`, 5 handlers that rewrite the arguments (idempotently);
 * - `decision-post/5`: `decide("tool.post")`, 5 handlers that replace the result.
 *
 * The handlers take the payload and return decisions in every version since the bus has had a
 * decision fold, so both versions run the same handler code.
 *
 * @module
 */

import { abArgs, importFrom, runAB, type Scenario } from "./_ab.ts";

// deno-lint-ignore no-explicit-any
type Any = any;

let sink = 0;
const K = 5;
const N = 5_000;
/** Operations per batch of the cases that take tens of nanoseconds (a batch of about a millisecond). */
const FAST = 50_000;
const base = { signal: new AbortController().signal, source: { kind: "local" } };
const PRE = Object.freeze({
  ...base,
  toolName: "bash",
  callId: "c1",
  args: Object.freeze({ command: "ls", n: 0 }),
  argsSummary: "",
});
const POST = Object.freeze({
  ...base,
  toolName: "bash",
  callId: "c1",
  args: Object.freeze({ command: "ls" }),
  result: "ok",
  resultSummary: "ok",
  durationMs: 1,
});

/** A bus with `handlers` on `point` (registered with `options` when given). */
function busWith(
  hooks: Any,
  point: string,
  handlers: ReadonlyArray<(payload: Any) => unknown>,
  options?: Record<string, unknown>,
): Any {
  const bus = new hooks.HookBus();
  for (const handler of handlers) {
    if (options) bus.on(point, handler, options);
    else bus.on(point, handler);
  }
  return bus;
}

const times = <T>(make: (i: number) => T): T[] => Array.from({ length: K }, (_, i) => make(i));
const count = (): void => {
  sink++;
};

/** A batch of `n` awaited calls of `once`. */
function batch(once: () => Promise<unknown>, n = N): () => Promise<void> {
  return async () => {
    for (let i = 0; i < n; i++) await once();
  };
}

const scenarios: Scenario<Any>[] = [
  {
    name: "emit-zero",
    ops: FAST,
    make(hooks) {
      const bus = new hooks.HookBus();
      return () => {
        for (let i = 0; i < FAST; i++) if (bus.emit("tool.post", POST) === undefined) sink--;
        return Promise.resolve();
      };
    },
  },
  {
    name: `emit-sync/${K}`,
    ops: FAST,
    make(hooks) {
      const bus = busWith(hooks, "tool.post", times(() => count));
      return batch(() => bus.emit("tool.post", POST), FAST);
    },
  },
  {
    name: `emit-async/${K}`,
    ops: N,
    make(hooks) {
      const bus = busWith(
        hooks,
        "tool.post",
        // deno-lint-ignore require-await -- an async handler is the point: it returns a promise.
        times(() => async () => count()),
      );
      return batch(() => bus.emit("tool.post", POST));
    },
  },
  {
    name: `emit-options/${K}`,
    ops: N,
    make(hooks) {
      const bus = busWith(hooks, "tool.post", times(() => count), { priority: 1, match: "ba*" });
      return batch(() => bus.emit("tool.post", POST));
    },
  },
  {
    name: `blocking/${K}`,
    ops: N,
    make(hooks) {
      const bus = busWith(
        hooks,
        "tool.pre",
        times((i) => ({ args }: Any) => {
          if (args.n === i + 100) throw new Error("refused");
          sink++;
        }),
      );
      return batch(() => bus.blockingEmit("tool.pre", PRE));
    },
  },
  {
    name: `decision-verdicts/${K}`,
    ops: N,
    make(hooks) {
      const bus = busWith(hooks, "tool.pre", times(() => () => ({ decision: "allow" })));
      return batch(async () => sink += (await bus.decide("tool.pre", PRE)).verdict.length);
    },
  },
  {
    name: `decision-fold/${K}`,
    ops: N / 5,
    make(hooks) {
      const bus = busWith(
        hooks,
        "tool.pre",
        times((k) => {
          const key = `f${k}`;
          return ({ args }: Any) => ({ decision: "allow", updatedArgs: { ...args, [key]: k + 1 } });
        }),
      );
      return batch(
        async () => sink += (await bus.decide("tool.pre", PRE)).verdict.length,
        N / 5,
      );
    },
  },
  {
    name: `decision-post/${K}`,
    ops: N,
    make(hooks) {
      const bus = busWith(
        hooks,
        "tool.post",
        times((k) => () => ({ updatedResult: k === K - 1 ? "ok" : `r${k}` })),
      );
      return async () => {
        let fold: Any;
        for (let i = 0; i < N; i++) fold = await bus.decide("tool.post", POST);
        if (fold.result !== "ok") throw new Error(`A/B is broken: ${fold.result}`);
      };
    },
  },
];

const args = abArgs("bus_ab.ts");
await runAB(
  "bus",
  [await importFrom(args.before, "hooks/mod.ts"), await importFrom(args.after, "hooks/mod.ts")],
  scenarios,
  args,
);
if (sink === 0) throw new Error("A/B is broken: no hook ran");
