// The library's one async kit: waiting for a promise no longer than a caller's signal
// (`abortable`) or a deadline (`deadline`), a signal of its own for work that takes a signal
// (`deadlineSignal`), waiting a while (`delay`) and trying again (`retry`). Private to the
// library; every wait with a deadline or a signal goes through here.
//
// Rules every helper keeps: at most one timer per wait, created only when there is something to
// wait for (`deadline` arms it a microtask later, so a promise already settled arms none) and
// cleared as soon as anything settles; the signal listener is removed the same way;
// an already aborted signal rejects at once with its reason (and the promise it no longer waits
// for is marked handled); a delay above what every runtime's
// `setTimeout` honours (2^31 - 1 ms; Node, Deno and Bun turn a longer one into 1 ms) arms no
// timer at all (it means "no deadline"). Nothing runs at module load.

import { isThenable } from "./_util.ts";

/** Why a `deadline` wait ended early, when the caller gave no reason of its own. */
export const TIMED_OUT: unique symbol = Symbol("timed out");

/** The longest delay every runtime's `setTimeout` honours (2^31 - 1 ms, about 24.8 days). */
export const MAX_TIMER_MS = 2_147_483_647;

/**
 * Resolves or rejects like `pending`, unless `ms` pass first (then rejects with `timeout()` when
 * given, else {@linkcode TIMED_OUT}) or `signal` aborts (then rejects with its reason). `ms` of
 * `Infinity` (or above {@linkcode MAX_TIMER_MS}) waits without a deadline. The loser is ignored.
 */
export function deadline<T>(
  pending: PromiseLike<T>,
  ms: number,
  signal?: AbortSignal,
  timeout?: () => unknown,
): Promise<T> {
  if (signal?.aborted) {
    pending.then(undefined, ignore);
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let settled = false;
    const onAbort = (): void => {
      done();
      reject(signal!.reason);
    };
    const done = (): void => {
      settled = true;
      if (timer !== undefined) clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    pending.then((value) => {
      done();
      resolve(value);
    }, (error) => {
      done();
      reject(error);
    });
    if (ms <= MAX_TIMER_MS) {
      // Armed a microtask later, and only if `pending` is still pending then: a promise that is
      // already settled (an `async` hook that returned without waiting, such as persistMessage
      // without a store) has run its reaction by then and costs no timer. Its outcome is the same
      // either way: no timer fires before the microtasks queued now.
      queueMicrotask(() => {
        if (settled) return;
        timer = setTimeout(() => {
          done();
          reject(timeout === undefined ? TIMED_OUT : timeout());
        }, ms);
      });
    }
  });
}

/**
 * Resolves or rejects like `pending`, or rejects with `signal`'s reason once it aborts. Without
 * a signal it is `pending` itself (as a promise).
 */
export function abortable<T>(pending: PromiseLike<T>, signal?: AbortSignal): Promise<T> {
  if (signal === undefined) return Promise.resolve(pending);
  return deadline(pending, Infinity, signal);
}

/** A signal of its own for one bounded piece of work, made by {@linkcode deadlineSignal}. */
export interface DeadlineSignal {
  /** Aborts once the time is up or the caller's signal aborts. */
  readonly signal: AbortSignal;
  /** Clears the timer and the listener on the caller's signal; call it when the work ends. */
  done(): void;
}

/** Options of {@linkcode deadlineSignal}. */
export interface DeadlineSignalOptions {
  /**
   * Whether the timer may not keep the process alive by itself (Node's and Bun's `unref()`; a
   * no-op elsewhere). Default: it keeps it alive, so the deadline is sure to fire.
   */
  readonly unref?: boolean;
}

/**
 * A signal that aborts after `ms` (with `timeout()` when given, else a `TimeoutError`
 * `DOMException`) or when `signal` aborts (with its reason, at once when it already has): for
 * work that takes a signal itself, such as `fetch` or a hook. `ms` of `Infinity` (or above
 * {@linkcode MAX_TIMER_MS}) arms no timer.
 */
export function deadlineSignal(
  ms: number,
  signal?: AbortSignal,
  timeout?: () => unknown,
  options?: DeadlineSignalOptions,
): DeadlineSignal {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const onAbort = (): void => {
    if (timer !== undefined) clearTimeout(timer);
    controller.abort(signal!.reason);
  };
  if (signal?.aborted) {
    controller.abort(signal.reason);
    return { signal: controller.signal, done: ignore };
  }
  if (ms <= MAX_TIMER_MS) {
    timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      controller.abort(
        timeout === undefined
          ? new DOMException("The operation timed out.", "TimeoutError")
          : timeout(),
      );
    }, ms);
    if (options?.unref === true) {
      (timer as unknown as { unref?: () => unknown }).unref?.();
    }
  }
  signal?.addEventListener("abort", onAbort, { once: true });
  return {
    signal: controller.signal,
    done: () => {
      if (timer !== undefined) clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    },
  };
}

/**
 * Waits `ms` milliseconds, or until `signal` aborts (then rejects with its reason). A delay of
 * zero or less resolves at once; one above {@linkcode MAX_TIMER_MS} waits for the signal only.
 */
export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  if (!(ms > 0)) return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const onAbort = (): void => {
      if (timer !== undefined) clearTimeout(timer);
      reject(signal!.reason);
    };
    if (ms <= MAX_TIMER_MS) {
      timer = setTimeout(() => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      }, ms);
    }
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Options of {@linkcode retry}. */
export interface RetryOptions {
  /** How many attempts in all (at least 1). */
  readonly attempts: number;
  /** The wait before attempt `n + 1` (n counts from 1), in milliseconds. Default: none. */
  readonly delayMs?: number | ((attempt: number, error: unknown) => number);
  /** Whether a failure is worth another attempt. Default: every failure is. */
  readonly retryIf?: (error: unknown, attempt: number) => boolean;
  /** Stops waiting and trying, also during an attempt: rejects with its reason. */
  readonly signal?: AbortSignal;
}

/**
 * Runs `attempt(n)` (n from 1) until it resolves, a failure is not worth retrying, or
 * `options.attempts` attempts failed (`Infinity`: until `retryIf` refuses); then rejects with the
 * last failure. An abort of `options.signal` rejects with its reason at once, between attempts or
 * during one (the attempt is then no longer waited for).
 */
export async function retry<T>(
  attempt: (n: number) => Promise<T> | T,
  options: RetryOptions,
): Promise<T> {
  const attempts = Math.max(1, Math.floor(options.attempts));
  const signal = options.signal;
  for (let n = 1;; n++) {
    if (signal?.aborted) throw signal.reason;
    try {
      const result = attempt(n);
      return await (signal === undefined || !isThenable(result)
        ? result
        : abortable(result as PromiseLike<T>, signal));
    } catch (error) {
      if (signal?.aborted && error === signal.reason) throw error;
      if (n >= attempts || (options.retryIf !== undefined && !options.retryIf(error, n))) {
        throw error;
      }
      const wait = typeof options.delayMs === "function"
        ? options.delayMs(n, error)
        : options.delayMs ?? 0;
      await delay(wait, signal);
    }
  }
}

function ignore(): void {}
