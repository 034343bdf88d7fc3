// Idle and overall deadlines of one endpoint call, with at most two timers per call (none
// re-created per read): the idle clock only runs while the call waits for the server.

/** Which limit fired. */
export type WatchdogKind = "idle" | "timeout";

/** The longest delay every runtime's `setTimeout` honours. */
const MAX_TIMER_MS = 2_147_483_647;

/** Deadlines of one call; `fire` runs at most once. */
export class Watchdog {
  #idleMs: number;
  #fire: (kind: WatchdogKind) => void;
  #waitingSince = -1;
  #idleTimer: ReturnType<typeof setTimeout> | undefined;
  #totalTimer: ReturnType<typeof setTimeout> | undefined;
  #done = false;

  /** Starts the overall clock (if `timeoutMs` is finite); the idle clock starts at `wait()`. */
  constructor(idleMs: number, timeoutMs: number | undefined, fire: (kind: WatchdogKind) => void) {
    this.#idleMs = idleMs;
    this.#fire = fire;
    if (timeoutMs !== undefined && Number.isFinite(timeoutMs) && timeoutMs <= MAX_TIMER_MS) {
      this.#totalTimer = setTimeout(() => this.#trip("timeout"), timeoutMs);
    }
  }

  /** The call now waits for the server (the response start or the next bytes). */
  wait(): void {
    if (this.#done) return;
    this.#waitingSince = Date.now();
    if (this.#idleTimer === undefined) this.#arm(this.#idleMs);
  }

  /** The server answered; the idle clock pauses until the next `wait()`. */
  received(): void {
    this.#waitingSince = -1;
  }

  /** Stops both clocks. */
  stop(): void {
    this.#done = true;
    if (this.#idleTimer !== undefined) clearTimeout(this.#idleTimer);
    if (this.#totalTimer !== undefined) clearTimeout(this.#totalTimer);
    this.#idleTimer = undefined;
    this.#totalTimer = undefined;
  }

  #arm(delay: number): void {
    if (!Number.isFinite(this.#idleMs) || this.#idleMs > MAX_TIMER_MS) return;
    this.#idleTimer = setTimeout(() => {
      this.#idleTimer = undefined;
      if (this.#done || this.#waitingSince < 0) return;
      const waited = Date.now() - this.#waitingSince;
      if (waited >= this.#idleMs) this.#trip("idle");
      else this.#arm(this.#idleMs - waited);
    }, Math.max(1, delay));
  }

  #trip(kind: WatchdogKind): void {
    if (this.#done) return;
    this.stop();
    this.#fire(kind);
  }
}
