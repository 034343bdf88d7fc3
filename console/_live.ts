// What wakes the console's live streams: the store's change stream. PostgreSQL has one
// (`subscribe`: LISTEN/NOTIFY, rows read back by change number); a SQLite file is polled with a
// probe that reads no rows (`PRAGMA data_version`); any other store is polled by reading. One
// feed per console serves every open page: it starts with the first stream and stops with the
// last.

import type { SessionStore } from "../store/session_store.ts";
import { changeMarkOf } from "../store/_change_mark.ts";

/** Wakes a stream: `sessions` changed (`null`: something changed, which is not known). */
export type Wake = (sessions: ReadonlySet<string> | null) => void;

/** How a feed learns of changes; see {@linkcode LiveFeed}. */
export type FeedKind = "notify" | "probe" | "poll";

/** Options of {@linkcode LiveFeed}. */
export interface LiveFeedOptions {
  /** How often SQLite's probe runs, or another store is read, in milliseconds (default 50). */
  readonly pollMs?: number;
  /**
   * With PostgreSQL, how often every stream wakes anyway, in milliseconds (default 1 000): run
   * records (answers, claims) are not in the change stream, only messages and signals are.
   */
  readonly fallbackMs?: number;
  /** Where a failing change stream is reported (it then polls). */
  readonly onError?: (error: unknown) => void;
}

interface Subscribable {
  subscribe(options: { signal?: AbortSignal }): AsyncIterable<{ sessionId?: string | null }> & {
    readonly ready: Promise<number>;
  };
}

function canSubscribe(store: SessionStore): store is SessionStore & Subscribable {
  return typeof (store as Partial<Subscribable>).subscribe === "function";
}

/** The console's one source of wake-ups, shared by its open streams. */
export class LiveFeed {
  readonly #store: SessionStore;
  readonly #pollMs: number;
  readonly #fallbackMs: number;
  readonly #onError: (error: unknown) => void;
  readonly #wakes = new Set<Wake>();
  #stop: (() => void) | null = null;
  #ready: Promise<void> = Promise.resolve();
  /** Sessions changed since the last delivery (`null`: unknown), and whether one is due. */
  #changed: Set<string> | null = new Set();
  #due = false;

  constructor(store: SessionStore, options: LiveFeedOptions = {}) {
    this.#store = store;
    this.#pollMs = options.pollMs ?? 50;
    this.#fallbackMs = options.fallbackMs ?? 1_000;
    this.#onError = options.onError ?? (() => {});
  }

  /** How this feed learns of changes for its store. */
  get kind(): FeedKind {
    if (canSubscribe(this.#store)) return "notify";
    return changeMarkOf(this.#store) !== undefined ? "probe" : "poll";
  }

  /** Adds a stream; resolves once the feed follows the store. Returns the removal. */
  async add(wake: Wake): Promise<() => void> {
    this.#wakes.add(wake);
    if (this.#stop === null) this.#ready = this.#start();
    await this.#ready;
    return () => {
      this.#wakes.delete(wake);
      if (this.#wakes.size === 0) this.#halt();
    };
  }

  /** Stops following the store (the open streams end on their own). */
  close(): void {
    this.#wakes.clear();
    this.#halt();
  }

  #halt(): void {
    const stop = this.#stop;
    this.#stop = null;
    stop?.();
  }

  /** Delivers the changes gathered so far to every stream, once per task. */
  #note(sessions: readonly (string | null | undefined)[] | null): void {
    if (sessions === null) this.#changed = null;
    else if (this.#changed !== null) {
      for (const id of sessions) if (typeof id === "string") this.#changed.add(id);
    }
    if (this.#due) return;
    this.#due = true;
    setTimeout(() => {
      this.#due = false;
      const changed = this.#changed;
      this.#changed = new Set();
      for (const wake of [...this.#wakes]) wake(changed);
    }, 0);
  }

  async #start(): Promise<void> {
    const store = this.#store;
    const timers: ReturnType<typeof setInterval>[] = [];
    const controller = new AbortController();
    this.#stop = () => {
      controller.abort();
      for (const timer of timers) clearInterval(timer);
    };
    const poll = (probe: (() => string) | undefined) => {
      let last = probe?.();
      timers.push(setInterval(() => {
        if (probe === undefined) return this.#note(null);
        let now: string;
        try {
          now = probe();
        } catch (error) {
          this.#onError(error);
          return;
        }
        if (now !== last) {
          last = now;
          this.#note(null);
        }
      }, this.#pollMs));
    };
    if (!canSubscribe(store)) {
      poll(changeMarkOf(store));
      return;
    }
    timers.push(setInterval(() => this.#note(null), this.#fallbackMs));
    let subscription: ReturnType<Subscribable["subscribe"]>;
    try {
      subscription = store.subscribe({ signal: controller.signal });
      await subscription.ready;
    } catch (error) {
      if (controller.signal.aborted) return;
      this.#onError(error);
      poll(undefined);
      return;
    }
    void (async () => {
      try {
        for await (const change of subscription) this.#note([change.sessionId]);
      } catch (error) {
        if (controller.signal.aborted) return;
        this.#onError(error);
        poll(undefined);
      }
    })();
  }
}
