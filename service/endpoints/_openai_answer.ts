// The OpenAI chat-completions response body read as a typed answer: the only place a
// non-streamed OpenAI answer is parsed.

import type { AnswerToolCall, AnswerUsage, ModelAnswer } from "../endpoint.ts";
import { argumentsText, parseToolArguments } from "../_tool_arguments.ts";
import { isRecord } from "../../core/_util.ts";

/** Whether a value looks like a chat-completions body (it has a `choices` array). */
export function isOpenAICompletion(value: unknown): value is Record<string, unknown> {
  return isRecord(value) && Array.isArray(value.choices);
}

function num(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}

function usageOf(usage: unknown): AnswerUsage | null {
  if (!isRecord(usage)) return null;
  const promptTokens = num(usage.prompt_tokens);
  const completionTokens = num(usage.completion_tokens);
  return {
    promptTokens,
    completionTokens,
    totalTokens: usage.total_tokens === undefined
      ? promptTokens + completionTokens
      : num(usage.total_tokens),
  };
}

/**
 * A chat-completions body as a {@linkcode ModelAnswer} (its first choice). A body without
 * `choices[0].message` is a `TypeError`: there is no answer to read.
 */
export function openAIAnswer(body: unknown): ModelAnswer {
  const choice = isOpenAICompletion(body) ? body.choices as unknown[] : [];
  const first = isRecord(choice[0]) ? choice[0] : null;
  const message = first !== null && isRecord(first.message) ? first.message : null;
  if (message === null) {
    throw new TypeError(`Cannot read the model's answer: the response has no choices[0].message`);
  }
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls as unknown[] : [];
  const toolCalls: AnswerToolCall[] = [];
  calls.forEach((raw, index) => {
    const call = isRecord(raw) ? raw : {};
    const fn = isRecord(call.function) ? call.function : {};
    const name = typeof fn.name === "string" ? fn.name : "";
    const value = fn.arguments;
    const parsed = parseToolArguments(value, name);
    const out: AnswerToolCall = {
      index,
      id: typeof call.id === "string" ? call.id : "",
      name,
      arguments: argumentsText(value),
      args: parsed.args,
    };
    if (parsed.error !== undefined) out.argsError = parsed.error;
    toolCalls.push(out);
  });
  const b = body as Record<string, unknown>;
  return {
    text: typeof message.content === "string" ? message.content : "",
    toolCalls,
    usage: usageOf(b.usage),
    finishReason: typeof first!.finish_reason === "string" ? first!.finish_reason : null,
    responseId: typeof b.id === "string" ? b.id : null,
    model: typeof b.model === "string" ? b.model : null,
    raw: body,
  };
}
