/**
 * `loadPhaseHandlers`: the one place where the older phase-key spellings are read.
 *
 * @module
 */

import type { PhaseHandlers } from "./hook_registry.ts";
import { ALL_PHASE_KEYS, canonicalPhaseKey, type PhaseKey } from "./_phase_keys.ts";
import { describe } from "./_util.ts";

/**
 * Reads phase handlers keyed the way a declarative config (or code ported from LionAGI) may key
 * them and returns them under the canonical keys `HookRegistry` takes (`preEventCreate`,
 * `preInvoke`, `postInvoke`). Every spelling in `HOOK_EVENT_TYPE_KEYS` is read: the canonical
 * keys, the `HookEventType` values (`pre_invocation`), and the older spellings (`pre_invoke`,
 * `preInvocation`, `pre_event_create_hook`, `preEventCreateHook`, …). `null`/`undefined` values
 * are skipped.
 *
 * The typed API takes the canonical keys only: `new HookRegistry({ hooks: { pre_invoke } })`
 * does not compile, and throws a `TypeError` naming `preInvoke` when called from JavaScript.
 *
 * @param config An object of handlers keyed by any accepted spelling.
 * @returns The same handlers under their canonical keys.
 * @throws {TypeError} When `config` is not an object, a key names no phase, a value is not a
 * function, or two keys name the same phase.
 *
 * @example Read a config keyed by the older spellings
 * ```ts
 * import { HookRegistry, loadPhaseHandlers } from "@hookscope/core/service";
 * import assert from "node:assert/strict";
 *
 * const config: Record<string, unknown> = { pre_invoke: () => "checked", post_invocation: null };
 * const hooks = loadPhaseHandlers(config);
 * assert.deepEqual(Object.keys(hooks), ["preInvoke"]);
 * const registry = new HookRegistry({ hooks });
 * assert.ok(registry.canHandle({ hookType: "pre_invocation" }));
 * assert.throws(() => loadPhaseHandlers({ pre_invok: () => {} }), /names no phase/);
 * ```
 */
export function loadPhaseHandlers(config: Readonly<Record<string, unknown>>): PhaseHandlers {
  if (config === null || typeof config !== "object" || Array.isArray(config)) {
    throw new TypeError(
      `Cannot load phase handlers: config must be an object of handlers; got ${describe(config)}`,
    );
  }
  const out: Partial<Record<PhaseKey, unknown>> = {};
  const from: Partial<Record<PhaseKey, string>> = {};
  for (const [key, handler] of Object.entries(config)) {
    const canonical = canonicalPhaseKey(key);
    if (canonical === undefined) {
      throw new TypeError(
        `Cannot load phase handlers: key ${JSON.stringify(key)} names no phase; valid keys: ${
          ALL_PHASE_KEYS.map((k) => `"${k}"`).join(", ")
        }`,
      );
    }
    if (handler === undefined || handler === null) continue;
    if (typeof handler !== "function") {
      throw new TypeError(
        `Cannot load phase handlers: ${JSON.stringify(key)} must be a function; got ${
          describe(handler)
        }`,
      );
    }
    const earlier = from[canonical];
    if (earlier !== undefined) {
      throw new TypeError(
        `Cannot load phase handlers: ${JSON.stringify(earlier)} and ${
          JSON.stringify(key)
        } both name ${JSON.stringify(canonical)}`,
      );
    }
    from[canonical] = key;
    out[canonical] = handler;
  }
  return out as PhaseHandlers;
}
