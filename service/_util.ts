// Private helpers shared by the service scope.

/** A signal that never aborts, made on first use (nothing is allocated at module load). */
export { neverAborted } from "../core/_abort.ts";

/** Whether a value is a thenable (await only these on hot paths). */
export { isThenable } from "../core/_util.ts";

/** Whether a value looks like an error (Error, DOMException, or any object with a string name). */
export function isErrorLike(value: unknown): value is { name: string; message: string } {
  if (value instanceof Error) return true;
  return typeof value === "object" && value !== null &&
    typeof (value as { name?: unknown }).name === "string" &&
    typeof (value as { message?: unknown }).message === "string";
}

/** Whether `error` is a cancellation: the signal's own reason, or an `AbortError`. */
export function isCancellation(error: unknown, signal: AbortSignal): boolean {
  if (signal.aborted && error === signal.reason) return true;
  return isErrorLike(error) && error.name === "AbortError";
}

/** A short text for an error or any thrown value. */
export function errorText(error: unknown): string {
  if (isErrorLike(error)) return error.message || error.name;
  if (error === undefined) return "undefined";
  try {
    return typeof error === "string" ? error : JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}

/** The class name of an event or event class. */
export function className(value: unknown): string | undefined {
  if (typeof value === "function") return (value as { name?: string }).name || undefined;
  if (typeof value === "object" && value !== null) {
    return (value as { constructor?: { name?: string } }).constructor?.name || undefined;
  }
  return undefined;
}

/** A short, safe description of a bad input value for error messages. */
export { describeValue as describe } from "../core/_util.ts";
