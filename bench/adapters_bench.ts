/**
 * The adapters' costs.
 *
 * - `ai-sdk-chunks/10000`: 10 000 AI SDK stream parts through `hookscopeMiddleware`'s
 *   `wrapStream` with one `text-delta` handler that replaces each part; `floor` is a hand-written
 *   `TransformStream` doing the same replacement, `ai-sdk-wrapstream` the AI SDK's documented
 *   middleware pattern (a `wrapStream` that pipes through such a `TransformStream`).
 * - `otel-tool-call/1`: one `Branch.act` on a session with `instrument()` (spans recorded by a
 *   tracer provider without exporters), against the same call without instrumentation.
 *
 * @module
 */

import { BasicTracerProvider } from "@opentelemetry/sdk-trace-base";
import { hookscopeMiddleware, type StreamPart } from "../ai-sdk/mod.ts";
import { Session, Tool } from "../mod.ts";
import { instrument } from "../otel/mod.ts";
import { sink } from "./_peers.ts";
import { BATCH } from "./_table.ts";

const COUNT = 10_000;
const PARTS: StreamPart[] = [];
for (let i = 0; i < COUNT; i++) PARTS.push({ type: "text-delta", id: "t", delta: "tok " });

function source(): ReadableStream<StreamPart> {
  let i = 0;
  return new ReadableStream<StreamPart>({
    pull(controller) {
      if (i < COUNT) controller.enqueue(PARTS[i++]);
      else controller.close();
    },
  }, { highWaterMark: 0 });
}

function replace(part: StreamPart): StreamPart {
  return part.type === "text-delta" ? { ...part, delta: part.delta.toUpperCase() } : part;
}

async function drain(stream: ReadableStream<StreamPart>): Promise<number> {
  const reader = stream.getReader();
  let n = 0;
  for (;;) {
    const next = await reader.read();
    if (next.done) return n;
    if (next.value.type === "text-delta") sink.total += next.value.delta.length;
    n++;
  }
}

const model = { provider: "bench", modelId: "bench" };
const params = { prompt: [] };
const middleware = hookscopeMiddleware({
  streamHandlers: { "text-delta": (part) => ({ ...part, delta: part.delta.toUpperCase() }) },
});
const passthrough = {
  wrapStream: async (
    { doStream }: { doStream: () => Promise<{ stream: ReadableStream<StreamPart> }> },
  ) => {
    const { stream, ...rest } = await doStream();
    return {
      ...rest,
      stream: stream.pipeThrough(
        new TransformStream<StreamPart, StreamPart>({
          transform: (part, controller) => controller.enqueue(replace(part)),
        }),
      ),
    };
  },
};
const doStream = () => Promise.resolve({ stream: source() });
const noop = () => Promise.resolve({ content: [] });

async function viaHookscope(): Promise<number> {
  const p = await middleware.transformParams({ type: "stream", params, model });
  const result = await middleware.wrapStream({ doStream, doGenerate: noop, params: p, model });
  return await drain(result.stream as ReadableStream<StreamPart>);
}

for (const run of [viaHookscope, () => drain(source().pipeThrough(new TransformStream()))]) {
  if ((await run()) !== COUNT) throw new Error("Bench ai-sdk-chunks is broken");
}

{
  const group = `ai-sdk-chunks/${COUNT}`;
  Deno.bench({
    name: "floor",
    group,
    baseline: true,
    fn: async () => {
      await drain(
        source().pipeThrough(
          new TransformStream<StreamPart, StreamPart>({
            transform: (part, controller) => controller.enqueue(replace(part)),
          }),
        ),
      );
    },
  });
  Deno.bench({
    name: "hookscope",
    group,
    fn: async () => {
      await viaHookscope();
    },
  });
  Deno.bench({
    name: "ai-sdk-wrapstream",
    group,
    fn: async () => {
      const result = await passthrough.wrapStream({ doStream });
      await drain(result.stream);
    },
  });
}

{
  const group = "otel-tool-call/1";
  const plain = new Session();
  const traced = new Session();
  const [plainBranch, tracedBranch] = [plain, traced].map((session) => {
    const branch = session.newBranch();
    branch.actions.register(new Tool({ name: "t", execute: () => 1 }));
    return branch;
  });
  instrument(traced, { tracer: new BasicTracerProvider().getTracer("bench") });
  Deno.bench({
    name: "floor",
    group,
    baseline: true,
    fn: async () => {
      for (let i = 0; i < BATCH; i++) await plainBranch.act({ function: "t", arguments: {} });
    },
  });
  Deno.bench({
    name: "hookscope",
    group,
    fn: async () => {
      for (let i = 0; i < BATCH; i++) await tracedBranch.act({ function: "t", arguments: {} });
    },
  });
}
