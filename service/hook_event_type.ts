/**
 * The service hook phases and the key aliases the registry accepts.
 *
 * @module
 */

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

const ALIASES: Readonly<Record<string, HookEventType>> = Object.freeze({
  pre_event_create: HookEventType.PreEventCreate,
  pre_event_create_hook: HookEventType.PreEventCreate,
  preEventCreate: HookEventType.PreEventCreate,
  preEventCreateHook: HookEventType.PreEventCreate,
  pre_invocation: HookEventType.PreInvocation,
  pre_invoke: HookEventType.PreInvocation,
  preInvocation: HookEventType.PreInvocation,
  preInvoke: HookEventType.PreInvocation,
  post_invocation: HookEventType.PostInvocation,
  post_invoke: HookEventType.PostInvocation,
  postInvocation: HookEventType.PostInvocation,
  postInvoke: HookEventType.PostInvocation,
});

/** Every key the registry accepts for a phase, sorted. */
export const HOOK_EVENT_TYPE_KEYS: readonly string[] = Object.freeze(Object.keys(ALIASES).sort());

/**
 * Normalizes a phase key (a value such as `"pre_invocation"` or an alias such as `"pre_invoke"`,
 * `"pre_event_create_hook"` or the camelCase method names) to its {@linkcode HookEventType};
 * `undefined` when the key is unknown.
 *
 * @example
 * ```ts
 * import { HookEventType, toHookEventType } from "@hookscope/core/service";
 * import assert from "node:assert/strict";
 *
 * assert.equal(toHookEventType("pre_invoke"), HookEventType.PreInvocation);
 * assert.equal(toHookEventType("nope"), undefined);
 * ```
 */
export function toHookEventType(key: unknown): HookEventType | undefined {
  // The values themselves (what every internal caller passes) skip the alias lookup.
  if (
    key === HookEventType.PreInvocation || key === HookEventType.PostInvocation ||
    key === HookEventType.PreEventCreate
  ) return key;
  if (typeof key !== "string" || !Object.hasOwn(ALIASES, key)) return undefined;
  return ALIASES[key];
}
