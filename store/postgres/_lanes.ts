// Per-key ordering of the PostgreSQL store's writes: the pool runs queries on any of its
// connections, so two unawaited writes to one session could otherwise reach the server in either
// order. Private to the store.

/** Runs calls of one key one after another, in call order; calls of different keys in parallel. */
export class Lanes {
  #lanes = new Map<string, Promise<void>>();

  /** Runs `body` after every earlier call on the same `key` has settled. */
  run<T>(key: string, body: () => Promise<T>): Promise<T> {
    const previous = this.#lanes.get(key) ?? Promise.resolve();
    const run = previous.then(body);
    const tail = run.then(() => {}, () => {});
    this.#lanes.set(key, tail);
    tail.then(() => {
      if (this.#lanes.get(key) === tail) this.#lanes.delete(key);
    });
    return run;
  }

  /** Resolves once no call of any key is running or waiting. */
  async settled(): Promise<void> {
    while (this.#lanes.size > 0) await Promise.all(this.#lanes.values());
  }
}
