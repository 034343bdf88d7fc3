// The observer's database persistence: one `insertSessionSignal` row per allowed signal.

import type { Signal } from "../core/signal.ts";
import type { SessionStore, SignalInsert } from "../store/session_store.ts";
import { sanitizeSignalPayload } from "./sanitize.ts";

/**
 * The write for each persisted signal, into `store` (or else `fallback`, the session's store);
 * throws a `TypeError` for an empty session id or when neither is a store.
 */
export function signalWriter(
  sessionId: string,
  store: SessionStore | undefined,
  fallback: SessionStore | undefined,
): (signal: Signal) => Promise<void> {
  if (typeof sessionId !== "string" || sessionId.length === 0) {
    throw new TypeError("Cannot bind persistence: sessionId must be a non-empty string");
  }
  const target = store ?? fallback;
  if (
    target === undefined || target === null ||
    typeof (target as { insertSessionSignal?: unknown }).insertSessionSignal !== "function"
  ) {
    throw new TypeError(
      `Cannot bind persistence for session "${sessionId}": no store given and the session has none`,
    );
  }
  return (signal) => {
    const opId = (signal as { opId?: unknown }).opId;
    const row: SignalInsert = {
      sessionId,
      kind: signal.constructor.name,
      opId: typeof opId === "string" ? opId : "",
      ts: Date.now(),
      payload: sanitizeSignalPayload(signal),
    };
    return target.insertSessionSignal(row);
  };
}
