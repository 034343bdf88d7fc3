/**
 * The audit signals of staged runs (coding toolkit, `effects: "overlay"`): what the
 * `tool.effects` hooks decided about a change set ({@linkcode EffectsDecided}), whether it was
 * committed with a checkpoint ({@linkcode EffectsCommitted}) or discarded
 * ({@linkcode EffectsDiscarded}). All are persisted like `ToolDenied` and never suppressed by
 * the gate; `opId` is the call id. An undo (`hookscope undo`, the console) is recorded as a
 * `ChangesUndone` row.
 *
 * @module
 */

import { Signal, type SignalInit } from "../core/signal.ts";
import type { ApprovalChange } from "../core/approval.ts";

/** What every effects signal says about the change set. */
export interface EffectsChangeData {
  /** The call. */
  readonly callId: string;
  /** The tool (`"bash"`, or `"autoFormat"` for a formatter run). */
  readonly toolName: string;
  /** How many entries the change set has. */
  readonly count: number;
  /** Counts by kind, e.g. `"2 created, 1 deleted"`. */
  readonly summary: string;
  /** The first 20 entries, in path order. */
  readonly changes: readonly ApprovalChange[];
}

/** What an {@linkcode EffectsDecided} carries. */
export interface EffectsDecidedData extends EffectsChangeData {
  /** The folded verdict of the `tool.effects` hooks (`none`: no opinion, it commits). */
  readonly decision: "allow" | "ask" | "deny" | "none";
  /** Why (the deciding hook's reason). */
  readonly reason?: string;
  /** The deciding hook, when known. */
  readonly hook?: string;
  /**
   * An `ask` that a resumed run's stored answer applies to (given for this change set, its
   * `effectsHash`): nobody is asked again, `ApprovalAnswered` (`resumed`) follows.
   */
  readonly answered?: {
    readonly approve: boolean;
    readonly by?: string;
    readonly effectsHash?: string;
  };
}

/** What an {@linkcode EffectsCommitted} or {@linkcode EffectsDiscarded} carries. */
export interface EffectsSettledData extends EffectsChangeData {
  /** The real workspace root. */
  readonly workspace?: string;
  /** The checkpoint that undoes it ({@linkcode EffectsCommitted}). */
  readonly checkpoint?: string;
  /** Why it was not applied ({@linkcode EffectsDiscarded}). */
  readonly reason?: string;
}

function callOpId(data: unknown): string {
  const callId = (data as { callId?: unknown } | null)?.callId;
  return typeof callId === "string" ? callId : "";
}

/**
 * The `tool.effects` hooks decided on the change set of a staged run; `data` is an
 * {@linkcode EffectsDecidedData}. An `ask` is followed by `ApprovalRequested` (and
 * `ApprovalAnswered` once answered), or, on resume, when its data says it is `answered`, by the
 * stored answer's `ApprovalAnswered` alone.
 *
 * @example
 * ```ts
 * import { EffectsDecided } from "@hookscope/core/session";
 * import assert from "node:assert/strict";
 *
 * const signal = new EffectsDecided({
 *   data: { callId: "c1", toolName: "bash", decision: "ask", count: 1, summary: "1 deleted", changes: [] },
 * });
 * assert.equal(signal.opId, "c1");
 * ```
 */
export class EffectsDecided extends Signal {
  /** Makes the signal; `init.data` is an {@linkcode EffectsDecidedData}. */
  constructor(init?: SignalInit) {
    super(init);
  }
  /** The call id. */
  get opId(): string {
    return callOpId(this.data);
  }
}

/**
 * A change set was committed into the workspace; `data` is an {@linkcode EffectsSettledData}
 * with the `checkpoint` that undoes it (`hookscope undo DB CALL_ID`). `hookscope show` lists
 * these as the session's checkpoints.
 *
 * @example
 * ```ts
 * import { EffectsCommitted } from "@hookscope/core/session";
 * import assert from "node:assert/strict";
 *
 * const signal = new EffectsCommitted({
 *   data: { callId: "c1", toolName: "bash", checkpoint: "k1", count: 1, summary: "1 created", changes: [] },
 * });
 * assert.equal(signal.opId, "c1");
 * ```
 */
export class EffectsCommitted extends Signal {
  /** Makes the signal; `init.data` is an {@linkcode EffectsSettledData}. */
  constructor(init?: SignalInit) {
    super(init);
  }
  /** The call id. */
  get opId(): string {
    return callOpId(this.data);
  }
}

/**
 * A change set was not applied (denied, rejected, not answered, or its commit refused); the
 * workspace is as before. `data` is an {@linkcode EffectsSettledData} with the `reason`.
 *
 * @example
 * ```ts
 * import { EffectsDiscarded } from "@hookscope/core/session";
 * import assert from "node:assert/strict";
 *
 * const signal = new EffectsDiscarded({
 *   data: { callId: "c1", toolName: "bash", reason: "no", count: 1, summary: "1 deleted", changes: [] },
 * });
 * assert.equal(signal.opId, "c1");
 * ```
 */
export class EffectsDiscarded extends Signal {
  /** Makes the signal; `init.data` is an {@linkcode EffectsSettledData}. */
  constructor(init?: SignalInit) {
    super(init);
  }
  /** The call id. */
  get opId(): string {
    return callOpId(this.data);
  }
}
