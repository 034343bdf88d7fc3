/**
 * What {@linkcode PostgresStore.subscribe} yields: the messages and signals stored by any process,
 * in `changeSeq` order.
 *
 * @module
 */

import type { MessageRecord, SignalRow } from "../session_store.ts";

/**
 * One stored message or signal, as seen by a subscriber. `changeSeq` numbers every message and
 * signal of the store together, increasing (with gaps) in the order subscribers see them: a change
 * is delivered once every write that took its number earlier has committed or failed, so no new
 * change ever appears below one already seen. Pass the last one seen as `afterSeq` to resume
 * after it.
 *
 * @example Tell the two kinds apart
 * ```ts
 * import type { StoreChange } from "@hookscope/core/store/postgres";
 * import assert from "node:assert/strict";
 *
 * function describe(change: StoreChange): string {
 *   return change.type === "signal" ? `signal ${change.kind}` : `message ${change.role}`;
 * }
 * assert.equal(
 *   describe({ type: "signal", changeSeq: 7, seq: 1, sessionId: "s1", kind: "ToolDenied", opId: "", ts: 1, payload: {} }),
 *   "signal ToolDenied",
 * );
 * ```
 */
export type StoreChange =
  | ({ readonly type: "signal"; readonly changeSeq: number } & SignalRow)
  | ({ readonly type: "message"; readonly changeSeq: number } & MessageRecord);

/** Options of {@linkcode PostgresStore.subscribe}. */
export interface SubscribeOptions {
  /** Only this session's messages and signals (default: every session, and sessionless messages). */
  readonly sessionId?: string;
  /**
   * Start after this `changeSeq`: `0` replays everything stored, then follows live. Omitted: only
   * what is committed after the subscription has started listening (see `ready`).
   */
  readonly afterSeq?: number;
  /** Ends the iteration cleanly (the pending `next()` resolves `done`). */
  readonly signal?: AbortSignal;
}

/**
 * A live subscription: an async iterator of {@linkcode StoreChange}s that never ends on its own.
 * It ends when `return()` is called (a `break` out of `for await` calls it), when the caller's
 * signal aborts, or when the store closes; each of these stops listening.
 *
 * @example Iterate until aborted
 * ```ts
 * import type { StoreChange, StoreSubscription } from "@hookscope/core/store/postgres";
 *
 * async function firstSignals(subscription: StoreSubscription, n: number): Promise<StoreChange[]> {
 *   const seen: StoreChange[] = [];
 *   for await (const change of subscription) {
 *     if (change.type === "signal") seen.push(change);
 *     if (seen.length === n) break;
 *   }
 *   return seen;
 * }
 * void firstSignals;
 * ```
 */
export interface StoreSubscription extends AsyncIterable<StoreChange> {
  /**
   * Resolves with the `changeSeq` the subscription starts after, once it is listening: a change
   * committed after this resolves is always delivered. Rejects when it could not start.
   */
  readonly ready: Promise<number>;
  /** The next change; waits until one is committed. `done` once the subscription has ended. */
  next(): Promise<IteratorResult<StoreChange, undefined>>;
  /** Ends the subscription and stops listening. Idempotent. */
  return(): Promise<IteratorResult<StoreChange, undefined>>;
}
