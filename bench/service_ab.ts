/**
 * An A/B run of the service hot paths (the runner and its arguments: `_ab.ts`):
 *
 * ```sh
 * deno run -A bench/service_ab.ts /tmp/before [rounds] [after-checkout] [--only=<regexp>]
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
 *
 * @module
 */

import { abArgs, importFrom, runAB, type Scenario } from "./_ab.ts";

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

function endpointOf(service: ServiceModule): object {
  return new service.FunctionEndpoint({
    name: "bench",
    call: (payload: Record<string, unknown>) => ({ ok: true, model: payload.model }),
    stream: () => CHUNKS,
  });
}

const CALLS = 10_000;
const STREAMS = 5;
const scenarios: Scenario<ServiceModule>[] = [
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

const args = abArgs("service_ab.ts");
const versions: [ServiceModule, ServiceModule] = [
  await importFrom<ServiceModule>(args.before, "service/mod.ts"),
  await importFrom<ServiceModule>(args.after, "service/mod.ts"),
];
// Check both: every scenario with handlers must call them.
for (const scenario of scenarios.slice(1)) {
  for (const service of versions) {
    const before = sink;
    await (await scenario.make(service))();
    if (sink === before) throw new Error(`A/B "${scenario.name}" is broken: no hook ran`);
  }
}
await runAB("service", versions, scenarios, args);
