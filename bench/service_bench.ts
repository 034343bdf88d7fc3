/**
 * Per-model service hooks (no Session involved).
 *
 * - `service-call/0`: `IModel.invoke` over an in-process `FunctionEndpoint` with no hooks;
 *   `service-call/2`: the same with a pre-invocation and a post-invocation hook. The floor is
 *   calling the endpoint directly.
 * - `stream-chunks/10000`: 10 000 chunks through `IModel.stream` with one sync chunk handler,
 *   against reading the endpoint's raw `ReadableStream` and calling the same handler per chunk.
 *
 * @module
 */

import { FunctionEndpoint, HookRegistry, IModel, type StreamChunk } from "../service/mod.ts";
import { sink, warm } from "./_peers.ts";
import { BATCH } from "./_table.ts";

const signal = new AbortController().signal;
const request = { messages: [{ role: "user", content: "ping" }] };
const endpoint = new FunctionEndpoint({
  name: "bench",
  call: (payload) => ({ ok: true, model: payload.model }),
  stream: () => CHUNKS,
});
const payload = { ...request, model: "bench" };

const CHUNK_COUNT = 10_000;
const CHUNKS: StreamChunk[] = [];
for (let i = 0; i < CHUNK_COUNT - 1; i++) CHUNKS.push({ type: "text", text: "tok " });
CHUNKS.push({ type: "done", finishReason: "stop" });

const hook = (): void => {
  sink.total++;
};
const plain = new IModel({ model: "bench", endpoint });
const hooked = new IModel({
  model: "bench",
  endpoint,
  hookRegistry: new HookRegistry({ hooks: { preInvoke: hook, postInvoke: hook } }),
});

for (const [k, model] of [[0, plain], [2, hooked]] as const) {
  const group = `service-call/${k}`;
  const before = sink.total;
  const event = await model.invoke(request);
  if (event.status !== "completed" || sink.total - before !== k) {
    throw new Error(
      `Bench "${group}" is broken: ${event.status}, ${sink.total - before} hooks ran`,
    );
  }
  await warm([() => endpoint.call(payload, { signal }), () => model.invoke(request)]);
  Deno.bench({
    name: "floor",
    group,
    baseline: true,
    fn: async () => {
      for (let i = 0; i < BATCH; i++) await endpoint.call(payload, { signal });
    },
  });
  Deno.bench({
    name: "hookscope",
    group,
    fn: async () => {
      for (let i = 0; i < BATCH; i++) await model.invoke(request);
    },
  });
}

const onText = (chunk: { text: string }): void => {
  sink.total += chunk.text.length;
};
const streaming = new IModel({
  model: "bench",
  endpoint,
  hookRegistry: new HookRegistry({ streamHandlers: { text: onText } }),
});

async function drain(stream: ReadableStream<StreamChunk>, handle: boolean): Promise<number> {
  const reader = stream.getReader();
  let count = 0;
  for (;;) {
    const next = await reader.read();
    if (next.done) return count;
    if (handle && next.value.type === "text") onText(next.value);
    count++;
  }
}

{
  const group = `stream-chunks/${CHUNK_COUNT}`;
  const start = sink.total;
  const got = await drain(streaming.stream(request), false);
  const handled = sink.total - start;
  const floorGot = await drain(endpoint.stream(payload, { signal }), true);
  const floorHandled = sink.total - start - handled;
  if (
    got !== CHUNK_COUNT || floorGot !== CHUNK_COUNT || handled !== floorHandled || handled === 0
  ) {
    throw new Error(
      `Bench "${group}" is broken: ${got}/${floorGot} chunks, ${handled}/${floorHandled} handled`,
    );
  }
  await warm([
    () => drain(endpoint.stream(payload, { signal }), true),
    () => drain(streaming.stream(request), false),
  ], 5);
  Deno.bench({
    name: "floor",
    group,
    baseline: true,
    fn: async () => {
      await drain(endpoint.stream(payload, { signal }), true);
    },
  });
  Deno.bench({
    name: "hookscope",
    group,
    fn: async () => {
      await drain(streaming.stream(request), false);
    },
  });
}
