/**
 * What `hookscope hook` and `hookscope serve` share: opening the store once, answering one
 * Claude Code event in a session of that store, and printing JSON that a terminal cannot misread.
 *
 * @module
 */

import {
  answerClaudeEvent,
  type ClaudeEventAnswer,
  ClaudeEventError,
} from "../claude/answer_event.ts";
import type { Policy } from "../claude/policy.ts";
import { Session } from "../session/session.ts";
import { StoreConflictError } from "../store/store_errors.ts";
import type { SessionStore } from "../store/session_store.ts";
import type { WriteBehind } from "./_write_behind.ts";

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

/** Answers one parsed event in the session `session_id` of `store`, with `policy` applied. */
export async function answerInStore(
  store: SessionStore,
  policy: Policy,
  event: unknown,
  timeoutMs: number,
  options?: {
    known?: Set<string>;
    deferRecord?: (recorded: Promise<void>) => void;
    /** Queue the event's writes behind the answer (`serve`); needs `deferRecord`. */
    writeBehind?: WriteBehind;
  },
): Promise<ClaudeEventAnswer> {
  const id = (event as { session_id?: unknown } | null)?.session_id;
  if (typeof id !== "string" || id === "" || id.length > 200) {
    throw new ClaudeEventError("session_id must be a non-empty string of at most 200 characters");
  }
  const known = options?.known;
  if (known?.has(id)) {
    // This process already made sure the row exists.
  } else if ((await store.getSession(id)) === undefined) {
    try {
      await store.createSession({ id, status: "created", model: "claude-code" } as never);
    } catch (error) {
      if (!(error instanceof StoreConflictError)) throw error;
    }
  }
  if (known) {
    if (known.size >= 10_000) known.clear();
    known.add(id);
  }
  // The session row is written before the answer (once per session and process; a conflict
  // means another process made it); the rest of the event's writes may follow the answer.
  const view = options?.deferRecord ? options.writeBehind?.view() : undefined;
  const session = new Session({ id, store: view?.store ?? store, name: "claude-code" });
  const undo = policy(session);
  try {
    const defer = options?.deferRecord;
    return await answerClaudeEvent(session, event, {
      timeoutMs,
      ...(defer
        ? {
          deferRecord: (recorded: Promise<void>) =>
            defer(view ? recorded.then(() => view.settled()) : recorded),
        }
        : {}),
    });
  } finally {
    if (typeof undo === "function") undo();
  }
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
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no complete event on stdin within ${ms} ms`)), ms);
  });
  try {
    await Promise.race([
      (async () => {
        for await (const chunk of stream) {
          const bytes = typeof chunk === "string" ? encoder.encode(chunk) : chunk;
          size += bytes.length;
          if (size > max) throw new Error(`the event is larger than ${max} bytes`);
          parts.push(bytes);
        }
      })(),
      expired,
    ]);
  } finally {
    clearTimeout(timer);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    all.set(part, at);
    at += part.length;
  }
  return new TextDecoder("utf-8", { fatal: true }).decode(all);
}

/** The largest event accepted, in bytes. */
export const MAX_EVENT_BYTES = 1 << 20;
