/**
 * The agent loop: `chat` (one model turn), `operate` (model → tools → model, up to `maxTurns`)
 * and `operateStream` (the same, yielding text as it arrives). Tool calls go through the
 * branch's action path, so every gate, guard and hook applies.
 *
 * @module
 */

import { anySignal } from "../core/_abort.ts";
import type { ApprovalHandler, PendingApproval } from "../core/approval.ts";
import type { ActionManager } from "../action/manager.ts";
import type { StreamChunk } from "../service/endpoint.ts";
import type { IModel } from "../service/imodel.ts";
import type { ActionRequestInit } from "../action/manager.ts";
import type { SessionStore } from "../store/session_store.ts";
import type { ActHost, ActionResult, ActOptions } from "./act.ts";
import type { Message, MessageInit } from "./message.ts";
import {
  agentLoop,
  checkApprove,
  invokeModel,
  invokeTurn,
  type LoopStart,
  newRun,
  requireModel,
  runToEnd,
  storeOf,
  streamTurn,
} from "./_loop.ts";

/**
 * The part of a branch the agent loop uses: the act path's host (tool calls go through it and
 * its outcome) plus the model and the conversation.
 */
export interface AgentHost extends ActHost {
  /** The branch id. */
  readonly id: string;
  /** The model, or `null`. */
  readonly model: IModel | null;
  /** The conversation so far. */
  readonly messages: readonly Message[];
  /** The branch's tools. */
  readonly actions: ActionManager;
  /** Adds a message. */
  addMessage(message: MessageInit, options?: { signal?: AbortSignal }): Promise<Message>;
  /** Runs one tool action through the gate, the hooks and the tool. */
  act(request: ActionRequestInit, options?: ActOptions): Promise<ActionResult>;
  /** Emits a signal to the session's observer (audit signals of answered approvals). */
  emit(event: unknown): Promise<unknown[]>;
  /** The owning session (its id and store name where runs are saved), or `null`. */
  readonly session?: { readonly id: string; readonly store?: SessionStore | undefined } | null;
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
  /** Cancels the model call and the tools; the run then stops with `stoppedBy: "aborted"`. */
  signal?: AbortSignal;
  /** At most this many model turns in `operate` (default 8). */
  maxTurns?: number;
  /** Extra request fields (`temperature`, …) sent with every model call. */
  request?: Record<string, unknown>;
  /**
   * Answers approvals inline: a `tool.pre` hook's `ask` calls it and the run goes on with the
   * answer. Without it, an `ask` stops the run with `stoppedBy: "approval"` (resumable with
   * `Session.resume`).
   */
  approve?: ApprovalHandler;
}

/** Why an agent run stopped. */
export type StoppedBy = "answer" | "maxTurns" | "approval" | "denied" | "aborted";

/** What {@linkcode operate} resolves to. */
export interface OperateResult {
  /**
   * The last assistant message (the last message of the branch when the run stopped before the
   * model answered).
   */
  message: Message;
  /** How many model turns ran (in the whole run, across resumes). */
  turns: number;
  /** Every tool action taken in this call, in order. */
  actions: ActionResult[];
  /** The run's id (`SessionStore.getRun`, `Session.resume`). */
  runId: string;
  /**
   * `"answer"`: the model answered without tool calls; `"maxTurns"`: the limit was hit;
   * `"approval"`: calls wait for a person's answer (see `pending`); `"denied"`: a denial with
   * `interrupt: true` ended the run; `"aborted"`: the signal was aborted.
   */
  stoppedBy: StoppedBy;
  /** With `stoppedBy: "approval"`: the calls waiting for an answer, in call order. */
  pending?: readonly PendingApproval[];
}

/** What {@linkcode operateStream} yields. */
export type AgentStreamEvent =
  | { type: "text"; text: string; turn: number }
  | { type: "tool_call"; call: ModelToolCall; turn: number }
  | { type: "tool_result"; result: ActionResult; blocked: boolean; turn: number }
  | { type: "done"; result: OperateResult };

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
  const answer = await invokeModel(host, options?.request, false, options?.signal);
  return await host.addMessage({ role: "assistant", content: answer.text });
}

function checkInstruction(instruction: unknown): void {
  if (typeof instruction !== "string") {
    throw new TypeError(`Cannot operate: instruction must be a string`);
  }
}

/**
 * The tool-calling loop: ask the model (one `invoke` per turn) with the branch's tool schemas;
 * run each tool call it makes through `act` (gate, `tool.pre` decisions, tool hooks, `tool.post`
 * or `tool.error`); send the results back (one assistant message carrying every tool call of the
 * turn, then one `tool` message per call); stop when it answers without tool calls or after
 * `maxTurns` turns.
 *
 * - Every call is a run with a `runId`, saved in the session's store (`SessionStore.getRun`;
 *   a private in-memory store without one) as it starts and when it stops.
 * - A `tool.pre` **deny** (or a rejected approval) is answered to the model as a tool message
 *   with the reason and the loop goes on; a deny with `interrupt: true` ends the run with
 *   `stoppedBy: "denied"`. `context` strings of an allow are appended to the tool message.
 * - An **ask** calls `options.approve` inline. Without it, the other calls of the turn still run,
 *   the run is saved with status `waiting_approval`, and `operate` resolves with
 *   `stoppedBy: "approval"`, `runId` and `pending`; `Session.resume(runId, answers)` continues it,
 *   in this process or any other sharing the store.
 * - Aborting `options.signal` resolves with `stoppedBy: "aborted"` (the run is saved as aborted).
 * - A tool call with malformed JSON arguments (or arguments that are not a JSON object), and one
 *   a throwing `tool.pre` guard blocks, is answered with an error the model can read; the loop
 *   goes on. Arguments a server sends as an object instead of JSON text are used as sent. Any
 *   other rejection of `act` (a failing message callback) rejects `operate` with that error, and
 *   so does a tool call without a function name (a `TypeError`).
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
 * branch.actions.register(new Tool({ name: "add", execute: (a: Record<string, unknown>) => Number(a.x) + 1 }));
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
  const approve = checkApprove(options?.approve);
  const run = newRun(host, options);
  const signal = options?.signal ?? new AbortController().signal;
  const start: LoopStart = { run, store: storeOf(host), instruction };
  if (approve !== undefined) start.approve = approve;
  return await runToEnd(agentLoop(host, start, signal, invokeTurn(host, run)));
}

/**
 * {@linkcode operate} over a streaming model: yields text chunks as the model streams them, each
 * tool call and its result, then `done` with the result (with `stoppedBy: "approval"` and
 * `pending` when a call waits for approval; a resumed run streams too). Cancelling the stream
 * cancels the model call in flight and saves the run as aborted; aborting the signal ends the
 * stream with a `done` event whose `stoppedBy` is `"aborted"`. A streamed tool call without a function name errors
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
  requireModel(host);
  const approve = checkApprove(options?.approve);
  const run = newRun(host, options, true);
  const internal = new AbortController();
  const signal = options?.signal ? anySignal([options.signal, internal.signal]) : internal.signal;
  let modelReader: ReadableStreamDefaultReader<StreamChunk> | null = null;
  const turnOf = streamTurn(host, run, (reader) => (modelReader = reader));

  const start: LoopStart = { run, store: storeOf(host), instruction };
  if (approve !== undefined) start.approve = approve;
  const iterator = agentLoop(host, start, signal, turnOf);
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
