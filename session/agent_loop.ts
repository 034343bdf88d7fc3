/**
 * The agent loop: `chat` (one model turn), `operate` (model → tools → model, up to `maxTurns`)
 * and `operateStream` (the same, yielding text as it arrives). Tool calls go through the
 * branch's action path, so every gate, guard and hook applies.
 *
 * @module
 */

import { anySignal } from "../core/_abort.ts";
import { EventStatus } from "../core/event.ts";
import { renderJson } from "../core/json_safe.ts";
import type { ActionManager } from "../action/manager.ts";
import type { StreamChunk } from "../service/endpoint.ts";
import type { IModel } from "../service/imodel.ts";
import type { ActionRequestInit } from "../action/manager.ts";
import type { ActionResult, ActOptions } from "./act.ts";
import { isBlocked } from "./_blocked.ts";
import type { Message, MessageInit } from "./message.ts";

/** The part of a branch the agent loop uses. */
export interface AgentHost {
  /** The branch id. */
  readonly id: string;
  /** The model, or `null`. */
  readonly model: IModel | null;
  /** The conversation so far. */
  readonly messages: readonly Message[];
  /** The branch's tools. */
  readonly actions: ActionManager;
  /** Adds a message. */
  addMessage(message: MessageInit): Promise<Message>;
  /** Runs one tool action through the gate, the hooks and the tool. */
  act(request: ActionRequestInit, options?: ActOptions): Promise<ActionResult>;
}

/** One message in OpenAI chat-completions form. */
export interface ChatMessage {
  /** `system`, `user`, `assistant` or `tool`. */
  role: "system" | "user" | "assistant" | "tool";
  /** The text, or `null` for a pure tool-call message. */
  content: string | null;
  /** Tool calls the assistant made. */
  tool_calls?: { id: string; type: "function"; function: { name: string; arguments: string } }[];
  /** Which tool call a `tool` message answers. */
  tool_call_id?: string;
}

/** A tool call the model asked for. */
export interface ModelToolCall {
  /** The provider's call id. */
  id: string;
  /** The tool's name. */
  name: string;
  /** The arguments as JSON text. */
  arguments: string;
}

/** Options for {@linkcode chat}, {@linkcode operate} and {@linkcode operateStream}. */
export interface AgentRunOptions {
  /** Cancels the model call and the tools. */
  signal?: AbortSignal;
  /** At most this many model turns in `operate` (default 8). */
  maxTurns?: number;
  /** Extra request fields (`temperature`, …) sent with every model call. */
  request?: Record<string, unknown>;
}

/** What {@linkcode operate} resolves to. */
export interface OperateResult {
  /** The last assistant message. */
  message: Message;
  /** How many model turns ran. */
  turns: number;
  /** Every tool action taken, in order. */
  actions: ActionResult[];
  /** `"answer"` when the model stopped calling tools, `"maxTurns"` when the limit was hit. */
  stoppedBy: "answer" | "maxTurns";
}

/** What {@linkcode operateStream} yields. */
export type AgentStreamEvent =
  | { type: "text"; text: string; turn: number }
  | { type: "tool_call"; call: ModelToolCall; turn: number }
  | { type: "tool_result"; result: ActionResult; blocked: boolean; turn: number }
  | { type: "done"; result: OperateResult };

function text(content: unknown): string {
  return typeof content === "string" ? content : renderJson(content);
}

/**
 * Renders branch messages as OpenAI chat messages: each action request becomes an assistant
 * tool call and each action response a `tool` message answering it.
 *
 * @example
 * ```ts
 * import { toChatMessages, type Message } from "@hookscope/core/session";
 * import assert from "node:assert/strict";
 *
 * const base = { id: "x", createdAt: 0, branchId: null, sender: null, recipient: null };
 * const messages: Message[] = [
 *   { ...base, role: "user", content: "list files" },
 *   { ...base, role: "action_request", content: { function: "ls", arguments: {}, callId: "c1" } },
 *   { ...base, role: "action_response", content: { function: "ls", arguments: {}, output: ["a"], callId: "c1" } },
 * ];
 * const chat = toChatMessages(messages);
 * assert.equal(chat[1].tool_calls?.[0].id, "c1");
 * assert.deepEqual(chat[2], { role: "tool", tool_call_id: "c1", content: '["a"]' });
 * ```
 */
export function toChatMessages(messages: readonly Message[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const m of messages) {
    if (m.role === "system" || m.role === "user") {
      out.push({ role: m.role, content: text(m.content) });
    } else if (m.role === "assistant") {
      const content = m.content as { text?: unknown } | string;
      out.push({
        role: "assistant",
        content: typeof content === "string" ? content : text(content?.text ?? content),
      });
    } else {
      const c = (m.content ?? {}) as {
        function?: string;
        arguments?: unknown;
        output?: unknown;
        callId?: string;
      };
      const id = c.callId ?? m.id;
      if (m.role === "action_request") {
        out.push({
          role: "assistant",
          content: null,
          tool_calls: [{
            id,
            type: "function",
            function: { name: String(c.function ?? ""), arguments: renderJson(c.arguments ?? {}) },
          }],
        });
      } else {
        out.push({ role: "tool", tool_call_id: id, content: text(c.output) });
      }
    }
  }
  return out;
}

function requireModel(host: AgentHost): IModel {
  if (!host.model) throw new TypeError(`Cannot run the agent: branch ${host.id} has no model`);
  return host.model;
}

function buildRequest(host: AgentHost, options: AgentRunOptions | undefined, withTools: boolean) {
  const request: Record<string, unknown> = {
    ...(options?.request ?? {}),
    messages: toChatMessages(host.messages),
  };
  const schemas = withTools ? host.actions.schemas() : [];
  if (schemas.length > 0) request.tools = schemas;
  return request;
}

function parseCompletion(response: unknown): { text: string; toolCalls: ModelToolCall[] } {
  const message = (response as { choices?: { message?: Record<string, unknown> }[] } | null)
    ?.choices?.[0]?.message;
  if (!message || typeof message !== "object") {
    throw new TypeError(`Cannot read the model's answer: the response has no choices[0].message`);
  }
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
  const toolCalls: ModelToolCall[] = [];
  for (
    const call of calls as { id?: unknown; function?: { name?: unknown; arguments?: unknown } }[]
  ) {
    const name = checkToolName(call?.function?.name, call?.id);
    toolCalls.push({
      id: typeof call.id === "string" && call.id ? call.id : crypto.randomUUID(),
      name,
      arguments: argumentsText(call.function?.arguments),
    });
  }
  return { text: typeof message.content === "string" ? message.content : "", toolCalls };
}

/**
 * A tool call's function name. A call without one cannot be run or answered (the conversation
 * would hold a tool call with no name), so it is a `TypeError` rather than silently dropped.
 */
function checkToolName(name: unknown, id: unknown): string {
  if (typeof name === "string" && name.length > 0) return name;
  throw new TypeError(
    `Cannot run the model's tool call${
      typeof id === "string" && id ? ` "${id}"` : ""
    }: it has no function name`,
  );
}

/**
 * A tool call's arguments as JSON text. Some OpenAI-compatible servers send an object instead of
 * a string: it is kept (as its JSON). Absent arguments are `{}`. Any other value is kept as its
 * JSON too, so the tool call is answered with "Invalid tool arguments" instead of running the
 * tool with arguments the model never gave.
 */
function argumentsText(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === undefined || value === null) return "{}";
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

async function invokeModel(
  host: AgentHost,
  options: AgentRunOptions | undefined,
  withTools: boolean,
  signal?: AbortSignal,
) {
  const model = requireModel(host);
  const abort = signal ?? options?.signal;
  const event = await model.invoke(
    buildRequest(host, options, withTools),
    abort ? { signal: abort } : undefined,
  );
  if (event.status !== EventStatus.COMPLETED) throw event.execution.error;
  return parseCompletion(event.response);
}

/** One model turn: yields events while it runs and returns the answer and the tool calls. */
type ModelTurn = (
  turn: number,
  signal: AbortSignal,
) => AsyncGenerator<AgentStreamEvent, { text: string; toolCalls: ModelToolCall[] }>;

/**
 * Runs one tool call from the model. Malformed JSON arguments and a blocking `tool.pre` guard do
 * not end the loop: the model is told what went wrong in the tool's response message. Any other
 * rejection of `act` (an abort, a failing message callback) ends the loop with that error; it is
 * not reported as a block and adds no second request/response pair.
 */
async function runToolCall(
  host: AgentHost,
  call: ModelToolCall,
  signal: AbortSignal | undefined,
): Promise<{ result: ActionResult; blocked: boolean }> {
  let args: Record<string, unknown>;
  try {
    const parsed = JSON.parse(call.arguments || "{}");
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
      throw new TypeError("arguments must be a JSON object");
    }
    args = parsed;
  } catch (error) {
    const output = { error: `Invalid tool arguments: ${(error as Error).message}` };
    await addToolExchange(host, call, {}, output);
    return { result: { function: call.name, arguments: {}, output }, blocked: false };
  }
  const options: ActOptions = { suppressErrors: true, callId: call.id };
  if (signal) options.signal = signal;
  try {
    return {
      result: await host.act({ function: call.name, arguments: args }, options),
      blocked: false,
    };
  } catch (error) {
    if (signal?.aborted || !isBlocked(error)) throw error;
    const message = error instanceof Error ? error.message : String(error);
    const output = { error: `Blocked by a tool.pre guard: ${message}` };
    await addToolExchange(host, call, args, output);
    return { result: { function: call.name, arguments: args, output }, blocked: true };
  }
}

async function addToolExchange(
  host: AgentHost,
  call: ModelToolCall,
  args: Record<string, unknown>,
  output: unknown,
): Promise<void> {
  await host.addMessage({
    role: "action_request",
    content: { function: call.name, arguments: args, callId: call.id },
    sender: host.id,
    recipient: call.name,
  });
  await host.addMessage({
    role: "action_response",
    content: { function: call.name, arguments: args, output, callId: call.id },
    sender: call.name,
    recipient: host.id,
  });
}

/**
 * One model turn: the instruction is added as a user message, the history (system prompt
 * first) goes to the model, and its answer is added as an assistant message.
 *
 * @example
 * ```ts
 * import { Branch } from "@hookscope/core/session";
 * import { FunctionEndpoint, IModel } from "@hookscope/core/service";
 * import assert from "node:assert/strict";
 *
 * const model = new IModel({
 *   model: "m",
 *   endpoint: new FunctionEndpoint({
 *     call: (payload) => ({ choices: [{ message: { content: `got ${(payload.messages as unknown[]).length}` } }] }),
 *   }),
 * });
 * const branch = new Branch({ model, system: "be brief" });
 * const answer = await branch.chat("hello");
 * assert.equal(answer.content, "got 2");
 * ```
 */
export async function chat(
  host: AgentHost,
  instruction: string,
  options?: AgentRunOptions,
): Promise<Message> {
  if (typeof instruction !== "string") {
    throw new TypeError(`Cannot chat: instruction must be a string`);
  }
  requireModel(host);
  await host.addMessage({ role: "user", content: instruction });
  const answer = await invokeModel(host, options, false);
  return await host.addMessage({ role: "assistant", content: answer.text });
}

function checkTurns(options: AgentRunOptions | undefined): number {
  const maxTurns = options?.maxTurns ?? 8;
  if (!Number.isInteger(maxTurns) || maxTurns < 1) {
    throw new RangeError(
      `Cannot operate: maxTurns must be a positive integer; got ${String(maxTurns)}`,
    );
  }
  return maxTurns;
}

async function* agentLoop(
  host: AgentHost,
  instruction: string,
  maxTurns: number,
  signal: AbortSignal,
  modelTurn: ModelTurn,
): AsyncGenerator<AgentStreamEvent> {
  await host.addMessage({ role: "user", content: instruction });
  const actions: ActionResult[] = [];
  for (let turn = 1;; turn++) {
    const answer = yield* modelTurn(turn, signal);
    const message = await host.addMessage({ role: "assistant", content: answer.text });
    if (answer.toolCalls.length === 0) {
      yield { type: "done", result: { message, turns: turn, actions, stoppedBy: "answer" } };
      return;
    }
    for (const call of answer.toolCalls) {
      const { result, blocked } = await runToolCall(host, call, signal);
      actions.push(result);
      yield { type: "tool_result", result, blocked, turn };
    }
    if (turn >= maxTurns) {
      yield { type: "done", result: { message, turns: turn, actions, stoppedBy: "maxTurns" } };
      return;
    }
  }
}

function checkInstruction(instruction: unknown): void {
  if (typeof instruction !== "string") {
    throw new TypeError(`Cannot operate: instruction must be a string`);
  }
}

/**
 * The tool-calling loop: ask the model (one `invoke` per turn) with the branch's tool schemas;
 * run each tool call it makes through `act` (gate, `tool.pre`, tool hooks, `tool.post` or
 * `tool.error`); send the results back; stop when it answers without tool calls or after
 * `maxTurns` turns. A tool call with malformed JSON arguments (or arguments that are not a JSON
 * object, whether sent as text or as a bare value), and one a `tool.pre` guard blocks, is
 * answered with an error the model can read; the loop goes on. Arguments a server sends as an
 * object instead of JSON text are used as sent. Any other rejection of `act` (an abort, a
 * failing message callback) rejects `operate` with that error, and so does a tool call without
 * a function name (a `TypeError`; it used to be dropped silently, which could end the loop as if
 * the model had answered).
 *
 * @example
 * ```ts
 * import { Branch } from "@hookscope/core/session";
 * import { Tool } from "@hookscope/core/action";
 * import { FunctionEndpoint, IModel } from "@hookscope/core/service";
 * import assert from "node:assert/strict";
 *
 * let turn = 0;
 * const model = new IModel({
 *   model: "m",
 *   endpoint: new FunctionEndpoint({
 *     call: () => turn++ === 0
 *       ? { choices: [{ message: { content: "", tool_calls: [{ id: "c1", function: { name: "add", arguments: '{"x":1}' } }] } }] }
 *       : { choices: [{ message: { content: "done" } }] },
 *   }),
 * });
 * const branch = new Branch({ model });
 * branch.actions.register(new Tool({ name: "add", func: (a: Record<string, unknown>) => Number(a.x) + 1 }));
 * const result = await branch.operate("add one");
 * assert.equal(result.message.content, "done");
 * assert.equal(result.actions[0].output, 2);
 * ```
 */
export async function operate(
  host: AgentHost,
  instruction: string,
  options?: AgentRunOptions,
): Promise<OperateResult> {
  checkInstruction(instruction);
  requireModel(host);
  const maxTurns = checkTurns(options);
  const signal = options?.signal ?? new AbortController().signal;
  // deno-lint-ignore require-yield
  const invokeTurn: ModelTurn = async function* (_turn, turnSignal) {
    return await invokeModel(host, options, true, turnSignal);
  };
  for await (const event of agentLoop(host, instruction, maxTurns, signal, invokeTurn)) {
    if (event.type === "done") return event.result;
  }
  throw new Error(`Cannot operate: the agent loop ended without a result`);
}

/**
 * {@linkcode operate} over a streaming model: yields text chunks as the model streams them, each
 * tool call and its result, then `done` with the result. Cancelling the stream (or aborting the
 * signal) cancels the model call in flight. A streamed tool call without a function name errors
 * the stream with a `TypeError`, as in `operate`.
 *
 * @example
 * ```ts
 * import { Branch } from "@hookscope/core/session";
 * import { FunctionEndpoint, IModel } from "@hookscope/core/service";
 * import assert from "node:assert/strict";
 *
 * const model = new IModel({
 *   model: "m",
 *   endpoint: new FunctionEndpoint({
 *     call: () => ({}),
 *     stream: function* () {
 *       yield { type: "text", text: "Hel" };
 *       yield { type: "text", text: "lo" };
 *       yield { type: "done", finishReason: "stop" };
 *     },
 *   }),
 * });
 * const branch = new Branch({ model });
 * const texts: string[] = [];
 * for await (const event of branch.operateStream("hi")) {
 *   if (event.type === "text") texts.push(event.text);
 * }
 * assert.deepEqual(texts, ["Hel", "lo"]);
 * assert.equal(branch.messages.at(-1)?.content, "Hello");
 * ```
 */
export function operateStream(
  host: AgentHost,
  instruction: string,
  options?: AgentRunOptions,
): ReadableStream<AgentStreamEvent> {
  checkInstruction(instruction);
  const model = requireModel(host);
  const maxTurns = checkTurns(options);
  const internal = new AbortController();
  const signal = options?.signal ? anySignal([options.signal, internal.signal]) : internal.signal;
  let modelReader: ReadableStreamDefaultReader<StreamChunk> | null = null;

  const streamTurn: ModelTurn = async function* (turn, turnSignal) {
    const stream = model.stream(buildRequest(host, options, true), { signal: turnSignal });
    const reader = (stream as ReadableStream<StreamChunk>).getReader();
    modelReader = reader;
    let text = "";
    const toolCalls: ModelToolCall[] = [];
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (value.type === "text") {
          text += value.text;
          yield { type: "text", text: value.text, turn };
        } else if (value.type === "tool_call") {
          const call = {
            id: value.id || crypto.randomUUID(),
            name: checkToolName(value.name, value.id),
            arguments: value.arguments,
          };
          toolCalls.push(call);
          yield { type: "tool_call", call, turn };
        }
      }
    } finally {
      modelReader = null;
    }
    return { text, toolCalls };
  };

  const iterator = agentLoop(host, instruction, maxTurns, signal, streamTurn);
  return new ReadableStream<AgentStreamEvent>({
    async pull(controller) {
      try {
        const next = await iterator.next();
        if (next.done) controller.close();
        else controller.enqueue(next.value);
      } catch (error) {
        controller.error(error);
      }
    },
    async cancel(reason) {
      internal.abort(reason);
      const reader = modelReader as ReadableStreamDefaultReader<StreamChunk> | null;
      if (reader) await reader.cancel(reason).catch(() => {});
      await iterator.return(undefined).catch(() => {});
    },
  }, { highWaterMark: 0 });
}
