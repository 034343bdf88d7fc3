/**
 * Declarative Session hook configuration: a process-global name registry, per-point default
 * replacement, and `buildSessionBus`.
 *
 * @module
 */

import { HookConfigError, UnknownHandlerError } from "../core/errors.ts";
import type { SignalSink } from "../core/signal.ts";
import { HookBus, type HookBusOptions, type HookHandler } from "./bus.ts";
import { logApiMetrics, logToolCall } from "./builtins.ts";
import { type HookPoint, toHookPoint } from "./hook_point.ts";

/** A declarative hook configuration: hook point value → handler names. */
export type AgentHooks = Readonly<Record<string, readonly string[]>>;

// The persistence built-ins (`persistMessage`, …) are registered by `session/`, which owns them.
const BUILTIN_HANDLERS: ReadonlyArray<readonly [string, HookHandler]> = [
  ["logApiMetrics", logApiMetrics as HookHandler],
  ["logToolCall", logToolCall as HookHandler],
];

const registry = new Map<string, HookHandler>(BUILTIN_HANDLERS);

/**
 * Registers a handler under a name in the process-global registry. The last writer wins.
 *
 * @example
 * ```ts
 * import { registerHandler, resolveHandler } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const audit = () => {};
 * registerHandler("docsAudit", audit);
 * assert.equal(resolveHandler("docsAudit"), audit);
 * ```
 */
export function registerHandler(name: string, handler: HookHandler): void {
  if (typeof name !== "string" || name.trim().length === 0) {
    throw new TypeError(`Cannot register handler: name must be a non-empty string`);
  }
  if (typeof handler !== "function") {
    throw new TypeError(
      `Cannot register handler ${JSON.stringify(name)}: handler must be a function; got ${
        handler === null ? "null" : typeof handler
      }`,
    );
  }
  registry.set(name, handler);
}

/**
 * The handler registered under a name; a miss throws {@linkcode UnknownHandlerError} listing the
 * registered names.
 *
 * @example
 * ```ts
 * import { persistMessage, resolveHandler, UnknownHandlerError } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * assert.equal(resolveHandler("persistMessage"), persistMessage);
 * assert.throws(() => resolveHandler("nope"), UnknownHandlerError);
 * ```
 */
export function resolveHandler(name: string): HookHandler {
  const handler = typeof name === "string" ? registry.get(name) : undefined;
  if (handler === undefined) throw new UnknownHandlerError(String(name), [...registry.keys()]);
  return handler;
}

/**
 * The names currently registered, sorted.
 *
 * @example
 * ```ts
 * import { registeredHandlerNames } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * assert.ok(registeredHandlerNames().includes("persistSessionStart"));
 * ```
 */
export function registeredHandlerNames(): string[] {
  return [...registry.keys()].sort();
}

/**
 * Resolves a declarative configuration into handler lists per point. `null`, `undefined` and
 * `{}` give no overrides. Everything is validated before anything is returned: a config that is
 * not a plain object or whose values are not arrays of strings throws {@linkcode HookConfigError};
 * an unknown point throws `UnknownHookPointError`; an unknown name throws
 * {@linkcode UnknownHandlerError}. Defaults are not merged here.
 *
 * @example
 * ```ts
 * import { loadHooksForAgent, persistMessage } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const hooks = loadHooksForAgent({ "message.add": ["persistMessage"] });
 * assert.deepEqual(hooks.get("message.add"), [persistMessage]);
 * assert.equal(loadHooksForAgent(null).size, 0);
 * ```
 */
export function loadHooksForAgent(agentHooks?: AgentHooks | null): Map<HookPoint, HookHandler[]> {
  const result = new Map<HookPoint, HookHandler[]>();
  if (agentHooks === undefined || agentHooks === null) return result;
  if (typeof agentHooks !== "object" || Array.isArray(agentHooks)) {
    throw new HookConfigError(
      `Cannot load hooks: the config must be an object mapping hook points to arrays of handler names; got ${
        describeType(agentHooks)
      }`,
    );
  }
  for (const [key, names] of Object.entries(agentHooks)) {
    const point = toHookPoint(key, "load hooks");
    if (!Array.isArray(names)) {
      throw new HookConfigError(
        `Cannot load hooks: hooks["${point}"] must be an array of handler names; got ${
          describeType(names)
        }; registered names: ${registeredHandlerNames().map((n) => `"${n}"`).join(", ")}`,
      );
    }
    const handlers: HookHandler[] = [];
    for (const name of names) {
      if (typeof name !== "string") {
        throw new HookConfigError(
          `Cannot load hooks: hooks["${point}"] must contain handler names (strings); got ${
            describeType(name)
          }`,
        );
      }
      handlers.push(resolveHandler(name));
    }
    result.set(point, handlers);
  }
  return result;
}

/** Options for {@linkcode buildSessionBus}. */
export interface BuildSessionBusOptions {
  /** The observer HookSignals are recorded into. */
  observer?: SignalSink | null;
  /** The store persistence handlers write to. */
  store?: HookBusOptions["store"];
  /** The session id handed to handlers. */
  sessionId?: string;
  /** Where isolated handler failures go. */
  onError?: HookBusOptions["onError"];
  /**
   * The handlers the bus starts with, per point (none by default; a `Session` passes the
   * persistence handlers, `DEFAULT_HOOKS` from `./session`).
   */
  defaults?: Readonly<Partial<Record<HookPoint, readonly HookHandler[]>>>;
}

/**
 * A fresh bus with `options.defaults`, where an override for a default point replaces its whole
 * list (an empty list disables it) and overrides for other points are appended. The config is
 * validated before the bus is made.
 *
 * @example
 * ```ts
 * import { buildSessionBus, DEFAULT_HOOKS, persistSessionStart } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const bus = buildSessionBus(
 *   { "message.add": [], "tool.pre": ["logToolCall"] },
 *   { defaults: DEFAULT_HOOKS },
 * );
 * assert.equal(bus.handlersFor("message.add").length, 0);
 * assert.deepEqual(bus.handlersFor("session.start"), [persistSessionStart]);
 * assert.equal(bus.handlersFor("tool.pre").length, 1);
 * ```
 */
export function buildSessionBus(
  agentHooks?: AgentHooks | null,
  options?: BuildSessionBusOptions,
): HookBus {
  const overrides = loadHooksForAgent(agentHooks);
  const busOptions: HookBusOptions = {};
  if (options?.store !== undefined) busOptions.store = options.store;
  if (options?.sessionId !== undefined) busOptions.sessionId = options.sessionId;
  if (options?.onError !== undefined) busOptions.onError = options.onError;
  const bus = new HookBus(options?.observer ?? null, busOptions);
  const defaults = options?.defaults ?? {};
  for (const [point, list] of Object.entries(defaults) as [HookPoint, HookHandler[]][]) {
    for (const handler of overrides.get(point) ?? list) bus.on(point, handler);
  }
  for (const [point, handlers] of overrides) {
    if (point in defaults) continue;
    for (const handler of handlers) bus.on(point, handler);
  }
  return bus;
}

function describeType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}
