/**
 * A model answer read for telemetry: an OpenAI chat-completions response, a typed endpoint answer
 * (`text`, `toolCalls`, `usage`, `finishReason`, response id and model, `raw`), or the chunks of
 * a stream. Every field is read defensively: a missing one is `undefined`, never a throw.
 *
 * @module
 */

/** One tool call of an answer. */
export interface AnswerToolCall {
  /** The provider's call id. */
  id?: string;
  /** The function name. */
  name: string;
  /** The arguments (JSON text or already parsed). */
  arguments: unknown;
}

/** One choice of an answer. */
export interface AnswerChoice {
  /** Its text. */
  text: string;
  /** Its tool calls. */
  toolCalls: AnswerToolCall[];
  /** Why it stopped, when said. */
  finishReason?: string;
}

/** What telemetry reads of an answer. */
export interface Answer {
  /** The response id. */
  id?: string;
  /** The model that answered. */
  model?: string;
  /** Input and output tokens. */
  inputTokens?: number;
  /** Output tokens. */
  outputTokens?: number;
  /** The choices, in order. */
  choices: AnswerChoice[];
}

const num = (v: unknown): number | undefined =>
  typeof v === "number" && Number.isFinite(v) ? v : undefined;
const str = (v: unknown): string | undefined => typeof v === "string" && v ? v : undefined;

function toolCallsOf(calls: unknown): AnswerToolCall[] {
  if (!Array.isArray(calls)) return [];
  const out: AnswerToolCall[] = [];
  for (const call of calls as Record<string, unknown>[]) {
    if (!call || typeof call !== "object") continue;
    const fn = (call.function && typeof call.function === "object" ? call.function : call) as {
      name?: unknown;
      arguments?: unknown;
      args?: unknown;
      input?: unknown;
    };
    const c: AnswerToolCall = {
      name: str(fn.name) ?? str((call as { toolName?: unknown }).toolName) ?? "",
      arguments: fn.arguments ?? fn.args ?? fn.input ?? null,
    };
    const id = str(call.id) ?? str((call as { toolCallId?: unknown }).toolCallId);
    if (id !== undefined) c.id = id;
    out.push(c);
  }
  return out;
}

function usageOf(usage: unknown): { input?: number; output?: number } {
  if (!usage || typeof usage !== "object") return {};
  const u = usage as Record<string, unknown>;
  return {
    input: num(u.inputTokens) ?? num(u.promptTokens) ?? num(u.prompt_tokens) ??
      num(u.input_tokens),
    output: num(u.outputTokens) ?? num(u.completionTokens) ?? num(u.completion_tokens) ??
      num(u.output_tokens),
  };
}

/** Reads an answer of `invoke()`: typed first, then the OpenAI wire form (or its `raw`). */
export function readAnswer(response: unknown): Answer {
  const answer: Answer = { choices: [] };
  if (!response || typeof response !== "object") return answer;
  const r = response as Record<string, unknown>;
  const raw = (r.raw && typeof r.raw === "object" ? r.raw : null) as Record<string, unknown> | null;
  const id = str(r.responseId) ?? str(r.id) ?? str(raw?.id);
  if (id !== undefined) answer.id = id;
  const model = str(r.responseModel) ?? str(r.model) ?? str(raw?.model);
  if (model !== undefined) answer.model = model;
  const usage = { ...usageOf(raw?.usage), ...dropUndefined(usageOf(r.usage)) };
  if (usage.input !== undefined) answer.inputTokens = usage.input;
  if (usage.output !== undefined) answer.outputTokens = usage.output;
  const choices = Array.isArray(r.choices)
    ? r.choices
    : Array.isArray(raw?.choices)
    ? raw.choices as unknown[]
    : null;
  if (choices) {
    for (const c of choices as Record<string, unknown>[]) {
      const message = (c?.message ?? {}) as Record<string, unknown>;
      const choice: AnswerChoice = {
        text: typeof message.content === "string" ? message.content : "",
        toolCalls: toolCallsOf(message.tool_calls),
      };
      const reason = str(c?.finish_reason);
      if (reason !== undefined) choice.finishReason = reason;
      answer.choices.push(choice);
    }
  } else if ("text" in r || "toolCalls" in r || "finishReason" in r) {
    const choice: AnswerChoice = {
      text: typeof r.text === "string" ? r.text : "",
      toolCalls: toolCallsOf(r.toolCalls),
    };
    const reason = str(r.finishReason);
    if (reason !== undefined) choice.finishReason = reason;
    answer.choices.push(choice);
  }
  return answer;
}

function dropUndefined<T extends Record<string, unknown>>(value: T): Partial<T> {
  const out: Partial<T> = {};
  for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k as keyof T] = v as never;
  return out;
}

/** Builds an answer from a stream's chunks as they arrive. */
export class StreamAnswer {
  readonly #choices = new Map<number, AnswerChoice>();
  inputTokens?: number;
  outputTokens?: number;
  finishReason?: string;

  #choice(index: unknown): AnswerChoice {
    const key = typeof index === "number" ? index : 0;
    let choice = this.#choices.get(key);
    if (!choice) {
      choice = { text: "", toolCalls: [] };
      this.#choices.set(key, choice);
    }
    return choice;
  }

  /** Adds one chunk; returns whether it carried output (text or a tool call). */
  add(chunk: unknown): boolean {
    if (!chunk || typeof chunk !== "object") return false;
    const c = chunk as Record<string, unknown>;
    if (c.type === "text" && typeof c.text === "string") {
      this.#choice(c.choice).text += c.text;
      return true;
    }
    if (c.type === "tool_call") {
      this.#choice(c.choice).toolCalls.push(...toolCallsOf([c]));
      return true;
    }
    if (c.type === "usage") {
      const usage = usageOf(c);
      if (usage.input !== undefined) this.inputTokens = usage.input;
      if (usage.output !== undefined) this.outputTokens = usage.output;
    } else if (c.type === "done") {
      const reason = str(c.finishReason);
      if (reason !== undefined) this.finishReason = reason;
    }
    return false;
  }

  /** The answer so far. */
  answer(): Answer {
    const answer: Answer = { choices: [] };
    if (this.inputTokens !== undefined) answer.inputTokens = this.inputTokens;
    if (this.outputTokens !== undefined) answer.outputTokens = this.outputTokens;
    const keys = [...this.#choices.keys()].sort((a, b) => a - b);
    for (const key of keys) {
      const choice = this.#choices.get(key)!;
      answer.choices.push(
        this.finishReason !== undefined ? { ...choice, finishReason: this.finishReason } : choice,
      );
    }
    if (answer.choices.length === 0 && this.finishReason !== undefined) {
      answer.choices.push({ text: "", toolCalls: [], finishReason: this.finishReason });
    }
    return answer;
  }
}
