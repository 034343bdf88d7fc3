// The change-set part of the effects signals: counts by kind and the first entries.

import type { ApprovalChange } from "../core/approval.ts";
import type { EffectsChangeData } from "./effects_signal.ts";

/** The change-set entries a signal carries (the rest are counted in `count`). */
export const SIGNAL_CHANGES = 20;

/** Counts of a change set by kind (`"2 created, 1 deleted"`, `"no changes"`). */
export function changeSummary(changes: readonly { readonly kind: string }[]): string {
  const counts = new Map<string, number>();
  for (const change of changes) counts.set(change.kind, (counts.get(change.kind) ?? 0) + 1);
  if (counts.size === 0) return "no changes";
  const order = ["created", "modified", "deleted", "mode", "symlink"];
  return [...counts.entries()]
    .sort((a, b) => (order.indexOf(a[0]) + 1 || 99) - (order.indexOf(b[0]) + 1 || 99))
    .map(([kind, count]) => `${count} ${kind}`)
    .join(", ");
}

/** The change-set part of an effects signal's data. */
export function changeData(
  callId: string,
  toolName: string,
  changes: readonly ApprovalChange[],
): EffectsChangeData {
  return {
    callId,
    toolName,
    count: changes.length,
    summary: changeSummary(changes),
    changes: changes.slice(0, SIGNAL_CHANGES).map((change) => ({ ...change })),
  };
}
