// The observer's governance gate: which events bypass it, and how an action is asked about
// with a deadline and the caller's abort.

import { isThenable } from "../core/_util.ts";
import { deadline, TIMED_OUT } from "../core/_async.ts";
import type { Report } from "./_fan_out.ts";
import {
  ApprovalAnswered,
  ApprovalRequested,
  GateDenied,
  HookBlocked,
  ToolDenied,
  WouldAsk,
  WouldDeny,
} from "./signal.ts";
import { EffectsCommitted, EffectsDecided, EffectsDiscarded } from "./effects_signal.ts";

/** How long a governance gate may take before it counts as a denial. */
export const GATE_TIMEOUT_MS = 30_000;

/** Whether an envelope is an audit signal, which the gate never sees. */
export function isAudit(envelope: object): boolean {
  return envelope instanceof GateDenied || envelope instanceof HookBlocked ||
    envelope instanceof ToolDenied || envelope instanceof ApprovalRequested ||
    envelope instanceof ApprovalAnswered || envelope instanceof WouldDeny ||
    envelope instanceof WouldAsk || envelope instanceof EffectsDecided ||
    envelope instanceof EffectsCommitted || envelope instanceof EffectsDiscarded;
}

/**
 * The gate's verdict on `action`: falsy, throwing (reported as `"gate"`) or not settling within
 * `timeoutMs` denies; an abort of `signal` rejects with its reason.
 */
export async function askGate(
  gate: (payload: unknown) => unknown,
  action: unknown,
  report: Report,
  options?: { signal?: AbortSignal; timeoutMs?: number },
): Promise<boolean> {
  const signal = options?.signal;
  try {
    const verdict = gate(action);
    return Boolean(
      isThenable(verdict)
        ? await deadline(verdict, options?.timeoutMs ?? GATE_TIMEOUT_MS, signal)
        : verdict,
    );
  } catch (error) {
    if (signal?.aborted && error === signal.reason) throw error;
    report(
      error === TIMED_OUT
        ? new Error(
          `Gate did not settle within ${options?.timeoutMs ?? GATE_TIMEOUT_MS} ms; denied`,
        )
        : error,
      "gate",
    );
    return false;
  }
}
