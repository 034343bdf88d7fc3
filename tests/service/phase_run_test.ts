import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { EventStatus } from "../../core/mod.ts";
import {
  FunctionEndpoint,
  globalHookLogger,
  HookEvent,
  HookEventType,
  HookRegistry,
  IModel,
} from "../../service/mod.ts";

// A model call's phase hooks run on their run states; their HookEvents are made when first read,
// and the hook logger renders its entries when read. These tests pin that nothing observable
// changed: the same records, ids and statuses, whenever they are read.

function model(hooks: Record<string, (...args: never[]) => unknown>): IModel {
  return new IModel({
    model: "m",
    endpoint: new FunctionEndpoint({ call: (payload) => ({ echoed: payload.model }) }),
    hookRegistry: new HookRegistry({ hooks }),
  });
}

function entriesOf(eventId: string): Record<string, unknown>[] {
  return globalHookLogger.entries.filter((entry) =>
    (entry.associatedEventInfo as { eventId?: string } | null)?.eventId === eventId
  );
}

describe("phase hooks made on demand", () => {
  it("a hook read after the call carries the run's status, exit, info and the logged id", async () => {
    globalHookLogger.clear();
    const m = model({ preInvoke: () => "checked", postInvoke: () => new Error("late") });
    const event = await m.invoke({});
    assert.equal(event.status, EventStatus.COMPLETED);
    const [preEntry, postEntry] = entriesOf(event.id);
    const pre = event.preInvokeHook;
    const post = event.postInvokeHook;
    assert.ok(pre instanceof HookEvent);
    assert.ok(post instanceof HookEvent);
    assert.equal(event.preInvokeHook, pre, "made once");
    assert.equal(pre.hookType, HookEventType.PreInvocation);
    assert.equal(pre.status, EventStatus.COMPLETED);
    assert.equal(pre.response, "checked");
    assert.equal(pre.eventLike, event);
    assert.equal(pre.createdAt, event.createdAt);
    assert.equal(typeof pre.execution.durationMs, "number");
    assert.deepEqual(pre.associatedEventInfo, {
      eventClass: "APICalling",
      eventId: event.id,
      eventCreatedAt: event.createdAt,
    });
    assert.equal((post.execution.error as Error).message, "late");
    assert.equal(post.exitCause, post.execution.error);
    // The log entries rendered before the hooks existed name the same ids.
    assert.equal(preEntry.id, pre.id);
    assert.equal(postEntry.id, post.id);
    assert.deepEqual(pre.toJSON(), preEntry);
  });

  it("a hook read before its log entry is rendered keeps one id for both", async () => {
    globalHookLogger.clear();
    const event = await model({ preInvoke: () => {} }).invoke({});
    const id = event.preInvokeHook!.id;
    assert.equal(entriesOf(event.id)[0].id, id);
  });

  it("a hook made after the call can run again and updates its own record", async () => {
    const calls: number[] = [];
    const event = await model({ preInvoke: () => calls.push(1) }).invoke({});
    const pre = event.preInvokeHook!;
    await pre.invoke();
    assert.equal(calls.length, 2);
    assert.equal(pre.status, EventStatus.COMPLETED);
    assert.equal(pre.response, 2);
  });

  it("an event's JSON lists its hooks right after execution, as plain fields did", async () => {
    const event = await model({ preInvoke: () => "ok" }).invoke({});
    const json = event.toJSON();
    const keys = Object.keys(json);
    assert.deepEqual(keys.slice(keys.indexOf("execution"), keys.indexOf("execution") + 3), [
      "execution",
      "preInvokeHook",
      "postInvokeHook",
    ]);
    assert.equal((json.preInvokeHook as { status: string }).status, EventStatus.COMPLETED);
    assert.equal(json.postInvokeHook, null);
    assert.equal((json.preInvokeHook as { id: string }).id, event.preInvokeHook!.id);
  });

  it("the logger renders an entry from the run it ended, not from a later run", async () => {
    globalHookLogger.clear();
    let n = 0;
    const event = await model({ preInvoke: () => ++n }).invoke({});
    await event.preInvokeHook!.invoke();
    assert.deepEqual(entriesOf(event.id).map((e) => e.response), [1]);
    assert.equal(event.preInvokeHook!.response, 2);
  });
});
