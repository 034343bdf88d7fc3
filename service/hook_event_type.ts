/**
 * The service hook phases, and how a declarative config's phase keys map to them.
 *
 * @module
 */

import { ALL_PHASE_KEYS, canonicalPhaseKey, isHookEventType, PHASE_OF_KEY } from "./_phase_keys.ts";

/**
 * The three lifecycle phases a service hook can run in.
 *
 * @example
 * ```ts
 * import { HookEventType } from "@hookscope/core/service";
 * import assert from "node:assert/strict";
 *
 * assert.equal(HookEventType.PreInvocation, "pre_invocation");
 * ```
 */
export const HookEventType = {
  PreEventCreate: "pre_event_create",
  PreInvocation: "pre_invocation",
  PostInvocation: "post_invocation",
} as const;

/** One of the {@linkcode HookEventType} values. */
export type HookEventType = typeof HookEventType[keyof typeof HookEventType];

/** The phase values, in lifecycle order. */
export const HOOK_EVENT_TYPES: readonly HookEventType[] = Object.freeze([
  HookEventType.PreEventCreate,
  HookEventType.PreInvocation,
  HookEventType.PostInvocation,
]);

/**
 * Every phase key `loadPhaseHandlers` reads, sorted: the canonical keys of
 * `PhaseHandlers` (`preEventCreate`, `preInvoke`, `postInvoke`) and their older spellings
 * (`pre_invoke`, `pre_invocation`, `preInvocation`, `pre_event_create_hook`, …) that declarative
 * configs may carry. `HookRegistry` itself takes the canonical keys only.
 *
 * @example
 * ```ts
 * import { HOOK_EVENT_TYPE_KEYS } from "@hookscope/core/service";
 * import assert from "node:assert/strict";
 *
 * assert.equal(HOOK_EVENT_TYPE_KEYS.length, 12);
 * assert.ok(HOOK_EVENT_TYPE_KEYS.includes("pre_invoke"));
 * ```
 */
export const HOOK_EVENT_TYPE_KEYS: readonly string[] = ALL_PHASE_KEYS;

/**
 * The phase a declarative config's key names: a {@linkcode HookEventType} value, a canonical
 * key (`preInvoke`) or an older spelling (`pre_invoke`, `pre_event_create_hook`, …);
 * `undefined` when the key names no phase. Where a phase type is asked for in code (`hookType`
 * of `HookEvent`, `HookRegistry.call`, `canHandle`), only the `HookEventType` values are taken.
 *
 * @example
 * ```ts
 * import { HookEventType, toHookEventType } from "@hookscope/core/service";
 * import assert from "node:assert/strict";
 *
 * assert.equal(toHookEventType("pre_invoke"), HookEventType.PreInvocation);
 * assert.equal(toHookEventType("postInvoke"), HookEventType.PostInvocation);
 * assert.equal(toHookEventType("nope"), undefined);
 * ```
 */
export function toHookEventType(key: unknown): HookEventType | undefined {
  if (isHookEventType(key)) return key;
  const canonical = canonicalPhaseKey(key);
  return canonical === undefined ? undefined : PHASE_OF_KEY[canonical];
}
