/**
 * The PostgreSQL session store, `@hookscope/core/store/postgres`: one database that many worker
 * processes on many machines write to, with live subscriptions across them. Built on the
 * `postgres` npm package (it runs on Deno, Bun and Node); nothing connects until
 * {@linkcode PostgresStore.open} runs.
 *
 * @example Open a store in its own schema
 * ```ts
 * import { PostgresStore } from "@hookscope/core/store/postgres";
 * import assert from "node:assert/strict";
 * import process from "node:process";
 *
 * const url = process.env.HOOKSCOPE_PG_URL || "postgres://root@127.0.0.1:5432/test";
 * const store = await PostgresStore.open(url, { schema: "hookscope_docs" });
 * const id = crypto.randomUUID();
 * await store.createSession({ id, status: "created" });
 * assert.equal((await store.getSession(id))?.status, "created");
 * await store.close();
 * ```
 *
 * @module
 */

export * from "./postgres_store.ts";
export * from "./store_change.ts";
// The errors its methods throw; the interface and row types are in `@hookscope/core/store`.
export { StoreClosedError, StoreConflictError, StoreUnavailableError } from "../store_errors.ts";
