/**
 * An A/B run of the service hot paths: two checkouts of hookscope loaded in one Deno process, each
 * scenario timed in rounds that alternate which version goes first, so both see the same machine
 * load. Use it to compare a change against the code before it when the machine is shared.
 *
 * ```sh
 * git worktree add /tmp/before <commit>   # or: git archive <commit> | tar -x -C /tmp/before
 * deno run -A bench/service_ab.ts /tmp/before [rounds]
 * ```
 *
 * Scenarios (the same as `service_bench.ts`):
 * - `service-call/0`: `IModel.invoke` over an in-process `FunctionEndpoint`, no hooks;
 * - `service-call/2`: the same with a pre-invocation and a post-invocation hook;
 * - `stream-chunks/10000`: 10 000 chunks through `IModel.stream` with one sync `text` handler;
 * - `process-chunk`: `IModel.processChunk` with the same handler, awaited: the per-chunk dispatch
 *   without the stream around it.
 *
 * The handlers are written so both stream-handler shapes work (`(chunk, ctx)` and the positional
 * `(null, chunkType, chunk, params)` of older checkouts): each version runs the same code.
 * Prints, per scenario, the min and median time per operation of each version over the rounds,
 * the ratio of the mins and the median of the paired (same-round) ratios.
 *
 * @module
 */

import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

interface ModelLike {
  invoke(request: Record<string, unknown>): Promise<{ status: string }>;
  stream(request: Record<string, unknown>): ReadableStream<{ type: string }>;
  processChunk(chunk: Record<string, unknown>): Promise<unknown>;
}

interface ServiceModule {
  FunctionEndpoint: new (init: Record<string, unknown>) => object;
  HookRegistry: new (init: Record<string, unknown>) => object;
  IModel: new (init: Record<string, unknown>) => ModelLike;
}

const here = new URL("..", import.meta.url);
const beforeDir = Deno.args[0];
if (!beforeDir) {
  console.error("usage: deno run -A bench/service_ab.ts <before-checkout> [rounds]");
  Deno.exit(2);
}
const ROUNDS = Number(Deno.args[1] ?? 31);

const versions: Array<[string, ServiceModule]> = [
  ["before", await import(pathToFileURL(join(resolve(beforeDir), "service/mod.ts")).href)],
  ["after", await import(new URL("service/mod.ts", here).href)],
];

let sink = 0;
const hook = (): void => {
  sink++;
};
// Works with both shapes: `(chunk, ctx)` and `(null, chunkType, chunk, params)`.
const onText = (...args: unknown[]): void => {
  const chunk = (args[0] === null ? args[2] : args[0]) as { text: string };
  sink += chunk.text.length;
};

const CHUNK_COUNT = 10_000;
const CHUNKS: Array<Record<string, unknown>> = [];
for (let i = 0; i < CHUNK_COUNT - 1; i++) CHUNKS.push({ type: "text", text: "tok " });
CHUNKS.push({ type: "done", finishReason: "stop" });
const request = { messages: [{ role: "user", content: "ping" }] };

interface Scenario {
  name: string;
  /** Operations per timed batch. */
  ops: number;
  /** Builds the batch for one version. */
  make(service: ServiceModule): () => Promise<void>;
}

function endpointOf(service: ServiceModule): object {
  return new service.FunctionEndpoint({
    name: "bench",
    call: (payload: Record<string, unknown>) => ({ ok: true, model: payload.model }),
    stream: () => CHUNKS,
  });
}

const CALLS = 10_000;
const STREAMS = 5;
const scenarios: Scenario[] = [
  {
    name: "service-call/0",
    ops: CALLS,
    make(service) {
      const model = new service.IModel({ model: "bench", endpoint: endpointOf(service) });
      return async () => {
        for (let i = 0; i < CALLS; i++) await model.invoke(request);
      };
    },
  },
  {
    name: "service-call/2",
    ops: CALLS,
    make(service) {
      const model = new service.IModel({
        model: "bench",
        endpoint: endpointOf(service),
        hookRegistry: new service.HookRegistry({ hooks: { preInvoke: hook, postInvoke: hook } }),
      });
      return async () => {
        for (let i = 0; i < CALLS; i++) await model.invoke(request);
      };
    },
  },
  {
    name: `stream-chunks/${CHUNK_COUNT}`,
    ops: CHUNK_COUNT * STREAMS,
    make(service) {
      const model = new service.IModel({
        model: "bench",
        endpoint: endpointOf(service),
        hookRegistry: new service.HookRegistry({ streamHandlers: { text: onText } }),
      });
      return async () => {
        for (let i = 0; i < STREAMS; i++) {
          const reader = model.stream(request).getReader();
          for (;;) if ((await reader.read()).done) break;
        }
      };
    },
  },
  {
    name: "process-chunk",
    ops: CALLS,
    make(service) {
      const model = new service.IModel({
        model: "bench",
        endpoint: endpointOf(service),
        hookRegistry: new service.HookRegistry({ streamHandlers: { text: onText } }),
      });
      const chunk = CHUNKS[0];
      return async () => {
        for (let i = 0; i < CALLS; i++) await model.processChunk(chunk);
      };
    },
  },
];

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function show(ns: number): string {
  return ns >= 1000 ? `${(ns / 1000).toFixed(2)} µs` : `${ns.toFixed(1)} ns`;
}

const load = Deno.loadavg().map((n) => n.toFixed(2)).join(", ");
console.log(`service A/B, ${ROUNDS} rounds, load average before: ${load}`);
console.log("| scenario | before (min) | after (min) | after ÷ before, min | paired median |");
console.log("| --- | ---: | ---: | ---: | ---: |");
for (const scenario of scenarios) {
  const runs = versions.map(([, service]) => scenario.make(service));
  // Check and warm both: the same work must happen in each version.
  for (const run of runs) {
    const before = sink;
    for (let i = 0; i < 5; i++) await run();
    if (sink === before && scenario.name !== "service-call/0") {
      throw new Error(`A/B "${scenario.name}" is broken: no hook ran`);
    }
  }
  const times: number[][] = versions.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? [0, 1] : [1, 0];
    for (const v of order) {
      const start = performance.now();
      await runs[v]();
      times[v].push(((performance.now() - start) * 1e6) / scenario.ops);
    }
  }
  const [a, b] = times;
  const paired = median(a.map((t, i) => b[i] / t));
  const minA = Math.min(...a);
  const minB = Math.min(...b);
  console.log(
    `| \`${scenario.name}\` | ${show(minA)} | ${show(minB)} | ${(minB / minA).toFixed(2)}× | ${
      paired.toFixed(2)
    }× |`,
  );
}
const loadAfter = Deno.loadavg().map((n) => n.toFixed(2)).join(", ");
console.log(`load average after: ${loadAfter}`);
