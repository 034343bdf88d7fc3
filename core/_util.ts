// Private helpers shared across the scopes (never exported from an entry).

/** Whether a value is a thenable: await only these on hot paths (a plain value costs a tick). */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return value !== null && (typeof value === "object" || typeof value === "function") &&
    typeof (value as { then?: unknown }).then === "function";
}

/** Whether a value is a non-null object that is not an array (a record to read fields from). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * A short, safe description of a bad input value for error messages: a string quoted, `null`,
 * `(array)` or `(type)`.
 */
export function describeValue(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (value === null) return "null";
  if (Array.isArray(value)) return "(array)";
  return `(${typeof value})`;
}

/**
 * What is wrong with an options object's keys: `"unknown option "x"; valid options: a, b"` for
 * the first key not in `known` (a misspelt option would otherwise be silently ignored), or
 * `undefined`.
 */
export function unknownOptionProblem(
  options: object,
  known: { has(key: string): boolean } & Iterable<string>,
): string | undefined {
  for (const key of Object.keys(options)) {
    if (!known.has(key)) {
      return `unknown option ${JSON.stringify(key)}; valid options: ${[...known].join(", ")}`;
    }
  }
  return undefined;
}

/**
 * The clock for durations, in milliseconds. `Date.now()`: on the reference machine Deno's
 * `performance.now()` costs 0.2–0.5 µs a call (an op into the runtime) against ~0.1 µs, and every
 * event reads the clock twice; the price is whole-millisecond durations.
 */
export const durationClock: () => number = Date.now;

/** Options of {@linkcode messageOf}. */
export interface MessageOfOptions {
  /** Append `: <cause message>` when the error's `cause` is an `Error` (default `false`). */
  withCause?: boolean;
}

/** The message of a thrown value: an `Error`'s message, anything else as a string. */
export function messageOf(error: unknown, options?: MessageOfOptions): string {
  if (!(error instanceof Error)) return String(error);
  if (options?.withCause === true && error.cause instanceof Error) {
    return `${error.message}: ${error.cause.message}`;
  }
  return error.message;
}
