import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { generateText, simulateReadableStream, streamText, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { HookRegistry, Session } from "../../mod.ts";
import { hookscopeMiddleware, StreamBlockedError, type StreamPart } from "../../ai-sdk/mod.ts";

// The AI SDK's own mock language model (from the real `ai` package) stands in for a provider:
// the middleware under test is real, and so are generateText/streamText around it.
const usage = {
  inputTokens: { total: 3, noCache: 3, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};

function generating(text: string, seen?: unknown[]) {
  return new MockLanguageModelV3({
    doGenerate: (options) => {
      seen?.push(options.prompt);
      return Promise.resolve({
        content: [{ type: "text", text }],
        finishReason: { unified: "stop", raw: "stop" },
        usage,
        warnings: [],
      } as never);
    },
  });
}

function streaming(deltas: string[], log?: string[]) {
  const chunks: StreamPart[] = [
    { type: "stream-start", warnings: [] },
    { type: "text-start", id: "t1" },
    ...deltas.map((delta) => ({ type: "text-delta", id: "t1", delta }) as StreamPart),
    { type: "text-end", id: "t1" },
    { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage } as never,
  ];
  return new MockLanguageModelV3({
    doStream: () => {
      log?.push("doStream");
      return Promise.resolve({ stream: simulateReadableStream({ chunks }) } as never);
    },
  });
}

async function collect(result: { fullStream: AsyncIterable<{ type: string }> }) {
  const parts: { type: string; text?: string; error?: unknown }[] = [];
  for await (const part of result.fullStream) parts.push(part as never);
  return parts;
}

describe("hookscopeMiddleware with generateText", () => {
  it("runs pre-invoke before the model and post-invoke after, and both may replace", async () => {
    const order: string[] = [];
    const prompts: unknown[] = [];
    const model = wrapLanguageModel({
      model: generating("raw answer", prompts),
      middleware: hookscopeMiddleware({
        hooks: {
          preInvoke: (event) => {
            order.push("pre");
            const call = event as { params: { prompt: unknown[] } };
            call.params = {
              ...call.params,
              prompt: [{ role: "system", content: "be brief" }, ...call.params.prompt],
            };
          },
          postInvoke: (event) => {
            order.push("post");
            const call = event as { result: { content: { type: string; text: string }[] } };
            call.result = {
              ...call.result,
              content: [{ type: "text", text: call.result.content[0].text.toUpperCase() }],
            };
          },
        },
      }),
    });
    const result = await generateText({ model, prompt: "hi" });
    assert.equal(result.text, "RAW ANSWER");
    assert.deepEqual(order, ["pre", "post"]);
    assert.deepEqual((prompts[0] as { role: string }[]).map((m) => m.role), ["system", "user"]);
  });

  it("a pre-invoke failure with exitHook rejects the call and the model never runs", async () => {
    const prompts: unknown[] = [];
    const model = wrapLanguageModel({
      model: generating("x", prompts),
      middleware: hookscopeMiddleware({
        exitHook: true,
        hooks: {
          preInvoke: () => {
            throw new Error("quota exceeded");
          },
        },
      }),
    });
    await assert.rejects(generateText({ model, prompt: "hi", maxRetries: 0 }), /quota exceeded/);
    assert.equal(prompts.length, 0);
  });

  it("a pre-invoke handler that never settles misses its deadline", async () => {
    const prompts: unknown[] = [];
    const model = wrapLanguageModel({
      model: generating("x", prompts),
      middleware: hookscopeMiddleware({
        exitHook: true,
        timeoutMs: 50,
        hooks: { preInvoke: () => new Promise(() => {}) },
      }),
    });
    await assert.rejects(generateText({ model, prompt: "hi", maxRetries: 0 }), /time|Timeout/i);
    assert.equal(prompts.length, 0);
  });

  it("without exitHook a failing handler is ignored and the answer stands", async () => {
    const model = wrapLanguageModel({
      model: generating("fine"),
      middleware: hookscopeMiddleware({
        hooks: {
          postInvoke: () => {
            throw new Error("ignored");
          },
        },
      }),
    });
    assert.equal((await generateText({ model, prompt: "hi" })).text, "fine");
  });

  it("with a session, api.pre_call and api.post_call fire on its bus", async () => {
    const session = new Session();
    const points: string[] = [];
    session.hooks.on("api.pre_call", ({ model }) => void points.push(`pre:${model}`));
    session.hooks.on("api.post_call", ({ status, tokens }) => {
      points.push(`post:${status}:${tokens?.completion}`);
    });
    const model = wrapLanguageModel({
      model: generating("ok"),
      middleware: hookscopeMiddleware({ session }),
    });
    await generateText({ model, prompt: "hi" });
    assert.deepEqual(points, ["pre:mock-model-id", "post:completed:5"]);
  });

  it("bad options are TypeErrors", () => {
    assert.throws(() => hookscopeMiddleware({ timeoutMs: -1 }), TypeError);
    assert.throws(
      () => hookscopeMiddleware({ registry: new HookRegistry(), hooks: {} }),
      TypeError,
    );
    assert.throws(
      () => hookscopeMiddleware({ streamHandlers: { "text-delta": "no" as never } }),
      TypeError,
    );
    assert.throws(() => hookscopeMiddleware({ exitHook: "yes" as never }), /exitHook/);
  });

  it("the deprecated exit still works; exitHook wins when both are given", async () => {
    const failing = { preInvoke: () => Promise.reject(new Error("quota exceeded")) };
    const prompts: unknown[] = [];
    const old = wrapLanguageModel({
      model: generating("x", prompts),
      middleware: hookscopeMiddleware({ exit: true, hooks: failing }),
    });
    await assert.rejects(generateText({ model: old, prompt: "hi", maxRetries: 0 }), /quota/);
    const both = wrapLanguageModel({
      model: generating("x", prompts),
      middleware: hookscopeMiddleware({ exit: true, exitHook: false, hooks: failing }),
    });
    const answer = await generateText({ model: both, prompt: "hi", maxRetries: 0 });
    assert.equal(answer.text, "x");
    assert.equal(prompts.length, 1);
  });
});

describe("hookscopeMiddleware with streamText", () => {
  it("replaces and drops parts, pre before the first part, post after the drain", async () => {
    const log: string[] = [];
    const model = wrapLanguageModel({
      model: streaming(["hel", "lo", " DROP", " world"], log),
      middleware: hookscopeMiddleware({
        hooks: {
          preInvoke: () => void log.push("pre"),
          postInvoke: () => void log.push("post"),
        },
        streamHandlers: {
          "text-delta": (part) => {
            log.push(`delta:${part.delta}`);
            if (part.delta.includes("DROP")) return [];
            return { ...part, delta: part.delta.toUpperCase() };
          },
        },
      }),
    });
    const result = streamText({ model, prompt: "hi" });
    assert.equal(await result.text, "HELLO WORLD");
    assert.deepEqual(log, [
      "pre",
      "doStream",
      "delta:hel",
      "delta:lo",
      "delta: DROP",
      "delta: world",
      "post",
    ]);
  });

  it("a held-back guardrail blocks text before any of it is released", async () => {
    const secret = "hunter2";
    const deltas = ["The pass", "word is h", "un", "ter", "2 and more"];
    const model = wrapLanguageModel({
      model: streaming(deltas),
      middleware: hookscopeMiddleware({
        guard: {
          holdBackChars: secret.length,
          check: (text) => text.includes(secret) ? { block: "a password" } : undefined,
        },
      }),
    });
    const parts = await collect(streamText({ model, prompt: "hi" }));
    const released = parts.filter((p) => p.type === "text-delta").map((p) => p.text).join("");
    assert.ok(!released.includes("h" + "u"), `released ${JSON.stringify(released)}`);
    assert.ok("The password is ".startsWith(released), released);
    const error = parts.find((p) => p.type === "error")?.error;
    assert.ok(error instanceof StreamBlockedError, String(error));
    assert.equal(error.reason, "a password");
  });

  it("a part handler gets (part, ctx) with ctx.chunkType and ctx.exit, as service stream handlers do", async () => {
    const seen: string[] = [];
    const model = wrapLanguageModel({
      model: streaming(["a"]),
      middleware: hookscopeMiddleware({
        exitHook: true,
        streamHandlers: {
          "text-delta": (part, ctx) => void seen.push(`${ctx.chunkType}:${part.delta}:${ctx.exit}`),
          finish: (_part, { chunkType, exit }) => void seen.push(`${chunkType}:${exit}`),
        },
      }),
    });
    assert.equal(await streamText({ model, prompt: "hi" }).text, "a");
    assert.deepEqual(seen, ["text-delta:a:true", "finish:true"]);
  });

  it("a guardrail that passes releases all the text in order", async () => {
    const model = wrapLanguageModel({
      model: streaming(["a", "b", "c", "d", "e"]),
      middleware: hookscopeMiddleware({ guard: { holdBackChars: 2, check: () => undefined } }),
    });
    assert.equal(await streamText({ model, prompt: "hi" }).text, "abcde");
  });

  it("a failing stream handler with exitHook errors the stream for the consumer", async () => {
    const model = wrapLanguageModel({
      model: streaming(["a", "b"]),
      middleware: hookscopeMiddleware({
        exitHook: true,
        streamHandlers: {
          "text-delta": (part) => {
            if (part.delta === "b") throw new Error("bad chunk");
            return part;
          },
        },
      }),
    });
    const parts = await collect(streamText({ model, prompt: "hi" }));
    const error = parts.find((p) => p.type === "error")?.error;
    assert.match(String(error), /bad chunk/);
  });

  it("a stream handler that never settles misses its deadline", async () => {
    const model = wrapLanguageModel({
      model: streaming(["a"]),
      middleware: hookscopeMiddleware({
        exitHook: true,
        chunkTimeoutMs: 50,
        streamHandlers: { "text-delta": () => new Promise(() => {}) },
      }),
    });
    const parts = await collect(streamText({ model, prompt: "hi" }));
    assert.match(String(parts.find((p) => p.type === "error")?.error), /did not settle/);
  });

  it("a stream handler's signal aborts with the TimeoutError at its deadline", async () => {
    let reason: unknown;
    const model = wrapLanguageModel({
      model: streaming(["a"]),
      middleware: hookscopeMiddleware({
        exitHook: true,
        chunkTimeoutMs: 50,
        streamHandlers: {
          "text-delta": (_part, { signal }) =>
            new Promise(() => {
              signal.addEventListener("abort", () => (reason = signal.reason), { once: true });
            }),
        },
      }),
    });
    await collect(streamText({ model, prompt: "hi" }));
    assert.equal((reason as Error)?.name, "TimeoutError");
  });

  it("with a session, every part fires api.stream_chunk in order", async () => {
    const session = new Session();
    const types: string[] = [];
    session.hooks.on("api.stream_chunk", ({ chunkType }) => void types.push(chunkType));
    const model = wrapLanguageModel({
      model: streaming(["x", "y"]),
      middleware: hookscopeMiddleware({ session }),
    });
    await streamText({ model, prompt: "hi" }).text;
    assert.deepEqual(types, [
      "stream-start",
      "text-start",
      "text-delta",
      "text-delta",
      "text-end",
      "finish",
    ]);
  });
});
