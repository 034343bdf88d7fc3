/**
 * `HookLogger`: a bounded buffer of hook-event records, with an optional sink, and the shared
 * {@linkcode globalHookLogger}.
 *
 * @module
 */

import { logger, toJsonSafe } from "../core/mod.ts";
import { isThenable } from "./_util.ts";
import { DeferredEntry } from "./_hook_run.ts";

/** Receives a full or flushed buffer. */
export type HookLogSink = (entries: readonly Record<string, unknown>[]) => unknown;

/** Options of {@linkcode HookLogger}. */
export interface HookLoggerOptions {
  /** How many entries the buffer holds (default 100). */
  capacity?: number;
  /** Where a full buffer goes; without one the logger keeps the newest `capacity` entries. */
  sink?: HookLogSink | null;
}

/** The default buffer capacity. */
export const HOOK_LOGGER_CAPACITY = 100;

/**
 * A bounded log of the hook events `HookedEvent` runs.
 *
 * In memory (no sink) it keeps the newest `capacity` entries. With a sink, adding an entry to a
 * full buffer first hands the whole buffer to the sink and clears it; `flush()` does the same on
 * demand. A failing sink is reported through the library logger and never breaks the caller.
 *
 * @example Keep the newest entries
 * ```ts
 * import { HookLogger } from "@hookscope/core/service";
 * import assert from "node:assert/strict";
 *
 * const log = new HookLogger({ capacity: 2 });
 * log.log({ n: 1 });
 * log.log({ n: 2 });
 * log.log({ n: 3 });
 * assert.deepEqual(log.entries, [{ n: 2 }, { n: 3 }]);
 * ```
 *
 * @example Hand full buffers to a sink
 * ```ts
 * import { HookLogger } from "@hookscope/core/service";
 * import assert from "node:assert/strict";
 *
 * const batches: unknown[][] = [];
 * const log = new HookLogger({ capacity: 2, sink: (entries) => { batches.push([...entries]); } });
 * log.log({ n: 1 });
 * log.log({ n: 2 });
 * log.log({ n: 3 });
 * await log.flush();
 * assert.deepEqual(batches, [[{ n: 1 }, { n: 2 }], [{ n: 3 }]]);
 * assert.equal(log.entries.length, 0);
 * ```
 */
export class HookLogger {
  #capacity: number;
  #sink: HookLogSink | null;
  #entries: Record<string, unknown>[] = [];
  /** Where the oldest entry is once the in-memory buffer wrapped around (a ring, no splicing). */
  #start = 0;
  #pending: Promise<unknown>[] = [];

  /** Makes a logger; a capacity that is not a positive integer throws a `TypeError`. */
  constructor(options?: HookLoggerOptions) {
    const capacity = options?.capacity ?? HOOK_LOGGER_CAPACITY;
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new TypeError(
        `Cannot create hook logger: capacity must be a positive integer; got ${String(capacity)}`,
      );
    }
    const sink = options?.sink ?? null;
    if (sink !== null && typeof sink !== "function") {
      throw new TypeError(`Cannot create hook logger: sink must be a function`);
    }
    this.#capacity = capacity;
    this.#sink = sink;
  }

  /** The buffer capacity. */
  get capacity(): number {
    return this.#capacity;
  }

  /** The buffered entries, oldest first (a copy). */
  get entries(): readonly Record<string, unknown>[] {
    return [...this.#ordered()];
  }

  /**
   * The buffer oldest first, unwrapping the ring in place and rendering the entries that were
   * logged deferred (hook runs are rendered only when someone reads them).
   */
  #ordered(): Record<string, unknown>[] {
    if (this.#start !== 0) {
      const entries = this.#entries;
      this.#entries = entries.slice(this.#start).concat(entries.slice(0, this.#start));
      this.#start = 0;
    }
    const entries = this.#entries;
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i];
      if (entry instanceof DeferredEntry) entries[i] = entry.render();
    }
    return entries;
  }

  /** Replaces the sink (`null`: in memory only). */
  setSink(sink: HookLogSink | null): void {
    if (sink !== null && typeof sink !== "function") {
      throw new TypeError(`Cannot set hook log sink: sink must be a function or null`);
    }
    this.#sink = sink;
  }

  /** Adds one entry (a plain object; non-objects throw a `TypeError`). */
  log(entry: Record<string, unknown>): void {
    if (entry === null || typeof entry !== "object") {
      throw new TypeError(`Cannot log hook entry: entry must be an object; got ${typeof entry}`);
    }
    const entries = this.#entries;
    if (entries.length < this.#capacity) {
      entries.push(entry);
      return;
    }
    if (this.#sink) {
      this.#dump();
      this.#entries.push(entry);
      return;
    }
    // Full and in memory: overwrite the oldest entry.
    this.#entries[this.#start] = entry;
    this.#start = (this.#start + 1) % this.#capacity;
  }

  /** Hands the buffer to the sink (if any), empties it, and waits for pending sink work. */
  async flush(): Promise<void> {
    if (this.#entries.length > 0) {
      if (this.#sink) this.#dump();
      else this.clear();
    }
    const pending = this.#pending;
    this.#pending = [];
    await Promise.all(pending);
  }

  /** Empties the buffer without handing it anywhere. */
  clear(): void {
    this.#entries = [];
    this.#start = 0;
  }

  #dump(): void {
    const batch = this.#ordered();
    this.#entries = [];
    const sink = this.#sink;
    if (!sink) return;
    try {
      const out = sink(batch);
      if (isThenable(out)) {
        const settled = Promise.resolve(out).then(
          () => {},
          (error) => logger.warn("Hook log sink failed", error),
        );
        this.#pending.push(settled);
        settled.then(() => {
          this.#pending = this.#pending.filter((p) => p !== settled);
        });
      }
    } catch (error) {
      logger.warn("Hook log sink failed", error);
    }
  }
}

/** Writes one text file; Deno's `writeTextFile` and `node:fs/promises`' `writeFile` both fit. */
export type WriteTextFile = (path: string, text: string) => unknown;

/**
 * A sink that writes each batch as a JSON array to `<directory>/<prefix>_<YYYYmmddHHMMSS>-<5 hex>.json`.
 * The file system is injected, so the service scope itself never imports one; pass
 * Deno's `writeTextFile` or `(p, t) => writeFile(p, t)` from `node:fs/promises`. The directory must
 * exist.
 *
 * @example Collect "files" in memory
 * ```ts
 * import { createFileHookSink, HookLogger } from "@hookscope/core/service";
 * import assert from "node:assert/strict";
 *
 * const files = new Map<string, string>();
 * const log = new HookLogger({
 *   sink: createFileHookSink({ directory: "logs/hooks", writeTextFile: (p, t) => { files.set(p, t); } }),
 * });
 * log.log({ hookType: "pre_invocation" });
 * await log.flush();
 * const [[path, text]] = [...files];
 * assert.match(path, /^logs\/hooks\/hook_\d{14}-[0-9a-f]{5}\.json$/);
 * assert.deepEqual(JSON.parse(text), [{ hookType: "pre_invocation" }]);
 * ```
 */
export function createFileHookSink(options: {
  directory: string;
  writeTextFile: WriteTextFile;
  prefix?: string;
}): HookLogSink {
  if (options === null || typeof options !== "object") {
    throw new TypeError(`Cannot create file hook sink: options must be an object`);
  }
  const { directory, writeTextFile, prefix = "hook" } = options;
  if (typeof directory !== "string" || directory.length === 0) {
    throw new TypeError(`Cannot create file hook sink: directory must be a non-empty string`);
  }
  if (typeof writeTextFile !== "function") {
    throw new TypeError(`Cannot create file hook sink: writeTextFile must be a function`);
  }
  const base = directory.replace(/\/+$/, "");
  return (entries) => {
    const now = new Date();
    const stamp = [
      now.getUTCFullYear(),
      now.getUTCMonth() + 1,
      now.getUTCDate(),
      now.getUTCHours(),
      now.getUTCMinutes(),
      now.getUTCSeconds(),
    ].map((n, i) => String(n).padStart(i === 0 ? 4 : 2, "0")).join("");
    const suffix = crypto.randomUUID().replaceAll("-", "").slice(0, 5);
    const text = JSON.stringify(toJsonSafe(entries), null, 2);
    return writeTextFile(`${base}/${prefix}_${stamp}-${suffix}.json`, text);
  };
}

/**
 * The hook logger `HookedEvent` writes to. In memory by default (the newest 100 entries); give it
 * a sink with `setSink` (for example {@linkcode createFileHookSink}) to persist batches.
 *
 * @example
 * ```ts
 * import { globalHookLogger } from "@hookscope/core/service";
 * import assert from "node:assert/strict";
 *
 * assert.equal(globalHookLogger.capacity, 100);
 * ```
 */
export const globalHookLogger: HookLogger = new HookLogger();
