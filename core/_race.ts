// Waiting for one pending promise with a deadline and the caller's signal, and the glob matcher
// HookOptions.match uses. Private to the library.

/** Why a raced wait ended early. */
export const TIMED_OUT: unique symbol = Symbol("timed out");

/**
 * Resolves or rejects like `pending`, unless `ms` pass first (rejects with {@linkcode TIMED_OUT})
 * or `signal` aborts (rejects with its reason). One timer, cleared as soon as anything settles.
 */
export function race<T>(
  pending: PromiseLike<T>,
  ms: number,
  signal: AbortSignal | undefined,
): Promise<T> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const onAbort = (): void => {
      done();
      reject(signal!.reason);
    };
    const done = (): void => {
      if (timer !== undefined) clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    };
    if (ms !== Infinity) {
      timer = setTimeout(() => {
        done();
        reject(TIMED_OUT);
      }, ms);
    }
    signal?.addEventListener("abort", onAbort, { once: true });
    pending.then((value) => {
      done();
      resolve(value);
    }, (error) => {
      done();
      reject(error);
    });
  });
}

/** A glob on a tool name (`*` any run of characters, `?` one character) as a RegExp. */
export function globToRegExp(glob: string): RegExp {
  let source = "^";
  for (const ch of glob) {
    if (ch === "*") source += ".*";
    else if (ch === "?") source += ".";
    else source += /[\\^$.|+()[\]{}/-]/.test(ch) ? `\\${ch}` : ch;
  }
  return new RegExp(`${source}$`, "s");
}
