/**
 * A write-behind view of a session store for `hookscope serve`: it answers first and records
 * after, so the writes an event makes (the session row, the `tool.pre` signal, the decision)
 * resolve at once and reach the store in order on one queue, on a later turn of the event loop
 * (after the answer is sent), while reads wait for the writes queued before them (an event
 * reads what earlier events wrote).
 *
 * @module
 */

import { setImmediate } from "node:timers";
import type { SessionStore } from "../store/session_store.ts";

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** The store methods that only write and resolve to nothing: these may run behind the answer. */
const WRITES: ReadonlySet<string> = new Set([
  "createSession",
  "updateSession",
  "touchSessionActivity",
  "updateBranch",
  "insertMessage",
  "appendToSequence",
  "insertSessionSignal",
  "saveRun",
]);

/** One event's view of the queue: its store, and the promise of its writes. */
export interface WriteBehindView {
  /** The store to give the event's session: writes are queued, reads wait for the queue. */
  readonly store: SessionStore;
  /** Resolves once every write this view queued is stored; rejects with the first failure. */
  settled(): Promise<void>;
}

/**
 * One ordered queue of writes in front of `store`. While more than `maxQueued` writes wait, a
 * write is awaited by its caller as without the queue (back pressure: the queue never grows
 * without bound, and a slow store slows the answers instead of filling the memory).
 *
 * @example Writes resolve at once; a read sees them
 * ```ts
 * import { MemoryStore } from "../store/memory_store.ts";
 * import { WriteBehind } from "./_write_behind.ts";
 * import assert from "node:assert/strict";
 *
 * const queue = new WriteBehind(new MemoryStore());
 * const view = queue.view();
 * await view.store.createSession({ id: "s1", status: "created" } as never);
 * assert.equal((await view.store.getSession("s1"))?.id, "s1");
 * await view.settled();
 * ```
 */
export class WriteBehind {
  readonly #store: SessionStore;
  readonly #maxQueued: number;
  #tail: Promise<unknown> = Promise.resolve();
  #queued = 0;

  /** Makes the queue in front of `store`. */
  constructor(store: SessionStore, maxQueued = 1_000) {
    this.#store = store;
    this.#maxQueued = maxQueued;
  }

  /** Writes waiting now. */
  get queued(): number {
    return this.#queued;
  }

  /** Resolves once every write queued so far has been tried. */
  async drained(): Promise<void> {
    await this.#tail.catch(() => {});
  }

  /** A view for one event. */
  view(): WriteBehindView {
    const writes: Promise<unknown>[] = [];
    const store = this.#store;
    const proxy = new Proxy(store, {
      get: (target, key, receiver) => {
        const value = Reflect.get(target, key, receiver);
        if (typeof value !== "function" || typeof key !== "string") return value;
        if (WRITES.has(key)) {
          return (...args: unknown[]) => {
            // After a macrotask: a synchronous driver (SQLite) then blocks the loop only once
            // the answer has been sent, not before.
            const write = this.#tail.catch(() => {}).then(nextTurn).then(() =>
              value.apply(target, args)
            );
            this.#tail = write;
            this.#queued++;
            const done = write.finally(() => this.#queued--);
            writes.push(done);
            done.catch(() => {}); // reported through settled()
            return this.#queued > this.#maxQueued ? done.then(() => {}) : Promise.resolve();
          };
        }
        return async (...args: unknown[]) => {
          await this.#tail.catch(() => {});
          return await value.apply(target, args);
        };
      },
    });
    return {
      store: proxy,
      settled: async () => {
        await Promise.all(writes);
      },
    };
  }
}
