// Waiting for one pending promise with a deadline and the caller's signal. Private to the
// library. (The glob matcher of HookOptions.match is core/_glob.ts.)

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
