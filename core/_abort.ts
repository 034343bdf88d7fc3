// Private AbortSignal helpers for every runtime the web-standard entries run on.
//
// - Nothing here runs at module load: workerd refuses a Worker that creates an AbortController
//   (or a timer, or random values) in global scope, so the never-aborted signal is made on first
//   use.
// - `AbortSignal.any` and `AbortSignal.timeout` are missing in some edge runtimes (the Vercel Edge
//   runtime emulator, older workerd compatibility dates): the fallbacks below stand in for them,
//   checked at call time so a polyfill installed later is picked up.

let never: AbortSignal | undefined;

/** A signal that never aborts, shared, created on first use (never at module load). */
export function neverAborted(): AbortSignal {
  return never ??= new AbortController().signal;
}

type AnyFn = (signals: Iterable<AbortSignal>) => AbortSignal;
type TimeoutFn = (ms: number) => AbortSignal;

/**
 * A signal that aborts when any of `signals` aborts, with that signal's reason: the native
 * `AbortSignal.any` where it exists, else a listener on each source that is removed once the
 * combined signal aborts.
 */
export function anySignal(signals: readonly AbortSignal[]): AbortSignal {
  const native = (AbortSignal as unknown as { any?: AnyFn }).any;
  if (typeof native === "function") return native.call(AbortSignal, signals);
  const controller = new AbortController();
  for (const signal of signals) {
    if (signal.aborted) {
      controller.abort(signal.reason);
      return controller.signal;
    }
  }
  const onAbort = (event: Event) => {
    for (const signal of signals) signal.removeEventListener("abort", onAbort);
    controller.abort((event.target as AbortSignal).reason);
  };
  for (const signal of signals) signal.addEventListener("abort", onAbort, { once: true });
  return controller.signal;
}

/**
 * A signal that aborts with a `TimeoutError` `DOMException` after `ms` milliseconds: the native
 * `AbortSignal.timeout` where it exists, else a timer.
 */
export function timeoutSignal(ms: number): AbortSignal {
  const native = (AbortSignal as unknown as { timeout?: TimeoutFn }).timeout;
  if (typeof native === "function") return native.call(AbortSignal, ms);
  const controller = new AbortController();
  setTimeout(() => {
    controller.abort(new DOMException("The operation timed out.", "TimeoutError"));
  }, ms);
  return controller.signal;
}

/**
 * Whether `value` is an AbortSignal, also one from another realm (an iframe, or the host's
 * `Request.signal` inside the Edge runtime emulator), where `instanceof AbortSignal` is false.
 */
export function isAbortSignal(value: unknown): value is AbortSignal {
  if (value instanceof AbortSignal) return true;
  return typeof value === "object" && value !== null &&
    Object.prototype.toString.call(value) === "[object AbortSignal]" &&
    typeof (value as AbortSignal).aborted === "boolean" &&
    typeof (value as AbortSignal).addEventListener === "function" &&
    typeof (value as AbortSignal).removeEventListener === "function";
}
