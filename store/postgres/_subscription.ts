// The live subscription behind PostgresStore.subscribe: LISTEN for "something was committed"
// notifications (they carry the last change number and the sessions touched, never rows), then
// read the rows back by change number. Notifications only wake the reader, so one that is
// coalesced or lost (a listen connection that reconnects) loses nothing: the next read starts at
// the last change delivered. A slow poll covers a notification that never comes.
// Reads stop at the store's horizon, below which no new change can appear; a change that was
// notified but still lies above it (an older write of another process is still committing) is
// read again shortly, with a growing pause, until the horizon has passed it.

import type { StoreChange, StoreSubscription } from "./store_change.ts";
import { LATE_READ_MS } from "./_notifier.ts";

/** What a subscription needs from its store. */
export interface SubscriptionSource {
  /** Starts listening; `onListen` runs on every (re)connection of the listener. */
  listen(
    onNotify: (payload: string) => void,
    onListen: () => void,
  ): Promise<{ unlisten(): Promise<void> }>;
  /** The change number after which every later change will be delivered. */
  head(): Promise<number>;
  /**
   * Up to `limit` changes after `cursor` and below `horizon`, in change order, of one session when
   * given; no change below the returned `horizon` can appear later.
   */
  read(
    cursor: number,
    limit: number,
    sessionId: string | undefined,
  ): Promise<{ changes: StoreChange[]; horizon: number }>;
  /** Called when the subscription has ended, to forget it. */
  ended(subscription: PgSubscription): void;
}

const PAGE = 500;
const FIRST_RETRY_MS = 2;

/** A running subscription (see {@linkcode StoreSubscription}). */
export class PgSubscription implements StoreSubscription {
  readonly ready: Promise<number>;
  #source: SubscriptionSource;
  #sessionId: string | undefined;
  #signal: AbortSignal | undefined;
  #pollMs: number;
  #cursor = 0;
  #buffer: StoreChange[] = [];
  #dirty = true;
  #notifiedTo = 0;
  #retryMs = FIRST_RETRY_MS;
  #ended = false;
  #wake: (() => void) | null = null;
  #listener: { unlisten(): Promise<void> } | null = null;
  #late: ReturnType<typeof setTimeout> | undefined;
  #chain: Promise<unknown> = Promise.resolve();
  #onAbort = (): void => {
    void this.return();
  };

  constructor(
    source: SubscriptionSource,
    options: { sessionId?: string; afterSeq?: number; signal?: AbortSignal; pollMs: number },
  ) {
    this.#source = source;
    this.#sessionId = options.sessionId;
    this.#signal = options.signal;
    this.#pollMs = options.pollMs;
    this.ready = this.#start(options.afterSeq);
    // A failed start is reported by next(); keep it from being an unhandled rejection.
    this.ready.catch(() => {});
    this.#signal?.addEventListener("abort", this.#onAbort, { once: true });
    if (this.#signal?.aborted) void this.return();
  }

  async #start(afterSeq: number | undefined): Promise<number> {
    const listener = await this.#source.listen(
      (payload) => this.#notified(payload),
      () => {
        this.#poke();
        this.#readLater();
      },
    );
    if (this.#ended) {
      await listener.unlisten().catch(() => {});
      return afterSeq ?? 0;
    }
    this.#listener = listener;
    this.#readLater();
    this.#cursor = afterSeq ?? await this.#source.head();
    return this.#cursor;
  }

  /**
   * Reads once more {@linkcode LATE_READ_MS} after listening started: a writer that found no
   * listener just before this one connected sends no notification for a moment (_notifier.ts).
   */
  #readLater(): void {
    clearTimeout(this.#late);
    this.#late = setTimeout(() => {
      this.#late = undefined;
      if (!this.#ended) this.#poke();
    }, LATE_READ_MS);
  }

  #notified(payload: string): void {
    try {
      const parsed = JSON.parse(payload) as { s?: unknown; to?: unknown };
      if (
        this.#sessionId !== undefined && Array.isArray(parsed.s) &&
        !parsed.s.includes(this.#sessionId)
      ) return;
      if (typeof parsed.to === "number") this.#notifiedTo = Math.max(this.#notifiedTo, parsed.to);
    } catch { /* not ours to judge: read */ }
    this.#poke();
  }

  #poke(): void {
    this.#dirty = true;
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<StoreChange, undefined>> {
    // Calls are served one at a time, in call order.
    const result = this.#chain.then(() => this.#next());
    this.#chain = result.catch(() => {});
    return result;
  }

  async #next(): Promise<IteratorResult<StoreChange, undefined>> {
    await this.ready;
    for (;;) {
      if (this.#ended) return { done: true, value: undefined };
      const change = this.#buffer.shift();
      if (change !== undefined) return { done: false, value: change };
      if (this.#dirty) {
        this.#dirty = false;
        let rows: StoreChange[];
        let horizon: number;
        try {
          ({ changes: rows, horizon } = await this.#source.read(
            this.#cursor,
            PAGE,
            this.#sessionId,
          ));
        } catch (error) {
          if (this.#ended) return { done: true, value: undefined };
          this.#dirty = true;
          throw error;
        }
        if (this.#ended) return { done: true, value: undefined };
        if (rows.length > 0) {
          this.#buffer = rows;
          this.#cursor = rows[rows.length - 1].changeSeq;
        }
        if (rows.length === PAGE) this.#dirty = true;
        // A notified change is still above the horizon: look again soon.
        if (horizon <= this.#notifiedTo) {
          this.#dirty = true;
          if (rows.length === 0) {
            await this.#pause(this.#retryMs);
            this.#retryMs = Math.min(this.#retryMs * 2, this.#pollMs);
          }
        } else {
          this.#retryMs = FIRST_RETRY_MS;
        }
        continue;
      }
      await this.#pause(this.#pollMs);
    }
  }

  /** Waits `ms` or until poked; either way the next round reads. */
  #pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.#wake = null;
        this.#dirty = true;
        resolve();
      }, ms);
      this.#wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  async return(): Promise<IteratorResult<StoreChange, undefined>> {
    if (!this.#ended) {
      this.#ended = true;
      clearTimeout(this.#late);
      this.#buffer = [];
      this.#signal?.removeEventListener("abort", this.#onAbort);
      const wake = this.#wake;
      this.#wake = null;
      wake?.();
      const listener = this.#listener;
      this.#listener = null;
      this.#source.ended(this);
      if (listener !== null) await listener.unlisten().catch(() => {});
    }
    return { done: true, value: undefined };
  }
}
