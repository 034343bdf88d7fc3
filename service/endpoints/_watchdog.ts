// Idle and overall deadlines of one endpoint call, with at most two timers per call (none
// re-created per read). The idle clock runs only while the call waits for the server, and only
// useful progress (`progress()`) sets it back to zero: bytes that carry nothing (SSE comments,
// keep-alive pings, empty events, whitespace) pause it while they are handled but do not reset it.

import { MAX_TIMER_MS } from "../../core/_async.ts";

/** Which limit fired. */
export type WatchdogKind = "idle" | "timeout";

/**
 * A deadline must never keep the process alive by itself: a call whose stream the caller drops
 * without cancelling it would otherwise hold Node and Bun open until the overall limit (10 min).
 * Node's and Bun's timers have `unref()`; elsewhere (Deno, Workers, browsers) this is a no-op.
 */
function unref(timer: ReturnType<typeof setTimeout>): ReturnType<typeof setTimeout> {
  const handle = timer as unknown as { unref?: () => unknown };
  if (typeof handle === "object" && handle !== null && typeof handle.unref === "function") {
    handle.unref();
  }
  return timer;
}

/** Deadlines of one call; `fire` runs at most once. */
export class Watchdog {
  #idleMs: number;
  #fire: (kind: WatchdogKind) => void;
  /** When the current wait began, or -1 while the call is not waiting. */
  #waitingSince = -1;
  /** Time spent waiting since the last useful progress, not counting the current wait. */
  #waited = 0;
  #idleTimer: ReturnType<typeof setTimeout> | undefined;
  #totalTimer: ReturnType<typeof setTimeout> | undefined;
  #done = false;

  /** Starts the overall clock (if `timeoutMs` is finite); the idle clock starts at `wait()`. */
  constructor(idleMs: number, timeoutMs: number | undefined, fire: (kind: WatchdogKind) => void) {
    this.#idleMs = idleMs;
    this.#fire = fire;
    if (timeoutMs !== undefined && Number.isFinite(timeoutMs) && timeoutMs <= MAX_TIMER_MS) {
      this.#totalTimer = unref(setTimeout(() => this.#trip("timeout"), timeoutMs));
    }
  }

  /** The call now waits for the server (the response start or the next bytes). */
  wait(): void {
    if (this.#done || this.#waitingSince >= 0) return;
    this.#waitingSince = Date.now();
    if (this.#idleTimer === undefined) this.#arm(this.#idleMs - this.#waited);
  }

  /**
   * The server sent something; the idle clock pauses until the next `wait()` but keeps the time
   * waited so far (bytes are not progress by themselves).
   */
  received(): void {
    if (this.#waitingSince < 0) return;
    this.#waited += Date.now() - this.#waitingSince;
    this.#waitingSince = -1;
  }

  /** Useful progress (a response, a data event, a non-blank piece of a body): idle time is zero. */
  progress(): void {
    this.#waited = 0;
    if (this.#waitingSince >= 0) this.#waitingSince = Date.now();
  }

  /** Stops both clocks. */
  stop(): void {
    this.#done = true;
    if (this.#idleTimer !== undefined) clearTimeout(this.#idleTimer);
    if (this.#totalTimer !== undefined) clearTimeout(this.#totalTimer);
    this.#idleTimer = undefined;
    this.#totalTimer = undefined;
  }

  /** Idle time so far: the finished waits since the last progress plus the current one. */
  #idleSoFar(): number {
    return this.#waited + (this.#waitingSince < 0 ? 0 : Date.now() - this.#waitingSince);
  }

  #arm(delay: number): void {
    if (!Number.isFinite(this.#idleMs) || this.#idleMs > MAX_TIMER_MS) return;
    this.#idleTimer = unref(setTimeout(() => {
      this.#idleTimer = undefined;
      if (this.#done || this.#waitingSince < 0) return;
      const idle = this.#idleSoFar();
      if (idle >= this.#idleMs) this.#trip("idle");
      else this.#arm(this.#idleMs - idle);
    }, Math.max(1, delay)));
  }

  #trip(kind: WatchdogKind): void {
    if (this.#done) return;
    this.stop();
    this.#fire(kind);
  }
}
