// The one place service hooks build deadlines. Tests replace the factory to control time, because
// fake timers do not reach AbortSignal.timeout in every runtime.

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
 * The longest delay every runtime's `setTimeout` honours (2^31 - 1 ms, about 24.8 days). Node,
 * Deno and Bun all turn a longer delay into 1 ms, so a longer deadline arms no timer at all.
 */
export const MAX_TIMER_MS = 2_147_483_647;

function timerDeadline(timeoutMs: number): Deadline {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let outer: AbortSignal | undefined;
  const onOuterAbort = () => {
    if (!controller.signal.aborted) controller.abort(outer?.reason);
  };
  return {
    signal: controller.signal,
    follow(signal: AbortSignal) {
      if (outer !== undefined) return;
      if (signal.aborted) {
        // Already aborted: take its reason now (`outer` is not set on this path).
        if (!controller.signal.aborted) controller.abort(signal.reason);
        return;
      }
      outer = signal;
      signal.addEventListener("abort", onOuterAbort, { once: true });
    },
    arm() {
      if (timer !== undefined || controller.signal.aborted) return;
      // Infinity, and anything setTimeout would overflow into a 1 ms timer, means "no deadline".
      if (!Number.isFinite(timeoutMs) || timeoutMs > MAX_TIMER_MS) return;
      timer = setTimeout(() => {
        timer = undefined;
        controller.abort(timeoutReason(timeoutMs));
      }, timeoutMs);
    },
    clear() {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      if (outer !== undefined) outer.removeEventListener("abort", onOuterAbort);
      outer = undefined;
    },
  };
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
