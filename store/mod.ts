/**
 * Stores, `@hookscope/core/store`: where sessions, branches, messages, signals and runs are
 * persisted. The {@linkcode SessionStore} interface and its row types, the in-memory
 * {@linkcode MemoryStore} and the store errors. The SQLite and PostgreSQL stores live in their own
 * entry points, `@hookscope/core/store/sqlite` and `@hookscope/core/store/postgres`, because they
 * need a runtime SQLite module or the `postgres` package.
 *
 * @example
 * ```ts
 * import { MemoryStore } from "@hookscope/core/store";
 * import assert from "node:assert/strict";
 *
 * const store = new MemoryStore();
 * await store.createSession({ id: "s1", status: "created" });
 * assert.deepEqual(await store.getSession("s1"), { id: "s1", status: "created" });
 * ```
 *
 * @module
 */

export * from "./session_store.ts";
export * from "./memory_store.ts";
export * from "./store_errors.ts";
