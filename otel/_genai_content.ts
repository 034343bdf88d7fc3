/**
 * Message content in the GenAI semantic conventions' JSON forms: `gen_ai.input.messages`,
 * `gen_ai.output.messages`, `gen_ai.system_instructions` and `gen_ai.tool.definitions`, read
 * from OpenAI chat-completions requests (what hookscope's endpoints send) and from answers.
 *
 * @module
 */

import type { Answer } from "./_genai_answer.ts";

/** One message part (`text`, `tool_call`, `tool_call_response`, or a kept provider part). */
export type GenAiPart = Record<string, unknown> & { type: string };

/** One input or output message. */
export interface GenAiMessage {
  /** `system`, `user`, `assistant` or `tool`. */
  role: string;
  /** Its parts. */
  parts: GenAiPart[];
  /** Output messages only: why generation stopped. */
  finish_reason?: string;
}

function parseArguments(text: unknown): unknown {
  if (typeof text !== "string") return text ?? null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function textParts(content: unknown): GenAiPart[] {
  if (content === null || content === undefined || content === "") return [];
  if (typeof content === "string") return [{ type: "text", content }];
  if (Array.isArray(content)) {
    const parts: GenAiPart[] = [];
    for (const part of content) {
      if (typeof part === "string") parts.push({ type: "text", content: part });
      else if (part && typeof part === "object") {
        const p = part as Record<string, unknown>;
        if (p.type === "text" && typeof p.text === "string") {
          parts.push({ type: "text", content: p.text });
        } else if (p.type === "image_url") {
          const url = (p.image_url as { url?: unknown } | undefined)?.url;
          parts.push({ type: "uri", modality: "image", uri: typeof url === "string" ? url : "" });
        } else parts.push({ type: typeof p.type === "string" ? p.type : "unknown" });
      }
    }
    return parts;
  }
  return [{ type: "text", content: JSON.stringify(content) ?? String(content) }];
}

/** The OpenAI `messages` of a request as conventions input messages, in the order sent. */
export function inputMessages(messages: unknown): GenAiMessage[] {
  if (!Array.isArray(messages)) return [];
  const out: GenAiMessage[] = [];
  for (const raw of messages) {
    if (!raw || typeof raw !== "object") continue;
    const m = raw as Record<string, unknown>;
    const role = m.role === "developer" ? "system" : String(m.role ?? "user");
    if (role === "tool") {
      out.push({
        role: "tool",
        parts: [{
          type: "tool_call_response",
          id: typeof m.tool_call_id === "string" ? m.tool_call_id : null,
          result: typeof m.content === "string" ? m.content : m.content ?? null,
        }],
      });
      continue;
    }
    const parts = textParts(m.content);
    if (role === "assistant" && Array.isArray(m.tool_calls)) {
      for (const call of m.tool_calls as Record<string, unknown>[]) {
        const fn = (call?.function ?? {}) as { name?: unknown; arguments?: unknown };
        parts.push({
          type: "tool_call",
          id: typeof call?.id === "string" ? call.id : null,
          name: typeof fn.name === "string" ? fn.name : "",
          arguments: parseArguments(fn.arguments),
        });
      }
    }
    out.push({ role, parts });
  }
  return out;
}

/**
 * System instructions given apart from the chat history (`system` or `instructions` on the
 * request), or `undefined`. System messages inside `messages` stay in the input messages, as
 * the conventions ask for instructions that are part of the chat history.
 */
export function systemInstructions(payload: Record<string, unknown>): GenAiPart[] | undefined {
  const given = payload.system ?? payload.instructions;
  if (given === undefined || given === null || given === "") return undefined;
  const parts = textParts(given);
  return parts.length > 0 ? parts : undefined;
}

/** The answer's choices as conventions output messages (one message per choice). */
export function outputMessages(answer: Answer): GenAiMessage[] {
  return answer.choices.map((choice) => {
    const parts: GenAiPart[] = choice.text ? [{ type: "text", content: choice.text }] : [];
    for (const call of choice.toolCalls) {
      parts.push({
        type: "tool_call",
        id: call.id ?? null,
        name: call.name,
        arguments: parseArguments(call.arguments),
      });
    }
    return {
      role: "assistant",
      parts,
      // The output schema requires a finish reason; an answer that never said one gets "stop".
      finish_reason: choice.finishReason ?? "stop",
    };
  });
}

/** OpenAI `tools` (`{ type: "function", function: { name, description, parameters } }`). */
export function toolDefinitions(tools: unknown): Record<string, unknown>[] | undefined {
  if (!Array.isArray(tools) || tools.length === 0) return undefined;
  const out: Record<string, unknown>[] = [];
  for (const tool of tools) {
    if (!tool || typeof tool !== "object") continue;
    const t = tool as Record<string, unknown>;
    const fn = (t.function && typeof t.function === "object" ? t.function : t) as Record<
      string,
      unknown
    >;
    const def: Record<string, unknown> = {
      type: typeof t.type === "string" ? t.type : "function",
      name: typeof fn.name === "string" ? fn.name : "",
    };
    if (typeof fn.description === "string" && fn.description) def.description = fn.description;
    if (fn.parameters && typeof fn.parameters === "object") def.parameters = fn.parameters;
    out.push(def);
  }
  return out.length > 0 ? out : undefined;
}

/**
 * A copy of `value` with `redact` applied to every string leaf (never to object keys), so the
 * JSON stays valid whatever the redaction does.
 */
export function redactDeep(value: unknown, redact: (text: string) => string, depth = 0): unknown {
  if (typeof value === "string") return redact(value);
  if (value === null || typeof value !== "object" || depth > 64) return value;
  if (Array.isArray(value)) return value.map((v) => redactDeep(v, redact, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) out[key] = redactDeep(v, redact, depth + 1);
  return out;
}
