/**
 * One deadline per request of `hookscope serve` without a timer per request: every request has
 * the same time limit, so they are due in the order they began; one timer, armed for the oldest
 * unfinished request, aborts every request past its time when it fires and is armed again for
 * the next. A request that finishes only marks itself (no timer to clear).
 *
 * @module
 */

import type { DeadlineSignal } from "../core/_async.ts";

interface Pending {
  readonly due: number;
  readonly controller: AbortController;
  finished: boolean;
}

/**
 * Request deadlines of one server.
 *
 * @example A request past its time is aborted with the given reason
 * ```ts
 * import { RequestDeadlines } from "./_request_deadlines.ts";
 * import assert from "node:assert/strict";
 *
 * const deadlines = new RequestDeadlines(20, () => new Error("too slow"));
 * const slow = deadlines.start();
 * const quick = deadlines.start();
 * quick.done();
 * await new Promise((resolve) => setTimeout(resolve, 60));
 * assert.equal(slow.signal.aborted, true);
 * assert.equal((slow.signal.reason as Error).message, "too slow");
 * assert.equal(quick.signal.aborted, false);
 * slow.done();
 * ```
 */
export class RequestDeadlines {
  readonly #ms: number;
  readonly #reason: () => unknown;
  #queue: Pending[] = [];
  #head = 0;
  #timer: ReturnType<typeof setTimeout> | undefined = undefined;
  /** While `#fire` walks the queue (an abort listener may finish requests meanwhile). */
  #firing = false;

  /** Deadlines of `ms` milliseconds; an overdue request aborts with `reason()`. */
  constructor(ms: number, reason: () => unknown) {
    this.#ms = ms;
    this.#reason = reason;
  }

  /** Requests begun and not yet finished or aborted (plus finished ones not yet dropped). */
  get size(): number {
    return this.#queue.length - this.#head;
  }

  /** A signal that aborts when the request began now is past its time; `done()` ends it. */
  start(): DeadlineSignal {
    const pending: Pending = {
      due: performance.now() + this.#ms,
      controller: new AbortController(),
      finished: false,
    };
    this.#queue.push(pending);
    if (this.#timer === undefined) this.#arm(this.#ms);
    return {
      signal: pending.controller.signal,
      done: () => {
        pending.finished = true;
        this.#drop();
      },
    };
  }

  /** Stops the timer (the server is closing); pending requests keep their signals. */
  close(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #arm(ms: number): void {
    this.#timer = setTimeout(() => this.#fire(), Math.max(1, Math.ceil(ms)));
  }

  /** Drops the finished requests at the head of the queue. */
  #drop(): void {
    if (this.#firing) return;
    const queue = this.#queue;
    while (this.#head < queue.length && queue[this.#head].finished) this.#head++;
    if (this.#head === queue.length) {
      this.#queue = [];
      this.#head = 0;
    } else if (this.#head > 1024 && this.#head * 2 > queue.length) {
      this.#queue = queue.slice(this.#head);
      this.#head = 0;
    }
  }

  #fire(): void {
    this.#timer = undefined;
    const now = performance.now();
    const queue = this.#queue;
    this.#firing = true;
    try {
      while (this.#head < queue.length) {
        const pending = queue[this.#head];
        if (!pending.finished) {
          if (pending.due > now) break;
          pending.finished = true;
          pending.controller.abort(this.#reason());
        }
        this.#head++;
      }
    } finally {
      this.#firing = false;
    }
    this.#drop();
    if (this.#head < this.#queue.length) this.#arm(this.#queue[this.#head].due - now);
  }
}
