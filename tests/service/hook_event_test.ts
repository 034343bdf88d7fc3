import { afterEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { type Deadline, setDeadlineFactory, timeoutReason } from "../../service/_deadline.ts";
import { EventStatus } from "../../core/mod.ts";
import { HookEvent, HookEventType, HookRegistry } from "../../service/mod.ts";

/** A deadline factory the test fires by hand; counts armed timers. */
function manualDeadlines(): { fire(): void; armed: number; created: number } {
  const state = { armed: 0, created: 0, fire: () => {} };
  const live: { controller: AbortController; ms: number; armed: boolean }[] = [];
  setDeadlineFactory((ms): Deadline => {
    state.created++;
    const entry = { controller: new AbortController(), ms, armed: false };
    live.push(entry);
    return {
      signal: entry.controller.signal,
      arm() {
        entry.armed = true;
        state.armed++;
      },
      clear() {
        entry.armed = false;
      },
    };
  });
  state.fire = () => {
    for (const entry of live) if (entry.armed) entry.controller.abort(timeoutReason(entry.ms));
  };
  return state;
}

const never = (_e: unknown, { signal }: { signal: AbortSignal }) =>
  new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason)));

function hookOf(
  handler: (...args: never[]) => unknown,
  options?: { exit?: boolean; hookType?: HookEventType; timeoutMs?: number },
): HookEvent {
  const registry = new HookRegistry();
  const hookType = options?.hookType ?? HookEventType.PreInvocation;
  if (hookType === HookEventType.PostInvocation) registry.postInvoke(handler as never);
  else if (hookType === HookEventType.PreEventCreate) registry.preEventCreate(handler as never);
  else registry.preInvoke(handler as never);
  return new HookEvent({
    registry,
    hookType,
    eventLike: { id: "target", createdAt: 99 },
    exit: options?.exit,
    timeoutMs: options?.timeoutMs,
  });
}

afterEach(() => setDeadlineFactory(null));

describe("HookEvent", () => {
  it("HookEvent.invoke() completes with the handler's value", async () => {
    const hook = hookOf(() => "ok");
    await hook.invoke();
    assert.equal(hook.status, EventStatus.COMPLETED);
    assert.equal(hook.response, "ok");
    assert.equal(hook.shouldExit, false);
    assert.equal(typeof hook.execution.durationMs, "number");
  });

  it("HookEvent defaults: exit false, timeout 30 000 ms, null exit normalized", () => {
    const registry = new HookRegistry();
    const hook = new HookEvent({
      registry,
      hookType: HookEventType.PreInvocation,
      eventLike: null,
      exit: null,
    });
    assert.equal(hook.exit, false);
    assert.equal(hook.timeoutMs, 30_000);
  });

  it("HookEvent rejects bad construction input with a TypeError", () => {
    const registry = new HookRegistry();
    const base = { registry, hookType: HookEventType.PreInvocation, eventLike: null };
    assert.throws(() => new HookEvent({ ...base, registry: {} as never }), TypeError);
    assert.throws(
      () => new HookEvent({ ...base, hookType: "nope" as never }),
      /unknown hook type "nope"/,
    );
    assert.throws(() => new HookEvent({ ...base, timeoutMs: -1 }), TypeError);
    assert.throws(() => new HookEvent({ ...base, timeoutMs: Number.NaN }), TypeError);
    assert.throws(() => new HookEvent({ ...base, exit: "yes" as never }), TypeError);
  });

  it("HookEvent.invoke() arms no timer when the handler settles synchronously", async () => {
    const deadlines = manualDeadlines();
    const hook = hookOf(() => "sync");
    await hook.invoke();
    assert.equal(deadlines.created, 1);
    assert.equal(deadlines.armed, 0);
    const asyncHook = hookOf(() => Promise.resolve("async"));
    await asyncHook.invoke();
    assert.equal(deadlines.armed, 1);
  });

  it("HookEvent.invoke() fails with a TimeoutError when a handler never settles", async () => {
    for (const exit of [false, true]) {
      const deadlines = manualDeadlines();
      const hook = hookOf(never, { exit });
      const run = hook.invoke();
      await new Promise((r) => setTimeout(r, 0));
      deadlines.fire();
      await run;
      assert.equal(hook.status, EventStatus.FAILED);
      assert.equal((hook.execution.error as Error).name, "TimeoutError");
      assert.equal(hook.shouldExit, exit);
      assert.equal(hook.exitCause, hook.execution.error);
      assert.equal(hook.response, null);
    }
  });

  it("HookEvent.invoke() times out a handler that ignores its signal", async () => {
    const deadlines = manualDeadlines();
    const hook = hookOf(() => new Promise(() => {}), { exit: true });
    const run = hook.invoke();
    await new Promise((r) => setTimeout(r, 0));
    deadlines.fire();
    await run;
    assert.equal(hook.status, EventStatus.FAILED);
    assert.equal((hook.execution.error as Error).name, "TimeoutError");
  });

  it("HookEvent.invoke() applies a legacy params.exit to a timeout as to a thrown error", async () => {
    const deadlines = manualDeadlines();
    let hang = true;
    const registry = new HookRegistry();
    registry.preInvoke((event, params) => {
      if (hang) return never(event, params);
      throw new Error("boom");
    });
    const hook = new HookEvent({
      registry,
      hookType: HookEventType.PreInvocation,
      eventLike: { id: "target", createdAt: 99 },
      params: { exit: true },
    });
    const run = hook.invoke();
    await new Promise((r) => setTimeout(r, 0));
    deadlines.fire();
    await run;
    assert.equal(hook.status, EventStatus.FAILED);
    assert.equal(hook.shouldExit, true);
    hang = false;
    await hook.invoke();
    assert.equal(hook.status, EventStatus.CANCELLED);
    assert.equal(hook.shouldExit, true);
  });

  it("HookEvent.invoke() meets a real deadline (generous bound, no speed asserted)", async () => {
    const hook = hookOf(never, { timeoutMs: 20, exit: true });
    await hook.invoke();
    assert.equal(hook.status, EventStatus.FAILED);
    assert.equal((hook.execution.error as Error).name, "TimeoutError");
  });

  it("HookEvent.invoke() treats a deadline beyond the timer range as none, not as 1 ms", async () => {
    // setTimeout turns any delay above 2^31 - 1 ms into 1 ms in Node, Deno and Bun; a handler
    // that settles on a later timer tick must still complete.
    const hook = hookOf(
      () => new Promise((resolve) => setTimeout(() => resolve("late but fine"), 30)),
      { timeoutMs: 2 ** 31, exit: true },
    );
    await hook.invoke();
    assert.equal(hook.status, EventStatus.COMPLETED);
    assert.equal(hook.response, "late but fine");
    assert.equal(hook.timeoutMs, 2 ** 31);
  });

  it("HookEvent.invoke() stamps associated event info on timeout (X17)", async () => {
    const deadlines = manualDeadlines();
    const hook = hookOf(never);
    const run = hook.invoke();
    await new Promise((r) => setTimeout(r, 0));
    deadlines.fire();
    await run;
    assert.deepEqual(hook.associatedEventInfo, {
      eventClass: "Object",
      eventId: "target",
      eventCreatedAt: 99,
    });
  });

  it("HookEvent.invoke() ends CANCELLED and rethrows when the caller aborts", async () => {
    const controller = new AbortController();
    let seen: AbortSignal | undefined;
    const hook = hookOf((_e: unknown, p: { signal: AbortSignal }) => {
      seen = p.signal;
      return never(_e, p);
    });
    const run = hook.invoke({ signal: controller.signal });
    const reason = new Error("user left");
    controller.abort(reason);
    await assert.rejects(run, (e) => e === reason);
    assert.equal(hook.status, EventStatus.CANCELLED);
    assert.equal(hook.execution.error, reason);
    assert.equal(hook.shouldExit, true);
    assert.equal(seen?.aborted, true);
    assert.ok(hook.associatedEventInfo?.eventId);
  });

  it("HookEvent.invoke() with an already aborted signal never calls the handler", async () => {
    let called = false;
    const hook = hookOf(() => (called = true));
    const controller = new AbortController();
    controller.abort();
    await assert.rejects(hook.invoke({ signal: controller.signal }));
    assert.equal(called, false);
    assert.equal(hook.status, EventStatus.CANCELLED);
  });

  it("HookEvent.invoke() records a thrown error with the registry's status and the configured exit", async () => {
    const boom = new Error("boom");
    const pre = hookOf(() => {
      throw boom;
    }, { exit: true });
    await pre.invoke();
    assert.equal(pre.status, EventStatus.CANCELLED);
    assert.equal(pre.execution.error, boom);
    assert.equal(pre.exitCause, boom);
    assert.equal(pre.shouldExit, true);
    const post = hookOf(() => {
      throw boom;
    }, { hookType: HookEventType.PostInvocation });
    await post.invoke();
    assert.equal(post.status, EventStatus.ABORTED);
    assert.equal(post.shouldExit, false);
  });

  it("HookEvent.invoke() completes when a handler returns an Error instead of throwing", async () => {
    const returned = new TypeError("returned");
    const hook = hookOf(() => returned, { exit: true });
    await hook.invoke();
    assert.equal(hook.status, EventStatus.COMPLETED);
    assert.equal(hook.response, null);
    assert.equal(hook.execution.error, returned);
    assert.equal(hook.exitCause, returned);
    assert.equal(hook.shouldExit, false);
  });

  it("HookEvent.invoke() keeps a returned plain object with name and message as the response", async () => {
    const record = { name: "Alice", message: "hello" };
    const hook = hookOf(() => record, { exit: true });
    await hook.invoke();
    assert.equal(hook.status, EventStatus.COMPLETED);
    assert.equal(hook.response, record);
    assert.equal(hook.execution.error, null);
    assert.equal(hook.exitCause, null);
  });

  it("HookEvent.invoke() records a thrown non-Error value as the error and exit cause", async () => {
    const hook = hookOf(() => {
      throw "quota exceeded";
    }, { exit: true });
    await hook.invoke();
    assert.equal(hook.status, EventStatus.CANCELLED);
    assert.equal(hook.execution.error, "quota exceeded");
    assert.equal(hook.exitCause, "quota exceeded");
    assert.equal(hook.response, null);
    assert.equal(hook.shouldExit, true);
  });

  it("HookEvent.invoke() propagates a cancellation the handler raised itself", async () => {
    const hook = hookOf(() => {
      throw new DOMException("gave up", "AbortError");
    });
    await assert.rejects(hook.invoke(), { name: "AbortError" });
    assert.equal(hook.status, EventStatus.CANCELLED);
    assert.equal(hook.shouldExit, true);
  });

  it("HookEvent.invoke() can run again", async () => {
    let n = 0;
    const hook = hookOf(() => {
      n++;
      if (n === 1) throw new Error("first fails");
      return n;
    });
    await hook.invoke();
    assert.equal(hook.status, EventStatus.CANCELLED);
    await hook.invoke();
    assert.equal(hook.status, EventStatus.COMPLETED);
    assert.equal(hook.response, 2);
    assert.equal(hook.execution.error, null);
  });

  it("HookEvent passes its params and exit to the handler", async () => {
    let params: Record<string, unknown> = {};
    const registry = new HookRegistry({
      hooks: { preEventCreate: (_cls, p) => void (params = p) },
    });
    class Target {}
    const hook = new HookEvent({
      registry,
      hookType: HookEventType.PreEventCreate,
      eventLike: Target,
      exit: true,
      params: { user: "u1" },
    });
    await hook.invoke();
    assert.equal(params.user, "u1");
    assert.equal(params.exit, true);
    assert.deepEqual(hook.associatedEventInfo, { eventClass: "Target" });
  });

  it("HookEvent.toJSON() is JSON-safe and omits the registry", async () => {
    const hook = hookOf(() => {
      throw new Error("bad");
    });
    await hook.invoke();
    const json = JSON.parse(JSON.stringify(hook));
    assert.equal(json.hookType, "pre_invocation");
    assert.equal(json.status, "cancelled");
    assert.deepEqual(json.error, { name: "Error", message: "bad" });
    assert.equal("registry" in json, false);
  });
});
