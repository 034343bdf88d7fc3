// The one place service hooks build deadlines. Tests replace the factory to control time, because
// fake timers do not reach AbortSignal.timeout in every runtime.

import { MAX_TIMER_MS } from "../core/_async.ts";

/** A deadline: its signal aborts with a `TimeoutError` once armed and expired. */
export interface Deadline {
  /** Aborts when the deadline passes. */
  readonly signal: AbortSignal;
  /** Starts the clock (no timer exists before this is called). */
  arm(): void;
  /** Stops the clock; always call it when the guarded work settles. */
  clear(): void;
  /**
   * Makes `signal` abort too when `outer` aborts (with `outer`'s reason), until `clear()`. One
   * listener instead of an `AbortSignal.any` per run. Optional: without it callers combine
   * signals themselves.
   */
  follow?(outer: AbortSignal): void;
}

/** Makes a deadline of `timeoutMs` milliseconds. */
export type DeadlineFactory = (timeoutMs: number) => Deadline;

/** The timeout reason: a `DOMException` named `"TimeoutError"`. */
export function timeoutReason(timeoutMs: number): Error {
  return new DOMException(`Hook timed out after ${timeoutMs} ms`, "TimeoutError");
}

/**
 * The timer-based deadline: one object per guarded run and no closures; the timer exists only
 * once `arm()` is called (a synchronous handler never arms it).
 */
class TimerDeadline implements Deadline {
  readonly #controller = new AbortController();
  readonly #timeoutMs: number;
  #timer: ReturnType<typeof setTimeout> | undefined = undefined;
  #outer: AbortSignal | undefined = undefined;

  constructor(timeoutMs: number) {
    this.#timeoutMs = timeoutMs;
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  follow(signal: AbortSignal): void {
    if (this.#outer !== undefined) return;
    if (signal.aborted) {
      // Already aborted: take its reason now (`outer` is not set on this path).
      if (!this.#controller.signal.aborted) this.#controller.abort(signal.reason);
      return;
    }
    this.#outer = signal;
    signal.addEventListener("abort", this, { once: true });
  }

  /** The listener on the followed signal (the object itself: no closure per deadline). */
  handleEvent(): void {
    if (!this.#controller.signal.aborted) this.#controller.abort(this.#outer?.reason);
  }

  arm(): void {
    if (this.#timer !== undefined || this.#controller.signal.aborted) return;
    const timeoutMs = this.#timeoutMs;
    // Infinity, and anything setTimeout would overflow into a 1 ms timer, means "no deadline".
    if (!Number.isFinite(timeoutMs) || timeoutMs > MAX_TIMER_MS) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#controller.abort(timeoutReason(timeoutMs));
    }, timeoutMs);
  }

  clear(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#outer !== undefined) this.#outer.removeEventListener("abort", this);
    this.#outer = undefined;
  }
}

function timerDeadline(timeoutMs: number): Deadline {
  return new TimerDeadline(timeoutMs);
}

let factory: DeadlineFactory = timerDeadline;

/** Makes a deadline through the current factory. */
export function createDeadline(timeoutMs: number): Deadline {
  return factory(timeoutMs);
}

/** Replaces the factory (tests); `null` restores the timer-based default. */
export function setDeadlineFactory(next: DeadlineFactory | null): void {
  factory = next ?? timerDeadline;
}
