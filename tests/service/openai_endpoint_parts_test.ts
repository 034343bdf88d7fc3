// The two halves of the OpenAI-compatible endpoint on their own: the byte → event
// TransformStream and the pure chunk mapper.

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { createChunkMapper } from "../../service/endpoints/_openai_chunks.ts";
import { SseEventStream } from "../../service/endpoints/_sse_stream.ts";

async function eventsOf(
  pieces: readonly (string | Uint8Array)[],
  options?: { maxEventChars?: number },
): Promise<string[]> {
  const bytes = new TextEncoder();
  const source = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const piece of pieces) {
        controller.enqueue(typeof piece === "string" ? bytes.encode(piece) : piece);
      }
      controller.close();
    },
  });
  const out: string[] = [];
  const stream = source.pipeThrough(
    new SseEventStream({
      maxEventChars: options?.maxEventChars ?? 1024,
      headChars: 64,
      fail: (failure, head) => new Error(`${failure}: ${head}`),
    }),
  );
  for await (const event of stream) out.push(event.data);
  return out;
}

describe("SseEventStream", () => {
  it("turns bytes split anywhere (inside a character too) into the same events", async () => {
    const text = 'data: {"a":1}\n\n: comment\ndata: two\ndata: lines\n\ndata: é😀\n\n';
    const encoded = new TextEncoder().encode(text);
    const whole = await eventsOf([text]);
    assert.deepEqual(whole, ['{"a":1}', "two\nlines", "é😀"]);
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat(encoded.length), { maxLength: 6 }), async (cuts) => {
        const points = [...new Set(cuts)].sort((a, b) => a - b);
        const pieces: Uint8Array[] = [];
        let from = 0;
        for (const at of points) {
          pieces.push(encoded.subarray(from, at));
          from = at;
        }
        pieces.push(encoded.subarray(from));
        assert.deepEqual(await eventsOf(pieces), whole);
      }),
      { numRuns: 100 },
    );
  });

  it("errors on an event longer than the limit and on a body without any event", async () => {
    await assert.rejects(
      eventsOf([`data: ${"x".repeat(5000)}`], { maxEventChars: 1024 }),
      /overflow/,
    );
    await assert.rejects(eventsOf(["<html>not sse</html>"]), /not_sse: <html>/);
    assert.deepEqual(await eventsOf([]), []);
  });
});

describe("createChunkMapper()", () => {
  it("maps text, assembles tool calls per choice and ends with done", () => {
    const mapper = createChunkMapper();
    const out = [
      ...mapper.push({ choices: [{ index: 0, delta: { content: "Hi" } }] }),
      ...mapper.push({
        choices: [{
          index: 0,
          delta: {
            tool_calls: [{ index: 0, id: "c1", function: { name: "f", arguments: '{"a":' } }],
          },
        }],
      }),
      ...mapper.push({
        choices: [{
          index: 0,
          delta: { tool_calls: [{ index: 0, function: { arguments: "1}" } }] },
          finish_reason: "tool_calls",
        }],
      }),
      ...mapper.push({ choices: [], usage: { prompt_tokens: 2, completion_tokens: 3 } }),
      ...mapper.end(),
    ];
    assert.deepEqual(out, [
      { type: "text", text: "Hi" },
      { type: "tool_call", index: 0, id: "c1", name: "f", arguments: '{"a":1}' },
      { type: "usage", promptTokens: 2, completionTokens: 3, totalTokens: 5 },
      { type: "done", finishReason: "tool_calls" },
    ]);
  });

  it("never throws on arbitrary JSON objects and always ends with one done chunk", () => {
    fc.assert(
      fc.property(fc.array(fc.dictionary(fc.string(), fc.jsonValue())), (objects) => {
        const mapper = createChunkMapper();
        const chunks = objects.flatMap((json) => mapper.push(json as Record<string, unknown>));
        const end = mapper.end();
        assert.equal(end.at(-1)?.type, "done");
        for (const chunk of [...chunks, ...end]) {
          assert.ok(["text", "tool_call", "usage", "done"].includes(chunk.type));
        }
      }),
      { numRuns: 300 },
    );
  });
});
