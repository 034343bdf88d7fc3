/**
 * What `hookscope hook` and `hookscope serve` share on the wire, and nothing heavier: reading an
 * event within a size and a deadline, the fail-closed answer, and JSON a terminal cannot
 * misread. `hook --server` loads only this and the core async kit (no session, store or policy),
 * so a forwarding command hook starts fast.
 *
 * @module
 */

import { deadline } from "../core/_async.ts";

/** JSON with every character outside printable ASCII written as `\uXXXX`: valid, and inert. */
export function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[^\x20-\x7e]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/** The events whose failure must block (fail closed). */
export function blocksOnFailure(event: unknown): boolean {
  const name = (event as { hook_event_name?: unknown } | null)?.hook_event_name;
  return name === "PreToolUse" || name === "UserPromptSubmit" || typeof name !== "string";
}

/** The answer to an event hookscope could not evaluate: deny at `PreToolUse`, block a prompt. */
export function failedAnswer(
  event: unknown,
  reason: string,
): { output: Record<string, unknown>; blocks: boolean } {
  const name = (event as { hook_event_name?: unknown } | null)?.hook_event_name;
  if (name === "PreToolUse") {
    return {
      output: {
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "deny",
          permissionDecisionReason: reason,
        },
      },
      blocks: true,
    };
  }
  if (name === "UserPromptSubmit") return { output: { decision: "block", reason }, blocks: true };
  return { output: {}, blocks: typeof name !== "string" };
}

/**
 * The answer that blocks whatever the event is, for a request `serve` cannot tell the event of
 * (not UTF-8 or not JSON before its name, no name, a wrong bearer token, …). Checked with the
 * real Claude Code: `decision: "block"` denies a `PreToolUse` call and blocks a prompt, and
 * `continue: false` stops the run, so a `Stop` is not turned into "keep going" by the block;
 * `continue: false` alone lets a `PreToolUse` call run, and a `hookSpecificOutput` naming another
 * event makes Claude Code ignore the whole answer.
 */
export function blockAnything(reason: string): Record<string, unknown> {
  return { continue: false, stopReason: reason, decision: "block", reason };
}

/** Reads at most `max` bytes of a stream as text, within `ms`. */
export async function readLimited(
  stream: AsyncIterable<Uint8Array | string>,
  max: number,
  ms: number,
): Promise<string> {
  const parts: Uint8Array[] = [];
  let size = 0;
  const encoder = new TextEncoder();
  await deadline(
    (async () => {
      for await (const chunk of stream) {
        const bytes = typeof chunk === "string" ? encoder.encode(chunk) : chunk;
        size += bytes.length;
        if (size > max) throw new Error(`the event is larger than ${max} bytes`);
        parts.push(bytes);
      }
    })(),
    ms,
    undefined,
    () => new Error(`no complete event on stdin within ${ms} ms`),
  );
  const all = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    all.set(part, at);
    at += part.length;
  }
  return new TextDecoder("utf-8", { fatal: true }).decode(all);
}

/** The header `serve` sets on every protocol answer; the forwarders take nothing without it. */
export const ANSWER_HEADER = "x-hookscope-answer";
/** Its value. */
export const ANSWER_HEADER_VALUE = "claude-hook";

/** The largest event accepted, in bytes. */
export const MAX_EVENT_BYTES = 1 << 20;
