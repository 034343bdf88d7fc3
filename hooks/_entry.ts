// One registration of a Session hook handler, its `HookOptions` checked and resolved once, at
// `HookBus.on()`. Private to the hooks folder.

import type { HookPoint } from "./hook_point.ts";
import type { HookOptions } from "./hook_options.ts";
import type { HookContext } from "./bus.ts";
import { toolNameMatcher } from "./_matcher.ts";
import { unknownOptionProblem } from "../core/_util.ts";

/** The default deadline of one Session hook handler, in milliseconds. */
export const SESSION_HOOK_TIMEOUT_MS = 30_000;

/** A handler as the bus stores it. */
export type AnyHandler = (payload: never, context: HookContext) => unknown;
/** A point's handlers, in run order. */
export type Chain = readonly AnyHandler[];

/** One registration, resolved at `on()`. */
export interface Entry {
  readonly handler: AnyHandler;
  readonly priority: number;
  readonly match: ((payload: Record<string, unknown>) => boolean) | null;
  readonly once: boolean;
  readonly timeoutMs: number;
  readonly onFailure: "continue" | "block" | null;
  readonly shadow: boolean;
  readonly name: string | undefined;
  /** Whether this entry needs the general (option-aware) emission path. */
  readonly special: boolean;
  dispose: (() => void) | null;
}
/** A point's registrations, in run order. */
export type Entries = readonly Entry[];

const OPTION_KEYS: ReadonlySet<string> = new Set([
  "priority",
  "match",
  "once",
  "signal",
  "timeoutMs",
  "onFailure",
  "mode",
  "name",
]);

/** Whether a string or RegExp `match` (on `toolName`) is allowed at `point`: the `tool.*` points. */
function isToolPoint(point: HookPoint): boolean {
  return point.startsWith("tool.");
}

/** Checks `options` (a `TypeError` names the first problem) and resolves them into an entry. */
export function makeEntry(
  point: HookPoint,
  handler: AnyHandler,
  options: HookOptions | undefined,
): Entry {
  const fnName = handler.name || undefined;
  if (options === undefined) {
    return {
      handler,
      priority: 0,
      match: null,
      once: false,
      timeoutMs: SESSION_HOOK_TIMEOUT_MS,
      onFailure: null,
      shadow: false,
      name: fnName,
      special: false,
      dispose: null,
    };
  }
  if (options === null || typeof options !== "object") {
    throw new TypeError(`Cannot register hook: options must be an object`);
  }
  const fail = (what: string): never => {
    throw new TypeError(`Cannot register hook at ${point}: ${what}`);
  };
  const unknown = unknownOptionProblem(options, OPTION_KEYS);
  if (unknown !== undefined) fail(unknown);
  const { priority = 0, match, once = false, signal, timeoutMs, onFailure, mode, name } = options;
  if (typeof priority !== "number" || !Number.isFinite(priority)) {
    fail(`priority must be a finite number`);
  }
  if (typeof once !== "boolean") fail(`once must be a boolean`);
  if (
    signal !== undefined &&
    (signal === null || typeof (signal as { addEventListener?: unknown }).addEventListener !==
        "function")
  ) fail(`signal must be an AbortSignal`);
  if (
    timeoutMs !== undefined &&
    (typeof timeoutMs !== "number" || !(timeoutMs > 0) || Number.isNaN(timeoutMs))
  ) fail(`timeoutMs must be a positive number`);
  if (onFailure !== undefined && onFailure !== "continue" && onFailure !== "block") {
    fail(`onFailure must be "continue" or "block"`);
  }
  if (mode !== undefined && mode !== "enforce" && mode !== "shadow") {
    fail(`mode must be "enforce" or "shadow"`);
  }
  if (name !== undefined && (typeof name !== "string" || name === "")) {
    fail(`name must be a non-empty string`);
  }
  let test: Entry["match"] = null;
  if (match !== undefined) {
    if (typeof match === "function") {
      test = (payload) => Boolean((match as (p: unknown) => unknown)(payload));
    } else if (typeof match === "string" || match instanceof RegExp) {
      if (!isToolPoint(point)) {
        fail(`a string or RegExp match needs a tool.* point; use a predicate`);
      }
      test = toolNameMatcher(match);
    } else fail(`match must be a glob string, a RegExp or a function`);
  }
  const shadow = mode === "shadow";
  return {
    handler,
    priority,
    match: test,
    once,
    timeoutMs: timeoutMs ?? SESSION_HOOK_TIMEOUT_MS,
    onFailure: onFailure ?? null,
    shadow,
    name: name ?? fnName,
    special: test !== null || once || timeoutMs !== undefined || onFailure !== undefined || shadow,
    dispose: null,
  };
}
