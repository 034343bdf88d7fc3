import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { EventStatus, HookPhaseError } from "../../core/mod.ts";
import {
  APICalling,
  EndpointError,
  FunctionEndpoint,
  globalHookLogger,
  HookedEvent,
  HookEventType,
  type HookParams,
  HookRegistry,
  IModel,
  type ModelAnswer,
  type StreamChunk,
} from "../../service/mod.ts";
import {
  completion,
  errorReply,
  jsonReply,
  type OpenAIServer,
  type Script,
  sseReply,
  startOpenAIServer,
  textEvents,
} from "../fixtures/openai_server.ts";
import { setDeadlineFactory } from "../../service/_deadline.ts";

async function withServer(
  script: Script,
  body: (server: OpenAIServer) => Promise<void>,
): Promise<void> {
  const server = await startOpenAIServer(script);
  try {
    await body(server);
  } finally {
    await server.close();
  }
}

const local = () => new FunctionEndpoint({ call: (p) => p });

async function collect(stream: ReadableStream<StreamChunk>): Promise<StreamChunk[]> {
  const out: StreamChunk[] = [];
  for await (const chunk of stream) out.push(chunk);
  return out;
}

describe("IModel construction", () => {
  it("IModel uses a given registry, builds one from { hooks, streamHandlers }, or makes a fresh one", () => {
    const registry = new HookRegistry();
    assert.equal(
      new IModel({ model: "m", endpoint: local(), hookRegistry: registry }).hookRegistry,
      registry,
    );
    const built = new IModel({
      model: "m",
      endpoint: local(),
      hookRegistry: { hooks: { preInvoke: () => {} }, streamHandlers: { text: () => {} } },
    });
    assert.equal(built.hookRegistry.canHandle({ hookType: HookEventType.PreInvocation }), true);
    assert.equal(built.hookRegistry.canHandle({ chunkType: "text" }), true);
    const fresh = new IModel({ model: "m", endpoint: local() });
    assert.ok(fresh.hookRegistry instanceof HookRegistry);
    assert.equal(fresh.exitHook, false);
  });

  it("IModel rejects a registry config with an unknown chunk type or phase key from an untyped caller", () => {
    const config = JSON.parse('{"streamHandlers": {"txt": null}, "hooks": {}}');
    config.streamHandlers.txt = () => {};
    assert.throws(
      () => new IModel({ model: "m", endpoint: local(), hookRegistry: config }),
      /unknown chunk type "txt" in streamHandlers; valid chunk types: "text", "tool_call"/,
    );
    const phases = JSON.parse('{"hooks": {"pre_invok": null}}');
    phases.hooks.pre_invok = () => {};
    assert.throws(
      () => new IModel({ model: "m", endpoint: local(), hookRegistry: phases }),
      /unknown hook key "pre_invok"; valid keys: .*"preInvoke"/,
    );
  });

  it("IModel refuses an older phase key in its registry config, naming the key to write", () => {
    assert.throws(
      () =>
        new IModel({
          model: "m",
          endpoint: local(),
          hookRegistry: { hooks: { pre_invoke: () => {} } as never },
        }),
      /hook key "pre_invoke" is an older spelling of "preInvoke"; write "preInvoke"/,
    );
  });

  it("IModel takes streamingProcessFunc as the deprecated spelling of transformChunk, not beside it", async () => {
    const fn = (chunk: StreamChunk) => chunk.type === "text" ? { ...chunk, text: "!" } : null;
    const old = new IModel({ model: "m", endpoint: local(), streamingProcessFunc: fn });
    assert.equal(old.transformChunk, fn);
    assert.equal(old.streamingProcessFunc, fn);
    assert.equal(old.copy().transformChunk, fn);
    assert.deepEqual(await old.processChunk({ type: "text", text: "a" }), {
      type: "text",
      text: "!",
    });
    assert.throws(
      () =>
        new IModel({
          model: "m",
          endpoint: local(),
          transformChunk: fn,
          streamingProcessFunc: fn,
        }),
      /give transformChunk or its deprecated spelling streamingProcessFunc, not both/,
    );
    assert.throws(
      () => new IModel({ model: "m", endpoint: local(), transformChunk: "x" as never }),
      /transformChunk must be a function/,
    );
  });

  it("IModel hands the pre-create handler the event class and the invoke handlers the event", async () => {
    const seen: string[] = [];
    const model = new IModel({
      model: "m",
      endpoint: local(),
      hookRegistry: {
        hooks: {
          preEventCreate: (eventClass) => void seen.push(`class ${eventClass.name}`),
          preInvoke: (event) => void seen.push(`pre ${String(event.payload.model)} ${event.id}`),
          postInvoke: (event) => void seen.push(`post ${event.id}`),
        },
      },
    });
    const event = await model.invoke({ messages: [] });
    assert.deepEqual(seen, ["class APICalling", `pre m ${event.id}`, `post ${event.id}`]);
  });

  it("IModel rejects bad options with a TypeError", () => {
    assert.throws(() => new IModel({ model: "", endpoint: local() }), TypeError);
    assert.throws(() => new IModel({ model: "m" }), /endpoint or a baseURL is required/);
    assert.throws(
      () => new IModel({ model: "m", endpoint: local(), baseURL: "http://x" }),
      /either endpoint or baseURL/,
    );
    assert.throws(
      () => new IModel({ model: "m", endpoint: local(), apiKey: "sk-unused" }),
      (e) => e instanceof TypeError && /apiKey goes with baseURL/.test(e.message),
    );
    assert.throws(
      () => new IModel({ model: "m", endpoint: local(), exitHook: "yes" as never }),
      TypeError,
    );
    assert.throws(
      () =>
        new IModel({
          model: "m",
          endpoint: local(),
          hookRegistry: { hooks: { bad: () => {} } } as never,
        }),
      /unknown hook key "bad"/,
    );
  });

  it("IModel.copy() shares the registry and options", () => {
    const model = new IModel({ model: "m", endpoint: local(), exitHook: true });
    const copy = model.copy();
    assert.notEqual(copy, model);
    assert.equal(copy.hookRegistry, model.hookRegistry);
    assert.equal(copy.exitHook, true);
    assert.equal(copy.endpoint, model.endpoint);
    model.hookRegistry.preInvoke(() => {});
    assert.equal(copy.hookRegistry.canHandle({ hookType: HookEventType.PreInvocation }), true);
  });
});

describe("IModel.createEvent()", () => {
  it("IModel.createEvent() resolves to an APICalling with the model in the payload (X6)", async () => {
    const model = new IModel({ model: "gpt-test", endpoint: local() });
    const event = await model.createEvent({ messages: [] });
    assert.ok(event instanceof APICalling);
    assert.equal(event.status, EventStatus.PENDING);
    assert.deepEqual(event.payload, { messages: [], model: "gpt-test" });
    assert.equal(event.preInvokeHook, null);
    assert.equal(event.postInvokeHook, null);
  });

  it("IModel.createEvent() attaches only the phases the registry handles, with the D4 defaults", async () => {
    const model = new IModel({ model: "m", endpoint: local(), exitHook: true });
    model.hookRegistry.preInvoke(() => {});
    const event = await model.createEvent({});
    assert.ok(event.preInvokeHook);
    assert.equal(event.postInvokeHook, null);
    assert.equal(event.preInvokeHook.timeoutMs, 30_000);
    assert.equal(event.preInvokeHook.exit, true);
    assert.equal(event.preInvokeHook.eventLike, event);
  });

  it("IModel.createEvent() applies per-call exits, timeouts and params", async () => {
    const model = new IModel({ model: "m", endpoint: local(), exitHook: true });
    model.hookRegistry.preInvoke(() => {});
    model.hookRegistry.postInvoke(() => {});
    const event = await model.createEvent({}, {
      preInvokeExitHook: false,
      preInvokeHookTimeoutMs: 5,
      preInvokeHookParams: { a: 1 },
      postInvokeExitHook: null,
      postInvokeHookTimeoutMs: 7,
      postInvokeHookParams: { b: 2 },
    });
    assert.equal(event.preInvokeHook?.exit, false);
    assert.equal(event.preInvokeHook?.timeoutMs, 5);
    assert.deepEqual(event.preInvokeHook?.params, { a: 1 });
    assert.equal(event.postInvokeHook?.exit, true, "null falls back to the model's exitHook");
    assert.equal(event.postInvokeHook?.timeoutMs, 7);
    assert.deepEqual(event.postInvokeHook?.params, { b: 2 });
  });

  it("IModel.createEvent() runs the pre-create hook with the event class and stamps the new event", async () => {
    globalHookLogger.clear();
    const seen: [unknown, HookParams][] = [];
    const model = new IModel({ model: "m", endpoint: local() });
    model.hookRegistry.preEventCreate((cls, params) => {
      seen.push([cls, params]);
      return "ignored";
    });
    const event = await model.createEvent({}, { createEventHookParams: { who: "me" } });
    assert.equal(seen[0][0], APICalling);
    assert.equal(seen[0][1].who, "me");
    assert.equal(seen[0][1].exit, false);
    const entry = globalHookLogger.entries.find((e) => e.hookType === "pre_event_create");
    assert.deepEqual(entry?.associatedEventInfo, {
      eventClass: "APICalling",
      eventId: event.id,
      eventCreatedAt: event.createdAt,
    });
  });

  it("IModel.createEvent() gives the pre-create hook 10 000 ms and pre/post 30 000 ms by default", async () => {
    const asked: number[] = [];
    setDeadlineFactory((ms) => {
      asked.push(ms);
      const controller = new AbortController();
      return { signal: controller.signal, arm() {}, clear() {} };
    });
    try {
      const model = new IModel({
        model: "m",
        endpoint: local(),
        hookRegistry: {
          hooks: { preEventCreate: () => {}, preInvoke: () => {}, postInvoke: () => {} },
        },
      });
      const event = await model.createEvent({});
      await event.invoke();
      assert.deepEqual(asked, [10_000, 30_000, 30_000]);
      asked.length = 0;
      await model.createEvent({}, { createEventHookTimeoutMs: 1234 });
      assert.deepEqual(asked, [1234]);
    } finally {
      setDeadlineFactory(null);
    }
  });

  it("IModel.createEvent() raises the pre-create cause when it asks to exit", async () => {
    const boom = new Error("not allowed");
    const model = new IModel({ model: "m", endpoint: local(), exitHook: true });
    model.hookRegistry.preEventCreate(() => {
      throw boom;
    });
    await assert.rejects(model.createEvent({}), (e) => e === boom);
    // Per-call exit false: the failure is recorded and the event is still created.
    const event = await model.createEvent({}, { createEventExitHook: false });
    assert.ok(event instanceof APICalling);
  });

  it("IModel.createEvent() rejects a non-HookedEvent class after the pre-create hook", async () => {
    let ran = false;
    const model = new IModel({ model: "m", endpoint: local() });
    model.hookRegistry.preEventCreate(() => void (ran = true));
    class NotHooked {}
    await assert.rejects(
      model.createEvent({}, { eventType: NotHooked as never }),
      (e) => e instanceof TypeError && /unsupported event type "NotHooked"/.test(e.message),
    );
    assert.equal(ran, true);
    // The abstract base has no core to run.
    await assert.rejects(
      model.createEvent({}, { eventType: HookedEvent as never }),
      (e) => e instanceof TypeError && /unsupported event type "HookedEvent"/.test(e.message),
    );
  });

  it("IModel.createEvent() builds a custom HookedEvent subclass", async () => {
    class Tagged extends APICalling {
      tag = "custom";
    }
    const model = new IModel({ model: "m", endpoint: local() });
    const event = await model.createEvent({ x: 1 }, { eventType: Tagged });
    assert.ok(event instanceof Tagged);
    assert.equal((event as Tagged).tag, "custom");
  });

  it("IModel.createEvent() rejects bad hook options with a TypeError before the pre-create hook runs", async () => {
    let runs = 0;
    const model = new IModel({ model: "m", endpoint: local() });
    model.hookRegistry.preEventCreate(() => void runs++);
    model.hookRegistry.preInvoke(() => {});
    model.hookRegistry.postInvoke(() => {});
    const bad: Record<string, unknown>[] = [
      { preInvokeHookTimeoutMs: -1 },
      { postInvokeHookTimeoutMs: Number.NaN },
      { preInvokeExitHook: "yes" },
      { postInvokeHookParams: "x" },
      { createEventHookParams: null },
      { signal: {} },
    ];
    for (const options of bad) {
      await assert.rejects(
        model.createEvent({}, options as never),
        (e) => e instanceof TypeError && /^Cannot create event: /.test(e.message),
        JSON.stringify(options),
      );
    }
    assert.equal(runs, 0);
    await model.createEvent({}, { preInvokeHookTimeoutMs: 5, postInvokeExitHook: null });
    assert.equal(runs, 1);
  });

  it("IModel.createEvent() rejects a non-object request and runs no hook", async () => {
    let ran = false;
    const model = new IModel({ model: "m", endpoint: local() });
    model.hookRegistry.preEventCreate(() => void (ran = true));
    await assert.rejects(model.createEvent("hi" as never), TypeError);
    assert.equal(ran, false);
  });
});

describe("IModel.invoke() over HTTP", () => {
  it("IModel.invoke() runs pre, the request and post, and resolves to the completed event", async () => {
    await withServer([jsonReply(completion("pong"))], async (server) => {
      const steps: string[] = [];
      const model = new IModel({
        model: "m",
        baseURL: server.baseURL,
        apiKey: "k",
        hookRegistry: {
          hooks: {
            preInvoke: () => void steps.push(`pre:${server.requests.length}`),
            postInvoke: (event) => void steps.push(`post:${(event as APICalling).status}`),
          },
        },
      });
      const event = await model.invoke({ messages: [{ role: "user", content: "ping" }] });
      assert.equal(event.status, EventStatus.COMPLETED);
      assert.equal((event.response as ModelAnswer).text, "pong");
      assert.deepEqual(steps, ["pre:0", "post:processing"]);
      assert.equal((server.requests[0].body as { model: string }).model, "m");
    });
  });

  it("IModel.invoke() never sends the request when the pre hook fails", async () => {
    await withServer([jsonReply(completion("pong"))], async (server) => {
      const model = new IModel({
        model: "m",
        baseURL: server.baseURL,
        hookRegistry: { hooks: { preInvoke: () => Promise.reject(new Error("blocked")) } },
      });
      const event = await model.invoke({ messages: [] });
      assert.equal(event.status, EventStatus.FAILED);
      assert.ok(event.execution.error instanceof HookPhaseError);
      assert.equal(server.requests.length, 0);
    });
  });

  it("IModel.invoke() resolves to a FAILED event carrying the EndpointError on HTTP 429", async () => {
    await withServer([errorReply(429, { error: { message: "slow down" } })], async (server) => {
      const model = new IModel({ model: "m", baseURL: server.baseURL });
      const event = await model.invoke({});
      assert.equal(event.status, EventStatus.FAILED);
      assert.ok(event.execution.error instanceof EndpointError);
      assert.equal((event.execution.error as EndpointError).status, 429);
    });
  });

  it("IModel.invoke() rejects and ends CANCELLED when the caller aborts", async () => {
    await withServer([{ kind: "hang" }], async (server) => {
      const model = new IModel({ model: "m", baseURL: server.baseURL });
      const controller = new AbortController();
      let event: HookedEvent | undefined;
      const run = model.invoke({}, { signal: controller.signal, onEvent: (e) => (event = e) });
      while (server.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
      controller.abort();
      await assert.rejects(run, { name: "AbortError" });
      assert.equal(event?.status, EventStatus.CANCELLED);
      await server.requests[0].closed;
      assert.equal(server.requests[0].clientClosed, true);
    });
  });
});

describe("IModel secrets", () => {
  it("IModel never puts the API key in events, hook logs or errors", async () => {
    const key = "sk-live-very-secret-0042";
    await withServer([
      errorReply(401, { error: { message: `bad key ${key}` } }),
      jsonReply(completion("ok")),
    ], async (server) => {
      globalHookLogger.clear();
      const model = new IModel({
        model: "m",
        baseURL: server.baseURL,
        apiKey: key,
        hookRegistry: { hooks: { preInvoke: () => {}, postInvoke: () => {} } },
      });
      const failed = await model.invoke({});
      const ok = await model.invoke({});
      assert.equal(failed.status, EventStatus.FAILED);
      assert.equal(ok.status, EventStatus.COMPLETED);
      assert.equal(server.requests[1].headers.authorization, `Bearer ${key}`);
      const error = failed.execution.error as EndpointError;
      const rendered = [
        JSON.stringify(failed),
        JSON.stringify(ok),
        JSON.stringify(model),
        JSON.stringify(globalHookLogger.entries),
        error.message,
        error.bodyExcerpt,
        String(error.stack),
      ].join("\n");
      assert.equal(rendered.includes(key), false);
      assert.match(error.bodyExcerpt, /\[redacted\]/);
    });
  });
});

describe("IModel.stream() and processChunk()", () => {
  it("IModel.stream() prefers the chunk handler over transformChunk and keeps chunks on null", async () => {
    await withServer(
      [sseReply(textEvents(["ab", "cd"], { usage: { prompt: 1, completion: 2 } }))],
      async (server) => {
        const model = new IModel({
          model: "m",
          baseURL: server.baseURL,
          hookRegistry: {
            streamHandlers: {
              text: (chunk: { text: string }) => ({
                type: "text",
                text: chunk.text.toUpperCase(),
              }),
              done: () => null,
            },
          },
          transformChunk: (chunk) =>
            chunk.type === "usage"
              ? { ...chunk, totalTokens: -1 }
              : chunk.type === "text"
              ? "never"
              : undefined,
        });
        const chunks = await collect(model.stream({ messages: [] }));
        assert.deepEqual(chunks, [
          { type: "text", text: "AB" },
          { type: "text", text: "CD" },
          { type: "usage", promptTokens: 1, completionTokens: 2, totalTokens: -1 },
          { type: "done", finishReason: "stop" },
        ]);
        assert.equal((server.requests[0].body as { stream: boolean }).stream, true);
      },
    );
  });

  it("IModel.stream() keeps the original chunk when a handler fails with exit off", async () => {
    await withServer([sseReply(textEvents(["x"], { usage: null }))], async (server) => {
      const model = new IModel({
        model: "m",
        baseURL: server.baseURL,
        hookRegistry: {
          streamHandlers: {
            text: () => {
              throw new Error("handler broke");
            },
          },
        },
      });
      const chunks = await collect(model.stream({}));
      assert.deepEqual(chunks.map((c) => c.type), ["text", "done"]);
    });
  });

  it("IModel.stream() errors the stream when a handler fails with exit on, and closes the request", async () => {
    await withServer([sseReply(textEvents(["a", "b", "c"]), { gapMs: 20 })], async (server) => {
      const boom = new Error("stop streaming");
      let event: HookedEvent | undefined;
      const model = new IModel({
        model: "m",
        baseURL: server.baseURL,
        exitHook: true,
        hookRegistry: {
          streamHandlers: {
            text: (chunk: { text: string }) => {
              if (chunk.text === "b") throw boom;
            },
          },
        },
      });
      const seen: StreamChunk[] = [];
      await assert.rejects(
        (async () => {
          for await (const c of model.stream({}, { onEvent: (e) => (event = e) })) seen.push(c);
        })(),
        (e) => e === boom,
      );
      assert.deepEqual(seen, [{ type: "text", text: "a" }]);
      await server.requests[0].closed;
      assert.equal(server.requests[0].clientClosed, true);
      assert.equal(event?.status, EventStatus.FAILED);
      assert.equal(event?.execution.error, boom);
    });
  });

  it("IModel.stream() runs the post hook only after the consumer drained the stream", async () => {
    await withServer([sseReply(textEvents(["a", "b"]))], async (server) => {
      const steps: string[] = [];
      const model = new IModel({
        model: "m",
        baseURL: server.baseURL,
        hookRegistry: {
          hooks: {
            preInvoke: () => void steps.push("pre"),
            postInvoke: () => void steps.push("post"),
          },
        },
      });
      const reader = model.stream({}).getReader();
      const got: string[] = [];
      while (true) {
        const next = await reader.read();
        if (next.done) break;
        got.push(next.value.type);
        if (next.value.type !== "done") assert.deepEqual(steps, ["pre"]);
      }
      assert.deepEqual(got, ["text", "text", "usage", "done"]);
      assert.deepEqual(steps, ["pre", "post"]);
    });
  });

  it("IModel.stream() errors before any chunk when the pre hook fails, and sends nothing", async () => {
    await withServer([sseReply(textEvents(["a"]))], async (server) => {
      const model = new IModel({
        model: "m",
        baseURL: server.baseURL,
        hookRegistry: {
          hooks: {
            preInvoke: () => {
              throw new Error("denied");
            },
          },
        },
      });
      const reader = model.stream({}).getReader();
      await assert.rejects(
        reader.read(),
        (e) => e instanceof HookPhaseError && /denied/.test(e.message),
      );
      assert.equal(server.requests.length, 0);
    });
  });

  it("IModel.stream() cancelled mid-stream ends the event CANCELLED, aborts the fetch and skips post", async () => {
    const pieces = Array.from({ length: 100 }, (_, i) => `p${i}`);
    await withServer([sseReply(textEvents(pieces), { gapMs: 10 })], async (server) => {
      const steps: string[] = [];
      let event: HookedEvent | undefined;
      const model = new IModel({
        model: "m",
        baseURL: server.baseURL,
        hookRegistry: { hooks: { postInvoke: () => void steps.push("post") } },
      });
      const reader = model.stream({}, { onEvent: (e) => (event = e) }).getReader();
      assert.deepEqual((await reader.read()).value, { type: "text", text: "p0" });
      await reader.cancel(new Error("enough"));
      await server.requests[0].closed;
      assert.equal(server.requests[0].clientClosed, true);
      assert.equal(event?.status, EventStatus.CANCELLED);
      assert.deepEqual(steps, []);
      assert.ok(server.requests[0].eventsWritten < 100);
    });
  });

  it("IModel.stream() aborted through its signal during a slow first byte ends CANCELLED", async () => {
    await withServer(
      [sseReply(textEvents(["a"]), { firstByteDelayMs: 10_000 })],
      async (server) => {
        const controller = new AbortController();
        let event: HookedEvent | undefined;
        const model = new IModel({ model: "m", baseURL: server.baseURL });
        const reader = model.stream({}, { signal: controller.signal, onEvent: (e) => (event = e) })
          .getReader();
        const pending = reader.read();
        while (server.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
        controller.abort(new DOMException("stop", "AbortError"));
        await assert.rejects(pending, { name: "AbortError" });
        assert.equal(event?.status, EventStatus.CANCELLED);
        await server.requests[0].closed;
        assert.equal(server.requests[0].clientClosed, true);
      },
    );
  });

  it("IModel.stream() aborted while a chunk handler runs ends CANCELLED, not FAILED", async () => {
    const controller = new AbortController();
    const reason = new DOMException("caller stopped", "AbortError");
    let event: HookedEvent | undefined;
    let entered!: () => void;
    const handlerRunning = new Promise<void>((resolve) => (entered = resolve));
    const model = new IModel({
      model: "m",
      endpoint: new FunctionEndpoint({
        call: () => null,
        stream: function* () {
          yield { type: "text", text: "a" };
          yield { type: "done", finishReason: "stop" };
        },
      }),
      hookRegistry: {
        streamHandlers: {
          // Waits for its signal, like a handler calling another service would.
          text: (_c, { signal }) =>
            new Promise((_resolve, reject) => {
              entered();
              signal.addEventListener("abort", () => reject(signal.reason), { once: true });
            }),
        },
      },
    });
    const reader = model.stream({}, { signal: controller.signal, onEvent: (e) => (event = e) })
      .getReader();
    const pending = reader.read();
    await handlerRunning;
    controller.abort(reason);
    await assert.rejects(pending, (e) => e === reason);
    assert.equal(event?.status, EventStatus.CANCELLED);
    assert.equal(event?.execution.error, reason);
  });

  it("IModel.stream() cancelled by the consumer aborts the signal of a running chunk handler", async () => {
    let handlerSignal: AbortSignal | undefined;
    let entered!: () => void;
    const handlerRunning = new Promise<void>((resolve) => (entered = resolve));
    let event: HookedEvent | undefined;
    const model = new IModel({
      model: "m",
      endpoint: new FunctionEndpoint({
        call: () => null,
        stream: function* () {
          yield { type: "text", text: "a" };
          yield { type: "done", finishReason: "stop" };
        },
      }),
      hookRegistry: {
        streamHandlers: {
          text: (_c, { signal }) => {
            handlerSignal = signal;
            entered();
            return new Promise((_resolve, reject) => {
              signal.addEventListener("abort", () => reject(signal.reason), { once: true });
            });
          },
        },
      },
    });
    const reader = model.stream({}, { onEvent: (e) => (event = e) }).getReader();
    const pending = reader.read();
    await handlerRunning;
    assert.equal(handlerSignal?.aborted, false);
    await reader.cancel(new Error("consumer done"));
    assert.equal(handlerSignal?.aborted, true);
    assert.deepEqual(await pending, { done: true, value: undefined });
    assert.equal(event?.status, EventStatus.CANCELLED);
  });

  it("IModel.processChunk() resolves to the replacement, or null to keep the original", async () => {
    const model = new IModel({ model: "m", endpoint: local() });
    assert.equal(await model.processChunk({ type: "text", text: "a" }), null);
    model.hookRegistry.onChunk("text", () => "replaced");
    assert.equal(await model.processChunk({ type: "text", text: "a" }), "replaced");
    model.hookRegistry.onChunk("text", () => new Error("returned error"));
    assert.equal(await model.processChunk({ type: "text", text: "a" }), null);
    const withFunc = new IModel({
      model: "m",
      endpoint: local(),
      transformChunk: (c) => Promise.resolve(c.type === "done" ? "async" : undefined),
    });
    assert.equal(await withFunc.processChunk({ type: "done", finishReason: null }), "async");
    assert.equal(await withFunc.processChunk({ type: "text", text: "" }), null);
  });

  it("IModel.processChunk() replaces with a returned object that has name and message", async () => {
    const model = new IModel({ model: "m", endpoint: local() });
    const replacement = { type: "text", text: "x", name: "n", message: "m" };
    model.hookRegistry.onChunk("text", () => replacement);
    assert.equal(await model.processChunk({ type: "text", text: "a" }), replacement);
  });

  it("IModel.processChunk() rejects with a thrown non-Error value when exit is on", async () => {
    const model = new IModel({ model: "m", endpoint: local(), exitHook: true });
    model.hookRegistry.onChunk("text", () => {
      throw "stop here";
    });
    await assert.rejects(model.processChunk({ type: "text", text: "a" }), (e) => e === "stop here");
    const quiet = new IModel({ model: "m", endpoint: local() });
    quiet.hookRegistry.onChunk("text", () => {
      throw "ignored";
    });
    assert.equal(await quiet.processChunk({ type: "text", text: "a" }), null);
  });

  it("IModel.processChunk() rejects with the cause when a handler fails with exit on", async () => {
    const boom = new Error("boom");
    const model = new IModel({ model: "m", endpoint: local(), exitHook: true });
    model.hookRegistry.onChunk("text", () => Promise.reject(boom));
    await assert.rejects(model.processChunk({ type: "text", text: "a" }), (e) => e === boom);
  });
  it("IModel.processChunk() hands the handler (chunk, ctx) and keeps the exit and cancellation rules", async () => {
    const seen: unknown[] = [];
    const model = new IModel({ model: "m", endpoint: local(), exitHook: true });
    const signal = new AbortController().signal;
    model.hookRegistry.onChunk("usage", (chunk, ctx) => void seen.push(chunk, { ...ctx }));
    const chunk: StreamChunk = {
      type: "usage",
      promptTokens: 1,
      completionTokens: 1,
      totalTokens: 2,
    };
    assert.equal(await model.processChunk(chunk, { signal }), null);
    assert.deepEqual(seen, [chunk, { chunkType: "usage", exit: true, signal }]);
    // A handler that throws nothing at all still ends the stream with a cause.
    model.hookRegistry.onChunk("text", () => {
      throw undefined;
    });
    await assert.rejects(model.processChunk({ type: "text", text: "a" }), {
      name: "HookPhaseError",
      message: "Streaming hook requested exit without a cause",
    });
    // An aborted signal ends the chunk with its reason, exit on or off, and the handler never runs.
    const quiet = new IModel({ model: "m", endpoint: local() });
    let ran = false;
    quiet.hookRegistry.onChunk("text", () => void (ran = true));
    const controller = new AbortController();
    const reason = new DOMException("gave up", "AbortError");
    controller.abort(reason);
    await assert.rejects(
      quiet.processChunk({ type: "text", text: "a" }, { signal: controller.signal }),
      (e) => e === reason,
    );
    assert.equal(ran, false);
  });
});

describe("IModel.observe()", () => {
  it("IModel.observe() sees pre_call, each delivered chunk and post_call of a stream, in order", async () => {
    await withServer([sseReply(textEvents(["a", "b"], { usage: null }))], async (server) => {
      const model = new IModel({
        model: "m",
        baseURL: server.baseURL,
        hookRegistry: {
          streamHandlers: {
            text: (c: { text: string }) => ({ type: "text", text: c.text + "!" }),
          },
        },
      });
      const seen: string[] = [];
      model.observe((n) => {
        if (n.type === "stream_chunk") seen.push(`chunk:${JSON.stringify(n.chunk)}`);
        else seen.push(`${n.type}:${n.streaming}:${n.event.status}`);
      });
      const delivered = await collect(model.stream({}));
      assert.equal(delivered.length, 3);
      assert.deepEqual(seen, [
        "pre_call:true:pending",
        'chunk:{"type":"text","text":"a!"}',
        'chunk:{"type":"text","text":"b!"}',
        'chunk:{"type":"done","finishReason":"stop"}',
        "post_call:true:completed",
      ]);
    });
  });

  it("IModel.observe() reports post_call for blocked, failed and cancelled calls", async () => {
    const model = new IModel({
      model: "m",
      endpoint: new FunctionEndpoint({
        call: () => Promise.reject(new Error("provider down")),
        stream: async function* () {
          yield { type: "text" as const, text: "x" };
          await new Promise(() => {}); // hangs until cancelled
        },
      }),
    });
    const ends: string[] = [];
    model.observe((n) =>
      void (n.type === "post_call" && ends.push(`${n.streaming}:${n.event.status}`))
    );
    const failed = await model.invoke({});
    assert.equal(failed.status, EventStatus.FAILED);
    const reader = model.stream({}).getReader();
    await reader.read();
    await reader.cancel();
    assert.deepEqual(ends, ["false:failed", "true:cancelled"]);
  });

  it("IModel.observe() hears post_call when the caller aborts a stream the consumer is not reading", async () => {
    const model = new IModel({
      model: "m",
      endpoint: new FunctionEndpoint({
        call: () => null,
        stream: async function* () {
          yield { type: "text" as const, text: "x" };
          await new Promise(() => {}); // the provider goes quiet
        },
      }),
    });
    const ends: string[] = [];
    model.observe((n) => void (n.type === "post_call" && ends.push(n.event.status)));
    const controller = new AbortController();
    const reason = new DOMException("caller left", "AbortError");
    const reader = model.stream({}, { signal: controller.signal }).getReader();
    assert.equal((await reader.read()).value?.type, "text");
    controller.abort(reason); // the consumer is not reading now
    await new Promise((r) => setTimeout(r, 0));
    assert.deepEqual(ends, [EventStatus.CANCELLED]);
    await assert.rejects(reader.read(), (e) => e === reason);
    assert.deepEqual(ends, [EventStatus.CANCELLED]);
  });

  it("IModel.stream() holds no listener on the caller's signal unless read, and releases it at the end", async () => {
    const model = new IModel({
      model: "m",
      endpoint: new FunctionEndpoint({
        call: () => null,
        stream: function* () {
          yield { type: "text", text: "x" };
          yield { type: "done", finishReason: "stop" };
        },
      }),
    });
    const signal = new AbortController().signal;
    const live = new Set<unknown>();
    const add = signal.addEventListener.bind(signal);
    const remove = signal.removeEventListener.bind(signal);
    signal.addEventListener = ((type: string, listener: EventListener, options?: unknown) => {
      live.add(listener);
      add(type, listener, options as AddEventListenerOptions);
    }) as typeof signal.addEventListener;
    signal.removeEventListener = ((type: string, listener: EventListener, options?: unknown) => {
      live.delete(listener);
      remove(type, listener, options as EventListenerOptions);
    }) as typeof signal.removeEventListener;
    model.stream({}, { signal }); // never read
    assert.equal(live.size, 0);
    assert.deepEqual((await collect(model.stream({}, { signal }))).map((c) => c.type), [
      "text",
      "done",
    ]);
    assert.equal(live.size, 0);
  });

  it("IModel.observe() isolates failing observers and stops after the disposer", async () => {
    const model = new IModel({ model: "m", endpoint: local() });
    let calls = 0;
    model.observe(() => {
      throw new Error("observer bug");
    });
    model.observe(() => Promise.reject(new Error("async observer bug")));
    const stop = model.observe(() => void calls++);
    const event = await model.invoke({ q: 1 });
    assert.equal(event.status, EventStatus.COMPLETED);
    assert.equal(calls, 2);
    stop();
    await model.invoke({});
    assert.equal(calls, 2);
    assert.throws(() => model.observe("x" as never), TypeError);
  });

  it("IModel.copy() shares observers with the original", async () => {
    const model = new IModel({ model: "m", endpoint: local() });
    const seen: string[] = [];
    model.observe((n) => void seen.push(n.type));
    await model.copy().invoke({});
    assert.deepEqual(seen, ["pre_call", "post_call"]);
  });
});
