// A recorded hook signal whose envelope is not built yet. An observer with nothing to deliver
// to (no subscription, route or gate) stores this instead of a `HookSignal`: the clock reading
// and the shallow payload copy are taken now, the envelope (and the freeze) when the event is
// first read.

import { HookSignal } from "../hooks/hook_signal.ts";
import type { HookPoint } from "../hooks/hook_point.ts";
import { recordedPayload } from "../core/_record.ts";

/** The parts of a `HookSignal` taken at record time. */
export class DeferredHookSignal {
  readonly point: string;
  /**
   * A private shallow copy without the call's `signal` (the payload itself when it is frozen and
   * has none), frozen when built.
   */
  readonly payload: Record<string, unknown>;
  readonly createdAt: number;

  constructor(point: string, payload: Record<string, unknown>) {
    this.point = point;
    this.payload = recordedPayload(payload, Object.isFrozen(payload));
    this.createdAt = Date.now();
  }

  /** The envelope `new HookSignal({ point, payload })` would have made at record time. */
  build(): HookSignal {
    return new HookSignal({
      point: this.point as HookPoint,
      payload: Object.freeze(this.payload),
      createdAt: this.createdAt,
    });
  }
}
