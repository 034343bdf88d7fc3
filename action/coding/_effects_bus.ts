// Private: how a session bus's `tool.effects` handlers decide on a change set, for the coding
// toolkit and the act path alike. The bus folds them as it folds `tool.pre` (`HookBus.decide`):
// deny > ask > allow > none, a throw or a timeout denies (fail closed), and every option the
// handler was registered with holds (match, once, timeoutMs, onFailure, name, and mode: a shadow
// handler's deny or ask is handed back to be recorded, never applied). Structural, so the action
// scope imports no hooks.

import { messageOf } from "../../core/_util.ts";
import type { EffectsVerdict, ToolEffectsPayload } from "./file_change.ts";

/** A shadow-mode handler's verdict on a change set: recorded, not applied. */
export interface EffectsShadowVerdict {
  readonly decision: "deny" | "ask";
  readonly reason?: string;
  readonly hook?: string;
}

/** What the bus's fold gives (a `ToolPreFold`, as far as a change set needs it). */
export interface EffectsBusFold {
  readonly verdict: "none" | "allow" | "ask" | "deny";
  readonly reason?: string;
  readonly hook?: string;
  readonly shadow: readonly EffectsShadowVerdict[];
  readonly error?: unknown;
  readonly errorHook?: string;
}

/** What is needed of a session's hook bus. */
export interface EffectsBus {
  count(point: "tool.effects"): number;
  decide(
    point: "tool.effects",
    payload: ToolEffectsPayload,
    options?: { signal?: AbortSignal },
  ): Promise<EffectsBusFold>;
}

/** The verdict of a bus's `tool.effects` handlers, and the shadow verdicts to record. */
export interface BusEffectsVerdict {
  readonly verdict: EffectsVerdict;
  readonly shadow: readonly EffectsShadowVerdict[];
}

/** The name a decision of an unnamed handler is recorded under. */
const UNNAMED = "tool.effects handler";

const NONE: BusEffectsVerdict = Object.freeze({
  verdict: Object.freeze({ decision: "none" as const }),
  shadow: Object.freeze([]),
});

/**
 * Runs `bus`'s `tool.effects` handlers on `payload` (nothing when it has none). A handler that
 * failed denies, named in the reason as `decideEffects` names a failed hook. Rejects with the
 * signal's reason when `signal` aborts.
 */
export async function decideOnBus(
  bus: EffectsBus | null | undefined,
  payload: ToolEffectsPayload,
  signal?: AbortSignal,
): Promise<BusEffectsVerdict> {
  if (bus === null || bus === undefined || bus.count("tool.effects") === 0) return NONE;
  let fold: EffectsBusFold;
  try {
    fold = await bus.decide("tool.effects", payload, signal === undefined ? undefined : { signal });
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    throw error;
  }
  const shadow = fold.shadow;
  if (fold.error !== undefined) {
    const hook = fold.errorHook ?? UNNAMED;
    const reason = `The tool.effects hook ${hook} failed: ${messageOf(fold.error)}`;
    return { verdict: { decision: "deny", reason, hook }, shadow };
  }
  if (fold.verdict === "none") {
    return shadow.length === 0 ? NONE : { verdict: NONE.verdict, shadow };
  }
  const verdict: { decision: EffectsVerdict["decision"]; reason?: string; hook?: string } = {
    decision: fold.verdict,
  };
  if (fold.reason !== undefined) verdict.reason = fold.reason;
  // A deny or an ask names its hook; an unnamed handler is named for its point.
  if (fold.hook !== undefined) verdict.hook = fold.hook;
  else if (fold.verdict !== "allow") verdict.hook = UNNAMED;
  return { verdict, shadow };
}

const RANK = { none: 0, allow: 1, ask: 2, deny: 3 } as const;

/**
 * Two verdicts folded in chain order (`first` came first): deny > ask > allow > none, and of
 * two equal ones the first (its reason and hook).
 */
export function foldVerdicts(first: EffectsVerdict, second: EffectsVerdict): EffectsVerdict {
  return RANK[second.decision] > RANK[first.decision] ? second : first;
}
