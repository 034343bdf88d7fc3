// A small write queue: while one batch is in flight, later writes wait and go out together in the
// next batch (one multi-row statement). Each caller's promise settles with its own batch.

/** One queued write with the promise callbacks of its caller. */
export interface Queued<T> {
  readonly item: T;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/** Sends batches through `flush`, at most `inFlight` at a time, at most `maxBatch` items each. */
export class WriteQueue<T> {
  #flush: (items: readonly T[]) => Promise<void>;
  #maxBatch: number;
  #maxInFlight: number;
  #pending: Queued<T>[] = [];
  #inFlight = 0;
  #scheduled = false;
  #idle: Array<() => void> = [];
  /** Batches sent so far (for measurements). */
  batches = 0;
  /** Items sent so far (for measurements). */
  items = 0;

  constructor(
    flush: (items: readonly T[]) => Promise<void>,
    options: { maxBatch: number; inFlight: number },
  ) {
    this.#flush = flush;
    this.#maxBatch = options.maxBatch;
    this.#maxInFlight = options.inFlight;
  }

  /** Queues one write; settles when the batch holding it is committed or has failed. */
  push(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#pending.push({ item, resolve, reject });
      // Writes issued in the same tick (Promise.all over many inserts) join one batch.
      if (!this.#scheduled) {
        this.#scheduled = true;
        queueMicrotask(() => {
          this.#scheduled = false;
          this.#pump();
        });
      }
    });
  }

  /** Resolves once nothing is queued or in flight. */
  drain(): Promise<void> {
    if (this.#pending.length === 0 && this.#inFlight === 0 && !this.#scheduled) {
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => this.#idle.push(resolve));
  }

  #pump(): void {
    while (this.#pending.length > 0 && this.#inFlight < this.#maxInFlight) {
      const batch = this.#pending.splice(0, this.#maxBatch);
      this.#inFlight += 1;
      this.batches += 1;
      this.items += batch.length;
      this.#flush(batch.map((queued) => queued.item)).then(
        () => {
          for (const queued of batch) queued.resolve();
        },
        (error: unknown) => {
          for (const queued of batch) queued.reject(error);
        },
      ).finally(() => {
        this.#inFlight -= 1;
        this.#pump();
      });
    }
    if (this.#pending.length === 0 && this.#inFlight === 0 && !this.#scheduled) {
      const waiting = this.#idle;
      this.#idle = [];
      for (const resolve of waiting) resolve();
    }
  }
}
