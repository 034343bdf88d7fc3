// The agent of the OpenAI Agents tests: two function tools (`read`, `remove`) that log each run,
// and a local fake model implementing the SDK's own `Model` interface that answers with scripted
// turns and keeps every request it got.

import { appendFileSync } from "node:fs";
import {
  Agent,
  type AgentInputItem,
  type Model,
  type ModelRequest,
  type ModelResponse,
  setTracingDisabled,
  tool,
  Usage,
} from "@openai/agents";
import { z } from "zod";
import type { Session } from "../../../mod.ts";

setTracingDisabled(true);

/** One scripted model turn: tool calls, or a final text answer. */
export type Turn = { calls: { id: string; name: string; args: Record<string, unknown> }[] } | {
  text: string;
};

/** A model that answers with the scripted turns in order, then "done". */
export class ScriptedModel implements Model {
  readonly requests: ModelRequest[] = [];
  readonly #turns: Turn[];

  constructor(turns: Turn[]) {
    this.#turns = [...turns];
  }

  getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push(request);
    const turn = this.#turns.shift() ?? { text: "done" };
    const output = "text" in turn
      ? [{
        type: "message" as const,
        role: "assistant" as const,
        status: "completed" as const,
        content: [{ type: "output_text" as const, text: turn.text }],
      }]
      : turn.calls.map((call) => ({
        type: "function_call" as const,
        callId: call.id,
        name: call.name,
        arguments: JSON.stringify(call.args),
        status: "completed" as const,
      }));
    return Promise.resolve({ usage: new Usage(), output });
  }

  // deno-lint-ignore require-yield
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("ScriptedModel does not stream");
  }
}

/** The tool outputs the model got back, by call id, from its last request. */
export function toolOutputs(model: ScriptedModel): Record<string, unknown> {
  const input = model.requests.at(-1)?.input;
  const out: Record<string, unknown> = {};
  if (!Array.isArray(input)) return out;
  for (const item of input as AgentInputItem[]) {
    if (item.type !== "function_call_result") continue;
    const output = item.output as { type?: string; text?: string } | string;
    out[item.callId] = typeof output === "string" ? output : output.text ?? output;
  }
  return out;
}

/** The agent: `read` and `remove`, each appending a JSON line to `ran` (array or log file). */
export function makeAgent(model: Model, ran: unknown[] | string): Agent {
  const note = (entry: unknown) => {
    if (typeof ran === "string") appendFileSync(ran, JSON.stringify(entry) + "\n");
    else ran.push(entry);
  };
  const read = tool({
    name: "read",
    description: "read a file",
    parameters: z.object({ path: z.string() }),
    execute: ({ path }) => {
      note({ read: path });
      return `contents of ${path}`;
    },
  });
  const remove = tool({
    name: "remove",
    description: "remove a file",
    parameters: z.object({ path: z.string() }),
    execute: ({ path }) => {
      note({ remove: path });
      return `removed ${path}`;
    },
  });
  return new Agent({ name: "tidy", instructions: "tidy up", model, tools: [read, remove] });
}

/** The policy of the resume test: ask before every `remove`. */
export function askBeforeRemove(session: { hooks: Session["hooks"] }): void {
  session.hooks.on(
    "tool.pre",
    ({ toolName }) =>
      toolName === "remove" ? { decision: "ask", reason: "removes a file" } : undefined,
  );
}
