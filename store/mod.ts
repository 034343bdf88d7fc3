/**
 * Where sessions, branches, messages and signals are persisted: the {@linkcode SessionStore}
 * interface, the in-memory {@linkcode MemoryStore} and the store errors. The SQLite store lives in
 * its own entry point, `@hookscope/core/store/sqlite`, because it needs a runtime SQLite module.
 *
 * @example
 * ```ts
 * import { MemoryStore } from "@hookscope/core";
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
