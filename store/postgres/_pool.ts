// The PostgreSQL store's connections: the client pool (replaced when it strands a query), the
// listener connection's client, and every call's deadline and retries. Private to the store.

import postgres from "postgres";
import { deadline, delay } from "../../core/_async.ts";
import { StoreClosedError, StoreUnavailableError } from "../store_errors.ts";
import { isStoreError } from "../_sql.ts";
import { describePgError, isTransient } from "./_pg_errors.ts";
import type { ListenHooks } from "./_listener.ts";
import { channelFor, type PgConfig } from "./_options.ts";

/** The client's query function (and pool). */
export type Sql = postgres.Sql<Record<string, never>>;

/** One row as the client returns it. */
export type Row = Record<string, unknown>;

/** How long one attempt of a retry-safe call may go unanswered before its pool is replaced. */
export const ATTEMPT_MS = 10_000;

class StuckAttempt extends Error {}

/**
 * Ends a pool, waiting at most `seconds` for running queries and never longer than that plus a
 * second: the client's `end()` can hang after a connection was lost.
 */
export async function endPool(sql: Sql, seconds: number): Promise<void> {
  await deadline(sql.end({ timeout: seconds }), seconds * 1000 + 1000).catch(() => {});
}

/** A factory of the store's query pools. */
export function poolClient(config: PgConfig): () => Sql {
  return () =>
    postgres(config.url, {
      max: config.max,
      onnotice: () => {},
      connect_timeout: Math.max(1, Math.ceil(config.timeoutMs / 1000)),
      idle_timeout: 60,
      ...(config.synchronousCommit === undefined
        ? {}
        : { connection: { synchronous_commit: config.synchronousCommit } }),
    }) as unknown as Sql;
}

/**
 * A factory of the one-connection client that subscriptions listen on (see _listener.ts). Its
 * `application_name` is the channel, so writers can tell whether anyone listens (_notifier.ts).
 * `onnotify` and `onclose` are options of the client that its types do not list.
 */
export function listenerClient(config: PgConfig): (hooks: ListenHooks) => Sql {
  const channel = channelFor(config.schema);
  return (hooks) =>
    postgres(config.url, {
      max: 1,
      connection: { application_name: channel },
      onnotice: () => {},
      connect_timeout: Math.max(1, Math.ceil(config.timeoutMs / 1000)),
      idle_timeout: null as unknown as number,
      max_lifetime: null as unknown as number,
      fetch_types: false,
      ...{ onnotify: hooks.onnotify, onclose: hooks.onclose },
    } as postgres.Options<Record<string, never>>) as unknown as Sql;
}

/**
 * The store's current query pool, with every call's deadline and retries. A pool that strands a
 * query is retired (ended in the background) and replaced by a fresh one.
 */
export class PgPool {
  #sql: Sql;
  #connect: () => Sql;
  #retired: Sql[] = [];
  #url: string;
  #timeoutMs: number;
  #onError: (error: Error) => void;
  #ended = false;

  /** `url` is the redacted URL that messages name. */
  constructor(
    connect: () => Sql,
    options: { url: string; timeoutMs: number; onError: (error: Error) => void },
  ) {
    this.#connect = connect;
    this.#sql = connect();
    this.#url = options.url;
    this.#timeoutMs = options.timeoutMs;
    this.#onError = options.onError;
  }

  /** The current pool. */
  get sql(): Sql {
    return this.#sql;
  }

  /** Whether {@linkcode PgPool.end} was called. */
  get ended(): boolean {
    return this.#ended;
  }

  /**
   * Runs `body` with the store's deadline. A lost connection is reported and, when `retry` says
   * the operation is safe to repeat, retried with a growing pause until the deadline. An attempt
   * that neither succeeds nor fails within {@linkcode ATTEMPT_MS} (the client can strand a query
   * whose connection the server closed) is abandoned with its whole pool: later attempts and
   * calls use a fresh pool, and the old one is ended at close.
   */
  async run<T>(
    operation: string,
    retry: boolean,
    body: (sql: Sql, attempt: number) => Promise<T>,
  ): Promise<T> {
    if (this.#ended) throw new StoreClosedError(operation, "PostgreSQL store");
    const ends = Date.now() + this.#timeoutMs;
    const timedOut = () =>
      new StoreUnavailableError(
        `Cannot ${operation}: PostgreSQL store ${
          JSON.stringify(this.#url)
        } did not answer within ${this.#timeoutMs} ms`,
      );
    let pause = 25;
    for (let attempt = 1;; attempt++) {
      const sql = this.#sql;
      const remaining = ends - Date.now();
      const stuck = retry && remaining > ATTEMPT_MS;
      try {
        return await deadline(
          body(sql, attempt),
          stuck ? ATTEMPT_MS : remaining,
          undefined,
          () => stuck ? new StuckAttempt() : timedOut(),
        );
      } catch (error) {
        if (isStoreError(error)) throw error;
        if (this.#ended) throw new StoreClosedError(operation, "PostgreSQL store");
        if (error instanceof StuckAttempt) {
          this.#retire(sql);
          this.#onError(
            new StoreUnavailableError(
              `Cannot ${operation}: PostgreSQL store ${
                JSON.stringify(this.#url)
              } gave no answer within ${ATTEMPT_MS} ms; retrying on new connections (attempt ${
                attempt + 1
              })`,
            ),
          );
          continue;
        }
        const failure = new StoreUnavailableError(
          `Cannot ${operation}: PostgreSQL store ${JSON.stringify(this.#url)} failed: ${
            describePgError(error)
          }`,
          { cause: error },
        );
        if (!retry || !isTransient(error) || Date.now() + pause >= ends) throw failure;
        this.#onError(
          new StoreUnavailableError(`${failure.message}; retrying (attempt ${attempt + 1})`, {
            cause: error,
          }),
        );
        await delay(pause);
        pause = Math.min(pause * 2, 1000);
      }
    }
  }

  /**
   * Stops using `sql` for new calls (once); the old pool is ended in the background (what it still
   * runs gets 5 s). Subscriptions listen on a connection of their own (see _listener.ts).
   */
  #retire(sql: Sql): void {
    if (this.#sql !== sql || this.#ended) return;
    this.#sql = this.#connect();
    this.#retired.push(sql);
    void endPool(sql, 5).then(() => {
      this.#retired = this.#retired.filter((retired) => retired !== sql);
    });
  }

  /** Ends the current and the retired pools, giving running queries `seconds`; later calls reject. */
  async end(seconds: number): Promise<void> {
    this.#ended = true;
    await Promise.all([this.#sql, ...this.#retired].map((sql) => endPool(sql, seconds)));
  }
}
