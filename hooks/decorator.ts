/**
 * Tagging functions with the hook point they are meant for.
 *
 * @module
 */

import { type HookPoint, toHookPoint } from "./hook_point.ts";

/**
 * The property key under which {@linkcode hook} stores a function's point.
 *
 * @example
 * ```ts
 * import { hook, HOOK_POINT } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const fn = hook("session.end")(() => {});
 * assert.equal((fn as unknown as Record<symbol, unknown>)[HOOK_POINT], "session.end");
 * ```
 */
export const HOOK_POINT: unique symbol = Symbol.for("hookscope.hookPoint");

/**
 * Tags a function with a hook point. It validates the point at once and registers nothing.
 *
 * @example
 * ```ts
 * import { hook, hookPointOf, HookBus } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const onStart = hook("session.start")(() => {});
 * assert.equal(hookPointOf(onStart), "session.start");
 * assert.equal(new HookBus().handlersFor("session.start").length, 0);
 * ```
 */
export function hook<P extends HookPoint>(
  point: P | string,
): <F extends (...args: never[]) => unknown>(fn: F) => F {
  const p = toHookPoint(point as string, "tag hook");
  return <F extends (...args: never[]) => unknown>(fn: F): F => {
    if (typeof fn !== "function") {
      throw new TypeError(`Cannot tag hook: expected a function; got ${typeof fn}`);
    }
    Object.defineProperty(fn, HOOK_POINT, { value: p, configurable: true, enumerable: false });
    return fn;
  };
}

/**
 * The point a function was tagged with by {@linkcode hook}, or `undefined`.
 *
 * @example
 * ```ts
 * import { hookPointOf } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * assert.equal(hookPointOf(() => {}), undefined);
 * ```
 */
export function hookPointOf(fn: unknown): HookPoint | undefined {
  if (typeof fn !== "function") return undefined;
  return (fn as unknown as Record<symbol, HookPoint | undefined>)[HOOK_POINT];
}
