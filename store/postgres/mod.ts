/**
 * The PostgreSQL session store, `@hookscope/core/store/postgres`: one database that many worker
 * processes on many machines write to, with live subscriptions across them. Built on the
 * `postgres` npm package (it runs on Deno, Bun and Node); nothing connects until
 * {@linkcode PostgresStore.open} runs.
 *
 * @example Open a store in its own schema
 * ```ts ignore
 * import { PostgresStore } from "@hookscope/core/store/postgres";
 *
 * const store = await PostgresStore.open("postgres://root@127.0.0.1:5432/test", { schema: "agents" });
 * await store.createSession({ id: "s1", status: "created" });
 * console.log(await store.listSessions());
 * await store.close();
 * ```
 *
 * @module
 */

export * from "./postgres_store.ts";
export * from "./store_change.ts";
export { StoreClosedError, StoreConflictError, StoreUnavailableError } from "../store_errors.ts";
export type {
  MessageRecord,
  MessageRole,
  PendingApprovalFilter,
  PendingApprovalRow,
  RunAnswer,
  RunApproval,
  RunRecord,
  RunState,
  RunStatus,
  RunToolCall,
  SessionRow,
  SessionStore,
  SignalInsert,
  SignalRow,
} from "../session_store.ts";
