/**
 * `decision-fold/<k>`: `HookBus.decide("tool.pre")` with k handlers that each return
 * `{ decision: "allow", updatedArgs }` (an idempotent rewrite: handler i sets key `f<i>`),
 * against a hand-written loop doing the same rewrites (each handler sees the rewritten arguments,
 * the rewritten arguments are frozen, the verdict is kept) and, since something rewrote, the
 * same loop once more on the final arguments (the re-check pass every rewrite now costs).
 * Target: at most 2× the loop.
 *
 * `decision-verdicts/<k>`: k handlers that return `{ decision: "allow" }` without rewriting
 * (the path that must not pay for re-checks), against a loop keeping the verdict.
 *
 * `hook-options/<k>`: `emit("tool.post")` through k handlers registered with options (`priority`
 * and `match`, which take the option-aware path) against the same k handlers registered plainly.
 *
 * `hook-options-unused/<k>`: the same with `priority` only, which is settled at registration:
 * it must cost nothing per emit.
 *
 * @module
 */

import { HookBus } from "../hooks/mod.ts";
import { KS, sink, warm } from "./_peers.ts";
import { BATCH } from "./_table.ts";
import type { ToolSource } from "../core/tool_source.ts";

type Args = Readonly<Record<string, unknown>>;
type Payload = {
  toolName: string;
  callId: string;
  args: Args;
  argsSummary: string;
  signal: AbortSignal;
  source: ToolSource;
};
type Rewrite = (payload: Payload) => { decision: "allow"; updatedArgs: Record<string, unknown> };

const PAYLOAD: Payload = Object.freeze({
  signal: new AbortController().signal,
  source: { kind: "local" } as const,
  toolName: "bash",
  callId: "c1",
  args: Object.freeze({ command: "ls", n: 0 }),
  argsSummary: '{"command":"ls","n":0}',
});

function rewriter(i: number): Rewrite {
  const key = `f${i}`;
  return ({ args }) => {
    sink.total += 1;
    return { decision: "allow", updatedArgs: { ...args, [key]: i + 1 } };
  };
}

/** Whether two flat argument objects have the same keys and values. */
function sameFlat(a: Args, b: Args): boolean {
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const key of keys) if (!Object.is(a[key], b[key])) return false;
  return true;
}

for (const k of KS) {
  const group = `decision-fold/${k}`;
  const handlers = Array.from({ length: k }, (_, i) => rewriter(i));
  const bus = new HookBus();
  for (const handler of handlers) bus.on("tool.pre", handler);
  const floor = (): number => {
    let payload = PAYLOAD;
    let verdict = 0;
    for (let pass = 0; pass < 2; pass++) {
      let rewrote = false;
      for (let i = 0; i < handlers.length; i++) {
        const d = handlers[i](payload);
        if (d.decision === "allow") {
          if (verdict < 1) verdict = 1;
          const args = Object.freeze({ ...d.updatedArgs });
          if (!sameFlat(args, payload.args)) rewrote = true;
          payload = { ...payload, args };
        }
      }
      if (!rewrote) break;
    }
    return verdict + Object.keys(payload.args).length;
  };
  const expected = k === 0 ? undefined : k;
  const fold = await bus.decide("tool.pre", PAYLOAD);
  const got = fold.updatedArgs?.[`f${k - 1}`];
  if (got !== expected || fold.error !== undefined) {
    throw new Error(`Bench "${group}" is broken: fold gave n=${got}, expected ${expected}`);
  }
  await warm([floor, () => bus.decide("tool.pre", PAYLOAD)]);
  Deno.bench({
    name: "floor",
    group,
    baseline: true,
    fn: async () => {
      for (let i = 0; i < BATCH; i++) await floor();
    },
  });
  Deno.bench({
    name: "hookscope",
    group,
    fn: async () => {
      for (let i = 0; i < BATCH; i++) await bus.decide("tool.pre", PAYLOAD);
    },
  });
}

for (const k of KS) {
  const group = `decision-verdicts/${k}`;
  const handlers = Array.from({ length: k }, () => (): { decision: "allow" } => {
    sink.total += 1;
    return { decision: "allow" };
  });
  const bus = new HookBus();
  for (const handler of handlers) bus.on("tool.pre", handler);
  const floor = (): number => {
    let verdict = 0;
    for (let i = 0; i < handlers.length; i++) {
      if (handlers[i]().decision === "allow" && verdict < 1) verdict = 1;
    }
    return verdict;
  };
  const fold = await bus.decide("tool.pre", PAYLOAD);
  if (fold.verdict !== (k === 0 ? "none" : "allow")) {
    throw new Error(`Bench "${group}" is broken: verdict ${fold.verdict}`);
  }
  await warm([floor, () => bus.decide("tool.pre", PAYLOAD)]);
  Deno.bench({
    name: "floor",
    group,
    baseline: true,
    fn: async () => {
      for (let i = 0; i < BATCH; i++) await floor();
    },
  });
  Deno.bench({
    name: "hookscope",
    group,
    fn: async () => {
      for (let i = 0; i < BATCH; i++) await bus.decide("tool.pre", PAYLOAD);
    },
  });
}

const POST = {
  signal: new AbortController().signal,
  source: { kind: "local" } as const,
  callId: "c1",
  toolName: "bash",
  args: {},
  result: "ok",
  resultSummary: "ok",
  durationMs: 1,
};

for (const k of KS) {
  const group = `hook-options/${k}`;
  const plain = new HookBus();
  const options = new HookBus();
  for (let i = 0; i < k; i++) {
    const handler = (): void => {
      sink.total += 1;
    };
    plain.on("tool.post", handler);
    options.on("tool.post", handler, { priority: i % 3, match: "ba*" });
  }
  await emitPair(group, plain, options);
}

// `hook-options-unused/<k>`: the same k handlers registered with `priority` only (ordering is
// settled when they are registered) against plain registrations: an option that does not change
// how a handler runs must cost nothing per emit.
for (const k of KS) {
  const group = `hook-options-unused/${k}`;
  const plain = new HookBus();
  const prioritized = new HookBus();
  for (let i = 0; i < k; i++) {
    const handler = (): void => {
      sink.total += 1;
    };
    plain.on("tool.post", handler);
    prioritized.on("tool.post", handler, { priority: k - i });
  }
  await emitPair(group, plain, prioritized);
}

/** Benches `tool.post` emits on `bus` against the same emits on `plain` (the floor). */
async function emitPair(group: string, plain: HookBus, bus: HookBus): Promise<void> {
  await warm([() => plain.emit("tool.post", POST), () => bus.emit("tool.post", POST)]);
  Deno.bench({
    name: "floor",
    group,
    baseline: true,
    fn: async () => {
      for (let i = 0; i < BATCH; i++) await plain.emit("tool.post", POST);
    },
  });
  Deno.bench({
    name: "hookscope",
    group,
    fn: async () => {
      for (let i = 0; i < BATCH; i++) await bus.emit("tool.post", POST);
    },
  });
}
