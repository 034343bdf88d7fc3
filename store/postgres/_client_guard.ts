// A guard against one known defect of the `postgres` client (3.4.x, porsager/postgres#1066,
// #1154, #1208): a write the client scheduled with setImmediate can run after the server closed
// the connection and throw "Cannot read properties of null (reading 'write')" from the timer,
// where no caller can catch it, which ends the process. Terminating a backend
// (pg_terminate_backend, a failover) triggers it on Deno, Node and Bun. While a PostgresStore is
// open, this guard swallows exactly that error (a TypeError thrown by `nextWrite` of the client's
// connection.js) and nothing else. The query whose bytes were lost never gets an answer: the
// store's stuck-attempt deadline abandons that connection pool and retries on a new one.

import process from "node:process";

let users = 0;
let uninstall: (() => void) | null = null;

/** Whether `error` is the client's write on a connection that is already closed. */
export function isClosedSocketWrite(error: unknown): boolean {
  if (!(error instanceof TypeError)) return false;
  const stack = typeof error.stack === "string" ? error.stack : "";
  return /\bnull\b/.test(error.message) && /socket\.write|'write'/.test(error.message) &&
    /nextWrite/.test(stack) && /postgres[\\/]+src[\\/]+connection\.js/.test(stack);
}

function install(): () => void {
  const denoLike = globalThis as unknown as {
    Deno?: unknown;
    addEventListener?: (type: string, listener: (event: Event) => void) => void;
    removeEventListener?: (type: string, listener: (event: Event) => void) => void;
  };
  if (denoLike.Deno !== undefined && typeof denoLike.addEventListener === "function") {
    const onError = (event: Event): void => {
      if (isClosedSocketWrite((event as ErrorEvent).error)) event.preventDefault();
    };
    denoLike.addEventListener("error", onError);
    return () => denoLike.removeEventListener?.("error", onError);
  }
  const onUncaught = (error: unknown): void => {
    if (isClosedSocketWrite(error)) return;
    // Not ours. With other listeners they decide; alone, restore the default (print and exit)
    // by throwing again with no listener installed.
    if (process.listenerCount("uncaughtException") > 1) return;
    process.removeListener("uncaughtException", onUncaught);
    uninstall = null;
    users = 0;
    setTimeout(() => {
      throw error;
    }, 0);
  };
  process.on("uncaughtException", onUncaught);
  return () => process.removeListener("uncaughtException", onUncaught);
}

/** Installs the guard (once per process); call the returned function when done with it. */
export function guardClientDefect(): () => void {
  users += 1;
  uninstall ??= install();
  let released = false;
  return () => {
    if (released) return;
    released = true;
    users -= 1;
    if (users <= 0 && uninstall !== null) {
      users = 0;
      uninstall();
      uninstall = null;
    }
  };
}
