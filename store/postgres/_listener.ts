// The store's own LISTEN connection, shared by its subscriptions. The client's `sql.listen()`
// keeps a failed LISTEN in a per-channel cache, so a LISTEN whose connection was terminated while
// it was sent made every later listen on that pool fail with the same error until the deadline.
// Here one connection (its own pool of one) carries the LISTEN; when it closes, or a LISTEN fails
// or goes unanswered, LISTEN is sent again (on a new connection when it went unanswered) until it
// succeeds or the store closes, and every subscription is told to read, since notifications sent
// in between are lost (subscriptions read by change number, so nothing else is).

import type postgres from "postgres";
import { deadline, delay } from "../../core/_async.ts";
import { describePgError } from "./_pg_errors.ts";

type Sql = postgres.Sql<Record<string, never>>;

/** Hooks a listening client needs: notifications and the close of its connection. */
export interface ListenHooks {
  onnotify(channel: string, payload: string): void;
  onclose(): void;
}

interface Subscriber {
  readonly onNotify: (payload: string) => void;
  readonly onListen: () => void;
}

/** One LISTEN connection that comes back after every loss. */
export class PgListener {
  #connect: (hooks: ListenHooks) => Sql;
  #channel: string;
  #attemptMs: number;
  #report: (message: string, cause: unknown) => void;
  #sql: Sql | null = null;
  #subscribers = new Set<Subscriber>();
  #live = false;
  #generation = 0;
  #loop: Promise<void> | null = null;
  #ended = false;

  constructor(
    connect: (hooks: ListenHooks) => Sql,
    options: {
      channel: string;
      attemptMs: number;
      report: (message: string, cause: unknown) => void;
    },
  ) {
    this.#connect = connect;
    this.#channel = options.channel;
    this.#attemptMs = options.attemptMs;
    this.#report = options.report;
  }

  /**
   * Adds a subscriber and resolves once the channel is listened to (rejects after `timeoutMs`
   * and forgets the subscriber). `onListen` runs after every later re-listen.
   */
  async listen(
    onNotify: (payload: string) => void,
    onListen: () => void,
    timeoutMs: number,
  ): Promise<{ unlisten(): Promise<void> }> {
    const subscriber: Subscriber = { onNotify, onListen };
    this.#subscribers.add(subscriber);
    const unlisten = async (): Promise<void> => {
      if (!this.#subscribers.delete(subscriber) || this.#subscribers.size > 0) return;
      // The last subscriber left: stop listening. A LISTEN in flight listens again after this.
      this.#live = false;
      this.#generation += 1;
      const sql = this.#sql;
      if (sql === null || this.#ended) return;
      await deadline(sql.unsafe(`unlisten "${this.#channel}"`), this.#attemptMs).catch(() => {});
    };
    if (!this.#live) {
      try {
        await deadline(
          this.#ensure(),
          timeoutMs,
          undefined,
          () => new Error(`LISTEN got no answer within ${timeoutMs} ms`),
        );
      } catch (error) {
        this.#subscribers.delete(subscriber);
        throw error;
      }
    }
    return { unlisten };
  }

  /** Ends the connection; later listens reject. */
  async end(): Promise<void> {
    this.#ended = true;
    this.#subscribers.clear();
    const sql = this.#sql;
    this.#sql = null;
    if (sql !== null) await endQuietly(sql);
  }

  #ensure(): Promise<void> {
    if (this.#ended) return Promise.reject(new Error("the store is closed"));
    if (this.#loop === null) {
      const loop = this.#listenLoop();
      this.#loop = loop;
      loop.then(
        () => {
          if (this.#loop === loop) this.#loop = null;
        },
        () => {
          if (this.#loop === loop) this.#loop = null;
        },
      );
    }
    return this.#loop;
  }

  #open(): Sql {
    if (this.#sql !== null) return this.#sql;
    const hooks: ListenHooks = {
      onnotify: (channel, payload) => {
        if (channel !== this.#channel || this.#sql !== sql) return;
        for (const subscriber of [...this.#subscribers]) subscriber.onNotify(payload);
      },
      onclose: () => {
        if (this.#sql !== sql || this.#ended) return;
        this.#generation += 1;
        this.#live = false;
        if (this.#subscribers.size > 0) this.#ensure().catch(() => {});
      },
    };
    const sql = this.#connect(hooks);
    this.#sql = sql;
    return sql;
  }

  async #listenLoop(): Promise<void> {
    let pause = 25;
    for (let attempt = 1;; attempt++) {
      if (this.#ended) throw new Error("the store is closed");
      const sql = this.#open();
      const generation = this.#generation;
      let stuck = false;
      try {
        await deadline(sql.unsafe(`listen "${this.#channel}"`), this.#attemptMs, undefined, () => {
          stuck = true;
          return new Error(`LISTEN got no answer within ${this.#attemptMs} ms`);
        });
        if (this.#ended) throw new Error("the store is closed");
        // The connection closed, or the last subscriber left, after LISTEN was sent: listen
        // again (after the UNLISTEN, on one connection) unless nobody is left to tell.
        if (generation !== this.#generation || this.#sql !== sql) {
          if (this.#subscribers.size === 0) return;
          continue;
        }
        this.#live = true;
        for (const subscriber of [...this.#subscribers]) subscriber.onListen();
        return;
      } catch (error) {
        if (this.#ended) throw error;
        if (stuck && this.#sql === sql) {
          // Abandon the connection: a new one is opened on the next attempt.
          this.#sql = null;
          this.#generation += 1;
          void endQuietly(sql);
        }
        this.#report(
          `listening for changes failed: ${describePgError(error)}; listening again (attempt ${
            attempt + 1
          })`,
          error,
        );
        await delay(pause);
        pause = Math.min(pause * 2, 1000);
      }
    }
  }
}

async function endQuietly(sql: Sql): Promise<void> {
  await deadline(sql.end({ timeout: 1 }), 2000).catch(() => {});
}
