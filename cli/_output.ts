/**
 * Where the CLI writes, so tests and embedders can capture it, and the one helper that makes
 * model- or store-derived text safe to print (`visible`).
 *
 * @module
 */

/** The CLI's output channels. */
export interface CliIO {
  /** Normal output. */
  out(text: string): void;
  /** Errors and diagnostics. */
  err(text: string): void;
}

/** Writes to the process's stdout and stderr. */
export const processIO: CliIO = {
  out: (text) => void globalThis.process?.stdout.write(`${text}\n`),
  err: (text) => void globalThis.process?.stderr.write(`${text}\n`),
};

/** A usage problem: unknown flag, missing argument. Exit code 2. */
export class UsageError extends Error {
  /** Makes the error. */
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** A runtime problem: server down, database missing or corrupt. Exit code 1. */
export class CliError extends Error {
  /** Makes the error. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "CliError";
  }
}

/**
 * Characters never sent to the terminal as they are: C0 controls except tab and line feed
 * (ESC, BEL, CR, backspace, …), DEL, C1 controls (a lone U+009B is a CSI on some terminals), the
 * line and paragraph separators, the zero-width characters (U+200B–U+200D, U+FEFF) and the
 * bidirectional marks, embeddings, overrides and isolates (U+061C, U+200E, U+200F,
 * U+202A–U+202E, U+2066–U+2069) that make text read differently from what it is.
 */
const UNSAFE =
  // deno-lint-ignore no-control-regex -- matching control characters is the point
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]/g;

/**
 * `text` with every unsafe character (see above) shown as a visible `\uXXXX` escape, so model-
 * or store-derived text can neither drive the terminal (OSC 52 clipboard writes, CSI cursor
 * moves, title changes) nor reorder what a person reads. The escape is the JSON one, so JSON
 * output stays valid JSON with the same value. Idempotent: escaping twice changes nothing.
 */
export function visible(text: string): string {
  return String(text).replace(
    UNSAFE,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/** `io` with every line passed through {@linkcode visible}. */
export function safeIO(io: CliIO): CliIO {
  return { out: (text) => io.out(visible(text)), err: (text) => io.err(visible(text)) };
}
