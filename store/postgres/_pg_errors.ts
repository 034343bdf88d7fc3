// Which failures of the `postgres` client are a lost connection (worth retrying an idempotent
// write or a read) and how to show a connection URL without its password.

import { messageOf } from "../../core/_util.ts";

// Client-side codes of the `postgres` package and Node/Deno/Bun socket errors.
const TRANSIENT_CLIENT_CODES = new Set([
  "CONNECTION_CLOSED",
  // The client ended a connection with queries still on it: after a FATAL error such as
  // pg_terminate_backend's (the other queries pipelined on that connection get this code), or the
  // end of a pool the store replaced. The store's own close is told apart before this is asked.
  "CONNECTION_DESTROYED",
  "CONNECTION_ENDED",
  "CONNECT_TIMEOUT",
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
]);

// SQLSTATE codes: connection exceptions (08…), operator intervention (57P01 admin shutdown, as
// sent by pg_terminate_backend; 57P02 crash shutdown; 57P03 cannot connect now), serialization
// failure and deadlock (the transaction was rolled back whole).
// 53300: too many connections (a slot frees up when another client disconnects).
const TRANSIENT_SQLSTATES = new Set(["57P01", "57P02", "57P03", "40001", "40P01", "53300"]);

/** The error's `code` property when it is a string. */
export function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/** Whether the failure lost the connection or rolled back the whole transaction. */
export function isTransient(error: unknown): boolean {
  const code = errorCode(error);
  if (code === undefined) return false;
  return TRANSIENT_CLIENT_CODES.has(code) || TRANSIENT_SQLSTATES.has(code) ||
    code.startsWith("08");
}

/**
 * The message of an error (or its string form), followed by ` (<code>)` when the error has a
 * string `code` its message does not already name: a SQLSTATE or a socket code says more than
 * the message alone.
 */
export function describePgError(error: unknown): string {
  const message = messageOf(error);
  if (!(error instanceof Error)) return message;
  const code = errorCode(error);
  return code !== undefined && !message.includes(code) ? `${message} (${code})` : message;
}

/** The URL with any password replaced by `***`, for messages. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== "") parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(unparsable URL)";
  }
}
