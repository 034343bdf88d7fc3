/**
 * Declarative Session hook configuration: a process-global name registry, per-point default
 * replacement, and `buildSessionBus`.
 *
 * @module
 */

import { HookConfigError, UnknownHandlerError } from "./errors.ts";
import type { SignalSink } from "../core/signal.ts";
import { HookBus, type HookBusOptions, type HookHandler } from "./bus.ts";
import type { HookOptions } from "./hook_options.ts";
import { logApiMetrics, logToolCall } from "./builtins.ts";
import { type HookPoint, toHookPoint } from "./hook_point.ts";

/**
 * One entry of a declarative hook configuration with options: the registered handler's name
 * and the {@linkcode HookOptions} that a config file can carry (`match` is a glob string or a
 * RegExp; `signal` cannot come from a file).
 */
export interface HookConfigEntry {
  /** The registered handler's name (see {@linkcode registerHandler}). */
  readonly handler: string;
  /** Higher runs first. */
  readonly priority?: number;
  /** `tool.*` points: a glob on the tool name, or a RegExp. */
  readonly match?: string | RegExp;
  /** Remove after one run. */
  readonly once?: boolean;
  /** The handler's deadline (default 30 000). */
  readonly timeoutMs?: number;
  /** What a failure means. */
  readonly onFailure?: "continue" | "block";
  /** `"shadow"` records verdicts without applying them. */
  readonly mode?: "enforce" | "shadow";
  /** Shown in signals and errors (default: the handler's registered name). */
  readonly name?: string;
}

/**
 * A declarative hook configuration: hook point value → handler names, or
 * {@linkcode HookConfigEntry} objects with options.
 */
export type AgentHooks = Readonly<Record<string, readonly (string | HookConfigEntry)[]>>;

/** A loaded configuration entry: the resolved handler and its options. */
export interface LoadedHook {
  /** The resolved handler. */
  readonly handler: HookHandler;
  /** The options it is registered with. */
  readonly options: HookOptions;
}

const ENTRY_KEYS: ReadonlySet<string> = new Set([
  "handler",
  "priority",
  "match",
  "once",
  "timeoutMs",
  "onFailure",
  "mode",
  "name",
]);
const TOOL_POINT_PREFIX = "tool.";

function checkEntry(point: HookPoint, index: number, entry: object): HookConfigEntry {
  const where = `hooks["${point}"][${index}]`;
  const fail = (what: string): never => {
    throw new HookConfigError(`Cannot load hooks: ${where} ${what}`);
  };
  if (Array.isArray(entry)) fail(`must be a handler name or an object; got array`);
  for (const key of Object.keys(entry)) {
    if (!ENTRY_KEYS.has(key)) {
      fail(
        `has an unknown key ${JSON.stringify(key)}; valid keys: ${[...ENTRY_KEYS].join(", ")}`,
      );
    }
  }
  const e = entry as Record<string, unknown>;
  if (typeof e.handler !== "string" || e.handler === "") fail(`needs a handler name (string)`);
  if (
    e.priority !== undefined && (typeof e.priority !== "number" || !Number.isFinite(e.priority))
  ) {
    fail(`priority must be a finite number`);
  }
  if (e.match !== undefined) {
    if (typeof e.match !== "string" && !(e.match instanceof RegExp)) {
      fail(`match must be a glob string or a RegExp`);
    }
    if (!point.startsWith(TOOL_POINT_PREFIX)) fail(`match works on tool.* points only`);
  }
  if (e.once !== undefined && typeof e.once !== "boolean") fail(`once must be a boolean`);
  if (
    e.timeoutMs !== undefined &&
    (typeof e.timeoutMs !== "number" || !(e.timeoutMs > 0) || Number.isNaN(e.timeoutMs))
  ) fail(`timeoutMs must be a positive number`);
  if (e.onFailure !== undefined && e.onFailure !== "continue" && e.onFailure !== "block") {
    fail(`onFailure must be "continue" or "block"`);
  }
  if (e.mode !== undefined && e.mode !== "enforce" && e.mode !== "shadow") {
    fail(`mode must be "enforce" or "shadow"`);
  }
  if (e.name !== undefined && (typeof e.name !== "string" || e.name === "")) {
    fail(`name must be a non-empty string`);
  }
  return e as unknown as HookConfigEntry;
}

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
 * import { registerHandler } from "@hookscope/core";
 * import { resolveHandler } from "@hookscope/core/hooks";
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
 * import { UnknownHandlerError } from "@hookscope/core";
 * import { persistMessage } from "@hookscope/core/session";
 * import { resolveHandler } from "@hookscope/core/hooks";
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
 * import { registeredHandlerNames } from "@hookscope/core/hooks";
 * import assert from "node:assert/strict";
 *
 * assert.ok(registeredHandlerNames().includes("logToolCall"));
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
 * import { loadHooksForAgent } from "@hookscope/core/hooks";
 * import { persistMessage } from "@hookscope/core/session";
 * import assert from "node:assert/strict";
 *
 * const hooks = loadHooksForAgent({ "message.add": ["persistMessage"] });
 * assert.deepEqual(hooks.get("message.add"), [persistMessage]);
 * assert.equal(loadHooksForAgent(null).size, 0);
 * ```
 */
export function loadHooksForAgent(agentHooks?: AgentHooks | null): Map<HookPoint, HookHandler[]> {
  const result = new Map<HookPoint, HookHandler[]>();
  for (const [point, loaded] of loadHookEntries(agentHooks)) {
    result.set(point, loaded.map((l) => l.handler));
  }
  return result;
}

/**
 * Like {@linkcode loadHooksForAgent}, keeping each entry's options: plain names get `{}`,
 * `{ handler, …options }` objects their options (named after the handler unless `name` is
 * given). Bad option values throw {@linkcode HookConfigError}.
 *
 * @example
 * ```ts
 * import { loadHookEntries, logToolCall } from "@hookscope/core/hooks";
 * import assert from "node:assert/strict";
 *
 * const hooks = loadHookEntries({ "tool.pre": [{ handler: "logToolCall", priority: 5, match: "bash" }] });
 * const [entry] = hooks.get("tool.pre")!;
 * assert.equal(entry.handler, logToolCall);
 * assert.deepEqual(entry.options, { priority: 5, match: "bash", name: "logToolCall" });
 * ```
 */
export function loadHookEntries(agentHooks?: AgentHooks | null): Map<HookPoint, LoadedHook[]> {
  const result = new Map<HookPoint, LoadedHook[]>();
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
    const loaded: LoadedHook[] = [];
    names.forEach((item: unknown, index: number) => {
      if (typeof item === "string") {
        loaded.push({ handler: resolveHandler(item), options: NO_OPTIONS });
        return;
      }
      if (item === null || typeof item !== "object") {
        throw new HookConfigError(
          `Cannot load hooks: hooks["${point}"] must contain handler names (strings) or { handler, …options } objects; got ${
            describeType(item)
          }`,
        );
      }
      const { handler, ...options } = checkEntry(point, index, item);
      const resolved = resolveHandler(handler);
      loaded.push({
        handler: resolved,
        options: Object.freeze({ ...options, name: options.name ?? handler }),
      });
    });
    result.set(point, loaded);
  }
  return result;
}

const NO_OPTIONS: HookOptions = Object.freeze({});

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
 * import { buildSessionBus } from "@hookscope/core/hooks";
 * import { DEFAULT_HOOKS, persistSessionStart } from "@hookscope/core/session";
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
  const overrides = loadHookEntries(agentHooks);
  const busOptions: HookBusOptions = {};
  if (options?.store !== undefined) busOptions.store = options.store;
  if (options?.sessionId !== undefined) busOptions.sessionId = options.sessionId;
  if (options?.onError !== undefined) busOptions.onError = options.onError;
  const bus = new HookBus(options?.observer ?? null, busOptions);
  const add = (point: HookPoint, loaded: LoadedHook): void => {
    if (loaded.options === NO_OPTIONS) bus.on(point, loaded.handler);
    else bus.on(point, loaded.handler, loaded.options);
  };
  const defaults = options?.defaults ?? {};
  for (const [point, list] of Object.entries(defaults) as [HookPoint, HookHandler[]][]) {
    const override = overrides.get(point);
    if (override !== undefined) { for (const loaded of override) add(point, loaded); }
    else for (const handler of list) bus.on(point, handler);
  }
  for (const [point, loaded] of overrides) {
    if (point in defaults) continue;
    for (const entry of loaded) add(point, entry);
  }
  return bus;
}

function describeType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}
