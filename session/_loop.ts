// The agent loop's engine, shared by operate, operateStream and resume: model turns, tool calls
// through the branch's act path, approvals that stop the run, and the run record in the store.

import {
  type ApprovalAnswer,
  type ApprovalHandler,
  argsHash,
  type PendingApproval,
} from "../core/approval.ts";
import { EventStatus } from "../core/operation.ts";
import { toJsonSafe } from "../core/json_safe.ts";
import type { AnswerToolCall, ModelAnswer, StreamChunk } from "../service/endpoint.ts";
import type { IModel } from "../service/imodel.ts";
import type {
  RunAnswer,
  RunApproval,
  RunRecord,
  RunStatus,
  SessionStore,
} from "../store/session_store.ts";
import type { ActionResult, ActOptions } from "./act.ts";
import { actOutcome, deniedOutput, writeExchange } from "./_act_path.ts";
import { argumentsText, parseToolArguments } from "../service/_tool_arguments.ts";
import type {
  AgentHost,
  AgentRunOptions,
  AgentStreamEvent,
  ModelToolCall,
  OperateResult,
  StoppedBy,
} from "./agent_loop.ts";
import { bounded } from "./_bounded.ts";
import { storedAnswerHandler } from "../core/_inline_answer.ts";
import { ApprovalAnswered, ToolDenied } from "./signal.ts";
import { runStoreOf } from "./_run_store.ts";
import type { Message } from "./message.ts";
import { responsesAfter } from "./_stored_responses.ts";

/**
 * A tool call of the model with its arguments parsed once, where the answer entered (the model
 * turn, or the stored run of a resume): `args`, or `argsError` telling why there are none.
 */
export interface LoopCall extends ModelToolCall {
  /** The parsed arguments, or `null` when unusable. */
  readonly args: Record<string, unknown> | null;
  /** Why `args` is `null`. */
  readonly argsError?: string;
}

/** A call the model asked for, its arguments parsed (`arguments` keeps the text as sent). */
export function loopCall(id: string, name: string, value: unknown): LoopCall {
  const parsed = parseToolArguments(value, name);
  const call: { -readonly [K in keyof LoopCall]: LoopCall[K] } = {
    id,
    name,
    arguments: argumentsText(value),
    args: parsed.args,
  };
  if (parsed.error !== undefined) call.argsError = parsed.error;
  return call;
}

/** The public record of a call (a `tool_call` event, a stored run): without the parsed form. */
function recordOf(call: LoopCall): ModelToolCall {
  return { id: call.id, name: call.name, arguments: call.arguments };
}

/** One model turn: yields events while it runs and returns the answer and the tool calls. */
export type ModelTurn = (
  turn: number,
  signal: AbortSignal,
) => AsyncGenerator<AgentStreamEvent, { text: string; toolCalls: LoopCall[] }>;

/** The model of a host, or a `TypeError`. */
export function requireModel(host: AgentHost): IModel {
  if (!host.model) throw new TypeError(`Cannot run the agent: branch ${host.id} has no model`);
  return host.model;
}

/** The model request for the host's conversation, its messages in the endpoint's form. */
export function buildRequest(
  host: AgentHost,
  request: Record<string, unknown> | undefined,
  withTools: boolean,
): Record<string, unknown> {
  const body: Record<string, unknown> = {
    ...(request ?? {}),
    messages: requireModel(host).renderMessages(host.messages),
  };
  const schemas = withTools ? host.actions.schemas() : [];
  if (schemas.length > 0) body.tools = schemas;
  return body;
}

/** A tool call of the model's typed answer, its arguments as the endpoint parsed them. */
function answeredCall(call: AnswerToolCall): LoopCall {
  const out: { -readonly [K in keyof LoopCall]: LoopCall[K] } = {
    id: call.id || crypto.randomUUID(),
    name: checkToolName(call.name, call.id),
    arguments: call.arguments,
    args: call.args,
  };
  if (call.argsError !== undefined) out.argsError = call.argsError;
  return out;
}

/**
 * A tool call's function name. A call without one cannot be run or answered (the conversation
 * would hold a tool call with no name), so it is a `TypeError` rather than silently dropped.
 */
export function checkToolName(name: unknown, id: unknown): string {
  if (typeof name === "string" && name.length > 0) return name;
  throw new TypeError(
    `Cannot run the model's tool call${
      typeof id === "string" && id ? ` "${id}"` : ""
    }: it has no function name`,
  );
}

/** One non-streamed model call with the host's conversation. */
export async function invokeModel(
  host: AgentHost,
  request: Record<string, unknown> | undefined,
  withTools: boolean,
  signal?: AbortSignal,
): Promise<{ text: string; toolCalls: LoopCall[] }> {
  const model = requireModel(host);
  const event = await model.invoke(
    buildRequest(host, request, withTools),
    signal ? { signal } : undefined,
  );
  if (event.status !== EventStatus.COMPLETED) throw event.execution.error;
  const answer = event.response as ModelAnswer;
  return { text: answer.text, toolCalls: answer.toolCalls.map(answeredCall) };
}

type CallOutcome =
  | { kind: "done"; result: ActionResult; blocked: boolean; interrupt: boolean }
  | { kind: "pending"; approval: PendingApproval };

/**
 * Runs one tool call from the model through the act path and reads its outcome: the act path
 * has written the exchange (request and response messages) once, whatever the outcome. A
 * denial and a blocking `tool.pre` guard do not end the loop (the model reads why); an ask
 * without an answer becomes a pending approval. Arguments the model's answer did not parse into
 * an object are answered with "Invalid tool arguments" and the tool does not run. Anything else
 * (an abort, a failing message callback) rejects.
 */
async function runToolCall(
  host: AgentHost,
  call: LoopCall,
  signal: AbortSignal,
  approve: ApprovalHandler | undefined,
  runId: string,
): Promise<CallOutcome> {
  if (call.args === null) {
    const output = { error: `Invalid tool arguments: ${call.argsError}` };
    await writeExchange(host, { toolName: call.name, callId: call.id, args: {}, output });
    return {
      kind: "done",
      result: { function: call.name, arguments: {}, output },
      blocked: false,
      interrupt: false,
    };
  }
  const options: ActOptions = { suppressErrors: true, callId: call.id, runId, signal };
  if (approve !== undefined) options.approve = approve;
  const outcome = await actOutcome(
    host,
    { function: call.name, arguments: call.args },
    options,
  );
  switch (outcome.kind) {
    case "pending":
      return { kind: "pending", approval: outcome.error.approval };
    case "denied":
      return {
        kind: "done",
        result: outcome.result,
        blocked: true,
        interrupt: outcome.error.interrupt,
      };
    case "blocked":
      return { kind: "done", result: outcome.result, blocked: true, interrupt: false };
    case "failed":
      if (outcome.result === null) throw outcome.error;
      return { kind: "done", result: outcome.result, blocked: false, interrupt: false };
    default:
      return { kind: "done", result: outcome.result, blocked: false, interrupt: false };
  }
}

/**
 * Runs a call a person answered while the run waited. A rejection is applied as given (the tool
 * does not run, even if the hooks would no longer ask): `ApprovalAnswered` and `ToolDenied` are
 * recorded and the model gets the reason. An approval runs the call through the act path with
 * the approver's arguments as given (so guards judge what will run); if a hook asks again, the
 * stored answer is given.
 */
async function runAnswered(
  host: AgentHost,
  call: LoopCall,
  answer: ApprovalAnswer,
  signal: AbortSignal,
  runId: string,
): Promise<CallOutcome> {
  if (answer.approve) {
    const edited: LoopCall = answer.updatedArgs === undefined
      ? call
      : { id: call.id, name: call.name, arguments: call.arguments, args: answer.updatedArgs };
    // The answer approves the call's `tool.pre` asks, and a change-set ask only for the change
    // set it was given for (its hash): a staged run that asks about another one (its kept layer
    // gone and the program's new effects differ, or the call stopped for its arguments first)
    // waits for a person again.
    const approver = storedAnswerHandler(
      answer,
      (approval) => approval.effects === undefined || answer.effectsHash === approval.effects.hash,
    );
    return await runToolCall(host, edited, signal, approver, runId);
  }
  const args = call.args ?? {};
  const reason = answer.reason ?? "rejected by the approver";
  const data: Record<string, unknown> = {
    runId,
    callId: call.id,
    toolName: call.name,
    approve: false,
    reason,
  };
  if (answer.by !== undefined) data.by = answer.by;
  const hook = answer.by === undefined ? "approval" : `approval by ${answer.by}`;
  await emitQuietly(host, new ApprovalAnswered({ data: Object.freeze(data) }));
  await emitQuietly(
    host,
    new ToolDenied({
      data: Object.freeze({ callId: call.id, toolName: call.name, reason, hook, shadow: false }),
    }),
  );
  const output = deniedOutput(reason);
  await writeExchange(host, { toolName: call.name, callId: call.id, args, output });
  return {
    kind: "done",
    result: { function: call.name, arguments: args, output },
    blocked: true,
    interrupt: answer.interrupt === true,
  };
}

async function emitQuietly(host: AgentHost, signal: unknown): Promise<void> {
  try {
    await host.emit?.(signal);
  } catch {
    // Observation is best effort: it never changes the outcome.
  }
}

/** A stored answer as the act path's approval handler returns it. */
export function toApprovalAnswer(answer: RunAnswer): ApprovalAnswer {
  if (answer.approve) {
    const out: { approve: true; updatedArgs?: Record<string, unknown>; by?: string } = {
      approve: true,
    };
    if (answer.updatedArgs !== undefined) out.updatedArgs = structuredClone(answer.updatedArgs);
    if (answer.by !== undefined) out.by = answer.by;
    if (answer.effectsHash !== undefined) {
      (out as { effectsHash?: string }).effectsHash = answer.effectsHash;
    }
    return out;
  }
  const out: { approve: false; reason?: string; interrupt?: boolean; by?: string } = {
    approve: false,
  };
  if (answer.reason !== undefined) out.reason = answer.reason;
  if (answer.interrupt !== undefined) out.interrupt = answer.interrupt;
  if (answer.by !== undefined) out.by = answer.by;
  return out;
}

function toRunApproval(approval: PendingApproval, run: RunRecord): RunApproval {
  const out: RunApproval = {
    runId: run.runId,
    callId: approval.callId,
    toolName: approval.toolName,
    args: toJsonSafe(approval.args) as Record<string, unknown>,
    requestedAt: approval.requestedAt,
  };
  const sessionId = approval.sessionId ?? run.sessionId;
  const branchId = approval.branchId ?? run.branchId;
  if (sessionId !== null && sessionId !== undefined) out.sessionId = sessionId;
  if (branchId !== null && branchId !== undefined) out.branchId = branchId;
  if (approval.reason !== undefined) out.reason = approval.reason;
  out.argsHash = approval.argsHash ?? argsHash(out.args);
  if (approval.policy !== undefined) out.policy = approval.policy;
  if (approval.expiresAt !== undefined) out.expiresAt = approval.expiresAt;
  if (approval.answerableBy !== undefined) out.answerableBy = [...approval.answerableBy];
  if (approval.effects !== undefined) {
    out.effects = toJsonSafe(approval.effects) as NonNullable<RunApproval["effects"]>;
  }
  return out;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}

/** Checks `maxTurns`. */
export function checkTurns(maxTurns: unknown): number {
  const value = maxTurns ?? 8;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1) {
    throw new RangeError(
      `Cannot operate: maxTurns must be a positive integer; got ${String(value)}`,
    );
  }
  return value;
}

/** Checks an `approve` option. */
export function checkApprove(approve: unknown): ApprovalHandler | undefined {
  if (approve === undefined) return undefined;
  if (typeof approve !== "function") {
    throw new TypeError(`Cannot operate: approve must be a function`);
  }
  return approve as ApprovalHandler;
}

/**
 * A streaming model turn: yields text and tool calls as they arrive. `onReader` gets the model
 * stream's reader while it is read (`null` after), so a cancel can cancel it.
 */
export function streamTurn(
  host: AgentHost,
  run: RunRecord,
  onReader: (reader: ReadableStreamDefaultReader<StreamChunk> | null) => void = () => {},
): ModelTurn {
  const model = requireModel(host);
  return async function* (turn, turnSignal) {
    const stream = model.stream(buildRequest(host, run.state.request, true), {
      signal: turnSignal,
    });
    const reader = (stream as ReadableStream<StreamChunk>).getReader();
    onReader(reader);
    let text = "";
    const toolCalls: LoopCall[] = [];
    let finished = false;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) {
          finished = true;
          break;
        }
        if (value.type === "text") {
          text += value.text;
          yield { type: "text", text: value.text, turn };
        } else if (value.type === "tool_call") {
          const call = loopCall(
            value.id || crypto.randomUUID(),
            checkToolName(value.name, value.id),
            value.arguments,
          );
          toolCalls.push(call);
          yield { type: "tool_call", call: recordOf(call), turn };
        }
      }
    } finally {
      onReader(null);
      // A turn that ends early (a malformed tool call, the consumer stopping) cancels the model
      // stream, so the call's connection and deadline end with it.
      if (!finished) await reader.cancel().catch(() => {});
    }
    return { text, toolCalls };
  };
}

/** A non-streaming model turn (one `invoke`). */
export function invokeTurn(host: AgentHost, run: RunRecord): ModelTurn {
  // deno-lint-ignore require-yield
  return async function* (_turn, turnSignal) {
    return await invokeModel(host, run.state.request, true, turnSignal);
  };
}

/** A fresh run record for a host. */
export function newRun(
  host: AgentHost,
  options: AgentRunOptions | undefined,
  stream = false,
): RunRecord {
  const now = Date.now();
  const sessionId = host.session?.id ?? null;
  const state: RunRecord["state"] = {
    turn: 0,
    maxTurns: checkTurns(options?.maxTurns),
    toolCalls: [],
    done: [],
    stream,
  };
  if (options?.request !== undefined) {
    state.request = toJsonSafe(options.request) as Record<string, unknown>;
  }
  return {
    runId: crypto.randomUUID(),
    sessionId,
    branchId: host.id,
    status: "running",
    stoppedBy: null,
    pending: [],
    answers: {},
    state,
    owner: null,
    claimedAt: null,
    error: null,
    createdAt: now,
    updatedAt: now,
  };
}

/** Where a loop starts: a fresh instruction, or a claimed run with answers for its pending calls. */
export interface LoopStart {
  /** The run (saved as it changes). */
  run: RunRecord;
  /** Where the run is saved. */
  store: SessionStore;
  /** A fresh run's instruction (added as the user message). */
  instruction?: string;
  /** A resumed run's answers for its pending calls. */
  answers?: Readonly<Record<string, ApprovalAnswer>>;
  /** Answers inline to asks the run meets. */
  approve?: ApprovalHandler;
}

function statusOf(stoppedBy: StoppedBy): RunStatus {
  if (stoppedBy === "approval") return "waiting_approval";
  if (stoppedBy === "aborted") return "aborted";
  return "completed";
}

/** The store a host's runs go to (the session's store, or a private in-memory one). */
export function storeOf(host: AgentHost): SessionStore {
  return runStoreOf(host);
}

/** The loop: model → tools → model, with approvals; the run record follows every stop. */
export async function* agentLoop(
  host: AgentHost,
  start: LoopStart,
  signal: AbortSignal,
  modelTurn: ModelTurn,
): AsyncGenerator<AgentStreamEvent> {
  const { run, store } = start;
  const actions: ActionResult[] = [];
  let lastMessage: Message | undefined;
  let finished = false;
  // Saving honours the caller's signal while the run goes on. After an abort the run is saved
  // as aborted on a best-effort basis: a store that does not answer within a second cannot
  // delay the aborted caller.
  const save = async (): Promise<void> => {
    run.updatedAt = Date.now();
    if (signal.aborted) {
      await bounded(store.saveRun(run), "save run", undefined, 1000).catch(() => {});
      return;
    }
    await bounded(store.saveRun(run), "save run", signal);
  };
  const finish = async (
    stoppedBy: StoppedBy,
    pending?: PendingApproval[],
  ): Promise<OperateResult> => {
    finished = true;
    run.status = statusOf(stoppedBy);
    run.stoppedBy = stoppedBy;
    run.pending = (pending ?? []).map((p) => toRunApproval(p, run));
    // A call that waits again (a staged run asking about its change set after its arguments
    // were approved) needs a new answer: the one it had was given and used.
    for (const p of run.pending) delete run.answers[p.callId];
    await save();
    const message = lastMessage ?? host.messages.at(-1);
    const result: OperateResult = {
      message: message as Message,
      turns: run.state.turn,
      actions,
      runId: run.runId,
      stoppedBy,
    };
    if (pending !== undefined) {
      result.pending = Object.freeze(
        run.pending.map((p) =>
          Object.freeze({
            ...p,
            argsHash: p.argsHash ?? argsHash(p.args),
            args: deepFreeze(structuredClone(p.args)),
          })
        ),
      );
    }
    return result;
  };
  try {
    let calls: LoopCall[] = [];
    let resuming = start.instruction === undefined;
    // Responses of the resumed turn's calls stored by an earlier claimer that died: not run again.
    let stored: Map<string, ActionResult> | undefined;
    if (resuming) {
      const id = run.state.messageId;
      lastMessage = host.messages.findLast((m) => m.id === id);
      calls = run.state.toolCalls.map((c) => loopCall(c.id, c.name, c.arguments));
      stored = responsesAfter(host.messages, id);
    } else {
      await save();
      await host.addMessage({ role: "user", content: start.instruction });
    }
    for (;;) {
      if (!resuming) {
        stored = undefined;
        const turn = run.state.turn + 1;
        const answer = yield* modelTurn(turn, signal);
        lastMessage = await host.addMessage({ role: "assistant", content: answer.text });
        calls = answer.toolCalls;
        run.state = {
          ...run.state,
          turn,
          toolCalls: calls.map(recordOf),
          done: [],
          messageId: lastMessage.id,
        };
        if (calls.length === 0) {
          yield { type: "done", result: await finish("answer") };
          return;
        }
      }
      resuming = false;
      const pending: PendingApproval[] = [];
      for (const call of calls) {
        if (run.state.done.includes(call.id)) continue;
        const result = stored?.get(call.id);
        if (result !== undefined) {
          run.state.done.push(call.id);
          actions.push(result);
          yield { type: "tool_result", result, blocked: false, turn: run.state.turn };
          continue;
        }
        const given = start.answers?.[call.id];
        const outcome = given === undefined
          ? await runToolCall(host, call, signal, start.approve, run.runId)
          : await runAnswered(host, call, given, signal, run.runId);
        if (outcome.kind === "pending") {
          pending.push(outcome.approval);
          continue;
        }
        run.state.done.push(call.id);
        actions.push(outcome.result);
        yield {
          type: "tool_result",
          result: outcome.result,
          blocked: outcome.blocked,
          turn: run.state.turn,
        };
        if (outcome.interrupt) {
          yield { type: "done", result: await finish("denied") };
          return;
        }
      }
      if (pending.length > 0) {
        yield { type: "done", result: await finish("approval", pending) };
        return;
      }
      if (run.state.turn >= run.state.maxTurns) {
        yield { type: "done", result: await finish("maxTurns") };
        return;
      }
    }
  } catch (error) {
    if (signal.aborted && !finished) {
      yield { type: "done", result: await finish("aborted") };
      return;
    }
    if (!finished) {
      finished = true;
      run.status = "failed";
      run.error = error instanceof Error ? error.message : String(error);
      await save().catch(() => {});
    }
    throw error;
  } finally {
    if (!finished) {
      // The consumer stopped the stream: the run ends here.
      finished = true;
      run.status = "aborted";
      run.stoppedBy = "aborted";
      await save().catch(() => {});
    }
  }
}

/** Drives a loop to its `done` event. */
export async function runToEnd(
  loop: AsyncGenerator<AgentStreamEvent>,
): Promise<OperateResult> {
  for await (const event of loop) {
    if (event.type === "done") return event.result;
  }
  throw new Error(`Cannot operate: the agent loop ended without a result`);
}
