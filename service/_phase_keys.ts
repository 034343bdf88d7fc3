// The phase names (private): the canonical keys of `PhaseHandlers`, the older spellings that only
// `loadPhaseHandlers` reads, and the checks of a `hookType` value.

// Only types from hook_event_type.ts: it imports this file, so the values are written out here.
import type { HookEventType } from "./hook_event_type.ts";

/** The canonical phase keys, the only ones `HookRegistry` and `PhaseHandlers` take. */
export type PhaseKey = "preEventCreate" | "preInvoke" | "postInvoke";

/** Each canonical key's phase. */
export const PHASE_OF_KEY: Readonly<Record<PhaseKey, HookEventType>> = Object.freeze({
  preEventCreate: "pre_event_create",
  preInvoke: "pre_invocation",
  postInvoke: "post_invocation",
});

/** The canonical keys, in lifecycle order. */
export const PHASE_KEYS: readonly PhaseKey[] = Object.freeze(
  Object.keys(PHASE_OF_KEY) as PhaseKey[],
);

/** The older spellings (LionAGI's and 0.2's) and the canonical key each stands for. */
const OLD_SPELLINGS: Readonly<Record<string, PhaseKey>> = Object.freeze({
  pre_event_create: "preEventCreate",
  pre_event_create_hook: "preEventCreate",
  preEventCreateHook: "preEventCreate",
  pre_invocation: "preInvoke",
  pre_invoke: "preInvoke",
  preInvocation: "preInvoke",
  post_invocation: "postInvoke",
  post_invoke: "postInvoke",
  postInvocation: "postInvoke",
});

/** The canonical key a key names (itself, or the one an older spelling stands for). */
export function canonicalPhaseKey(key: unknown): PhaseKey | undefined {
  if (typeof key !== "string") return undefined;
  if (Object.hasOwn(PHASE_OF_KEY, key)) return key as PhaseKey;
  return Object.hasOwn(OLD_SPELLINGS, key) ? OLD_SPELLINGS[key] : undefined;
}

/** Whether `key` is an older spelling (not a canonical key). */
export function isOldSpelling(key: string): boolean {
  return Object.hasOwn(OLD_SPELLINGS, key);
}

/** Every key `loadPhaseHandlers` reads: the canonical keys and the older spellings, sorted. */
export const ALL_PHASE_KEYS: readonly string[] = Object.freeze(
  [...PHASE_KEYS, ...Object.keys(OLD_SPELLINGS)].sort(),
);

/** Whether `value` is one of the three `HookEventType` values. */
export function isHookEventType(value: unknown): value is HookEventType {
  return value === "pre_invocation" || value === "post_invocation" || value === "pre_event_create";
}

/** The `TypeError` for a `hookType` that is not a `HookEventType` value. */
export function unknownHookType(what: string, value: unknown): TypeError {
  const shown = typeof value === "string" ? JSON.stringify(value) : `(${typeof value})`;
  const key = canonicalPhaseKey(value);
  const hint = key === undefined ? "" : `; ${shown} names the phase "${PHASE_OF_KEY[key]}"`;
  return new TypeError(
    `${what}: unknown hook type ${shown}; valid types: ${
      PHASE_KEYS.map((k) => `"${PHASE_OF_KEY[k]}"`).join(", ")
    }${hint}`,
  );
}

/** The valid canonical keys, quoted, for error messages. */
export function validPhaseKeys(): string {
  return PHASE_KEYS.map((k) => `"${k}"`).join(", ");
}
