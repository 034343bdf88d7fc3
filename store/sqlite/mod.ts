/**
 * The SQLite session store, `@hookscope/core/store/sqlite`: `node:sqlite` in Deno ≥ 2.2 and
 * Node ≥ 22.5, `bun:sqlite` in Bun. Nothing is loaded until {@linkcode SqliteStore.open} runs, so
 * importing this entry never fails, even on Node 20 (where `open` rejects with
 * {@linkcode StoreUnavailableError}).
 *
 * @example
 * ```ts
 * import { SqliteStore, StoreUnavailableError } from "@hookscope/core/store/sqlite";
 * import assert from "node:assert/strict";
 *
 * try {
 *   const store = await SqliteStore.open(":memory:");
 *   await store.createSession({ id: "s1", status: "created" });
 *   assert.equal((await store.getSession("s1"))?.status, "created");
 *   await store.close();
 * } catch (error) {
 *   assert.ok(error instanceof StoreUnavailableError); // Node 20
 * }
 * ```
 *
 * @module
 */

export * from "./sqlite_store.ts";
// The errors its methods throw; the interface and row types are in `@hookscope/core/store`.
export { StoreClosedError, StoreConflictError, StoreUnavailableError } from "../store_errors.ts";
