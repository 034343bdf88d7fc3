import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { HookBus, HookSignal, IModel, Session } from "../../mod.ts";
import { bridgeModelToSession } from "../../session/mod.ts";
import { HOOK_POINT_WIRING } from "../../hooks/mod.ts";
import { redactSecrets } from "../../service/mod.ts";
import {
  jsonReply,
  type OpenAIServer,
  sseReply,
  startOpenAIServer,
  textEvents,
} from "../fixtures/openai_server.ts";

const servers: OpenAIServer[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

async function modelFor(replies: Parameters<typeof startOpenAIServer>[0]) {
  const server = await startOpenAIServer(replies);
  servers.push(server);
  const model = new IModel({
    model: "test-model",
    baseURL: server.baseURL,
    apiKey: "sk-SECRET-123",
  });
  return { server, model };
}

function collect(bus: HookBus) {
  const seen: { point: string; payload: Record<string, unknown> }[] = [];
  for (const point of ["api.pre_call", "api.post_call", "api.stream_chunk"] as const) {
    bus.on(
      point,
      (payload) => void seen.push({ point, payload: payload as Record<string, unknown> }),
    );
  }
  return seen;
}

describe("bridgeModelToSession (X5)", () => {
  it("emits api.pre_call and api.post_call with typed, redacted payloads for invoke()", async () => {
    const { model } = await modelFor([jsonReply({
      choices: [{ message: { content: "hi" } }],
      usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
    })]);
    const session = new Session();
    const seen = collect(session.hooks);
    const bridge = bridgeModelToSession(model, session);
    const event = await model.invoke({
      messages: [{ role: "user", content: "hello" }],
      api_key: "leak",
    });
    await bridge.drain();
    assert.deepEqual(seen.map((s) => s.point), ["api.pre_call", "api.post_call"]);
    const [pre, post] = seen.map((s) => s.payload);
    assert.equal(pre.model, "test-model");
    assert.equal(pre.provider, model.endpoint.name);
    assert.equal(pre.eventId, event.id);
    assert.equal(pre.streaming, false);
    assert.match(String(pre.requestSummary), /hello/);
    assert.ok(String(pre.requestSummary).length <= 200);
    assert.equal(post.status, "completed");
    assert.equal(typeof post.latencyMs, "number");
    assert.deepEqual(post.tokens, { prompt: 3, completion: 1, total: 4 });
    const everything = JSON.stringify(seen);
    assert.ok(!everything.includes("sk-SECRET-123"), "the API key never appears");
    assert.ok(!everything.includes("leak"), "secret-looking request keys are redacted");
    assert.ok(!/authorization/i.test(everything) || everything.includes("[redacted]"));
    await session.drainSignals();
    const recorded = session.observer.byType(HookSignal).map((s) => s.point);
    assert.deepEqual(recorded.filter((p) => p?.startsWith("api.")), [
      "api.pre_call",
      "api.post_call",
    ]);
  });

  it("observes stream chunks after the service chunk handler ran, and usage from the stream", async () => {
    const { model } = await modelFor([
      sseReply(textEvents(["ab", "cd"], { usage: { prompt: 2, completion: 2 } })),
    ]);
    model.hookRegistry.onChunk("text", (chunk: { text: string }) => ({
      type: "text",
      text: chunk.text.toUpperCase(),
    }));
    const bus = new HookBus();
    const seen = collect(bus);
    const bridge = bridgeModelToSession(model, bus);
    const chunks: unknown[] = [];
    for await (const chunk of model.stream({ messages: [] })) chunks.push(chunk);
    await bridge.drain();
    const textChunks = seen.filter((s) =>
      s.point === "api.stream_chunk" && s.payload.chunkType === "text"
    );
    assert.deepEqual(textChunks.map((s) => s.payload.chunkSummary), [
      '{"type":"text","text":"AB"}',
      '{"type":"text","text":"CD"}',
    ]);
    assert.equal(seen[0].point, "api.pre_call");
    assert.equal(seen.at(-1)!.point, "api.post_call");
    assert.equal(seen.at(-1)!.payload.streaming, true);
    assert.deepEqual(seen.at(-1)!.payload.tokens, { prompt: 2, completion: 2, total: 4 });
  });

  it("chunks: false skips api.stream_chunk; redact rewrites payloads", async () => {
    const { model } = await modelFor([sseReply(textEvents(["x"]))]);
    const bus = new HookBus();
    const seen = collect(bus);
    const bridge = bridgeModelToSession(model, bus, {
      chunks: false,
      redact: (payload) => ({ ...payload, requestSummary: "[hidden]" }),
    });
    for await (
      const _ of model.stream({ messages: [{ role: "user", content: "private" }] })
    ) { /* drain */ }
    await bridge.drain();
    assert.deepEqual(seen.map((s) => s.point), ["api.pre_call", "api.post_call"]);
    assert.equal(seen[0].payload.requestSummary, "[hidden]");
  });

  it("a failing call still emits api.post_call with its status and error", async () => {
    const { model } = await modelFor([{
      kind: "error",
      status: 429,
      body: { error: "slow down" },
    }]);
    const bus = new HookBus();
    const seen = collect(bus);
    const bridge = bridgeModelToSession(model, bus);
    const event = await model.invoke({ messages: [] });
    await bridge.drain();
    assert.equal(event.status, "failed");
    assert.equal(seen.at(-1)!.payload.status, "failed");
    assert.match(String(seen.at(-1)!.payload.error), /429/);
  });

  it("handler failures on the session side never change the model call (D6)", async () => {
    const { model } = await modelFor([jsonReply({ choices: [{ message: { content: "fine" } }] })]);
    const bus = new HookBus(null, { onError: () => {} });
    bus.on("api.pre_call", () => {
      throw new Error("observer broke");
    });
    const bridge = bridgeModelToSession(model, bus);
    const event = await model.invoke({ messages: [] });
    await bridge.drain();
    assert.equal(event.status, "completed");
  });

  it("removing the bridge restores the model: used alone it emits nothing into the session", async () => {
    const { model } = await modelFor((request) =>
      (request.body as { stream?: unknown } | null)?.stream
        ? sseReply(textEvents(["x"]))
        : jsonReply({ choices: [{ message: { content: "x" } }] })
    );
    const session = new Session();
    const seen = collect(session.hooks);
    const bridge = bridgeModelToSession(model, session);
    await model.invoke({ messages: [] });
    await bridge.drain();
    const count = seen.length;
    bridge();
    await model.invoke({ messages: [] });
    for await (const _ of model.stream({ messages: [] })) { /* drain */ }
    await bridge.drain();
    assert.equal(seen.length, count);
    assert.equal(count, 2);
  });

  it("rejects a target that is not a Session or HookBus", () => {
    const model = new IModel({ model: "m", baseURL: "http://127.0.0.1:9" });
    assert.throws(() => bridgeModelToSession(model, {} as never), TypeError);
    assert.throws(
      () => bridgeModelToSession(model, new HookBus(), { redact: 1 as never }),
      TypeError,
    );
    for (const target of [null, undefined, 5]) {
      assert.throws(
        () => bridgeModelToSession(model, target as never),
        /Cannot bridge model: target must be a Session or a HookBus/,
      );
    }
    assert.throws(
      () => bridgeModelToSession(null as never, new HookBus()),
      /Cannot bridge model: model must be an IModel/,
    );
  });

  it("HOOK_POINT_WIRING names the bridge as the api.* emit site; artifact.created stays reserved", () => {
    for (const point of ["api.pre_call", "api.post_call", "api.stream_chunk"] as const) {
      assert.equal(HOOK_POINT_WIRING[point].wired, true);
      assert.match(HOOK_POINT_WIRING[point].source, /bridgeModelToSession/);
    }
    assert.equal(HOOK_POINT_WIRING["artifact.created"].wired, false);
  });

  it("redactSecrets() replaces secret-looking keys deeply and keeps token counts", () => {
    assert.deepEqual(
      redactSecrets({
        a: { apiKey: "k", nested: [{ password: "p" }] },
        totalTokens: 5,
        tokens: { total: 1 },
      }),
      {
        a: { apiKey: "[redacted]", nested: [{ password: "[redacted]" }] },
        totalTokens: 5,
        tokens: { total: 1 },
      },
    );
  });
});
