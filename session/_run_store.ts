// Where the agent loop keeps its run records: the session's store, or, for a session or branch
// without one, a private in-memory store made on first use (so a run can still stop for approval
// and be resumed in this process).

import { MemoryStore } from "../store/memory_store.ts";
import type { SessionStore } from "../store/session_store.ts";

/** What a run store is looked up from: a session (with its store) or a standalone host. */
export interface RunOwner {
  /** The owning session, when there is one. */
  readonly session?: { readonly id: string; readonly store?: SessionStore | undefined } | null;
}

const fallback = new WeakMap<object, SessionStore>();

/** The store a host's runs go to. */
export function runStoreOf(host: object & RunOwner): SessionStore {
  const session = host.session ?? null;
  if (session !== null && session.store !== undefined) return session.store;
  const key: object = session ?? host;
  let store = fallback.get(key);
  if (store === undefined) {
    // Finished runs are only read back to tell a late `resume` that the run ended; keeping every
    // one would grow a long-lived session without a store by a record per run.
    store = new MemoryStore({ keepFinishedRuns: 64 });
    fallback.set(key, store);
  }
  return store;
}
