/**
 * The typed errors a `SessionStore` rejects with.
 *
 * @module
 */

import type { ApprovalAnswer } from "../core/approval.ts";

/**
 * A store was used after `close()`.
 *
 * @example A closed store rejects every call
 * ```ts
 * import { MemoryStore } from "@hookscope/core";
 * import { StoreClosedError } from "@hookscope/core/store";
 * import assert from "node:assert/strict";
 *
 * const store = new MemoryStore();
 * await store.close();
 * await assert.rejects(store.getSession("s1"), StoreClosedError);
 * ```
 */
export class StoreClosedError extends Error {
  /** The operation that was refused (`createSession`, …). */
  readonly operation: string;
  /** Makes the error. */
  constructor(operation: string, storeName = "store") {
    super(`Cannot ${operation}: the ${storeName} is closed`);
    this.name = "StoreClosedError";
    this.operation = operation;
  }
}

/**
 * A row could not be written because it conflicts with a stored one (a session id that exists).
 *
 * @example Creating a session twice
 * ```ts
 * import { MemoryStore } from "@hookscope/core";
 * import { StoreConflictError } from "@hookscope/core/store";
 * import assert from "node:assert/strict";
 *
 * const store = new MemoryStore();
 * await store.createSession({ id: "s1", status: "created" });
 * await assert.rejects(store.createSession({ id: "s1", status: "created" }), StoreConflictError);
 * ```
 */
export class StoreConflictError extends Error {
  /** The id that conflicts. */
  readonly id: string;
  /** Makes the error. */
  constructor(message: string, id: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "StoreConflictError";
    this.id = id;
  }
}

/**
 * The runtime cannot provide what a store needs (Node 20 has no `node:sqlite`), or the store's file
 * cannot be opened or written.
 *
 * @example The error names what is needed
 * ```ts
 * import { StoreUnavailableError } from "@hookscope/core/store";
 * import assert from "node:assert/strict";
 *
 * const error = new StoreUnavailableError("SqliteStore needs node:sqlite (Node >= 22.5)");
 * assert.ok(error.message.includes("22.5"));
 * ```
 */
export class StoreUnavailableError extends Error {
  /** Makes the error. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "StoreUnavailableError";
  }
}

/** Why an answer was refused: see {@linkcode ApprovalConflictError}. */
export type ApprovalConflictWhy = "already_answered" | "args_changed" | "expired" | "not_allowed";

/**
 * A store refused an answer (a {@linkcode StoreConflictError}): the call was answered already (first answer wins; `answer` is that
 * one), the answer names arguments other than the pending ones, the approval expired, or the
 * answerer is not among who may answer.
 *
 * @example
 * ```ts
 * import { ApprovalConflictError } from "@hookscope/core/store";
 * import assert from "node:assert/strict";
 *
 * const error = new ApprovalConflictError("c1", "already_answered", { approve: true, by: "ana" });
 * assert.equal(error.why, "already_answered");
 * assert.match(error.message, /answered already/);
 * ```
 */
export class ApprovalConflictError extends StoreConflictError {
  /** The call. */
  readonly callId: string;
  /** Why the answer was refused. */
  readonly why: ApprovalConflictWhy;
  /** The answer that stands (with `why: "already_answered"`). */
  readonly answer?: ApprovalAnswer & { readonly answeredAt?: number };
  /** Makes the error. */
  constructor(
    callId: string,
    why: ApprovalConflictWhy,
    answer?: ApprovalAnswer & { readonly answeredAt?: number },
    detail?: string,
  ) {
    super(
      `Cannot answer call ${JSON.stringify(callId)}: ${detail ?? describeWhy(why, answer)}`,
      callId,
    );
    this.name = "ApprovalConflictError";
    this.callId = callId;
    this.why = why;
    if (answer !== undefined) this.answer = answer;
  }
}

function describeWhy(why: ApprovalConflictWhy, answer: ApprovalAnswer | undefined): string {
  if (why === "already_answered") {
    if (answer === undefined) return "it was answered already";
    const what = answer.approve ? "approved" : `rejected (${answer.reason ?? "no reason"})`;
    const at = (answer as { answeredAt?: number }).answeredAt;
    return `it was answered already: ${what}${answer.by === undefined ? "" : ` by ${answer.by}`}${
      typeof at === "number" ? ` at ${new Date(at).toISOString()}` : ""
    }`;
  }
  if (why === "args_changed") {
    return "the answer names other arguments than the pending ones (their hash differs)";
  }
  if (why === "expired") return "the approval expired";
  return "the answerer is not among who may answer";
}
