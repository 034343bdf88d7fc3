/**
 * The OpenAI chat-completions message format: how a conversation (system, user and assistant
 * messages, tool requests and tool responses) is sent to an OpenAI-compatible server.
 *
 * @module
 */

import { renderJson } from "../../core/json_safe.ts";
import type { ConversationItem } from "../endpoint.ts";

/** One tool call in an assistant message, as the OpenAI wire format carries it. */
export interface OpenAIToolCall {
  /** The call id. */
  id: string;
  /** Always `"function"`. */
  type: "function";
  /** The function and its arguments as JSON text. */
  function: { name: string; arguments: string };
}

/** One message in OpenAI chat-completions form. */
export interface OpenAIChatMessage {
  /** `system`, `user`, `assistant` or `tool`. */
  role: "system" | "user" | "assistant" | "tool";
  /** The text, or `null` for an assistant message that only calls tools. */
  content: string | null;
  /** Tool calls the assistant made (every call of its turn, in order). */
  tool_calls?: OpenAIToolCall[];
  /** Which tool call a `tool` message answers. */
  tool_call_id?: string;
}

function text(content: unknown): string {
  return typeof content === "string" ? content : renderJson(content);
}

function contextText(context: unknown): string {
  if (typeof context === "string") return context;
  if (Array.isArray(context)) {
    return context.filter((c) => typeof c === "string" && c !== "").join("\n");
  }
  return "";
}

interface ActionContent {
  function?: unknown;
  arguments?: unknown;
  output?: unknown;
  callId?: unknown;
  context?: unknown;
}

/**
 * Renders a conversation as OpenAI chat messages, the way strict chat templates require it:
 *
 * - an assistant turn becomes ONE assistant message carrying its text and ALL the tool calls
 *   that follow it (`content: null` when the turn has no text), then one `tool` message per
 *   answered call, in the order the answers were added;
 * - tool requests with no assistant message before them (direct `act` calls) are carried by an
 *   assistant message with `content: null`; a response without its request gets the call
 *   reconstructed from the response;
 * - a response's `context` (strings hooks added for the model) is appended to its tool message.
 *
 * @example A turn with text and two tool calls
 * ```ts
 * import { toOpenAIMessages } from "@hookscope/core/service";
 * import assert from "node:assert/strict";
 *
 * const chat = toOpenAIMessages([
 *   { role: "user", content: "look around" },
 *   { role: "assistant", content: "Checking." },
 *   { role: "action_request", content: { function: "ls", arguments: {}, callId: "c1" } },
 *   { role: "action_response", content: { function: "ls", arguments: {}, output: ["a"], callId: "c1" } },
 *   { role: "action_request", content: { function: "pwd", arguments: {}, callId: "c2" } },
 *   { role: "action_response", content: { function: "pwd", arguments: {}, output: "/w", callId: "c2" } },
 * ]);
 * assert.deepEqual(chat.map((m) => m.role), ["user", "assistant", "tool", "tool"]);
 * assert.deepEqual(chat[1].tool_calls?.map((c) => c.id), ["c1", "c2"]);
 * assert.deepEqual(chat[3], { role: "tool", tool_call_id: "c2", content: "/w" });
 * ```
 */
export function toOpenAIMessages(items: readonly ConversationItem[]): OpenAIChatMessage[] {
  const out: OpenAIChatMessage[] = [];
  let assistant: OpenAIChatMessage | null = null;
  let answers: OpenAIChatMessage[] = [];
  const flush = () => {
    if (assistant !== null) {
      if (assistant.tool_calls !== undefined && assistant.content === "") assistant.content = null;
      out.push(assistant, ...answers);
    }
    assistant = null;
    answers = [];
  };
  const addCall = (c: ActionContent, id: string) => {
    assistant ??= { role: "assistant", content: null };
    const calls: OpenAIToolCall[] = assistant.tool_calls ?? (assistant.tool_calls = []);
    if (calls.some((call) => call.id === id)) return;
    calls.push({
      id,
      type: "function",
      function: { name: String(c.function ?? ""), arguments: renderJson(c.arguments ?? {}) },
    });
  };
  for (const item of items) {
    const role = item.role;
    if (role === "system" || role === "user") {
      flush();
      out.push({ role, content: text(item.content) });
    } else if (role === "assistant") {
      flush();
      const content = item.content as { text?: unknown } | string | null;
      assistant = {
        role: "assistant",
        content: typeof content === "string"
          ? content
          : content === null || content === undefined
          ? ""
          : text(content.text ?? content),
      };
    } else if (role === "action_request" || role === "action_response") {
      const c = (item.content ?? {}) as ActionContent;
      const id = typeof c.callId === "string" && c.callId !== "" ? c.callId : String(item.id ?? "");
      addCall(c, id);
      if (role === "action_response") {
        const extra = contextText(c.context);
        const body = text(c.output);
        answers.push({
          role: "tool",
          tool_call_id: id,
          content: extra === "" ? body : `${body}\n\n${extra}`,
        });
      }
    }
  }
  flush();
  return out;
}
