/**
 * Where the CLI writes, so tests and embedders can capture it.
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
