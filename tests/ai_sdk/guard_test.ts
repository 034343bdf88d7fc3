import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { generateText, simulateReadableStream, streamText, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { hookscopeMiddleware, StreamBlockedError, type StreamPart } from "../../ai-sdk/mod.ts";

// The guardrail over every text-bearing part, through the real `ai` package's streamText and
// generateText around its own mock language model.
const usage = {
  inputTokens: { total: 3, noCache: 3, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};
const finish = { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage } as never;
const SECRET = "BEGIN PRIVATE KEY";
const guard = {
  holdBackChars: SECRET.length,
  check: (text: string) => text.includes(SECRET) ? { block: "a private key" } : undefined,
};

function streaming(chunks: StreamPart[]) {
  return new MockLanguageModelV3({
    doStream: () =>
      Promise.resolve({
        stream: simulateReadableStream({
          chunks: [{ type: "stream-start", warnings: [] }, ...chunks, finish],
        }),
      } as never),
  });
}

async function collect(result: { fullStream: AsyncIterable<{ type: string }> }) {
  const parts: { type: string; text?: string; delta?: string; error?: unknown }[] = [];
  for await (const part of result.fullStream) parts.push(part as never);
  return parts;
}

/** Every piece of guarded text the consumer got. */
function releasedText(parts: { type: string; text?: string; delta?: string }[]): string {
  return parts.map((p) =>
    p.type === "text-delta" || p.type === "reasoning-delta"
      ? p.text ?? ""
      : p.type === "tool-input-delta"
      ? p.delta ?? ""
      : ""
  ).join("");
}

function blockedBy(parts: { type: string; error?: unknown }[]): StreamBlockedError | undefined {
  const error = parts.find((p) => p.type === "error")?.error;
  return error instanceof StreamBlockedError ? error : undefined;
}

const text = (id: string, ...deltas: string[]): StreamPart[] => [
  { type: "text-start", id },
  ...deltas.map((delta) => ({ type: "text-delta", id, delta }) as StreamPart),
  { type: "text-end", id },
];

describe("the guardrail covers every text-bearing part", () => {
  it("blocks a phrase split across two text ids before any of it is released", async () => {
    const model = wrapLanguageModel({
      model: streaming([...text("t1", "Here it is: BEGIN PRIV"), ...text("t2", "ATE KEY abc")]),
      middleware: hookscopeMiddleware({ guard }),
    });
    const parts = await collect(streamText({ model, prompt: "hi" }));
    assert.equal(blockedBy(parts)?.reason, "a private key");
    assert.ok(!releasedText(parts).includes("BEGIN"), releasedText(parts));
  });

  it("blocks a phrase in reasoning deltas", async () => {
    const model = wrapLanguageModel({
      model: streaming([
        { type: "reasoning-start", id: "r1" },
        { type: "reasoning-delta", id: "r1", delta: "I will print BEGIN " } as StreamPart,
        { type: "reasoning-delta", id: "r1", delta: "PRIVATE KEY now" } as StreamPart,
        { type: "reasoning-end", id: "r1" },
        ...text("t1", "ok"),
      ]),
      middleware: hookscopeMiddleware({ guard }),
    });
    const parts = await collect(streamText({ model, prompt: "hi" }));
    assert.equal(blockedBy(parts)?.reason, "a private key");
    assert.ok(!releasedText(parts).includes("BEGIN"), releasedText(parts));
  });

  it("blocks a phrase in tool-input deltas", async () => {
    const model = wrapLanguageModel({
      model: streaming([
        { type: "tool-input-start", id: "c1", toolName: "write" } as StreamPart,
        { type: "tool-input-delta", id: "c1", delta: '{"body":"BEGIN PRIVATE' } as StreamPart,
        { type: "tool-input-delta", id: "c1", delta: ' KEY"}' } as StreamPart,
        { type: "tool-input-end", id: "c1" } as StreamPart,
      ]),
      middleware: hookscopeMiddleware({ guard }),
    });
    const parts = await collect(streamText({ model, prompt: "hi" }));
    assert.equal(blockedBy(parts)?.reason, "a private key");
    assert.ok(!releasedText(parts).includes("BEGIN"), releasedText(parts));
  });

  it("passes clean text, reasoning and tool input whole and in order", async () => {
    const model = wrapLanguageModel({
      model: streaming([
        { type: "reasoning-start", id: "r1" },
        { type: "reasoning-delta", id: "r1", delta: "thinking " } as StreamPart,
        { type: "reasoning-end", id: "r1" },
        ...text("t1", "hello ", "there, "),
        ...text("t2", "general ", "kenobi"),
      ]),
      middleware: hookscopeMiddleware({ guard }),
    });
    const result = streamText({ model, prompt: "hi" });
    const parts = await collect(result);
    assert.equal(blockedBy(parts), undefined);
    assert.equal(await result.text, "hello there, general kenobi");
    assert.equal(await result.reasoningText, "thinking ");
    const order = parts.map((p) => p.type).filter((t) =>
      t.endsWith("-start") || t.endsWith("-end")
    );
    assert.deepEqual(order, [
      "reasoning-start",
      "reasoning-end",
      "text-start",
      "text-end",
      "text-start",
      "text-end",
    ]);
  });

  it("blocks a generate answer: text, reasoning or tool-call input", async () => {
    const answers: unknown[][] = [
      [{ type: "text", text: `key: ${SECRET}` }],
      [{ type: "reasoning", text: `I saw ${SECRET}` }, { type: "text", text: "nothing" }],
      [{ type: "text", text: "BEGIN PRIV" }, { type: "text", text: "ATE KEY" }],
    ];
    for (const content of answers) {
      const model = wrapLanguageModel({
        model: new MockLanguageModelV3({
          doGenerate: () =>
            Promise.resolve({
              content,
              finishReason: { unified: "stop", raw: "stop" },
              usage,
              warnings: [],
            } as never),
        }),
        middleware: hookscopeMiddleware({ guard }),
      });
      await assert.rejects(generateText({ model, prompt: "hi" }), (error: unknown) => {
        assert.ok(error instanceof StreamBlockedError, String(error));
        assert.equal(error.reason, "a private key");
        return true;
      });
    }
    const clean = wrapLanguageModel({
      model: new MockLanguageModelV3({
        doGenerate: () =>
          Promise.resolve({
            content: [{ type: "text", text: "all clear" }],
            finishReason: { unified: "stop", raw: "stop" },
            usage,
            warnings: [],
          } as never),
      }),
      middleware: hookscopeMiddleware({ guard }),
    });
    assert.equal((await generateText({ model: clean, prompt: "hi" })).text, "all clear");
  });
});
