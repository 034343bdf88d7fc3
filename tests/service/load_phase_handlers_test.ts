import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  HOOK_EVENT_TYPE_KEYS,
  HookEventType,
  HookRegistry,
  loadPhaseHandlers,
} from "../../service/mod.ts";

describe("loadPhaseHandlers", () => {
  it("loadPhaseHandlers() reads all twelve spellings into the three canonical keys", async () => {
    const spellings: Record<string, string> = {
      preEventCreate: "preEventCreate",
      pre_event_create: "preEventCreate",
      pre_event_create_hook: "preEventCreate",
      preEventCreateHook: "preEventCreate",
      preInvoke: "preInvoke",
      pre_invocation: "preInvoke",
      pre_invoke: "preInvoke",
      preInvocation: "preInvoke",
      postInvoke: "postInvoke",
      post_invocation: "postInvoke",
      post_invoke: "postInvoke",
      postInvocation: "postInvoke",
    };
    assert.deepEqual([...HOOK_EVENT_TYPE_KEYS], Object.keys(spellings).sort());
    for (const [key, canonical] of Object.entries(spellings)) {
      const fn = () => key;
      const hooks = loadPhaseHandlers({ [key]: fn });
      assert.deepEqual(Object.keys(hooks), [canonical], key);
      assert.equal((hooks as Record<string, unknown>)[canonical], fn);
    }
    // What it returns is what a registry takes.
    const registry = new HookRegistry({
      hooks: loadPhaseHandlers({ pre_invoke: () => "pre", post_invocation: () => "post" }),
    });
    const pre = await registry.call({}, { hookType: HookEventType.PreInvocation });
    const post = await registry.call({}, { hookType: HookEventType.PostInvocation });
    assert.deepEqual([pre.result, post.result], ["pre", "post"]);
  });

  it("loadPhaseHandlers() skips null and undefined handlers", () => {
    assert.deepEqual(loadPhaseHandlers({ pre_invoke: null, postInvoke: undefined }), {});
  });

  it("loadPhaseHandlers() refuses two keys for one phase, naming both", () => {
    assert.throws(
      () => loadPhaseHandlers({ pre_invoke: () => {}, pre_invocation: () => {} }),
      {
        name: "TypeError",
        message:
          'Cannot load phase handlers: "pre_invoke" and "pre_invocation" both name "preInvoke"',
      },
    );
  });

  it("loadPhaseHandlers() refuses a non-object config and a non-function handler", () => {
    assert.throws(() => loadPhaseHandlers(null as never), /config must be an object of handlers/);
    assert.throws(() => loadPhaseHandlers([] as never), /got \(array\)/);
    assert.throws(
      () => loadPhaseHandlers({ pre_invoke: "audit" }),
      { message: 'Cannot load phase handlers: "pre_invoke" must be a function; got "audit"' },
    );
  });

  it("loadPhaseHandlers() refuses any key that names no phase, listing the valid ones (property)", () => {
    fc.assert(
      fc.property(
        fc.string().filter((k) => !HOOK_EVENT_TYPE_KEYS.includes(k) && k !== "__proto__"),
        (key) => {
          assert.throws(() => loadPhaseHandlers({ [key]: () => {} }), (error: unknown) => {
            assert.ok(error instanceof TypeError);
            assert.ok(error.message.includes(`key ${JSON.stringify(key)} names no phase`));
            assert.ok(error.message.includes('"pre_invoke"'));
            return true;
          });
        },
      ),
    );
  });
});
