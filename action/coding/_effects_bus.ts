// Private: a session bus's `tool.effects` handlers as `ToolEffectsHook`s for `decideEffects`, for
// the coding toolkit and the act path alike. Structural, so the action scope imports no hooks.

import type { ToolEffectsHook, ToolEffectsPayload } from "./file_change.ts";

/** What is needed of a session's hook bus. */
export interface EffectsBus {
  handlersFor(point: "tool.effects"): ((payload: never, context: never) => unknown)[];
  readonly context: unknown;
}

/**
 * The bus's `tool.effects` handlers, each called with the payload without its `signal` and the
 * bus's context, and named like the handler (a fold names the hook that decided).
 */
export function busEffectsHooks(bus: EffectsBus | null | undefined): ToolEffectsHook[] {
  if (bus === null || bus === undefined) return [];
  const hooks: ToolEffectsHook[] = [];
  for (const handler of bus.handlersFor("tool.effects")) {
    const named = {
      [handler.name || "tool.effects handler"]: (
        { signal: _signal, ...rest }: ToolEffectsPayload & { signal: AbortSignal },
      ) => handler(rest as never, bus.context as never) as never,
    };
    hooks.push(Object.values(named)[0]);
  }
  return hooks;
}
