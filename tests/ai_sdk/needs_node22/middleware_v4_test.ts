// `ai@7` (middleware specification V4) needs Node ≥ 22: this folder runs under Deno, Bun and
// Node 24, not Node 20 (scripts/test.sh leaves `needs_node22/` out of the Node 20 run).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { generateText, simulateReadableStream, streamText, wrapLanguageModel } from "ai7";
import { MockLanguageModelV4 } from "ai7/test";
import { Session } from "../../../mod.ts";
import { hookscopeMiddleware, type StreamPart } from "../../../ai-sdk/mod.ts";

const usage = {
  inputTokens: { total: 3, noCache: 3, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 4, text: 4, reasoning: 0 },
};

describe("hookscopeMiddleware on ai@7 (specification V4)", () => {
  it("generateText runs pre and post hooks around the model, and api.* on the session", async () => {
    const order: string[] = [];
    const session = new Session();
    session.hooks.on(
      "api.post_call",
      ({ tokens }) => void order.push(`post_call:${tokens?.completion}`),
    );
    const model = wrapLanguageModel({
      model: new MockLanguageModelV4({
        doGenerate: () => {
          order.push("model");
          return Promise.resolve({
            content: [{ type: "text", text: "v4 answer" }],
            finishReason: { unified: "stop", raw: "stop" },
            usage,
            warnings: [],
          } as never);
        },
      }),
      middleware: hookscopeMiddleware({
        specificationVersion: "v4",
        session,
        hooks: {
          preInvoke: () => void order.push("pre"),
          postInvoke: () => void order.push("post"),
        },
      }),
    });
    const result = await generateText({ model, prompt: "hi" });
    assert.equal(result.text, "v4 answer");
    assert.deepEqual(order, ["pre", "model", "post", "post_call:4"]);
  });

  it("streamText parts are replaced and dropped per chunk", async () => {
    const chunks: StreamPart[] = [
      { type: "stream-start", warnings: [] },
      { type: "text-start", id: "t" },
      { type: "text-delta", id: "t", delta: "keep " },
      { type: "text-delta", id: "t", delta: "DROP " },
      { type: "text-delta", id: "t", delta: "me" },
      { type: "text-end", id: "t" },
      { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage } as never,
    ];
    const model = wrapLanguageModel({
      model: new MockLanguageModelV4({
        doStream: () => Promise.resolve({ stream: simulateReadableStream({ chunks }) } as never),
      }),
      middleware: hookscopeMiddleware({
        specificationVersion: "v4",
        streamHandlers: {
          "text-delta": (part) =>
            part.delta.startsWith("DROP") ? [] : { ...part, delta: part.delta.toUpperCase() },
        },
      }),
    });
    assert.equal(await streamText({ model, prompt: "hi" }).text, "KEEP ME");
  });
});
