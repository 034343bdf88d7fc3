/**
 * `sanitizeSignalPayload`: the bounded, JSON-safe payload a persisted signal row carries.
 *
 * @module
 */

import { Entity } from "../core/entity.ts";
import { cutText, toJsonSafe } from "../core/json_safe.ts";
import type { Signal } from "../core/signal.ts";
import { MessageAdded } from "./signal.ts";

/** The default payload cap: 16 KiB of UTF-8 JSON. */
export const MAX_SIGNAL_PAYLOAD_BYTES = 16_384;

/** Nesting levels a signal payload keeps; deeper values become `"[Depth]"` and the payload is marked. */
export const MAX_SIGNAL_PAYLOAD_DEPTH = 64;

/** Whether a JSON-safe value holds a `"[Depth]"` cut at exactly `maxDepth`. */
function cutAtDepth(value: unknown, maxDepth: number, depth = 0): boolean {
  if (typeof value === "string") return depth === maxDepth && value === "[Depth]";
  if (value === null || typeof value !== "object" || depth >= maxDepth) return false;
  const items = Array.isArray(value) ? value : Object.values(value);
  for (const item of items) if (cutAtDepth(item, maxDepth, depth + 1)) return true;
  return false;
}

const SKIPPED_FIELDS: ReadonlySet<string> = new Set(["id", "data", "emitterRole", "timestamp"]);

/**
 * The UTF-8 byte length of a string, without encoding it. A lone surrogate counts 3 bytes (what
 * `TextEncoder` writes for its replacement character).
 *
 * @example
 * ```ts
 * import { utf8ByteLength } from "@hookscope/core/session";
 * import assert from "node:assert/strict";
 *
 * assert.equal(utf8ByteLength("aé€😀"), 1 + 2 + 3 + 4);
 * ```
 */
export function utf8ByteLength(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

/** Bytes a code point takes inside a JSON string literal once escaped and UTF-8 encoded. */
function escapedCost(code: number): number {
  if (code === 0x22 || code === 0x5c) return 2; // \" and \\
  if (code < 0x20) {
    return code === 0x08 || code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d
      ? 2
      : 6;
  }
  if (code < 0x80) return 1;
  if (code < 0x800) return 2;
  if (code >= 0xd800 && code <= 0xdfff) return 6; // a lone surrogate is written as \uXXXX
  if (code < 0x10000) return 3;
  return 4;
}

/** The longest prefix of `text` whose escaped JSON string body fits in `budget` bytes. */
function fittingPrefix(text: string, budget: number): string {
  let used = 0;
  let i = 0;
  while (i < text.length) {
    const code = text.codePointAt(i) as number;
    const width = code > 0xffff ? 2 : 1;
    const cost = escapedCost(code);
    if (used + cost > budget) break;
    used += cost;
    i += width;
  }
  return text.slice(0, i);
}

function renderData(data: unknown): unknown {
  if (data instanceof Entity) return data.toJSON();
  if (typeof data === "string") return data;
  if (data !== null && typeof data === "object") {
    return toJsonSafe(data, { maxDepth: MAX_SIGNAL_PAYLOAD_DEPTH });
  }
  return String(data);
}

function messageRef(message: unknown): Record<string, string> | undefined {
  if (message === null || typeof message !== "object") return undefined;
  const m = message as Record<string, unknown>;
  const ref: Record<string, string> = {};
  for (const key of ["id", "role", "sender", "recipient"]) {
    const value = m[key];
    if (value !== null && value !== undefined) ref[key] = String(value);
  }
  return Object.keys(ref).length > 0 ? ref : undefined;
}

function collect(signal: Signal): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const fields = signal as unknown as Record<string, unknown>;
  for (const key of Object.keys(signal)) {
    if (SKIPPED_FIELDS.has(key)) continue;
    const value = fields[key];
    if (value === null || value === undefined || value === "") continue;
    out[key] = value;
  }
  const data = signal.data;
  if (signal instanceof MessageAdded) {
    const ref = messageRef(data);
    if (ref !== undefined) out.messageRef = ref;
  } else if (data !== null && data !== undefined) {
    out.data = renderData(data);
  }
  return out;
}

/**
 * The JSON-safe payload persisted for a signal, at most `maxBytes` (default 16 384) bytes of
 * UTF-8 JSON:
 *
 * - every own field of the signal except `id`, `data` and `emitterRole`, skipping `null`,
 *   `undefined` and `""` (so `createdAt`, `metadata` (even `{}`), `schemaVersion` and subclass
 *   fields such as `point` and `payload` are kept);
 * - for {@linkcode MessageAdded}, `messageRef` (`id`, `role`, `sender`, `recipient` as strings,
 *   nulls omitted) and never the message body;
 * - for other signals with data, `data`: an element's `toJSON()`, an object or array as JSON-safe
 *   values, anything else as its string rendering;
 * - anything not JSON-native is made so (cycles, BigInt, functions, …); a total failure yields
 *   `{ sanitizeError }`.
 *
 * When the JSON is longer than `maxBytes`, the result is `{ truncated: true, originalBytes, data }`
 * where `data` is the longest prefix of the original JSON text (never splitting a character) such
 * that the whole object, JSON escaping included, is at most `maxBytes` bytes. A `maxBytes` too
 * small to hold even `{ truncated, originalBytes, data: "" }` throws a `RangeError` instead of
 * returning something over the bound (the 16 384 default always fits).
 *
 * @example Small payloads pass through; large ones are cut
 * ```ts
 * import { sanitizeSignalPayload } from "@hookscope/core/session";
 * import { Signal } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const small = new Signal({ data: "hello", createdAt: 1 });
 * assert.deepEqual(sanitizeSignalPayload(small), {
 *   createdAt: 1, metadata: {}, schemaVersion: 1, data: "hello",
 * });
 * const big = sanitizeSignalPayload(new Signal({ data: '"'.repeat(40_000) }));
 * assert.equal(big.truncated, true);
 * assert.ok(new TextEncoder().encode(JSON.stringify(big)).length <= 16_384);
 * ```
 */
export function sanitizeSignalPayload(
  signal: Signal,
  maxBytes: number = MAX_SIGNAL_PAYLOAD_BYTES,
): Record<string, unknown> {
  if (typeof maxBytes !== "number" || !Number.isInteger(maxBytes) || maxBytes < 1) {
    throw new RangeError(
      `Cannot sanitize signal payload: maxBytes must be a positive integer; got ${
        String(maxBytes)
      }`,
    );
  }
  let payload: Record<string, unknown>;
  let serialized: string;
  try {
    payload = toJsonSafe(collect(signal), { maxDepth: MAX_SIGNAL_PAYLOAD_DEPTH }) as Record<
      string,
      unknown
    >;
    // A cut by depth is marked in the row, like a cut by size: never silent.
    if (cutAtDepth(payload, MAX_SIGNAL_PAYLOAD_DEPTH)) {
      payload = { ...payload, truncated: true, truncatedReason: "depth" };
    }
    serialized = JSON.stringify(payload);
  } catch (error) {
    let text: string;
    try {
      text = String(error);
    } catch {
      text = "[Unrenderable]";
    }
    return { sanitizeError: cutText(text, 256) };
  }
  const originalBytes = utf8ByteLength(serialized);
  if (originalBytes <= maxBytes) return payload;
  const shell = { truncated: true, originalBytes, data: "" };
  const budget = maxBytes - utf8ByteLength(JSON.stringify(shell));
  if (budget < 0) {
    throw new RangeError(
      `Cannot sanitize signal payload: maxBytes ${maxBytes} cannot hold even the truncation ` +
        `marker (${maxBytes - budget} bytes) for a ${originalBytes}-byte payload`,
    );
  }
  if (budget === 0) return shell;
  const cut = { truncated: true, originalBytes, data: fittingPrefix(serialized, budget) };
  // The prefix was measured exactly; re-measure anyway so the bound never depends on that.
  return utf8ByteLength(JSON.stringify(cut)) <= maxBytes ? cut : shell;
}
