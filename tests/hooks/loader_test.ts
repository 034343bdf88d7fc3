import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  HookConfigError,
  HookSignal,
  registerHandler,
  UnknownHandlerError,
  UnknownHookPointError,
} from "../../mod.ts";
import {
  buildSessionBus,
  loadHooksForAgent,
  logApiMetrics,
  logToolCall,
  registeredHandlerNames,
  resolveHandler,
} from "../../hooks/mod.ts";
import {
  DEFAULT_HOOKS,
  persistBranchProvenance,
  persistMessage,
  persistSessionEnd,
  persistSessionStart,
} from "../../session/mod.ts";
import { CALL } from "../_call_fields.ts";

describe("loader: registry", () => {
  it("the process-global registry is pre-seeded with the built-ins under their export names", () => {
    assert.equal(resolveHandler("persistSessionStart"), persistSessionStart);
    assert.equal(resolveHandler("persistSessionEnd"), persistSessionEnd);
    assert.equal(resolveHandler("persistMessage"), persistMessage);
    assert.equal(resolveHandler("persistBranchProvenance"), persistBranchProvenance);
    assert.equal(resolveHandler("logApiMetrics"), logApiMetrics);
    assert.equal(resolveHandler("logToolCall"), logToolCall);
  });

  it("registerHandler() is last-writer-wins", () => {
    const first = () => {};
    const second = () => {};
    registerHandler("loaderTestLastWins", first);
    registerHandler("loaderTestLastWins", second);
    assert.equal(resolveHandler("loaderTestLastWins"), second);
  });

  it("registerHandler() rejects empty names and non-functions without registering", () => {
    const before = registeredHandlerNames();
    assert.throws(() => registerHandler("", () => {}), TypeError);
    assert.throws(() => registerHandler("  ", () => {}), TypeError);
    assert.throws(() => registerHandler("notAFunction", "x" as never), TypeError);
    assert.deepEqual(registeredHandlerNames(), before);
  });

  it("resolveHandler() misses throw UnknownHandlerError listing the sorted registered names", () => {
    assert.throws(() => resolveHandler("nope"), (error: unknown) => {
      assert.ok(error instanceof UnknownHandlerError);
      assert.equal(error.handlerName, "nope");
      assert.deepEqual(error.registered, registeredHandlerNames());
      assert.match(error.message, /Unknown hook handler "nope"; registered: .*"persistMessage"/);
      return true;
    });
  });
});

describe("loader: loadHooksForAgent()", () => {
  it("null, undefined and an empty object give no overrides", () => {
    assert.equal(loadHooksForAgent(null).size, 0);
    assert.equal(loadHooksForAgent(undefined).size, 0);
    assert.equal(loadHooksForAgent({}).size, 0);
  });

  it("resolves names to handlers per point and does not merge defaults", () => {
    const map = loadHooksForAgent({ "tool.pre": ["logToolCall", "logToolCall"] });
    assert.deepEqual([...map.keys()], ["tool.pre"]);
    assert.deepEqual(map.get("tool.pre"), [logToolCall, logToolCall]);
  });

  it("unknown points throw UnknownHookPointError listing the valid points", () => {
    for (const key of ["SESSION_START", "", "session.start "]) {
      assert.throws(() => loadHooksForAgent({ [key]: [] }), (error: unknown) => {
        assert.ok(error instanceof UnknownHookPointError);
        assert.match(error.message, /valid points: .*"tool\.pre"/);
        return true;
      });
    }
  });

  it("a per-point value that is not an array throws HookConfigError naming the point", () => {
    assert.throws(
      () => loadHooksForAgent({ "tool.pre": "logToolCall" } as never),
      (error: unknown) => {
        assert.ok(error instanceof HookConfigError);
        assert.ok(error instanceof TypeError);
        assert.match(
          error.message,
          /hooks\["tool\.pre"\] must be an array of handler names; got string/,
        );
        assert.match(error.message, /registered names: .*"logToolCall"/);
        return true;
      },
    );
    assert.throws(() => loadHooksForAgent({ "tool.pre": { a: 1 } } as never), HookConfigError);
    assert.throws(() => loadHooksForAgent({ "tool.pre": [1] } as never), HookConfigError);
  });

  it("a config that is not an object throws HookConfigError", () => {
    for (const bad of ["tool.pre", 5, true, ["logToolCall"]]) {
      assert.throws(() => loadHooksForAgent(bad as never), HookConfigError);
    }
  });

  it("unknown handler names throw UnknownHandlerError", () => {
    assert.throws(
      () => loadHooksForAgent({ "tool.pre": ["logToolCall", "missingHandler"] }),
      UnknownHandlerError,
    );
  });

  it("property: arbitrary configs either load fully or throw a typed error", () => {
    const key = fc.oneof(fc.constantFrom("tool.pre", "session.start", "message.add"), fc.string());
    const name = fc.oneof(fc.constantFrom("logToolCall", "persistMessage"), fc.string());
    const value = fc.oneof(
      fc.array(name, { maxLength: 4 }),
      fc.string(),
      fc.integer(),
      fc.constant(null),
    );
    fc.assert(fc.property(fc.dictionary(key, value, { maxKeys: 4 }), (config) => {
      try {
        const map = loadHooksForAgent(config as never);
        for (const handlers of map.values()) {
          for (const h of handlers) assert.equal(typeof h, "function");
        }
      } catch (error) {
        assert.ok(
          error instanceof UnknownHookPointError || error instanceof HookConfigError ||
            error instanceof UnknownHandlerError,
          `untyped error: ${String(error)}`,
        );
      }
    }));
  });
});

describe("loader: buildSessionBus()", () => {
  it("DEFAULT_HOOKS maps the four default points in order", () => {
    assert.deepEqual(Object.keys(DEFAULT_HOOKS), [
      "session.start",
      "session.end",
      "message.add",
      "branch.create",
    ]);
    assert.deepEqual(DEFAULT_HOOKS["session.start"], [persistSessionStart]);
    assert.deepEqual(DEFAULT_HOOKS["session.end"], [persistSessionEnd]);
    assert.deepEqual(DEFAULT_HOOKS["message.add"], [persistMessage]);
    assert.deepEqual(DEFAULT_HOOKS["branch.create"], [persistBranchProvenance]);
  });

  it("without overrides the bus carries the given defaults, and none when none are given", () => {
    assert.equal(buildSessionBus().handlersFor("message.add").length, 0);
    const bus = buildSessionBus(null, { defaults: DEFAULT_HOOKS });
    assert.deepEqual(bus.handlersFor("session.start"), [persistSessionStart]);
    assert.deepEqual(bus.handlersFor("message.add"), [persistMessage]);
    assert.equal(bus.handlersFor("tool.pre").length, 0);
  });

  it("an override for a default point replaces the whole list; an empty list disables it", () => {
    const bus = buildSessionBus({ "session.start": ["logToolCall"], "message.add": [] }, {
      defaults: DEFAULT_HOOKS,
    });
    assert.deepEqual(bus.handlersFor("session.start"), [logToolCall]);
    assert.deepEqual(bus.handlersFor("message.add"), []);
    assert.deepEqual(bus.handlersFor("session.end"), [persistSessionEnd]);
  });

  it("overrides for non-default points are appended to the fresh bus", () => {
    const bus = buildSessionBus({
      "tool.post": ["logToolCall"],
      "api.post_call": ["logApiMetrics"],
    });
    assert.deepEqual(bus.handlersFor("tool.post"), [logToolCall]);
    assert.deepEqual(bus.handlersFor("api.post_call"), [logApiMetrics]);
  });

  it("each call returns a new bus; handler chains are not shared", () => {
    const a = buildSessionBus();
    const b = buildSessionBus();
    assert.notEqual(a, b);
    a.on("tool.pre", () => {});
    assert.equal(b.handlersFor("tool.pre").length, 0);
  });

  it("binds the observer and carries store and session id into the handler context", async () => {
    const seen: unknown[] = [];
    const observer = { emit: (e: unknown) => void seen.push(e) };
    const bus = buildSessionBus({ "message.add": [] }, { observer, sessionId: "s1" });
    assert.equal(bus.observer, observer);
    assert.equal(bus.context.sessionId, "s1");
    await bus.emit("tool.post", {
      ...CALL,
      callId: "c",
      toolName: "t",
      args: {},
      result: "",
      resultSummary: "",
      durationMs: 0,
    });
    assert.ok(seen[0] instanceof HookSignal);
  });

  it("a malformed config throws before a bus is built", () => {
    assert.throws(() => buildSessionBus({ "tool.pre": "x" } as never), HookConfigError);
    assert.throws(() => buildSessionBus({ nope: [] }), UnknownHookPointError);
  });
});
