// One act operation's abort and deadline: the caller's signal and `timeoutMs` become one
// internal signal that every awaited step of the act path honours, and a rejection that names
// the step that was still running. Nothing is created when neither is given.

import { MAX_TIMER_MS } from "../core/_async.ts";
import { HookTimeoutError } from "../hooks/errors.ts";
import { isHookPoint } from "../hooks/hook_point.ts";

/** The deadline error of an operation; hooks turn it into a HookTimeoutError. */
export interface DeadlineReason extends Error {
  /** The operation's deadline. */
  readonly timeoutMs: number;
}

/** The abort/deadline state of one act. */
export class ActDeadline {
  readonly #controller: AbortController | null;
  readonly #timeoutMs: number | undefined;
  readonly #caller: AbortSignal | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined = undefined;
  #armed = false;
  #aborted: Promise<never> | null = null;
  #onCallerAbort: (() => void) | null = null;
  #step = "start";
  readonly #started: number;

  constructor(signal: AbortSignal | undefined, timeoutMs: number | undefined) {
    this.#caller = signal;
    this.#timeoutMs = timeoutMs;
    this.#started = timeoutMs === undefined ? 0 : Date.now();
    if (signal === undefined && timeoutMs === undefined) {
      this.#controller = null;
      return;
    }
    const controller = new AbortController();
    this.#controller = controller;
    if (signal !== undefined) {
      if (signal.aborted) controller.abort(signal.reason);
      else {
        const onAbort = (): void => controller.abort(signal.reason);
        this.#onCallerAbort = onAbort;
        signal.addEventListener("abort", onAbort, { once: true });
      }
    }
  }

  /** The operation's signal (aborts on the caller's abort or the deadline), if it has one. */
  get signal(): AbortSignal | undefined {
    return this.#controller?.signal;
  }

  /** The step running now (for error messages). */
  get step(): string {
    return this.#step;
  }

  /** Whether the operation was aborted or missed its deadline. */
  get aborted(): boolean {
    return this.#controller?.signal.aborted ?? false;
  }

  /**
   * Waits for `pending` while the operation lasts: an abort or the deadline rejects at once with
   * an error naming `step`. `trusted` steps (the hook bus, which honours the signal itself and
   * names the hook) are not raced.
   */
  run<T>(step: string, pending: Promise<T>, trusted = false): Promise<T> {
    this.#step = step;
    const controller = this.#controller;
    if (controller === null) return pending;
    this.#arm();
    if (controller.signal.aborted) {
      pending.catch(() => {});
      return Promise.reject(this.#error(step));
    }
    if (trusted) return pending;
    this.#aborted ??= this.#makeAborted(controller.signal);
    return Promise.race([pending, this.#aborted]);
  }

  /** Throws the step error when the operation is already aborted. */
  check(step: string): void {
    this.#step = step;
    if (this.aborted) throw this.#error(step);
  }

  /** Releases the timer and the caller's listener. */
  finish(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    if (this.#onCallerAbort !== null) {
      this.#caller!.removeEventListener("abort", this.#onCallerAbort);
    }
  }

  /** The error naming the step the operation stopped in. */
  #error(step: string): Error {
    const reason = this.#controller?.signal.reason;
    if (isDeadline(reason) && isHookPoint(step)) {
      return new HookTimeoutError(step, reason.timeoutMs, undefined, { cause: reason });
    }
    if (isDeadline(reason)) {
      const error = new DOMException(
        `Cannot finish act: the ${reason.timeoutMs} ms deadline passed during ${step}`,
        "TimeoutError",
      );
      Object.defineProperty(error, "step", { value: step, enumerable: true });
      Object.defineProperty(error, "cause", { value: reason });
      return error;
    }
    const detail = reason instanceof Error ? reason.message : String(reason);
    const error = new DOMException(
      `Cannot finish act: aborted during ${step} (${detail})`,
      "AbortError",
    );
    Object.defineProperty(error, "step", { value: step, enumerable: true });
    Object.defineProperty(error, "cause", { value: reason });
    return error;
  }

  #arm(): void {
    if (this.#armed) return;
    this.#armed = true;
    const ms = this.#timeoutMs;
    // Infinity is no deadline: setTimeout would fire it (or anything above MAX_TIMER_MS) at once.
    if (ms === undefined || ms > MAX_TIMER_MS || this.#controller === null) return;
    const controller = this.#controller;
    const left = Math.max(0, ms - (Date.now() - this.#started));
    this.#timer = setTimeout(() => {
      const reason = new DOMException(
        `The ${ms} ms deadline of the act passed`,
        "TimeoutError",
      ) as unknown as DeadlineReason;
      Object.defineProperty(reason, "timeoutMs", { value: ms, enumerable: true });
      controller.abort(reason);
    }, left);
  }

  #makeAborted(signal: AbortSignal): Promise<never> {
    const aborted = new Promise<never>((_, reject) => {
      signal.addEventListener("abort", () => reject(this.#error(this.#step)), { once: true });
    });
    aborted.catch(() => {});
    return aborted;
  }
}

/** Whether a value is an operation's deadline reason. */
export function isDeadline(value: unknown): value is DeadlineReason {
  return value instanceof Error && value.name === "TimeoutError" &&
    typeof (value as { timeoutMs?: unknown }).timeoutMs === "number";
}
