/**
 * The typed errors a `SessionStore` rejects with.
 *
 * @module
 */

/**
 * A store was used after `close()`.
 *
 * @example A closed store rejects every call
 * ```ts
 * import { MemoryStore, StoreClosedError } from "@hookscope/core";
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
 * import { MemoryStore, StoreConflictError } from "@hookscope/core";
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
 * import { StoreUnavailableError } from "@hookscope/core";
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
