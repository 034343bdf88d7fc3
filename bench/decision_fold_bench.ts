/**
 * `decision-fold/<k>`: `HookBus.decide("tool.pre")` with k handlers that each return
 * `{ decision: "allow", updatedArgs }` (a rewrite of the previous arguments), against a
 * hand-written loop doing the same rewrites (each handler sees the rewritten arguments, the
 * rewritten arguments are frozen, the verdict is kept). Target: at most 2× the loop.
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

type Args = Readonly<Record<string, unknown>>;
type Payload = { toolName: string; callId: string; args: Args; argsSummary: string };
type Rewrite = (payload: Payload) => { decision: "allow"; updatedArgs: Record<string, unknown> };

const PAYLOAD: Payload = Object.freeze({
  toolName: "bash",
  callId: "c1",
  args: Object.freeze({ command: "ls", n: 0 }),
  argsSummary: '{"command":"ls","n":0}',
});

function rewriter(i: number): Rewrite {
  return ({ args }) => {
    sink.total += 1;
    return { decision: "allow", updatedArgs: { ...args, n: (args.n as number) + i + 1 } };
  };
}

for (const k of KS) {
  const group = `decision-fold/${k}`;
  const handlers = Array.from({ length: k }, (_, i) => rewriter(i));
  const bus = new HookBus();
  for (const handler of handlers) bus.on("tool.pre", handler);
  const floor = (): number => {
    let payload = PAYLOAD;
    let verdict = 0;
    for (let i = 0; i < handlers.length; i++) {
      const d = handlers[i](payload);
      if (d.decision === "allow") {
        if (verdict < 1) verdict = 1;
        payload = { ...payload, args: Object.freeze({ ...d.updatedArgs }) };
      }
    }
    return verdict + (payload.args.n as number);
  };
  const expected = handlers.reduce((n, _, i) => n + i + 1, 0);
  const fold = await bus.decide("tool.pre", PAYLOAD);
  const got = fold.updatedArgs?.n ?? 0;
  if (got !== expected) {
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

const POST = {
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
