/**
 * The typed errors of tapes ({@linkcode tapeEndpoint} and the AI SDK `tapeMiddleware`): a request
 * that differs from the recorded one, a call beyond the tape's end, entries left unused, a tape
 * file that cannot be read, and a recorded failure replayed.
 *
 * @module
 */

/**
 * A replayed call whose request differs from the tape's entry at the same position. The message
 * names the differing fields and carries a line diff (`-` recorded, `+` actual) of the two
 * requests as canonical, pretty-printed JSON.
 *
 * @example
 * ```ts
 * import { TapeMismatchError } from "@hookscope/core/tape";
 * import assert from "node:assert/strict";
 *
 * const error = new TapeMismatchError({
 *   path: "t.jsonl", index: 0, call: "call", fields: ["model"],
 *   expected: { model: "a" }, actual: { model: "b" }, diff: '-  "model": "a"\n+  "model": "b"',
 * });
 * assert.match(error.message, /differs at model/);
 * ```
 */
export class TapeMismatchError extends Error {
  /** The tape file. */
  readonly path: string;
  /** The call's position (0-based) in the tape. */
  readonly index: number;
  /** `"call"`/`"stream"` (endpoint) or `"generate"`/`"stream"` (AI SDK). */
  readonly call: string;
  /** The differing fields as paths (`messages[1].content`), at most 20. */
  readonly fields: readonly string[];
  /** The recorded request (redacted, as stored). */
  readonly expected: unknown;
  /** The actual request, redacted the same way. */
  readonly actual: unknown;
  /** The line diff: ` ` context, `-` recorded, `+` actual. */
  readonly diff: string;

  /** Makes the error. */
  constructor(init: {
    path: string;
    index: number;
    call: string;
    fields: readonly string[];
    expected: unknown;
    actual: unknown;
    diff: string;
  }) {
    const where = init.fields.length > 0 ? init.fields.join(", ") : "(the kind of call)";
    super(
      `Cannot replay call ${init.index} of tape ${
        JSON.stringify(init.path)
      }: the ${init.call} request differs at ${where}\n${init.diff}`,
    );
    this.name = "TapeMismatchError";
    this.path = init.path;
    this.index = init.index;
    this.call = init.call;
    this.fields = init.fields;
    this.expected = init.expected;
    this.actual = init.actual;
    this.diff = init.diff;
  }
}

/**
 * A replayed call beyond the last entry of the tape.
 *
 * @example
 * ```ts
 * import { TapeExhaustedError } from "@hookscope/core/tape";
 * import assert from "node:assert/strict";
 *
 * const error = new TapeExhaustedError("t.jsonl", 2, { model: "m" });
 * assert.match(error.message, /holds 2 calls/);
 * ```
 */
export class TapeExhaustedError extends Error {
  /** The tape file. */
  readonly path: string;
  /** The call's position (0-based), equal to the number of entries. */
  readonly index: number;
  /** The extra request, redacted. */
  readonly actual: unknown;

  /** Makes the error. */
  constructor(path: string, index: number, actual: unknown) {
    super(
      `Cannot replay call ${index} of tape ${JSON.stringify(path)}: the tape holds ${index} calls`,
    );
    this.name = "TapeExhaustedError";
    this.path = path;
    this.index = index;
    this.actual = actual;
  }
}

/**
 * Thrown by `assertConsumed()` when a replay used fewer calls than the tape holds.
 *
 * @example
 * ```ts
 * import { TapeUnconsumedError } from "@hookscope/core/tape";
 * import assert from "node:assert/strict";
 *
 * assert.match(new TapeUnconsumedError("t.jsonl", 1, 3).message, /used 1 of 3/);
 * ```
 */
export class TapeUnconsumedError extends Error {
  /** The tape file. */
  readonly path: string;
  /** How many entries were replayed. */
  readonly used: number;
  /** How many entries the tape holds. */
  readonly size: number;

  /** Makes the error. */
  constructor(path: string, used: number, size: number) {
    super(
      `Cannot finish tape ${
        JSON.stringify(path)
      }: the replay used ${used} of ${size} recorded calls`,
    );
    this.name = "TapeUnconsumedError";
    this.path = path;
    this.used = used;
    this.size = size;
  }
}

/**
 * A tape file that cannot be replayed: missing, not JSONL, without the tape header, from a newer
 * format version, from the other kind of tape, or with entries out of order.
 *
 * @example
 * ```ts
 * import { TapeFormatError } from "@hookscope/core/tape";
 * import assert from "node:assert/strict";
 *
 * const error = new TapeFormatError("t.jsonl", 3, "invalid JSON");
 * assert.equal(error.message, 'Cannot read tape "t.jsonl": line 3: invalid JSON');
 * ```
 */
export class TapeFormatError extends Error {
  /** The tape file. */
  readonly path: string;
  /** The 1-based line at fault, `0` for the file as a whole. */
  readonly line: number;

  /** Makes the error. */
  constructor(path: string, line: number, reason: string, options?: ErrorOptions) {
    super(
      `Cannot read tape ${JSON.stringify(path)}: ${line > 0 ? `line ${line}: ` : ""}${reason}`,
      options,
    );
    this.name = "TapeFormatError";
    this.path = path;
    this.line = line;
  }
}

/**
 * A failure the recorded call ended with, raised again on replay (the original error's name and
 * redacted message; the original class is not restored).
 *
 * @example
 * ```ts
 * import { TapeRecordedError } from "@hookscope/core/tape";
 * import assert from "node:assert/strict";
 *
 * const error = new TapeRecordedError("EndpointError", "Endpoint returned 500");
 * assert.equal(error.recordedName, "EndpointError");
 * ```
 */
export class TapeRecordedError extends Error {
  /** The recorded error's `name`. */
  readonly recordedName: string;

  /** Makes the error. */
  constructor(recordedName: string, message: string) {
    super(message);
    this.name = "TapeRecordedError";
    this.recordedName = recordedName;
  }
}
