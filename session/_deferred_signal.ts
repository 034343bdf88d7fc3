// A recorded hook signal whose envelope is not built yet. An observer with nothing to deliver
// to (no subscription, route or gate) stores this instead of a `HookSignal`: the clock reading
// and a plain shallow copy of the payload are taken now; the envelope, the removal of the call's
// `signal` and the freeze when the event is first read (never, for an event evicted unread).

import { HookSignal } from "../hooks/hook_signal.ts";
import type { HookPoint } from "../hooks/hook_point.ts";

/** The parts of a `HookSignal` taken at record time. */
export class DeferredHookSignal {
  readonly point: string;
  readonly createdAt: number;
  /**
   * The payload as it was at record time: a private shallow copy, or the payload itself when it
   * is frozen. It may still hold the call's `signal`: a copy that leaves one property out costs
   * about three plain copies, so it is made when the envelope is built, for the events someone reads.
   */
  readonly #payload: Record<string, unknown>;

  constructor(point: string, payload: Record<string, unknown>) {
    this.point = point;
    this.#payload = Object.isFrozen(payload) ? payload : { ...payload };
    this.createdAt = Date.now();
  }

  /** The envelope `new HookSignal({ point, payload })` would have made at record time. */
  build(): HookSignal {
    return new HookSignal({
      point: this.point as HookPoint,
      // Frozen (the copy is private): `HookSignal` keeps it as it is when it holds no `signal`,
      // and otherwise records it without.
      payload: Object.freeze(this.#payload),
      createdAt: this.createdAt,
    });
  }
}
