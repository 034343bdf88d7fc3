import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  EndpointError,
  EndpointParseError,
  OpenAICompatibleEndpoint,
  type StreamChunk,
} from "../../service/mod.ts";

/** An endpoint whose fetch answers with `bytes`, delivered in the given slices. */
function endpointOver(bytes: Uint8Array, cuts: number[]): OpenAICompatibleEndpoint {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const slices: Uint8Array[] = [];
  let last = 0;
  for (const p of [...points, bytes.length]) {
    if (p > last) slices.push(bytes.slice(last, p));
    last = Math.max(last, p);
  }
  return new OpenAICompatibleEndpoint({
    baseURL: "http://in-process.test/v1",
    fetch: () => {
      let i = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (i < slices.length) controller.enqueue(slices[i++]);
          else controller.close();
        },
      });
      return Promise.resolve(
        new Response(body, { headers: { "content-type": "text/event-stream" } }),
      );
    },
  });
}

async function collect(stream: ReadableStream<StreamChunk>): Promise<StreamChunk[]> {
  const out: StreamChunk[] = [];
  for await (const chunk of stream) out.push(chunk);
  return out;
}

const live = () => ({ signal: new AbortController().signal });

describe("OpenAICompatibleEndpoint SSE parsing (property)", () => {
  it("OpenAICompatibleEndpoint.stream() yields the same text however the bytes are split", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.string({ unit: "grapheme", minLength: 1, maxLength: 12 }), { maxLength: 8 }),
        fc.array(fc.nat({ max: 4000 }), { maxLength: 12 }),
        fc.constantFrom("\n\n", "\r\n\r\n"),
        async (pieces, cuts, separator) => {
          const text =
            pieces.map((p) =>
              `data: ${
                JSON.stringify({ choices: [{ index: 0, delta: { content: p } }] })
              }${separator}`
            ).join("") +
            `data: ${
              JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })
            }${separator}data: [DONE]${separator}`;
          const bytes = new TextEncoder().encode(text);
          const chunks = await collect(endpointOver(bytes, cuts).stream({ model: "m" }, live()));
          assert.deepEqual(
            chunks,
            [
              ...pieces.map((p) => ({ type: "text", text: p })),
              { type: "done", finishReason: "stop" },
            ],
          );
        },
      ),
      { numRuns: 150 },
    );
  });

  it("OpenAICompatibleEndpoint.stream() fails arbitrary data lines only with EndpointError", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.string({ maxLength: 40 }).map((s) => s.replace(/[\r\n]/g, " ")), {
          minLength: 1,
          maxLength: 5,
        }),
        async (lines) => {
          const text = lines.map((l) => `data: ${l}\n\n`).join("");
          const endpoint = endpointOver(new TextEncoder().encode(text), []);
          try {
            const chunks = await collect(endpoint.stream({ model: "m" }, live()));
            assert.equal(chunks.at(-1)?.type, "done");
          } catch (error) {
            assert.ok(error instanceof EndpointError, `unexpected ${String(error)}`);
            if (!(error instanceof EndpointParseError)) {
              assert.match(error.message, /reported an error/);
            }
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it("OpenAICompatibleEndpoint.stream() tolerates arbitrary JSON in OpenAI-shaped events", async () => {
    const json = fc.jsonValue({ maxDepth: 3 });
    const toolPart = fc.oneof(
      json,
      fc.record({
        index: json,
        id: json,
        function: fc.oneof(json, fc.record({ name: json, arguments: json })),
      }),
    );
    const event = fc.record({
      choices: fc.oneof(
        json,
        fc.array(
          fc.oneof(
            json,
            fc.record({
              delta: fc.oneof(
                json,
                fc.record({ content: json, tool_calls: fc.oneof(json, fc.array(toolPart)) }),
              ),
              finish_reason: json,
            }),
          ),
          { maxLength: 3 },
        ),
      ),
      usage: fc.oneof(
        json,
        fc.record({ prompt_tokens: json, completion_tokens: json, total_tokens: json }),
      ),
    }, { requiredKeys: [] });
    await fc.assert(
      fc.asyncProperty(fc.array(event, { maxLength: 5 }), async (events) => {
        const text = events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join("") +
          "data: [DONE]\n\n";
        const chunks = await collect(
          endpointOver(new TextEncoder().encode(text), []).stream({ model: "m" }, live()),
        );
        assert.equal(chunks.at(-1)?.type, "done");
        for (const chunk of chunks) {
          if (chunk.type === "text") assert.equal(typeof chunk.text, "string");
          if (chunk.type === "tool_call") {
            assert.equal(typeof chunk.arguments, "string");
            assert.equal(typeof chunk.name, "string");
            assert.equal(typeof chunk.id, "string");
          }
          if (chunk.type === "usage") assert.ok(Number.isFinite(chunk.totalTokens));
        }
      }),
      { numRuns: 300 },
    );
  });
});
