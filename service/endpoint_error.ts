/**
 * Typed errors of endpoints: HTTP failures and unparseable responses.
 *
 * @module
 */

/**
 * What went wrong, for code that decides on it: an HTTP error status (`http`), no connection or
 * a broken one (`network`), the overall deadline (`timeout`), no byte for `idleTimeoutMs`
 * (`idle`), a body past `maxResponseBytes` (`too_large`), or a body that is not what the
 * protocol says (`parse`).
 */
export type EndpointErrorKind = "http" | "network" | "timeout" | "idle" | "too_large" | "parse";

/** What an {@linkcode EndpointError} carries besides its message. */
export interface EndpointErrorOptions {
  /** What went wrong; by default `http` when a status is given, else `network`. */
  kind?: EndpointErrorKind;
  /** The HTTP status, or `null`/absent when no response arrived. */
  status?: number | null;
  /** The start of the response body (the endpoint redacts and cuts it). */
  bodyExcerpt?: string;
  /** The URL requested (origin and path only). */
  url?: string | null;
  /** The underlying error. */
  cause?: unknown;
}

/**
 * An endpoint request failed: an HTTP error status, a broken connection, a limit (idle time,
 * overall deadline, body size), or an error reported inside a stream; `kind` says which. Never
 * carries a credential: the endpoint redacts messages, excerpts and causes.
 *
 * @example
 * ```ts
 * import { EndpointError } from "@hookscope/core/service";
 * import assert from "node:assert/strict";
 *
 * const error = new EndpointError("Endpoint request failed with status 429", { status: 429, bodyExcerpt: "slow down" });
 * assert.equal(error.status, 429);
 * assert.equal(error.kind, "http");
 * assert.equal(error.name, "EndpointError");
 * ```
 */
export class EndpointError extends Error {
  /** What went wrong (see {@linkcode EndpointErrorKind}). */
  readonly kind: EndpointErrorKind;
  /** The HTTP status, or `null` when no response arrived. */
  readonly status: number | null;
  /** The start of the response body (at most 500 characters). */
  readonly bodyExcerpt: string;
  /** The URL requested (origin and path only). */
  readonly url: string | null;

  /** Makes the error. */
  constructor(
    message: string,
    options?: EndpointErrorOptions,
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "EndpointError";
    this.kind = options?.kind ?? (typeof options?.status === "number" ? "http" : "network");
    this.status = options?.status ?? null;
    this.bodyExcerpt = options?.bodyExcerpt ?? "";
    this.url = options?.url ?? null;
  }
}

/**
 * A response or a Server-Sent Events data line was not the JSON expected.
 *
 * @example
 * ```ts
 * import { EndpointError, EndpointParseError } from "@hookscope/core/service";
 * import assert from "node:assert/strict";
 *
 * const error = new EndpointParseError("Cannot parse stream event: invalid JSON", { status: 200, bodyExcerpt: "{oops" });
 * assert.ok(error instanceof EndpointError);
 * assert.equal(error.kind, "parse");
 * ```
 */
export class EndpointParseError extends EndpointError {
  /** Makes the error. */
  constructor(
    message: string,
    options?: EndpointErrorOptions,
  ) {
    super(message, { ...options, kind: "parse" });
    this.name = "EndpointParseError";
  }
}
