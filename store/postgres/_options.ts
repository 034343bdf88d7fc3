// The options of PostgresStore.open, their checks, and the names derived from them (the
// schema's NOTIFY channel). Private to the PostgreSQL store.

import { MAX_TIMER_MS } from "../../core/_async.ts";
import { redactUrl } from "./_pg_errors.ts";

/** Options for {@linkcode PostgresStore.open}. */
export interface PostgresStoreOptions {
  /**
   * The PostgreSQL schema that holds this store's tables, created when absent (default
   * `"hookscope"`, or the URL's `?schema=` parameter). Letters, digits and `_`, at most 63.
   */
  schema?: string;
  /** Most connections the store opens at once (default 10; a subscription adds one listener). */
  max?: number;
  /**
   * Called with problems that do not reject a call: a dropped connection that was retried, a
   * notification listener that reconnected. Default: ignored.
   */
  onError?: (error: Error) => void;
  /** Deadline of every call, retries included, in milliseconds (default 30 000; at most 2^31 − 1). */
  timeoutMs?: number;
  /**
   * Create the schema and apply missing migrations (default `true`). With `false` the schema
   * must already be at the current version (read-only viewers use this).
   */
  migrate?: boolean;
  /**
   * PostgreSQL's `synchronous_commit` for this store's connections. Default: the server's (or
   * the role's) setting, normally `"on"`: a write resolves once its commit is flushed to disk,
   * and writers of different sessions wait only for PostgreSQL's shared WAL flush. `"off"`: a
   * write resolves once committed in memory and is flushed within a few hundred milliseconds
   * (`wal_writer_delay`, 3× at most); a crash of the database server (not of a writer process)
   * can lose the writes of that last moment, never corrupting or reordering what remains. Writer
   * processes then no longer wait for disk syncs.
   */
  synchronousCommit?: "on" | "off";
}

/** What {@linkcode PostgresStore.info} reports. */
export interface PostgresStoreInfo {
  /** The connection URL without its password. */
  readonly url: string;
  /** The schema holding the tables. */
  readonly schema: string;
  /** The schema version this store runs on. */
  readonly schemaVersion: number;
  /** The NOTIFY channel of this schema. */
  readonly channel: string;
  /** Write batches (multi-row statements) sent for messages and signals so far. */
  readonly writeBatches: number;
  /** Messages and signals sent in those batches. */
  readonly writtenRows: number;
}

/** Checked options with their defaults filled in. */
export interface PgConfig {
  /** The URL without the `schema` parameter. */
  readonly url: string;
  readonly schema: string;
  readonly max: number;
  /** Never throws: a failing reporter must not break the store. */
  readonly onError: (error: Error) => void;
  readonly timeoutMs: number;
  readonly migrate: boolean;
  readonly synchronousCommit: "on" | "off" | undefined;
}

const SCHEMA_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** Checks the arguments of `PostgresStore.open`; a bad one throws a `TypeError`. */
export function parseOptions(url: unknown, options: unknown): PgConfig {
  const action = "open PostgreSQL store";
  if (typeof url !== "string" || !/^postgres(ql)?:\/\//.test(url)) {
    throw new TypeError(
      `Cannot ${action}: url must be a postgres:// or postgresql:// URL; got ${
        typeof url === "string" ? JSON.stringify(redactUrl(url)) : `(${typeof url})`
      }`,
    );
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TypeError(`Cannot ${action}: url ${JSON.stringify(redactUrl(url))} is not a URL`);
  }
  const fromUrl = parsed.searchParams.get("schema");
  parsed.searchParams.delete("schema");
  const o = (options ?? {}) as PostgresStoreOptions;
  if (typeof o !== "object") {
    throw new TypeError(`Cannot ${action}: options must be an object; got (${typeof o})`);
  }
  const schema = o.schema ?? fromUrl ?? "hookscope";
  if (typeof schema !== "string" || !SCHEMA_PATTERN.test(schema)) {
    throw new TypeError(
      `Cannot ${action}: schema must be letters, digits and "_" (at most 63, not starting with a digit); got ${
        JSON.stringify(schema)
      }`,
    );
  }
  const max = o.max ?? 10;
  if (typeof max !== "number" || !Number.isInteger(max) || max < 1) {
    throw new TypeError(`Cannot ${action}: max must be a positive integer; got ${String(max)}`);
  }
  const timeoutMs = o.timeoutMs ?? 30_000;
  if (typeof timeoutMs !== "number" || !(timeoutMs > 0) || !Number.isFinite(timeoutMs)) {
    throw new TypeError(
      `Cannot ${action}: timeoutMs must be a positive number; got ${String(timeoutMs)}`,
    );
  }
  if (timeoutMs > MAX_TIMER_MS) {
    // A timer (ours, and the driver's connect_timeout) fires a longer delay at once.
    throw new TypeError(
      `Cannot ${action}: timeoutMs must be at most ${MAX_TIMER_MS} (about 24.8 days); got ${timeoutMs}`,
    );
  }
  if (o.onError !== undefined && typeof o.onError !== "function") {
    throw new TypeError(`Cannot ${action}: onError must be a function`);
  }
  const synchronousCommit = o.synchronousCommit;
  if (
    synchronousCommit !== undefined && synchronousCommit !== "on" && synchronousCommit !== "off"
  ) {
    throw new TypeError(
      `Cannot ${action}: synchronousCommit must be "on" or "off"; got ${
        typeof synchronousCommit === "string"
          ? JSON.stringify(synchronousCommit)
          : `(${typeof synchronousCommit})`
      }`,
    );
  }
  const onError = o.onError ?? (() => {});
  return {
    url: parsed.toString(),
    schema,
    max,
    onError: (error) => {
      try {
        onError(error);
      } catch { /* a failing reporter must not break the store */ }
    },
    timeoutMs,
    migrate: o.migrate !== false,
    synchronousCommit,
  };
}

/** The NOTIFY channel of a schema: at most 63 characters, distinct per schema. */
export function channelFor(schema: string): string {
  const name = `hookscope_${schema}`.toLowerCase();
  if (name.length <= 63) return name;
  let hash = 0x811c9dc5;
  for (let i = 0; i < schema.length; i++) {
    hash = Math.imul(hash ^ schema.charCodeAt(i), 0x01000193) >>> 0;
  }
  return `${name.slice(0, 54)}_${hash.toString(16).padStart(8, "0")}`;
}
