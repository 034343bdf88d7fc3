import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { EventStatus, logger, type LogRecord } from "../../core/mod.ts";
import {
  HOOK_EVENT_TYPE_KEYS,
  HookEventType,
  type HookParams,
  HookRegistry,
  type StreamHandlerContext,
} from "../../service/mod.ts";

function captureWarnings(): { records: LogRecord[]; restore(): void } {
  const records: LogRecord[] = [];
  const previous = logger.level;
  logger.configure({ level: "warn", sink: (r) => records.push(r) });
  return {
    records,
    restore: () => logger.configure({ level: previous, sink: null }),
  };
}

class FakeEvent {
  id = "evt-1";
  createdAt = 1234;
}

describe("HookRegistry construction", () => {
  it("preEventCreateHook() is the deprecated name of preEventCreate()", () => {
    const registry = new HookRegistry();
    const fn = () => undefined;
    assert.equal(registry.preEventCreateHook(fn), fn);
    assert.ok(registry.canHandle({ hookType: HookEventType.PreEventCreate }));
  });

  it("HookRegistry refuses every older phase-key spelling with a TypeError naming the canonical key", () => {
    const older: Array<[string, string]> = [
      ["pre_event_create", "preEventCreate"],
      ["pre_event_create_hook", "preEventCreate"],
      ["preEventCreateHook", "preEventCreate"],
      ["pre_invocation", "preInvoke"],
      ["pre_invoke", "preInvoke"],
      ["preInvocation", "preInvoke"],
      ["post_invocation", "postInvoke"],
      ["post_invoke", "postInvoke"],
      ["postInvocation", "postInvoke"],
    ];
    for (const [key, canonical] of older) {
      assert.throws(
        () => new HookRegistry({ hooks: { [key]: () => {} } as never }),
        {
          name: "TypeError",
          message:
            `Cannot create hook registry: hook key "${key}" is an older spelling of "${canonical}"; write "${canonical}" (configs with older spellings go through loadPhaseHandlers())`,
        },
      );
      // Not silently ignored when the handler is null either: the key itself is refused.
      assert.throws(() => new HookRegistry({ hooks: { [key]: null } as never }), TypeError);
    }
    // The canonical keys are taken, and each names its phase.
    const fn = () => {};
    const registry = new HookRegistry({
      hooks: { preEventCreate: fn, preInvoke: fn, postInvoke: fn },
    });
    for (const hookType of Object.values(HookEventType)) {
      assert.equal(registry.canHandle({ hookType }), true, hookType);
    }
  });

  it("HookRegistry rejects an unknown hook key with a TypeError naming it", () => {
    assert.throws(
      () => new HookRegistry({ hooks: { before_call: () => {} } as never }),
      (error: unknown) =>
        error instanceof TypeError && /unknown hook key "before_call"/.test(error.message),
    );
  });

  it("HookRegistry rejects a non-function handler and a non-function stream handler", () => {
    assert.throws(
      () => new HookRegistry({ hooks: { preInvoke: "nope" as never } }),
      TypeError,
    );
    assert.throws(
      () => new HookRegistry({ streamHandlers: { text: 42 as never } }),
      TypeError,
    );
    assert.throws(() => new HookRegistry({ hooks: [] as never }), TypeError);
    assert.throws(() => new HookRegistry("x" as never), TypeError);
  });

  it("HookRegistry rejects an unknown chunk type at run time, listing the valid ones", () => {
    // An untyped caller (a declarative config) gets past the compiler; the run time stops it.
    const config = JSON.parse('{"txt": null}') as Record<string, unknown>;
    config.txt = () => {};
    for (
      const make of [
        () => new HookRegistry({ streamHandlers: config as never }),
        () => new HookRegistry().onChunk("txt" as never, () => {}),
      ]
    ) {
      assert.throws(make, (error: unknown) => {
        assert.ok(error instanceof TypeError);
        assert.match(error.message, /unknown chunk type "txt"/);
        assert.match(error.message, /valid chunk types: "text", "tool_call", "usage", "done"/);
        return true;
      });
    }
  });

  it("HookRegistry accepts every stream chunk type and the camelCase phase keys", async () => {
    const seen: string[] = [];
    const registry = new HookRegistry({
      hooks: {
        preEventCreate: (eventClass) => void seen.push(`create:${eventClass.name}`),
        preInvoke: (event) => void seen.push(`pre:${String(event.payload.model)}`),
        postInvoke: (event) => void seen.push(`post:${String(event.payload.model)}`),
      },
      streamHandlers: {
        text: (chunk, { chunkType }) => void seen.push(`${chunkType}:${chunk.text}`),
        tool_call: (chunk, { chunkType }) => void seen.push(`${chunkType}:${chunk.name}`),
        usage: (chunk, { chunkType }) => void seen.push(`${chunkType}:${chunk.totalTokens}`),
        done: (chunk, { chunkType }) => void seen.push(`${chunkType}:${chunk.finishReason}`),
      },
    });
    assert.deepEqual(registry.chunkTypes, ["text", "tool_call", "usage", "done"]);
    class Probe {}
    await registry.call(Probe, { hookType: HookEventType.PreEventCreate });
    await registry.call({ payload: { model: "m" } }, { hookType: HookEventType.PreInvocation });
    await registry.call({ payload: { model: "m" } }, { hookType: HookEventType.PostInvocation });
    await registry.call(null, { chunkType: "text", chunk: { type: "text", text: "hi" } });
    await registry.call(null, {
      chunkType: "tool_call",
      chunk: { type: "tool_call", index: 0, id: "c", name: "read", arguments: "{}" },
    });
    await registry.call(null, {
      chunkType: "usage",
      chunk: { type: "usage", promptTokens: 1, completionTokens: 2, totalTokens: 3 },
    });
    await registry.call(null, { chunkType: "done", chunk: { type: "done", finishReason: "stop" } });
    assert.deepEqual(seen, [
      "create:Probe",
      "pre:m",
      "post:m",
      "text:hi",
      "tool_call:read",
      "usage:3",
      "done:stop",
    ]);
  });

  it("HookRegistry rejects any key that is not a canonical phase key (property)", () => {
    const canonical = ["preEventCreate", "preInvoke", "postInvoke"];
    fc.assert(
      fc.property(
        fc.oneof(fc.string(), fc.constantFrom(...HOOK_EVENT_TYPE_KEYS)).filter((k) =>
          !canonical.includes(k) && k !== "__proto__"
        ),
        (key) => {
          assert.throws(() => new HookRegistry({ hooks: { [key]: () => {} } }), TypeError);
        },
      ),
    );
  });

  it("HookRegistry decorators reject non-functions and change nothing", () => {
    const registry = new HookRegistry();
    assert.throws(() => registry.preInvoke(null as never), TypeError);
    assert.throws(() => registry.onChunk("" as never, () => {}), TypeError);
    assert.throws(() => registry.onChunk("text", {} as never), TypeError);
    assert.equal(registry.canHandle({ hookType: HookEventType.PreInvocation }), false);
    assert.equal(registry.canHandle({ chunkType: "text" }), false);
  });
});

describe("HookRegistry registration", () => {
  it("HookRegistry keeps one handler per phase and warns when overwriting", async () => {
    const warnings = captureWarnings();
    try {
      const registry = new HookRegistry();
      const first = registry.preInvoke(() => "first");
      assert.equal(typeof first, "function");
      registry.preInvoke(() => "second");
      const out = await registry.call(new FakeEvent(), { hookType: HookEventType.PreInvocation });
      assert.equal(out.result, "second");
      assert.equal(warnings.records.length, 1);
      assert.match(warnings.records[0].message, /Overwriting existing pre_invocation hook/);
    } finally {
      warnings.restore();
    }
  });

  it("HookRegistry.onChunk keeps one handler per chunk type and warns when overwriting", async () => {
    const warnings = captureWarnings();
    try {
      const registry = new HookRegistry();
      registry.onChunk("text", () => 1);
      registry.onChunk("text", () => 2);
      registry.onChunk("usage", () => 3);
      const out = await registry.call(null, { chunkType: "text", chunk: {} });
      assert.equal(out.result, 2);
      assert.deepEqual(registry.chunkTypes.sort(), ["text", "usage"]);
      assert.equal(warnings.records.length, 1);
    } finally {
      warnings.restore();
    }
  });

  it("HookRegistry.canHandle answers for phases and chunk types", () => {
    const registry = new HookRegistry({ hooks: { postInvoke: () => {} } });
    registry.onChunk("tool_call", () => {});
    assert.equal(registry.canHandle({ hookType: HookEventType.PostInvocation }), true);
    assert.equal(registry.canHandle({ hookType: HookEventType.PreInvocation }), false);
    assert.equal(registry.canHandle({ chunkType: "tool_call" }), true);
    assert.equal(registry.canHandle({ chunkType: "text" }), false);
  });
});

describe("HookRegistry.call()", () => {
  it("HookRegistry.call() passes the event, params, exit and a signal to phase handlers", async () => {
    const calls: [unknown, HookParams][] = [];
    const registry = new HookRegistry({
      hooks: { preInvoke: (event, params) => void calls.push([event, params]) },
    });
    const event = new FakeEvent();
    await registry.call(event, {
      hookType: HookEventType.PreInvocation,
      shouldExit: true,
      params: { tag: "x" },
    });
    assert.equal(calls.length, 1);
    assert.equal(calls[0][0], event);
    assert.equal(calls[0][1].tag, "x");
    assert.equal(calls[0][1].exit, true);
    assert.ok(calls[0][1].signal instanceof AbortSignal);
  });

  it("HookRegistry.call() treats a legacy params.exit as the exit", async () => {
    let seen: boolean | undefined;
    const registry = new HookRegistry({
      hooks: {
        postInvoke: (_e, p) => {
          seen = p.exit;
          throw new Error("x");
        },
      },
    });
    const out = await registry.call(new FakeEvent(), {
      hookType: HookEventType.PostInvocation,
      params: { exit: true },
    });
    assert.equal(seen, true);
    assert.equal(out.shouldExit, true);
  });

  it("HookRegistry.call() calls stream handlers as (chunk, ctx) with chunkType, exit, signal and the extra params", async () => {
    const seen: unknown[][] = [];
    const registry = new HookRegistry({
      streamHandlers: { text: (...args: unknown[]) => void seen.push(args) },
    });
    const chunk = { type: "text", text: "a" };
    const signal = new AbortController().signal;
    const out = await registry.call(null, {
      chunkType: "text",
      chunk,
      signal,
      shouldExit: true,
      params: { n: 1, chunkType: "not this" },
    });
    assert.equal(seen[0].length, 2);
    assert.equal(seen[0][0], chunk);
    const ctx = seen[0][1] as StreamHandlerContext;
    assert.equal(ctx.chunkType, "text");
    assert.equal(ctx.exit, true);
    assert.equal(ctx.signal, signal);
    assert.equal(ctx.n, 1);
    assert.equal(out.info, undefined);
  });

  it("HookRegistry refuses a stream handler written for the positional shape, naming (chunk, ctx)", () => {
    const positional = (_event: null, _type: string, chunk: { text: string }) => chunk.text;
    assert.throws(
      () => new HookRegistry().onChunk("text", positional as never),
      {
        name: "TypeError",
        message:
          'Cannot register stream handler for "text": it declares 3 parameters; a stream handler takes (chunk, ctx) and reads the chunk type from ctx.chunkType',
      },
    );
    assert.throws(
      () =>
        new HookRegistry({
          streamHandlers: {
            usage: ((_e: null, _t: string, _c: unknown, _p: unknown) => {}) as never,
          },
        }),
      /Cannot create hook registry: stream handler for "usage": it declares 4 parameters; a stream handler takes \(chunk, ctx\)/,
    );
    // Rest parameters and defaults do not count: such handlers are registered.
    new HookRegistry().onChunk("text", (...args: unknown[]) => args.length);
    new HookRegistry().onChunk(
      "text",
      ((chunk: unknown, ctx: unknown, _extra = 1) => [chunk, ctx]) as never,
    );
  });

  it("HookRegistry.call() stamps associated info for phase calls only", async () => {
    const registry = new HookRegistry({
      hooks: { preInvoke: () => {}, preEventCreate: () => {} },
    });
    const phase = await registry.call(new FakeEvent(), { hookType: HookEventType.PreInvocation });
    assert.deepEqual(phase.info, {
      eventClass: "FakeEvent",
      eventId: "evt-1",
      eventCreatedAt: 1234,
    });
    const create = await registry.call(FakeEvent, { hookType: HookEventType.PreEventCreate });
    assert.deepEqual(create.info, { eventClass: "FakeEvent" });
  });

  it("HookRegistry.call() lets hookType win when both keys are given", async () => {
    const registry = new HookRegistry({ hooks: { preInvoke: () => "phase" } });
    registry.onChunk("text", () => "chunk");
    const out = await registry.call(new FakeEvent(), {
      hookType: HookEventType.PreInvocation,
      chunkType: "text",
    });
    assert.equal(out.result, "phase");
  });

  it("HookRegistry.call() rejects bad input with a TypeError", async () => {
    const registry = new HookRegistry();
    await assert.rejects(registry.call(null, {}), TypeError);
    await assert.rejects(
      registry.call(null, { hookType: "nope" as never }),
      /unknown hook type "nope"/,
    );
  });

  it("a hookType is a HookEventType value only: a phase key or an older spelling is refused, naming the value", async () => {
    const registry = new HookRegistry({ hooks: { preInvoke: () => "ran" } });
    const message =
      'unknown hook type "pre_invoke"; valid types: "pre_event_create", "pre_invocation", "post_invocation"; "pre_invoke" names the phase "pre_invocation"';
    await assert.rejects(registry.call(null, { hookType: "pre_invoke" as never }), {
      name: "TypeError",
      message: `Cannot call hook: ${message}`,
    });
    assert.throws(() => registry.canHandle({ hookType: "pre_invoke" as never }), {
      name: "TypeError",
      message: `Cannot check hook: ${message}`,
    });
    assert.throws(
      () => registry.handlerFor("preInvoke" as never),
      /names the phase "pre_invocation"/,
    );
    assert.equal(registry.canHandle({ hookType: HookEventType.PreInvocation }), true);
    assert.equal((await registry.call({}, { hookType: "pre_invocation" })).result, "ran");
  });

  it("HookRegistry.call() reports a missing handler as a failure of that phase", async () => {
    const registry = new HookRegistry();
    const pre = await registry.call(new FakeEvent(), {
      hookType: HookEventType.PreInvocation,
      shouldExit: true,
    });
    assert.equal(pre.status, EventStatus.CANCELLED);
    assert.equal(pre.shouldExit, true);
    assert.ok(pre.result instanceof Error);
    const chunk = await registry.call(null, { chunkType: "text" });
    assert.equal(chunk.status, EventStatus.ABORTED);
    assert.match((chunk.error as Error).message, /No stream handler registered for "text"/);
  });

  it("HookRegistry.call() reports a returned Error as a success", async () => {
    const returned = new Error("returned, not thrown");
    const registry = new HookRegistry({ hooks: { preInvoke: () => returned } });
    const out = await registry.call(new FakeEvent(), {
      hookType: HookEventType.PreInvocation,
      shouldExit: true,
    });
    assert.equal(out.status, EventStatus.COMPLETED);
    assert.equal(out.result, returned);
    assert.equal(out.error, null);
    assert.equal(out.shouldExit, false);
  });

  it("HookRegistry.call() does not wrap a sync handler's result in a promise chain", async () => {
    // The handler runs synchronously inside call(), before call() returns.
    let ran = false;
    const registry = new HookRegistry({ streamHandlers: { text: () => (ran = true) } });
    const pending = registry.call(null, { chunkType: "text" });
    assert.equal(ran, true);
    await pending;
  });
});

// The §1.5 registry result matrix: phase × outcome × configured exit.
type Outcome = "success" | "error" | "cancellation";
const phases = [
  {
    name: "pre-create",
    hookType: HookEventType.PreEventCreate,
    stream: false,
    failStatus: EventStatus.CANCELLED,
  },
  {
    name: "pre-invoke",
    hookType: HookEventType.PreInvocation,
    stream: false,
    failStatus: EventStatus.CANCELLED,
  },
  {
    name: "post-invoke",
    hookType: HookEventType.PostInvocation,
    stream: false,
    failStatus: EventStatus.ABORTED,
  },
  { name: "stream", hookType: undefined, stream: true, failStatus: EventStatus.ABORTED },
] as const;

describe("HookRegistry.call() result matrix (reference §1.5)", () => {
  for (const phase of phases) {
    for (const outcome of ["success", "error", "cancellation"] as Outcome[]) {
      for (const exit of [false, true]) {
        it(`HookRegistry.call() ${phase.name} ${outcome} with exit ${exit}`, async () => {
          const boom = new Error("boom");
          const controller = new AbortController();
          const handler = (..._args: unknown[]): unknown => {
            if (outcome === "success") return "value";
            if (outcome === "error") throw boom;
            controller.abort(new DOMException("caller gave up", "AbortError"));
            return new Promise(() => {}); // never settles; the abort ends the call
          };
          const registry = new HookRegistry();
          if (phase.stream) registry.onChunk("text", handler);
          else if (phase.hookType === HookEventType.PreEventCreate) {
            registry.preEventCreate(handler);
          } else if (phase.hookType === HookEventType.PreInvocation) registry.preInvoke(handler);
          else registry.postInvoke(handler);
          const out = await registry.call(phase.stream ? null : new FakeEvent(), {
            hookType: phase.hookType,
            chunkType: phase.stream ? "text" : undefined,
            chunk: { type: "text", text: "x" },
            shouldExit: exit,
            signal: controller.signal,
          });
          if (outcome === "success") {
            assert.equal(out.result, "value");
            assert.equal(out.error, null);
            assert.equal(out.shouldExit, false);
            assert.equal(out.status, phase.stream ? null : EventStatus.COMPLETED);
          } else if (outcome === "error") {
            assert.equal(out.result, boom);
            assert.equal(out.error, boom);
            assert.equal(out.shouldExit, exit);
            assert.equal(out.status, phase.failStatus);
          } else {
            assert.equal(out.result, undefined);
            assert.equal(out.error, controller.signal.reason);
            assert.equal(out.error, controller.signal.reason);
            assert.equal(out.shouldExit, true);
            assert.equal(out.status, EventStatus.CANCELLED);
          }
          if (phase.stream) assert.equal(out.info, undefined);
          else assert.equal(out.info?.eventClass, "FakeEvent");
        });
      }
    }
  }
});
