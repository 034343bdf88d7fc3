import { afterEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { type Deadline, setDeadlineFactory, timeoutReason } from "../../service/_deadline.ts";
import { EventStatus, HookPhaseError } from "../../core/mod.ts";
import {
  globalHookLogger,
  HookedEvent,
  HookRegistry,
  type PhaseHandler,
} from "../../service/mod.ts";

/** A HookedEvent whose core is scripted; records the order of steps. */
class Scripted extends HookedEvent {
  steps: string[];
  coreResult: () => Promise<unknown>;
  chunks: unknown[];
  failAfter: number | null;
  pulled = 0;
  coreCancelled: unknown = undefined;
  constructor(
    steps: string[],
    options?: { core?: () => Promise<unknown>; chunks?: unknown[]; failAfter?: number },
  ) {
    super();
    this.steps = steps;
    this.coreResult = options?.core ?? (() => Promise.resolve("core result"));
    this.chunks = options?.chunks ?? [1, 2, 3];
    this.failAfter = options?.failAfter ?? null;
  }
  protected _coreInvoke(): Promise<unknown> {
    this.steps.push("core");
    return this.coreResult();
  }
  protected _coreStream(): ReadableStream<unknown> {
    this.steps.push("core-stream");
    let i = 0;
    return new ReadableStream({
      pull: (controller) => {
        this.pulled++;
        if (this.failAfter !== null && i === this.failAfter) {
          controller.error(new Error("core stream broke"));
          return;
        }
        if (i < this.chunks.length) controller.enqueue(this.chunks[i++]);
        else controller.close();
      },
      cancel: (reason) => {
        this.coreCancelled = reason ?? null;
      },
    }, { highWaterMark: 0 });
  }
}

function manualDeadlines(): { fire(): void } {
  const armed = new Set<{ c: AbortController; ms: number }>();
  setDeadlineFactory((ms): Deadline => {
    const entry = { c: new AbortController(), ms };
    return {
      signal: entry.c.signal,
      arm: () => void armed.add(entry),
      clear: () => void armed.delete(entry),
    };
  });
  return { fire: () => armed.forEach((e) => e.c.abort(timeoutReason(e.ms))) };
}

afterEach(() => setDeadlineFactory(null));

type HandlerKind = "ok" | "throws" | "returns-error" | "hangs";
function phase(steps: string[], name: string, kind: HandlerKind): PhaseHandler {
  return (_event, { signal }) => {
    steps.push(name);
    if (kind === "throws") throw new Error(`${name} boom`);
    if (kind === "returns-error") return new Error(`${name} returned`);
    if (kind === "hangs") {
      return new Promise((_r, reject) =>
        signal.addEventListener("abort", () => reject(signal.reason))
      );
    }
    return `${name} ok`;
  };
}

interface Case {
  name: string;
  pre?: HandlerKind;
  preExit?: boolean;
  core: "ok" | "throws";
  post?: HandlerKind;
  postExit?: boolean;
  status: EventStatus;
  steps: string[];
  error?: RegExp;
  response?: unknown;
}

// ADR D4 and reference §2.10 precedence rules for invoke().
const cases: Case[] = [
  {
    name: "pre and post succeed around the core",
    pre: "ok",
    core: "ok",
    post: "ok",
    status: "completed",
    steps: ["pre", "core", "post"],
    response: "core result",
  },
  {
    name: "a throwing pre hook blocks the core even with exit false",
    pre: "throws",
    preExit: false,
    core: "ok",
    post: "ok",
    status: "failed",
    steps: ["pre"],
    error: /^Pre-invoke hook cancelled: pre boom$/,
  },
  {
    name: "a throwing pre hook blocks the core with exit true",
    pre: "throws",
    preExit: true,
    core: "ok",
    post: "ok",
    status: "failed",
    steps: ["pre"],
    error: /^Pre-invoke hook cancelled: pre boom$/,
  },
  {
    name: "a timed-out pre hook blocks the core even with exit false",
    pre: "hangs",
    preExit: false,
    core: "ok",
    status: "failed",
    steps: ["pre"],
    error: /^Pre-invoke hook failed: Hook timed out/,
  },
  {
    name: "a pre hook that returns an Error does not block",
    pre: "returns-error",
    preExit: true,
    core: "ok",
    status: "completed",
    steps: ["pre", "core"],
    response: "core result",
  },
  {
    name: "a core error is held until the post hook ran",
    core: "throws",
    post: "ok",
    status: "failed",
    steps: ["core", "post"],
    error: /^core boom$/,
  },
  {
    name: "a core error wins over a post error with exit true",
    core: "throws",
    post: "throws",
    postExit: true,
    status: "failed",
    steps: ["core", "post"],
    error: /^core boom$/,
  },
  {
    name: "an ABORTED post hook with exit false keeps the result",
    core: "ok",
    post: "throws",
    postExit: false,
    status: "completed",
    steps: ["core", "post"],
    response: "core result",
  },
  {
    name: "an ABORTED post hook with exit true fails with its own error",
    core: "ok",
    post: "throws",
    postExit: true,
    status: "failed",
    steps: ["core", "post"],
    error: /^post boom$/,
  },
  {
    name: "a timed-out post hook fails the event even with exit false",
    core: "ok",
    post: "hangs",
    postExit: false,
    status: "failed",
    steps: ["core", "post"],
    error: /^Post-invoke hook failed: Hook timed out/,
  },
  {
    name: "a post hook that returns an Error keeps the result",
    core: "ok",
    post: "returns-error",
    postExit: true,
    status: "completed",
    steps: ["core", "post"],
    response: "core result",
  },
];

describe("HookedEvent.invoke() precedence (ADR D4, reference §2.10)", () => {
  for (const c of cases) {
    it(`HookedEvent.invoke(): ${c.name}`, async () => {
      const deadlines = manualDeadlines();
      const steps: string[] = [];
      const registry = new HookRegistry();
      if (c.pre) registry.preInvoke(phase(steps, "pre", c.pre));
      if (c.post) registry.postInvoke(phase(steps, "post", c.post));
      const event = new Scripted(steps, {
        core: c.core === "ok" ? undefined : () => Promise.reject(new Error("core boom")),
      });
      if (c.pre) event.createPreInvokeHook(registry, { exit: c.preExit ?? false });
      if (c.post) event.createPostInvokeHook(registry, { exit: c.postExit ?? false });
      const run = event.invoke();
      if (c.pre === "hangs" || c.post === "hangs") {
        await new Promise((r) => setTimeout(r, 5));
        deadlines.fire();
      }
      await run;
      assert.deepEqual(steps, c.steps);
      assert.equal(event.status, c.status);
      if (c.error) assert.match((event.execution.error as Error).message, c.error);
      if ("response" in c) assert.equal(event.response, c.response);
      if (c.error?.source.startsWith("^P")) {
        assert.ok(event.execution.error instanceof HookPhaseError);
      }
    });
  }

  it("HookedEvent.invoke() with no hooks runs only the core", async () => {
    const steps: string[] = [];
    const event = new Scripted(steps);
    await event.invoke();
    assert.deepEqual(steps, ["core"]);
    assert.equal(event.status, EventStatus.COMPLETED);
  });

  it("HookedEvent.invoke() ends CANCELLED when the caller aborts during the core", async () => {
    const steps: string[] = [];
    const controller = new AbortController();
    const registry = new HookRegistry({ hooks: { postInvoke: phase(steps, "post", "ok") } });
    const event = new Scripted(steps, {
      core: () => {
        controller.abort(new DOMException("stop", "AbortError"));
        return Promise.reject(controller.signal.reason);
      },
    });
    event.createPostInvokeHook(registry);
    await assert.rejects(event.invoke({ signal: controller.signal }), { name: "AbortError" });
    assert.equal(event.status, EventStatus.CANCELLED);
  });

  it("HookedEvent logs every hook event it ran to globalHookLogger", async () => {
    globalHookLogger.clear();
    const steps: string[] = [];
    const registry = new HookRegistry({
      hooks: { preInvoke: phase(steps, "pre", "ok"), postInvoke: phase(steps, "post", "throws") },
    });
    const event = new Scripted(steps);
    event.createPreInvokeHook(registry);
    event.createPostInvokeHook(registry);
    await event.invoke();
    const mine = globalHookLogger.entries.filter((e) =>
      (e.associatedEventInfo as { eventId?: string } | null)?.eventId === event.id
    );
    assert.deepEqual(mine.map((e) => [e.hookType, e.status]), [
      ["pre_invocation", "completed"],
      ["post_invocation", "aborted"],
    ]);
  });
});

async function readAll(stream: ReadableStream<unknown>): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const chunk of stream) out.push(chunk);
  return out;
}

describe("HookedEvent.stream()", () => {
  it("HookedEvent.stream() runs pre, passes chunks, then post after full consumption", async () => {
    const steps: string[] = [];
    const registry = new HookRegistry({
      hooks: { preInvoke: phase(steps, "pre", "ok"), postInvoke: phase(steps, "post", "ok") },
    });
    const event = new Scripted(steps);
    event.createPreInvokeHook(registry);
    event.createPostInvokeHook(registry);
    const reader = event.stream().getReader();
    assert.deepEqual(await reader.read(), { done: false, value: 1 });
    assert.deepEqual(steps, ["pre", "core-stream"]);
    assert.deepEqual(await reader.read(), { done: false, value: 2 });
    assert.deepEqual(await reader.read(), { done: false, value: 3 });
    assert.deepEqual(steps, ["pre", "core-stream"]);
    assert.equal((await reader.read()).done, true);
    assert.deepEqual(steps, ["pre", "core-stream", "post"]);
    assert.equal(event.status, EventStatus.COMPLETED);
  });

  it("HookedEvent.stream() errors the consumer before any chunk when the pre hook fails", async () => {
    const steps: string[] = [];
    const registry = new HookRegistry({ hooks: { preInvoke: phase(steps, "pre", "throws") } });
    const event = new Scripted(steps);
    event.createPreInvokeHook(registry, { exit: false });
    const reader = event.stream().getReader();
    await assert.rejects(
      reader.read(),
      (e) => e instanceof HookPhaseError && /pre boom/.test(e.message),
    );
    assert.deepEqual(steps, ["pre"]);
    assert.equal(event.status, EventStatus.FAILED);
  });

  it("HookedEvent.stream() keeps backpressure: the core is pulled one chunk at a time", async () => {
    const event = new Scripted([], { chunks: [1, 2, 3, 4, 5, 6] });
    const reader = event.stream().getReader();
    await reader.read();
    await new Promise((r) => setTimeout(r, 5));
    assert.ok(event.pulled <= 2, `pulled ${event.pulled}`);
    await reader.cancel();
  });

  it("HookedEvent.stream() skips the post hook when the consumer cancels mid-stream", async () => {
    const steps: string[] = [];
    const registry = new HookRegistry({ hooks: { postInvoke: phase(steps, "post", "ok") } });
    const event = new Scripted(steps);
    event.createPostInvokeHook(registry);
    const reader = event.stream().getReader();
    await reader.read();
    await reader.cancel(new Error("consumer done"));
    await new Promise((r) => setTimeout(r, 5));
    assert.deepEqual(steps, ["core-stream"]);
    assert.equal(event.status, EventStatus.CANCELLED);
    assert.notEqual(event.coreCancelled, undefined);
  });

  it("HookedEvent.stream() delivers a core-stream error and skips the post hook (X11)", async () => {
    const steps: string[] = [];
    const registry = new HookRegistry({ hooks: { postInvoke: phase(steps, "post", "ok") } });
    const event = new Scripted(steps, { failAfter: 1 });
    event.createPostInvokeHook(registry);
    const seen: unknown[] = [];
    await assert.rejects(
      (async () => {
        for await (const chunk of event.stream()) seen.push(chunk);
      })(),
      /core stream broke/,
    );
    assert.deepEqual(seen, [1]);
    assert.deepEqual(steps, ["core-stream"]);
    assert.equal(event.status, EventStatus.FAILED);
  });

  it("HookedEvent.stream() logs a failing post hook but keeps the delivered stream complete", async () => {
    const steps: string[] = [];
    const registry = new HookRegistry({ hooks: { postInvoke: phase(steps, "post", "throws") } });
    const event = new Scripted(steps);
    event.createPostInvokeHook(registry, { exit: true });
    assert.deepEqual(await readAll(event.stream()), [1, 2, 3]);
    assert.deepEqual(steps, ["core-stream", "post"]);
    assert.equal(event.status, EventStatus.COMPLETED);
    assert.equal(event.postInvokeHook?.status, EventStatus.ABORTED);
  });
});
