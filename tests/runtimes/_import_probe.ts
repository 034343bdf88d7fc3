/**
 * Import probe, run as its own process: instruments the global APIs a module must not use at
 * load (timers, AbortController, AbortSignal statics, random values, fetch, WebSocket), then
 * imports each module named on the command line (paths relative to the repository root) and prints
 * one line `PROBE <json>` with the calls seen while importing, per module.
 *
 * Usage: `<runtime> tests/runtimes/_import_probe.ts mod.ts service/mod.ts …`
 *
 * @module
 */

import process from "node:process";

interface Call {
  api: string;
  module: string;
}

const calls: Call[] = [];
/** The module being imported (or the self-test); `null` records nothing (runtime internals). */
let current: string | null = null;
const g = globalThis as unknown as Record<string, unknown>;

const ROOT_PATH = decodeURIComponent(new URL("../../", import.meta.url).pathname);
(Error as { stackTraceLimit?: number }).stackTraceLimit = 200;

/**
 * Whether the current stack runs code of this repository (a library module, or a test fixture),
 * not only the runtime's or the TypeScript loader's own code (tsx, on Node 24 in this thread,
 * writes its cache with setImmediate while it compiles a module for the first time).
 */
function fromOurCode(): boolean {
  const stack = new Error().stack ?? "";
  for (const line of stack.split("\n").slice(1)) {
    const at = line.indexOf(ROOT_PATH);
    if (at < 0) continue;
    const rest = line.slice(at + ROOT_PATH.length);
    if (rest.startsWith("node_modules/") || rest.startsWith("tests/runtimes/")) continue;
    return true;
  }
  return false;
}

function record(api: string): void {
  if (current === null) return;
  if (current !== "(self-test)" && !fromOurCode()) return;
  calls.push({ api, module: current });
}

// Some globals are lazy getters whose first read loads runtime internals (Node 24 loads undici
// for WebSocket, which makes an AbortController): read them all before instrumenting anything.
for (const name of ["fetch", "WebSocket", "EventSource", "crypto", "AbortController"]) void g[name];

function wrapFunction(owner: Record<string, unknown>, key: string, label: string): void {
  const original = owner[key];
  if (typeof original !== "function") return;
  const wrapped = function (this: unknown, ...args: unknown[]): unknown {
    record(label);
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  };
  try {
    Object.defineProperty(owner, key, { value: wrapped, configurable: true, writable: true });
  } catch {
    owner[key] = wrapped;
  }
}

function wrapClass(owner: Record<string, unknown>, key: string): void {
  const Original = owner[key] as (new (...args: unknown[]) => object) | undefined;
  if (typeof Original !== "function") return;
  const Wrapped = new Proxy(Original, {
    construct(target, args, newTarget) {
      record(`new ${key}`);
      return Reflect.construct(target, args, newTarget);
    },
  });
  Object.defineProperty(owner, key, { value: Wrapped, configurable: true, writable: true });
}

for (const name of ["setTimeout", "setInterval", "setImmediate", "fetch"]) {
  wrapFunction(g, name, name);
}
wrapClass(g, "AbortController");
wrapClass(g, "WebSocket");
wrapClass(g, "EventSource");
wrapFunction(AbortSignal as unknown as Record<string, unknown>, "timeout", "AbortSignal.timeout");
wrapFunction(AbortSignal as unknown as Record<string, unknown>, "any", "AbortSignal.any");
wrapFunction(AbortSignal as unknown as Record<string, unknown>, "abort", "AbortSignal.abort");
wrapFunction(Math as unknown as Record<string, unknown>, "random", "Math.random");
const crypto = g.crypto as Record<string, unknown> | undefined;
if (crypto) {
  // Methods live on Crypto.prototype: wrap them on the instance.
  for (const key of ["getRandomValues", "randomUUID"]) {
    const original = crypto[key];
    if (typeof original !== "function") continue;
    Object.defineProperty(crypto, key, {
      configurable: true,
      writable: true,
      value: function (this: unknown, ...args: unknown[]): unknown {
        record(`crypto.${key}`);
        return (original as (...a: unknown[]) => unknown).apply(crypto, args);
      },
    });
  }
}

// Prove the instrumentation is live before trusting an empty result.
const selfTest: string[] = [];
{
  current = "(self-test)";
  const before = calls.length;
  clearTimeout(setTimeout(() => {}, 0) as never);
  new AbortController();
  (globalThis.crypto as Crypto | undefined)?.getRandomValues(new Uint8Array(1));
  Math.random();
  for (const c of calls.slice(before)) selfTest.push(c.api);
  calls.length = before;
  current = null;
}

const root = new URL("../../", import.meta.url);
const errors: { module: string; error: string }[] = [];
for (const path of process.argv.slice(2)) {
  current = path;
  try {
    await import(new URL(path, root).href);
  } catch (error) {
    errors.push({ module: path, error: String((error as Error)?.stack ?? error) });
  }
}
current = null;
console.log(`PROBE ${JSON.stringify({ calls, errors, selfTest })}`);
