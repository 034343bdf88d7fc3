// The live subscription behind PostgresStore.subscribe: LISTEN for "something was committed"
// notifications (they carry the last change number and the sessions touched, never rows), then
// read the rows back by change number. Notifications only wake the reader, so one that is
// coalesced or lost (a listen connection that reconnects) loses nothing: the next read starts at
// the last change delivered. A slow poll covers a notification that never comes.

import type { StoreChange, StoreSubscription } from "./store_change.ts";

/** What a subscription needs from its store. */
export interface SubscriptionSource {
  /** Starts listening; `onListen` runs on every (re)connection of the listener. */
  listen(
    onNotify: (payload: string) => void,
    onListen: () => void,
  ): Promise<{ unlisten(): Promise<void> }>;
  /** The last committed change number. */
  head(): Promise<number>;
  /** Up to `limit` changes after `cursor`, in change order, of one session when given. */
  read(cursor: number, limit: number, sessionId: string | undefined): Promise<StoreChange[]>;
  /** Called when the subscription has ended, to forget it. */
  ended(subscription: PgSubscription): void;
}

const PAGE = 500;

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
  #ended = false;
  #wake: (() => void) | null = null;
  #listener: { unlisten(): Promise<void> } | null = null;
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
      () => this.#poke(),
    );
    if (this.#ended) {
      await listener.unlisten().catch(() => {});
      return afterSeq ?? 0;
    }
    this.#listener = listener;
    this.#cursor = afterSeq ?? await this.#source.head();
    return this.#cursor;
  }

  /**
   * Listens again through the store's current pool (the old one is being ended) and reads, in
   * case something was committed in between. Failures leave the slow poll in charge.
   */
  async relisten(): Promise<void> {
    if (this.#ended || this.#listener === null) return;
    const old = this.#listener;
    try {
      const listener = await this.#source.listen(
        (payload) => this.#notified(payload),
        () => this.#poke(),
      );
      if (this.#ended) {
        await listener.unlisten().catch(() => {});
        return;
      }
      this.#listener = listener;
    } catch { /* the poll still reads */ }
    await old.unlisten().catch(() => {});
    this.#poke();
  }

  #notified(payload: string): void {
    if (this.#sessionId !== undefined) {
      try {
        const parsed = JSON.parse(payload) as { s?: unknown };
        if (Array.isArray(parsed.s) && !parsed.s.includes(this.#sessionId)) return;
      } catch { /* not ours to judge: read */ }
    }
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
        try {
          rows = await this.#source.read(this.#cursor, PAGE, this.#sessionId);
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
        continue;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          this.#wake = null;
          this.#dirty = true;
          resolve();
        }, this.#pollMs);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  async return(): Promise<IteratorResult<StoreChange, undefined>> {
    if (!this.#ended) {
      this.#ended = true;
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
