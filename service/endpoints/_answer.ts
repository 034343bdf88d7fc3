// Any value an endpoint (or a FunctionEndpoint's function) produced, as a typed answer: a
// ModelAnswer is completed, an OpenAI chat-completions body is read as one, a string is the text.

import type { AnswerToolCall, ModelAnswer } from "../endpoint.ts";
import { parseToolArguments } from "../_tool_arguments.ts";
import { isOpenAICompletion, openAIAnswer } from "./_openai_answer.ts";
import { isRecord } from "../../core/_util.ts";

/** Whether a value already is a typed answer (a string `text` and a `toolCalls` array). */
export function isModelAnswer(value: unknown): value is ModelAnswer {
  return isRecord(value) && typeof value.text === "string" && Array.isArray(value.toolCalls);
}

/** `value` as a {@linkcode ModelAnswer}; see the module comment. */
export function toModelAnswer(value: unknown): ModelAnswer {
  if (isModelAnswer(value)) {
    if (isComplete(value)) return value;
    const a = value as Partial<ModelAnswer> & Pick<ModelAnswer, "text" | "toolCalls">;
    return {
      text: a.text,
      toolCalls: a.toolCalls.map(completeCall),
      usage: a.usage ?? null,
      finishReason: a.finishReason ?? null,
      responseId: a.responseId ?? null,
      model: a.model ?? null,
      raw: "raw" in a ? a.raw : value,
    };
  }
  if (isOpenAICompletion(value)) return openAIAnswer(value);
  return {
    text: typeof value === "string" ? value : "",
    toolCalls: [],
    usage: null,
    finishReason: null,
    responseId: null,
    model: null,
    raw: value,
  };
}

/** A tool call of a hand-made answer, its arguments parsed when only the text was given. */
function completeCall(call: Partial<AnswerToolCall>, index: number): AnswerToolCall {
  const name = typeof call.name === "string" ? call.name : "";
  if (call.args !== undefined && typeof call.arguments === "string") {
    return { ...call, index: call.index ?? index, id: call.id ?? "", name } as AnswerToolCall;
  }
  const source = call.args ?? call.arguments;
  const parsed = parseToolArguments(source, name);
  const out: AnswerToolCall = {
    index: call.index ?? index,
    id: call.id ?? "",
    name,
    arguments: typeof call.arguments === "string" ? call.arguments : JSON.stringify(source ?? {}),
    args: parsed.args,
  };
  if (call.choice !== undefined) out.choice = call.choice;
  if (parsed.error !== undefined) out.argsError = parsed.error;
  return out;
}

/** Whether an answer has every field (its tool calls parsed): it is used as it is. */
function isComplete(a: ModelAnswer): boolean {
  if (
    a.usage === undefined || a.finishReason === undefined || a.responseId === undefined ||
    a.model === undefined || !("raw" in a)
  ) return false;
  for (const call of a.toolCalls) {
    if (call === null || typeof call !== "object" || call.args === undefined) return false;
  }
  return true;
}
