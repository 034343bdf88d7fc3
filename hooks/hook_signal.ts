/**
 * The envelope a `HookBus` records into its observer after a chain ran.
 *
 * @module
 */

import { Signal, type SignalInit } from "../core/signal.ts";
import type { HookPoint } from "./hook_point.ts";
import { recordedPayload } from "../core/_record.ts";

/** What a {@linkcode HookSignal} is made from. */
export interface HookSignalInit extends Omit<SignalInit, "data"> {
  /** The point that was emitted. */
  point?: HookPoint | null;
  /** The emitted payload (copied shallowly, without a `tool.*` payload's `signal`, and frozen). */
  payload?: Record<string, unknown>;
}

const EMPTY: Readonly<Record<string, unknown>> = Object.freeze({});

/**
 * Records that a Session hook point was emitted and its ordered chain completed. Its `data` is
 * always `null`; the emitted keys are in `payload`.
 *
 * @example
 * ```ts
 * import { HookSignal } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const signal = new HookSignal({ point: "tool.post", payload: { toolName: "reader" } });
 * assert.equal(signal.point, "tool.post");
 * assert.equal(signal.payload.toolName, "reader");
 * assert.equal(signal.data, null);
 * ```
 */
export class HookSignal extends Signal {
  /** The emitted point, or `null`. */
  readonly point: HookPoint | null;
  /**
   * A frozen shallow copy of the emitted payload without the call's `signal` (the payload itself
   * when already frozen and without one).
   */
  readonly payload: Readonly<Record<string, unknown>>;

  /** Makes the envelope. */
  constructor(init?: HookSignalInit) {
    super(init);
    this.data = null;
    this.point = init?.point ?? null;
    const payload = init?.payload;
    // A frozen payload without a signal is kept as is (a frozen shallow copy of it would be
    // equal in every way).
    if (payload === undefined) this.payload = EMPTY;
    else {
      const frozen = Object.isFrozen(payload);
      const kept = recordedPayload(payload, frozen);
      this.payload = kept === payload ? payload : Object.freeze(kept);
    }
  }
}
