/**
 * The tool responses already stored for a turn: what a resumed run finds when the process that
 * resumed it before ran some of the turn's calls, stored their responses and died without saving
 * the run. Used by the agent loop (those calls are not run again) and by `hookscope release`
 * (which says so).
 *
 * @module
 */

import type { ActionResult } from "./act.ts";

/** The fields of a stored message this reads (a `Message` or a store's `MessageRecord`). */
export interface StoredMessage {
  readonly id: string;
  readonly role: string;
  readonly content: unknown;
}

/**
 * The `action_response` messages after the message `turnMessageId` (the turn's assistant
 * message), by call id; empty when that message is not among `messages`.
 */
export function responsesAfter(
  messages: readonly StoredMessage[],
  turnMessageId: string | undefined,
): Map<string, ActionResult> {
  const found = new Map<string, ActionResult>();
  const turn = turnMessageId === undefined ? -1 : messages.findIndex((m) => m.id === turnMessageId);
  if (turn === -1) return found;
  for (let i = turn + 1; i < messages.length; i++) {
    const { role, content } = messages[i];
    const response = content as
      | { callId?: unknown; function?: unknown; arguments?: unknown; output?: unknown }
      | null;
    const callId = response?.callId;
    if (role !== "action_response" || typeof callId !== "string" || found.has(callId)) continue;
    const args = response!.arguments;
    found.set(callId, {
      function: typeof response!.function === "string" ? response!.function : "",
      arguments: args !== null && typeof args === "object" && !Array.isArray(args)
        ? args as Record<string, unknown>
        : {},
      output: response!.output,
    });
  }
  return found;
}
