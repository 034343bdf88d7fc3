// The pure half of the OpenAI-compatible stream: one parsed `chat.completion.chunk` JSON object
// in, typed StreamChunks out. No I/O, no errors of its own: the endpoint checks `error` bodies.

import type { StreamChunk, ToolCallChunk } from "../endpoint.ts";
import { isRecord } from "../../core/_util.ts";

/** The tool calls of one choice being assembled from their deltas. */
interface ChoiceCalls {
  calls: Map<number, ToolCallChunk>;
  /** The index the previous delta touched (-1: none yet). */
  last: number;
  /** One past the highest index seen. */
  next: number;
}

/** Maps parsed chunk objects of one stream to typed chunks; keeps the tool calls being built. */
export interface ChunkMapper {
  /** The chunks one parsed event yields (text and usage at once, tool calls at their finish). */
  push(json: Record<string, unknown>): StreamChunk[];
  /** The chunks left at the end of the stream: unfinished tool calls, then `done`. */
  end(): StreamChunk[];
}

/**
 * A mapper for one stream. Text deltas become `text` chunks; tool-call deltas are assembled per
 * choice and emitted complete at the choice's finish reason (or at the end); `usage` becomes a
 * `usage` chunk; the end yields `done` with the last finish reason.
 */
export function createChunkMapper(): ChunkMapper {
  const tools = new Map<number, ChoiceCalls>();
  let finishReason: string | null = null;
  const flush = (out: StreamChunk[], choice?: number): void => {
    const keys = choice === undefined ? [...tools.keys()].sort((a, b) => a - b) : [choice];
    for (const key of keys) {
      const pending = tools.get(key);
      if (!pending) continue;
      tools.delete(key);
      out.push(...[...pending.calls.values()].sort((a, b) => a.index - b.index));
    }
  };
  return {
    push(json) {
      const out: StreamChunk[] = [];
      const choices = Array.isArray(json.choices) ? json.choices : [];
      for (const choice of choices as unknown[]) {
        if (!isRecord(choice)) continue;
        const at = typeof choice.index === "number" && Number.isInteger(choice.index) &&
            choice.index > 0
          ? choice.index
          : 0;
        const delta = isRecord(choice.delta) ? choice.delta : {};
        if (typeof delta.content === "string" && delta.content !== "") {
          out.push(
            at === 0
              ? { type: "text", text: delta.content }
              : { type: "text", text: delta.content, choice: at },
          );
        }
        if (Array.isArray(delta.tool_calls)) {
          let pending = tools.get(at);
          if (!pending) tools.set(at, pending = { calls: new Map(), last: -1, next: 0 });
          for (const part of delta.tool_calls as unknown[]) {
            if (isRecord(part)) addToolDelta(pending, part, at);
          }
        }
        if (typeof choice.finish_reason === "string" && choice.finish_reason) {
          finishReason = choice.finish_reason;
          flush(out, at);
        }
      }
      const usage = json.usage;
      if (isRecord(usage)) {
        const promptTokens = num(usage.prompt_tokens);
        const completionTokens = num(usage.completion_tokens);
        out.push({
          type: "usage",
          promptTokens,
          completionTokens,
          totalTokens: usage.total_tokens === undefined
            ? promptTokens + completionTokens
            : num(usage.total_tokens),
        });
      }
      return out;
    },
    end() {
      const out: StreamChunk[] = [];
      flush(out);
      out.push({ type: "done", finishReason });
      return out;
    },
  };
}

/**
 * Adds one tool-call delta. Some OpenAI-compatible servers omit `index`: such a delta continues
 * the call with the same id, starts a new call when its id is new, and otherwise continues the
 * call the previous delta touched.
 */
function addToolDelta(pending: ChoiceCalls, part: Record<string, unknown>, choice: number): void {
  let index: number;
  if (typeof part.index === "number" && Number.isInteger(part.index) && part.index >= 0) {
    index = part.index;
  } else if (typeof part.id === "string" && part.id !== "") {
    index = pending.next;
    for (const call of pending.calls.values()) if (call.id === part.id) index = call.index;
  } else {
    index = pending.last >= 0 ? pending.last : pending.next;
  }
  pending.last = index;
  if (index >= pending.next) pending.next = index + 1;
  let call = pending.calls.get(index);
  if (!call) {
    call = choice === 0
      ? { type: "tool_call", index, id: "", name: "", arguments: "" }
      : { type: "tool_call", index, id: "", name: "", arguments: "", choice };
    pending.calls.set(index, call);
  }
  if (typeof part.id === "string" && part.id) call.id = part.id;
  const fn = isRecord(part.function) ? part.function : {};
  if (typeof fn.name === "string" && fn.name && !call.name) call.name = fn.name;
  if (typeof fn.arguments === "string") call.arguments += fn.arguments;
}

function num(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}
