/**
 * A small leveled logger with a pluggable sink. Quiet by default: nothing is printed until a
 * level is set.
 *
 * @module
 */

/** Log levels, lowest first; `silent` prints nothing. */
export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";

/** One log record handed to a sink. */
export interface LogRecord {
  /** The record's level. */
  readonly level: Exclude<LogLevel, "silent">;
  /** A short message. */
  readonly message: string;
  /** Structured details (an error, a point name, …). */
  readonly details?: unknown;
  /** Milliseconds since the epoch. */
  readonly time: number;
}

/** Where log records go. */
export type LogSink = (record: LogRecord) => void;

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 };

/**
 * A leveled logger. The library uses one shared instance, {@linkcode logger}.
 *
 * @example Collect warnings in memory
 * ```ts
 * import { Logger, type LogRecord } from "@hookscope/core/hooks";
 * import assert from "node:assert/strict";
 *
 * const records: LogRecord[] = [];
 * const log = new Logger({ level: "warn", sink: (r) => records.push(r) });
 * log.info("ignored");
 * log.warn("kept", { point: "tool.pre" });
 * assert.equal(records.length, 1);
 * assert.equal(records[0].message, "kept");
 * ```
 */
export class Logger {
  #rank: number;
  #level: LogLevel;
  #sink: LogSink;

  /** Makes a logger; `level` defaults to `silent`, `sink` to the console. */
  constructor(options?: { level?: LogLevel; sink?: LogSink }) {
    this.#level = options?.level ?? "silent";
    this.#rank = rankOf(this.#level);
    this.#sink = options?.sink ?? consoleSink;
  }

  /** The current threshold. */
  get level(): LogLevel {
    return this.#level;
  }

  /** Changes the threshold and, optionally, the sink. */
  configure(options: { level?: LogLevel; sink?: LogSink | null }): void {
    if (options.level !== undefined) {
      this.#rank = rankOf(options.level);
      this.#level = options.level;
    }
    if (options.sink !== undefined) this.#sink = options.sink ?? consoleSink;
  }

  /** Whether records of `level` are currently kept. */
  enabled(level: Exclude<LogLevel, "silent">): boolean {
    return RANK[level] >= this.#rank;
  }

  /** Logs at debug level. */
  debug(message: string, details?: unknown): void {
    this.#write("debug", message, details);
  }
  /** Logs at info level. */
  info(message: string, details?: unknown): void {
    this.#write("info", message, details);
  }
  /** Logs at warn level. */
  warn(message: string, details?: unknown): void {
    this.#write("warn", message, details);
  }
  /** Logs at error level. */
  error(message: string, details?: unknown): void {
    this.#write("error", message, details);
  }

  #write(level: Exclude<LogLevel, "silent">, message: string, details: unknown): void {
    if (RANK[level] < this.#rank) return;
    try {
      this.#sink({ level, message, details, time: Date.now() });
    } catch {
      // A broken sink must never break the code that logged.
    }
  }
}

function rankOf(level: LogLevel): number {
  const rank = RANK[level];
  if (rank === undefined) {
    throw new RangeError(
      `Cannot set log level: unknown level ${JSON.stringify(level)}; valid levels: ${
        Object.keys(RANK).map((l) => `"${l}"`).join(", ")
      }`,
    );
  }
  return rank;
}

function consoleSink(record: LogRecord): void {
  const line = `[hookscope] ${record.level} ${record.message}`;
  if (record.level === "error") console.error(line, record.details ?? "");
  else if (record.level === "warn") console.warn(line, record.details ?? "");
  else console.log(line, record.details ?? "");
}

/**
 * The library's shared logger. Silent until configured.
 *
 * @example Print isolated hook failures
 * ```ts
 * import { logger } from "@hookscope/core/hooks";
 * import assert from "node:assert/strict";
 *
 * logger.configure({ level: "warn" });
 * assert.equal(logger.level, "warn");
 * logger.configure({ level: "silent" });
 * ```
 */
export const logger: Logger = new Logger();
