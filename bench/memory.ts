/**
 * The memory check: does the heap stay flat under a long session?
 *
 * 1. bounded: 1 000 000 awaited `tool.post` emits through a `HookBus` bound to a
 *    `SessionObserver({ maxEvents: 1000 })` with one handler, one subscriber and one route, so
 *    every emit records a `HookSignal` that is stored, routed and delivered. Heap after warm-up
 *    and after the million, both after a full GC.
 * 2. unbounded, for contrast: 100 000 emits into an observer without `maxEvents`.
 * 3. allocation check for `emit-sync/0`: 1 000 000 synchronous `emit` calls on a point with no
 *    handlers and no observer, heap measured without a GC in between (a `Map` miss loop beside it),
 *    three rounds, once in the fresh process and once after the observed buses ran (V8 re-optimizes
 *    `emit` once some bus has recorded into an observer, and the result differs).
 *
 * ```sh
 * deno run --v8-flags=--expose-gc bench/memory.ts
 * node --expose-gc --import tsx bench/memory.ts
 * node_modules/.bin/bun bench/memory.ts
 * ```
 *
 * @module
 */

import { HookBus, HookSignal } from "../hooks/mod.ts";
import { SessionObserver } from "../session/mod.ts";
import { collect, mb, runtimeName, usage } from "./_memory.ts";

function heapUsed(): number {
  return usage().heapUsed;
}

const PAYLOAD = {
  signal: new AbortController().signal,
  source: { kind: "local" } as const,
  callId: "c1",
  toolName: "reader",
  args: {},
  result: "ok",
  resultSummary: "ok",
  durationMs: 1,
};
let handled = 0;

function observedBus(maxEvents?: number): { bus: HookBus; observer: SessionObserver } {
  const observer = new SessionObserver(maxEvents === undefined ? {} : { maxEvents });
  observer.observe({ type: HookSignal }, () => {
    handled++;
  });
  observer.route((p) => p instanceof HookSignal, { into: "hooks" });
  const bus = new HookBus(observer);
  bus.on("tool.post", () => {
    handled++;
  });
  return { bus, observer };
}

async function emitMany(bus: HookBus, n: number): Promise<void> {
  for (let i = 0; i < n; i++) await bus.emit("tool.post", PAYLOAD);
}

const bare = new HookBus();
const map = new Map<string, number>([["tool.pre", 1]]);
let misses = 0;

/** Each loop is its own small function so the engine optimizes it as an application would. */
function zeroCalls(n: number): number {
  let m = 0;
  for (let i = 0; i < n; i++) if (bare.emit("tool.post", PAYLOAD) !== undefined) m++;
  return m;
}

function mapMisses(n: number): number {
  let m = 0;
  for (let i = 0; i < n; i++) if (map.get("tool.post") === undefined) m++;
  return m;
}

function allocationCheck(when: string): void {
  for (const [label, loop] of [["emit-sync/0 call", zeroCalls], ["Map miss", mapMisses]] as const) {
    const perCall: string[] = [];
    for (let round = 0; round < 3; round++) {
      misses += loop(100_000);
      collect();
      const h0 = heapUsed();
      misses += loop(1_000_000);
      const h1 = heapUsed();
      perCall.push(((h1 - h0) / 1_000_000).toFixed(3));
    }
    console.log(
      `${label} (${when}): 1 000 000 calls per round, heap growth without GC per call (3 rounds): ${
        perCall.join(", ")
      } bytes`,
    );
  }
}

async function main(): Promise<void> {
  const forced = collect();
  console.log(`# Memory check (${runtimeName()})`);
  console.log(forced ? "full GC before each reading" : "WARNING: no GC hook; readings are noisy");
  allocationCheck("fresh process");

  const bounded = observedBus(1000);
  await emitMany(bounded.bus, 10_000);
  collect();
  const before = heapUsed();
  const start = performance.now();
  await emitMany(bounded.bus, 1_000_000);
  const seconds = (performance.now() - start) / 1000;
  collect();
  const after = heapUsed();
  console.log(
    `bounded (maxEvents 1000): 1 000 000 emits in ${seconds.toFixed(1)} s; heap ${mb(before)} → ${
      mb(after)
    } (${after - before >= 0 ? "+" : ""}${
      mb(after - before)
    }); events kept ${bounded.observer.events.length}, stream "hooks" ${
      bounded.observer.routed("hooks").length
    }`,
  );

  const unbounded = observedBus();
  collect();
  const ubBefore = heapUsed();
  await emitMany(unbounded.bus, 100_000);
  collect();
  const ubAfter = heapUsed();
  console.log(
    `unbounded: 100 000 emits; heap ${mb(ubBefore)} → ${mb(ubAfter)} (+${mb(ubAfter - ubBefore)}, ${
      Math.round((ubAfter - ubBefore) / 100_000)
    } bytes per kept event); events kept ${unbounded.observer.events.length}`,
  );

  allocationCheck("after the observed buses ran");
  if (handled === 0 || misses === 0) throw new Error("memory check did no work");
}

await main();
