/**
 * How `hookscope serve` reads a request body that may not be a whole event: at most a limit is
 * kept and the rest read and dropped (so the answer is not lost to a connection reset while the
 * client still writes), within the request's deadline; and the event's name told from text that
 * could not be parsed whole (cut at the limit, not UTF-8, not JSON), so a refusal can still
 * answer in the event's own terms.
 *
 * @module
 */

import { abortable } from "../core/_async.ts";

/** A body read by {@linkcode readEventBody}. */
export interface EventBody {
  /** The first bytes of the body, at most the limit. */
  readonly bytes: Uint8Array;
  /** The body's size as far as it was read. */
  readonly size: number;
  /**
   * How the reading ended: the body's end, the limit of bytes to drop passed (the rest is left
   * unread), or the deadline.
   */
  readonly ending: "end" | "too-large" | "deadline";
}

/**
 * Reads `stream` to its end, keeping the first `keep` bytes and dropping the rest, unless more
 * than `drop` bytes in all arrive or `signal` aborts first (the reader is then cancelled).
 *
 * @example Keep the start of a body, drop the rest
 * ```ts
 * import { readEventBody } from "./_event_body.ts";
 * import assert from "node:assert/strict";
 *
 * const body = new Blob(["0123456789"]).stream();
 * const read = await readEventBody(body, 4, 100, new AbortController().signal);
 * assert.equal(new TextDecoder().decode(read.bytes), "0123");
 * assert.equal(read.size, 10);
 * assert.equal(read.ending, "end");
 * ```
 */
export async function readEventBody(
  stream: ReadableStream<Uint8Array> | null,
  keep: number,
  drop: number,
  signal: AbortSignal,
): Promise<EventBody> {
  const parts: Uint8Array[] = [];
  let kept = 0;
  let size = 0;
  let ending: EventBody["ending"] = "end";
  if (stream !== null) {
    const reader = stream.getReader();
    try {
      for (;;) {
        const { done, value } = await abortable(reader.read(), signal);
        if (done) break;
        size += value.length;
        if (kept < keep) {
          const part = value.length <= keep - kept ? value : value.subarray(0, keep - kept);
          parts.push(part);
          kept += part.length;
        }
        if (size > drop) {
          ending = "too-large";
          break;
        }
      }
    } catch (error) {
      if (!signal.aborted) throw error;
      ending = "deadline";
    }
    if (ending !== "end") void reader.cancel().catch(() => {});
    reader.releaseLock();
  }
  const bytes = new Uint8Array(kept);
  let at = 0;
  for (const part of parts) {
    bytes.set(part, at);
    at += part.length;
  }
  return { bytes, size, ending };
}

const SPACE = /[ \t\n\r]/;

/** The end of the JSON string starting at `at` (after its closing quote), or -1. */
function stringEnd(text: string, at: number): number {
  if (text[at] !== '"') return -1;
  for (let i = at + 1; i < text.length; i++) {
    const c = text[i];
    if (c === "\\") i++;
    else if (c === '"') return i + 1;
    else if (c < " ") return -1;
  }
  return -1;
}

/** The end of the JSON value starting at `at`, or -1 when the text ends or goes wrong first. */
function valueEnd(text: string, at: number): number {
  const c = text[at];
  if (c === '"') return stringEnd(text, at);
  if (c === "{" || c === "[") {
    let depth = 0;
    for (let i = at; i < text.length; i++) {
      const d = text[i];
      if (d === '"') {
        const end = stringEnd(text, i);
        if (end < 0) return -1;
        i = end - 1;
      } else if (d === "{" || d === "[") depth++;
      else if (d === "}" || d === "]") {
        depth--;
        if (depth === 0) return i + 1;
      }
    }
    return -1;
  }
  let i = at;
  while (i < text.length && /[-+.0-9a-zA-Z]/.test(text[i])) i++;
  return i === at ? -1 : i;
}

function skipSpace(text: string, at: number): number {
  while (at < text.length && SPACE.test(text[at])) at++;
  return at;
}

/**
 * The `hook_event_name` of an event's JSON text that could not be parsed whole (cut at a size
 * limit, or not UTF-8 or not JSON further on), read key by key at the outermost level only (a
 * name inside `tool_input` never counts). `undefined` when the text ends or goes wrong before
 * the name, the name is not a string, or it is given twice with different values.
 *
 * @example The name at the top, not the one in the tool's input
 * ```ts
 * import { eventNameOf } from "./_event_body.ts";
 * import assert from "node:assert/strict";
 *
 * const text = '{"tool_input":{"hook_event_name":"PostToolUse"},"hook_event_name":"PreToolUse","x":"cut he';
 * assert.equal(eventNameOf(text), "PreToolUse");
 * assert.equal(eventNameOf('{"tool_input":{"hook_event_name":"PostToolUse"'), undefined);
 * ```
 */
export function eventNameOf(text: string): string | undefined {
  let at = skipSpace(text, 0);
  if (text[at] !== "{") return undefined;
  let name: string | undefined;
  at = skipSpace(text, at + 1);
  for (;;) {
    const keyEnd = stringEnd(text, at);
    if (keyEnd < 0) return name;
    let key: unknown;
    try {
      key = JSON.parse(text.slice(at, keyEnd));
    } catch {
      return name;
    }
    at = skipSpace(text, keyEnd);
    if (text[at] !== ":") return name;
    at = skipSpace(text, at + 1);
    const end = valueEnd(text, at);
    if (end < 0) return name;
    if (key === "hook_event_name") {
      let value: unknown;
      try {
        value = JSON.parse(text.slice(at, end));
      } catch {
        return undefined;
      }
      if (typeof value !== "string" || (name !== undefined && name !== value)) return undefined;
      name = value;
    }
    at = skipSpace(text, end);
    if (text[at] !== ",") return name;
    at = skipSpace(text, at + 1);
  }
}
