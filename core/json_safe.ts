/**
 * JSON-safe rendering that never throws: cycles, BigInt, functions, symbols, Errors, Maps, Sets,
 * Dates, typed arrays, class instances and hostile getters all become plain JSON values.
 *
 * @module
 */

/** Options for {@linkcode toJsonSafe}. */
export interface JsonSafeOptions {
  /** How deep to descend before writing `"[Depth]"` (default 64, the stores' depth limit). */
  maxDepth?: number;
  /** How many keys or items per object or array before cutting (default 1 000). */
  maxKeys?: number;
}

const DEFAULT_DEPTH = 64;
const DEFAULT_KEYS = 1000;

/**
 * Turns any value into a JSON-native value (null, boolean, finite number, string, array, plain
 * object). Never throws.
 *
 * @example Cycles and odd values
 * ```ts
 * import { toJsonSafe } from "@hookscope/core/hooks";
 * import assert from "node:assert/strict";
 *
 * const node: Record<string, unknown> = { n: 1n, f: () => 1 };
 * node.self = node;
 * assert.deepEqual(toJsonSafe(node), { n: "1n", f: "[Function f]", self: "[Circular]" });
 * ```
 */
export function toJsonSafe(value: unknown, options?: JsonSafeOptions): unknown {
  const maxDepth = options?.maxDepth ?? DEFAULT_DEPTH;
  const maxKeys = options?.maxKeys ?? DEFAULT_KEYS;
  try {
    return convert(value, new Set(), 0, maxDepth, maxKeys);
  } catch {
    return "[Unrenderable]";
  }
}

/**
 * Renders any value as a JSON string. Never throws; the result always parses.
 *
 * @example
 * ```ts
 * import { renderJson } from "@hookscope/core/hooks";
 * import assert from "node:assert/strict";
 *
 * assert.equal(renderJson(new Map([["a", 1]])), '{"a":1}');
 * assert.equal(renderJson(undefined), "null");
 * ```
 */
export function renderJson(value: unknown, options?: JsonSafeOptions): string {
  try {
    return JSON.stringify(toJsonSafe(value, options)) ?? "null";
  } catch {
    return '"[Unrenderable]"';
  }
}

/** The length summaries are cut to by default. */
export const SUMMARY_LENGTH = 200;

/**
 * A short, human-readable rendering: strings as they are, everything else as JSON-safe text,
 * cut to at most `max` UTF-16 code units (200 by default) without splitting a surrogate pair.
 * Never throws.
 *
 * @example
 * ```ts
 * import { summarize } from "@hookscope/core/hooks";
 * import assert from "node:assert/strict";
 *
 * assert.equal(summarize({ path: "a.txt" }), '{"path":"a.txt"}');
 * assert.equal(summarize("x".repeat(500)).length, 200);
 * ```
 */
export function summarize(value: unknown, max: number = SUMMARY_LENGTH): string {
  let text: string;
  if (typeof value === "string") text = value;
  else if (value === undefined) text = "undefined";
  else text = renderJson(value, { maxDepth: 8, maxKeys: 50 });
  return cutText(text, max);
}

/**
 * Cuts a string to at most `max` UTF-16 code units without leaving half a surrogate pair.
 *
 * @example
 * ```ts
 * import { cutText } from "@hookscope/core/hooks";
 * import assert from "node:assert/strict";
 *
 * assert.equal(cutText("a😀", 2), "a");
 * ```
 */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  if (max <= 0) return "";
  let end = max;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return text.slice(0, end);
}

function convert(
  value: unknown,
  seen: Set<object>,
  depth: number,
  maxDepth: number,
  maxKeys: number,
): unknown {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      return Number.isFinite(value) ? value : String(value);
    case "bigint":
      return `${value}n`;
    case "undefined":
      return null;
    case "symbol":
      return value.toString();
    case "function":
      return `[Function ${value.name || "anonymous"}]`;
  }
  if (value === null) return null;
  const obj = value as object;
  if (seen.has(obj)) return "[Circular]";
  if (depth >= maxDepth) return "[Depth]";
  seen.add(obj);
  try {
    return convertObject(obj, seen, depth + 1, maxDepth, maxKeys);
  } catch {
    return "[Unrenderable]";
  } finally {
    seen.delete(obj);
  }
}

function convertObject(
  obj: object,
  seen: Set<object>,
  depth: number,
  maxDepth: number,
  maxKeys: number,
): unknown {
  const next = (v: unknown) => convert(v, seen, depth, maxDepth, maxKeys);
  if (Array.isArray(obj)) {
    const out: unknown[] = [];
    const n = Math.min(obj.length, maxKeys);
    for (let i = 0; i < n; i++) out.push(next(obj[i]));
    if (obj.length > n) out.push(`[+${obj.length - n} more]`);
    return out;
  }
  if (obj instanceof Date) {
    return Number.isNaN(obj.getTime()) ? "Invalid Date" : obj.toISOString();
  }
  if (obj instanceof Error) {
    const out: Record<string, unknown> = { name: obj.name, message: obj.message };
    const cause = (obj as { cause?: unknown }).cause;
    if (cause !== undefined) out.cause = next(cause);
    return out;
  }
  if (obj instanceof Map) {
    const out: Record<string, unknown> = {};
    let i = 0;
    for (const [k, v] of obj) {
      if (i++ >= maxKeys) break;
      setKey(out, typeof k === "string" ? k : renderKey(k), next(v));
    }
    return out;
  }
  if (obj instanceof Set) {
    const out: unknown[] = [];
    for (const v of obj) {
      if (out.length >= maxKeys) break;
      out.push(next(v));
    }
    return out;
  }
  if (ArrayBuffer.isView(obj)) {
    return `[${obj.constructor.name} ${obj.byteLength} bytes]`;
  }
  if (obj instanceof ArrayBuffer) return `[ArrayBuffer ${obj.byteLength} bytes]`;
  if (obj instanceof RegExp) return obj.toString();
  if (obj instanceof Promise || obj instanceof WeakMap || obj instanceof WeakSet) {
    return `[${obj.constructor.name}]`;
  }
  const toJSON = (obj as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === "function") {
    return next(toJSON.call(obj));
  }
  const out: Record<string, unknown> = {};
  const keys = Object.keys(obj);
  const n = Math.min(keys.length, maxKeys);
  for (let i = 0; i < n; i++) {
    const key = keys[i];
    let item: unknown;
    try {
      item = (obj as Record<string, unknown>)[key];
    } catch {
      setKey(out, key, "[Unreadable]");
      continue;
    }
    if (item === undefined) continue;
    setKey(out, key, next(item));
  }
  if (keys.length > n) out["[more]"] = keys.length - n;
  return out;
}

function renderKey(key: unknown): string {
  if (typeof key === "symbol") return key.toString();
  if (typeof key === "bigint") return `${key}n`;
  if (typeof key === "function") return `[Function ${key.name || "anonymous"}]`;
  if (key !== null && typeof key === "object") return renderJson(key, { maxDepth: 2 });
  return String(key);
}

/** Assigns without ever touching the prototype (a `__proto__` key stays an own property). */
function setKey(out: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") {
    Object.defineProperty(out, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  } else {
    out[key] = value;
  }
}
