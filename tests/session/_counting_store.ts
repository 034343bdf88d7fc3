// A SessionStore wrapper that counts calls per method, for tests and the store-call measurement.

import type { SessionStore } from "../../store/session_store.ts";

/** A store that forwards every call to `inner` and counts the calls by method name. */
export function countingStore(
  inner: SessionStore,
): { store: SessionStore; calls: Map<string, number>; total(): number; reset(): void } {
  const calls = new Map<string, number>();
  const store = new Proxy(inner, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== "function" || typeof key !== "string") return value;
      return (...args: unknown[]) => {
        calls.set(key, (calls.get(key) ?? 0) + 1);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return {
    store,
    calls,
    total: () => [...calls.values()].reduce((a, b) => a + b, 0),
    reset: () => calls.clear(),
  };
}
