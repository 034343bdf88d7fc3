/**
 * The tool action path of a branch, in this order:
 * validate → governance gate → `tool.pre` (blocking) → `ActionManager.invoke` (preprocessor →
 * tool → postprocessor) → `tool.post` on success or `tool.error` on any invocation failure.
 *
 * @module
 */

import {
  type ApprovalAnswer,
  type ApprovalHandler,
  argsHash,
  type PendingApproval,
} from "../core/approval.ts";
import { ApprovalRequiredError, ToolDeniedError } from "../core/errors.ts";
import { EventStatus, isAbortError } from "../core/operation.ts";
import { deepFrozenCopy, plainDataCopy, samePlainData } from "../core/_freeze.ts";
import { summarize } from "../core/json_safe.ts";
import type { FunctionCalling } from "../action/function_calling.ts";
import type { ActionManager, ActionRequestInit } from "../action/manager.ts";
import type { HookBus, ToolPreFold } from "../hooks/bus.ts";
import type { ToolSource } from "../hooks/decision.ts";
import { HookPoint } from "../hooks/hook_point.ts";
import { markBlocked } from "./_blocked.ts";
import { ActDeadline } from "./_operation.ts";
import {
  ApprovalAnswered,
  type ApprovalAnsweredData,
  ApprovalRequested,
  HookBlocked,
  ToolDenied,
  toolInvocation,
  type ToolVerdictData,
  WouldAsk,
  WouldDeny,
} from "./signal.ts";

/** What an action returns. */
export interface ActionResult {
  /** The tool's name. */
  function: string;
  /** The arguments as requested. */
  arguments: Record<string, unknown>;
  /** The tool's result, or a `{ error, … }` object for a denial or a suppressed failure. */
  output: unknown;
  /** `context` strings the hooks added for the model (also in the response message). */
  context?: readonly string[];
}

/** Options for {@linkcode act}. */
export interface ActOptions {
  /** Turn invocation failures into an error output instead of rejecting (default `false`). */
  suppressErrors?: boolean;
  /** Cancels the tool call; an abort always rejects. */
  signal?: AbortSignal;
  /**
   * The call id shared by the hook payloads and the request/response messages; a random UUID
   * when absent. The agent loop passes the model's tool-call id here.
   */
  callId?: string;
  /**
   * Deadline for the whole action in milliseconds (gate, hooks, tool, messages). A missed
   * deadline rejects with an error naming the step that was still running.
   */
  timeoutMs?: number;
  /**
   * Answers `ask` decisions inline. Without it an `ask` rejects with `ApprovalRequiredError`
   * and records `ApprovalRequested`.
   */
  approve?: ApprovalHandler;
  /** The agent-loop run this call belongs to (stored in a `PendingApproval`); default `""`. */
  runId?: string;
}

/** Options for {@linkcode actAll}. */
export interface ActAllOptions {
  /** `"concurrent"` (default) or `"sequential"` (in order). */
  strategy?: "concurrent" | "sequential";
  /** Default `true`. */
  suppressErrors?: boolean;
  /** Cancels every call. */
  signal?: AbortSignal;
}

/** The part of a branch the action path uses. */
export interface ActHost {
  /** The branch id. */
  readonly id: string;
  /** The session bus, or `null` when standalone or not attached. */
  readonly hooks: HookBus | null;
  /** The branch's tools. */
  readonly actions: ActionManager;
  /** The owning session, when there is one (its id goes into a `PendingApproval`). */
  readonly session?: { readonly id: string } | null;
  /** Adds a message to the branch. */
  addMessage(
    message: {
      role: "action_request" | "action_response";
      content: unknown;
      sender?: string | null;
      recipient?: string | null;
    },
    options?: { signal?: AbortSignal },
  ): Promise<unknown>;
  /** Emits to the session observer (`[]` when standalone). */
  emit(event: unknown): Promise<unknown[]>;
  /** Asks the session gate (`true` when standalone). */
  authorize(action: unknown, options?: { signal?: AbortSignal }): Promise<boolean>;
}

/** The output of an action the governance gate denied. */
export const GATE_DENIED_OUTPUT = "denied by governance gate";

const LOCAL_SOURCE: ToolSource = Object.freeze({ kind: "local" });

/** Reads `function` and `arguments` once each; the arguments are not copied yet. */
function checkRequest(request: unknown): Required<ActionRequestInit> {
  const r = request as Partial<ActionRequestInit> | null;
  const name = r !== null && typeof r === "object" ? r.function : undefined;
  const args = r !== null && typeof r === "object" ? r.arguments : undefined;
  if (
    typeof name !== "string" || name === "" ||
    args === null || typeof args !== "object" || Array.isArray(args)
  ) {
    throw new TypeError(
      `Cannot act: the request must be an object with a non-empty string "function" and an object "arguments"`,
    );
  }
  return { function: name, arguments: args };
}

/**
 * The arguments as deep-frozen plain data, read once (`NotPlainDataError` otherwise): the gate,
 * the hooks and the tool all get this copy, so nothing can show a guard one value and the tool
 * another.
 */
function plainArguments(
  toolName: string,
  args: Record<string, unknown>,
): Readonly<Record<string, unknown>> {
  return plainDataCopy(
    args,
    `Cannot act on tool ${JSON.stringify(toolName)}`,
    "arguments",
    true,
  ) as Readonly<Record<string, unknown>>;
}

function checkOptions(options: ActOptions | undefined): void {
  if (options === undefined) return;
  if (options === null || typeof options !== "object") {
    throw new TypeError(`Cannot act: options must be an object`);
  }
  const { callId, timeoutMs, approve, runId, signal } = options;
  if (callId !== undefined && (typeof callId !== "string" || callId === "")) {
    throw new TypeError(`Cannot act: callId must be a non-empty string`);
  }
  if (
    timeoutMs !== undefined &&
    (typeof timeoutMs !== "number" || !(timeoutMs > 0) || Number.isNaN(timeoutMs))
  ) {
    throw new TypeError(`Cannot act: timeoutMs must be a positive number`);
  }
  if (approve !== undefined && typeof approve !== "function") {
    throw new TypeError(`Cannot act: approve must be a function`);
  }
  if (runId !== undefined && typeof runId !== "string") {
    throw new TypeError(`Cannot act: runId must be a string`);
  }
  if (
    signal !== undefined &&
    (signal === null || typeof (signal as { addEventListener?: unknown }).addEventListener !==
        "function")
  ) {
    throw new TypeError(`Cannot act: signal must be an AbortSignal`);
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Adds the request and response messages. Both are stored before either's callbacks are waited
 * for, so an abort or deadline while `message.add` handlers run leaves both messages or (when
 * the operation stopped earlier) neither.
 */
async function addExchange(
  host: ActHost,
  request: Required<ActionRequestInit>,
  callId: string,
  output: unknown,
  op: ActDeadline,
  extra?: { arguments?: Record<string, unknown>; context?: readonly string[] },
): Promise<void> {
  op.check("message.add");
  const options = op.signal === undefined ? undefined : { signal: op.signal };
  const requestAdded = host.addMessage({
    role: "action_request",
    content: { function: request.function, arguments: request.arguments, callId },
    sender: host.id,
    recipient: request.function,
  }, options);
  const content: Record<string, unknown> = {
    function: request.function,
    arguments: extra?.arguments ?? request.arguments,
    output,
    callId,
  };
  if (extra?.context !== undefined && extra.context.length > 0) content.context = extra.context;
  const responseAdded = host.addMessage({
    role: "action_response",
    content,
    sender: request.function,
    recipient: host.id,
  }, options);
  await op.run("message.add", Promise.all([requestAdded, responseAdded]));
}

async function safeEmit(host: ActHost, event: unknown, op: ActDeadline, step: string): Promise<void> {
  let emitted: Promise<unknown>;
  try {
    emitted = host.emit(event);
  } catch {
    return;
  }
  try {
    await op.run(step, emitted);
  } catch (error) {
    // Observation is best effort: it never changes the action's outcome, but an abort or a
    // missed deadline still ends the act.
    if (op.aborted) throw error;
  }
}

/**
 * Runs one tool action on a branch.
 *
 * 1. The request is validated (`TypeError`).
 * 2. The session gate is asked with a `ToolInvocation`; a denial records `GateDenied`, adds the
 *    request and a denial response to the branch, and returns the denial output. No hook fires.
 * 3. `tool.pre` `{ toolName, callId, args, argsSummary, branchId, source }` runs and its typed
 *    decisions are folded (deny > ask > allow, rewrites in chain order):
 *    - a handler that throws (or times out) records `HookBlocked` and `act` rejects with
 *      its error; nothing else happens;
 *    - `deny` records `ToolDenied` and rejects with `ToolDeniedError`;
 *    - `ask` with `options.approve` asks it; without, records `ApprovalRequested` and rejects
 *      with `ApprovalRequiredError`; the answer is recorded as `ApprovalAnswered`;
 *    - shadow-mode verdicts are recorded as `WouldDeny` / `WouldAsk`.
 * 4. `ActionManager.invoke` runs the tool with the final arguments (validated again by its
 *    schema: `ToolArgumentsError`), its preprocessor, function and postprocessor.
 * 5. Success: `tool.post` `{ callId, toolName, args, result, resultSummary, durationMs, branchId,
 *    source }` (a handler's `updatedResult` replaces the output), the `FunctionCalling` is emitted
 *    to the observer, request and response messages are added (the response carries the
 *    `context` strings of the hooks, if any). Any failure (unknown tool, bad arguments,
 *    preprocessor, tool, postprocessor): `tool.error` `{ callId, toolName, error, durationMs,
 *    branchId }`, then rejection, or with `suppressErrors` an error output (and the
 *    request/response messages).
 *
 * `options.signal` and `options.timeoutMs` reach every awaited step; an abort or the deadline
 * makes `act` reject at once with an error naming the step (a `HookTimeoutError` for a hook).
 *
 * @example A standalone branch runs tools without any session
 * ```ts
 * import { Branch } from "@hookscope/core/session";
 * import { Tool } from "@hookscope/core/action";
 * import assert from "node:assert/strict";
 *
 * const branch = new Branch();
 * branch.actions.register(new Tool({ name: "add", func: (a: Record<string, unknown>) => Number(a.x) + 1 }));
 * const result = await branch.act({ function: "add", arguments: { x: 1 } });
 * assert.equal(result.output, 2);
 * ```
 *
 * @example A guard that decides on the real arguments
 * ```ts
 * import { Session } from "@hookscope/core/session";
 * import { ToolDeniedError } from "@hookscope/core";
 * import { Tool } from "@hookscope/core/action";
 * import assert from "node:assert/strict";
 *
 * const session = new Session();
 * session.hooks.on("tool.pre", ({ args }) =>
 *   String(args.command).includes("rm -rf") ? { decision: "deny", reason: "destructive" } : undefined
 * );
 * const branch = session.newBranch();
 * branch.actions.register(new Tool({ name: "bash", func: () => "ran" }));
 * await assert.rejects(
 *   branch.act({ function: "bash", arguments: { command: " ".repeat(200) + "rm -rf x" } }),
 *   ToolDeniedError,
 * );
 * ```
 */
export async function act(
  host: ActHost,
  request: ActionRequestInit,
  options?: ActOptions,
): Promise<ActionResult> {
  const req = checkRequest(request);
  checkOptions(options);
  const op = new ActDeadline(options?.signal, options?.timeoutMs);
  try {
    return await runAction(host, req, options?.callId ?? crypto.randomUUID(), options, op);
  } finally {
    op.finish();
  }
}

function verdictData(
  callId: string,
  toolName: string,
  reason: string | undefined,
  hook: string | undefined,
  shadow: boolean,
): ToolVerdictData {
  const data: { -readonly [K in keyof ToolVerdictData]: ToolVerdictData[K] } = {
    callId,
    toolName,
    shadow,
  };
  if (reason !== undefined) data.reason = reason;
  if (hook !== undefined) data.hook = hook;
  return Object.freeze(data);
}

/**
 * The approver's answer as a frozen copy, each property read once; `updatedArgs` as deep-frozen
 * plain data (`NotPlainDataError` otherwise).
 */
function normalizeAnswer(answer: unknown): ApprovalAnswer {
  if (answer === true) return APPROVED;
  if (answer === false) return REJECTED;
  if (answer !== null && typeof answer === "object") {
    const a = answer as Record<string, unknown>;
    const approve = a.approve;
    const by = a.by;
    if (approve === true) {
      const updatedArgs = a.updatedArgs;
      const out: { approve: true; updatedArgs?: Record<string, unknown>; by?: string } = {
        approve: true,
      };
      if (updatedArgs !== undefined) {
        if (updatedArgs === null || typeof updatedArgs !== "object" || Array.isArray(updatedArgs)) {
          throw new TypeError(`Cannot apply approval: updatedArgs must be a plain object`);
        }
        out.updatedArgs = plainDataCopy(
          updatedArgs,
          "Cannot apply approval",
          "updatedArgs",
          true,
        ) as Record<string, unknown>;
      }
      if (typeof by === "string") out.by = by;
      return Object.freeze(out);
    }
    if (approve === false) {
      const reason = a.reason;
      const interrupt = a.interrupt;
      const out: { approve: false; reason?: string; interrupt?: boolean; by?: string } = {
        approve: false,
      };
      if (typeof reason === "string") out.reason = reason;
      if (interrupt === true) out.interrupt = true;
      if (typeof by === "string") out.by = by;
      return Object.freeze(out);
    }
  }
  throw new TypeError(
    `Cannot apply approval: the approve handler must return a boolean or { approve: boolean, … }; got ${
      answer === null ? "null" : typeof answer
    }`,
  );
}

async function deny(
  host: ActHost,
  op: ActDeadline,
  init: { toolName: string; callId: string; reason: string; hook?: string; interrupt?: boolean },
): Promise<never> {
  await safeEmit(
    host,
    new ToolDenied({
      data: verdictData(init.callId, init.toolName, init.reason, init.hook, false),
    }),
    op,
    "observer (ToolDenied)",
  );
  const error = new ToolDeniedError(init);
  markBlocked(error);
  throw error;
}

async function runAction(
  host: ActHost,
  request: Required<ActionRequestInit>,
  callId: string,
  options: ActOptions | undefined,
  op: ActDeadline,
): Promise<ActionResult> {
  const toolName = request.function;
  const args = plainArguments(toolName, request.arguments) as Record<string, unknown>;
  const req: Required<ActionRequestInit> = { function: toolName, arguments: args };
  const signal = op.signal;

  const allowed = await op.run(
    "gate",
    host.authorize(
      toolInvocation(toolName, args, host.id),
      signal === undefined ? undefined : { signal },
    ),
  );
  if (!allowed) {
    const output = { error: GATE_DENIED_OUTPUT, function: toolName };
    await addExchange(host, req, callId, output, op);
    return { function: toolName, arguments: args, output };
  }

  const bus = host.hooks;
  const emitOptions = signal === undefined ? undefined : { signal };
  // `frozenArgs`: what the hooks judged and the tool will run with (plain data, frozen);
  // `runArgs`: the tool's own mutable copy of it.
  let frozenArgs: Readonly<Record<string, unknown>> = args;
  let context: string[] | null = null;
  if (bus !== null) {
    const judge = (judged: Readonly<Record<string, unknown>>) =>
      judgeCall(host, bus, op, toolName, callId, judged);
    const fold = await judge(args);
    if (fold.updatedArgs !== undefined) frozenArgs = fold.updatedArgs;
    if (fold.context.length > 0) context = [...fold.context];
    if (fold.verdict === "ask") {
      const approved = await askApproval(host, op, options, {
        toolName,
        callId,
        args: frozenArgs,
        reason: fold.reason,
        hook: fold.hook,
      });
      if (approved !== undefined && !samePlainData(approved, frozenArgs)) {
        // The approver changed the arguments: the whole chain judges them again. A deny or a
        // failure stops the call. When the chain leaves them as they are, an ask is answered
        // by this approval (it named exactly these arguments). When it rewrites them, the
        // rewrite runs only if the chain would run it without asking: nobody approved it.
        const again = await judge(approved);
        frozenArgs = approved;
        if (again.updatedArgs !== undefined && !samePlainData(again.updatedArgs, approved)) {
          if (again.verdict === "ask") {
            return await deny(host, op, {
              toolName,
              callId,
              reason:
                "The tool.pre hooks rewrote the approved arguments and ask about the result; approve the arguments they settle on",
              hook: "approval",
            });
          }
          frozenArgs = again.updatedArgs;
        }
        for (const text of again.context) {
          if (!(context ??= []).includes(text)) context.push(text);
        }
      }
    }
  } else if (options?.approve !== undefined) {
    // No hooks, nothing can ask: approve is never called.
  }
  const runArgs = structuredCloneArgs(frozenArgs);

  const started = performance.now();
  let call: FunctionCalling | null = null;
  let failure: unknown = null;
  let failed = false;
  try {
    call = await op.run(
      `tool "${toolName}"`,
      host.actions.invoke(
        { function: toolName, arguments: runArgs },
        signal ? { signal, callId, suppressErrors: true } : { callId, suppressErrors: true },
      ),
    );
    if (call.status !== EventStatus.COMPLETED) {
      failed = true;
      failure = call.execution.error;
    }
  } catch (error) {
    failed = true;
    failure = error;
  }
  const durationMs = call?.execution.durationMs ?? performance.now() - started;

  if (failed) {
    if (bus !== null) {
      const emitted = bus.emit(HookPoint.TOOL_ERROR, {
        callId,
        toolName,
        error: failure,
        durationMs,
        branchId: host.id,
      }, op.aborted ? undefined : emitOptions);
      if (op.aborted) emitted.catch(() => {});
      else await op.run("tool.error", emitted, true);
    }
    const aborted = op.aborted ||
      (options?.signal !== undefined && isAbortError(failure, options.signal));
    if (!options?.suppressErrors || aborted) throw failure;
    const message = errorMessage(failure);
    await addExchange(
      host,
      req,
      callId,
      { error: message, function: toolName, arguments: args },
      op,
    );
    return {
      function: toolName,
      arguments: args,
      output: { error: message, message: `Error invoking action '${toolName}': ${message}` },
    };
  }

  let output = call!.response;
  if (bus !== null) {
    const fold = await op.run(
      "tool.post",
      bus.decide(HookPoint.TOOL_POST, {
        callId,
        toolName,
        args: frozenArgs,
        result: deepFrozenCopy(output),
        resultSummary: summarize(output),
        durationMs,
        branchId: host.id,
        source: host.actions.get(toolName)?.source ?? LOCAL_SOURCE,
      }, emitOptions),
      true,
    );
    if (fold.replaced) output = fold.result;
    if (fold.context.length > 0) (context ??= []).push(...fold.context);
  }
  await safeEmit(host, call, op, "observer (FunctionCalling)");
  const extra: { arguments?: Record<string, unknown>; context?: readonly string[] } = {};
  if (frozenArgs !== args) extra.arguments = frozenArgs as Record<string, unknown>;
  if (context !== null) extra.context = context;
  await addExchange(host, req, callId, output, op, extra);
  const result: ActionResult = { function: toolName, arguments: args, output };
  if (context !== null) result.context = context;
  return result;
}

/**
 * Runs the `tool.pre` fold on `judged` (the chain re-runs on its own rewrites until they settle,
 * see `HookBus.decide`) and applies what stops the call: shadow verdicts are recorded, a failing
 * hook records `HookBlocked` and rejects with its error, a deny records `ToolDenied` and rejects
 * with `ToolDeniedError`. Resolves to the fold otherwise (verdict none, allow or ask).
 */
async function judgeCall(
  host: ActHost,
  bus: HookBus,
  op: ActDeadline,
  toolName: string,
  callId: string,
  judged: Readonly<Record<string, unknown>>,
): Promise<ToolPreFold> {
  const signal = op.signal;
  const fold = await op.run(
    "tool.pre",
    bus.decide(HookPoint.TOOL_PRE, {
      toolName,
      callId,
      args: judged,
      argsSummary: summarize(judged),
      branchId: host.id,
      source: host.actions.get(toolName)?.source ?? LOCAL_SOURCE,
    }, signal === undefined ? undefined : { signal }),
    true,
  ).catch((error) => {
    if (op.aborted) throw error;
    return { error, errorHook: undefined } as unknown as ToolPreFold;
  });
  for (const verdict of fold.shadow ?? []) {
    const data = verdictData(callId, toolName, verdict.reason, verdict.hook, true);
    await safeEmit(
      host,
      verdict.decision === "deny" ? new WouldDeny({ data }) : new WouldAsk({ data }),
      op,
      "observer (shadow verdicts)",
    );
  }
  if (fold.error !== undefined) {
    const error = fold.error;
    markBlocked(error);
    await safeEmit(
      host,
      new HookBlocked({ point: HookPoint.TOOL_PRE, callId, toolName, error }),
      op,
      "observer (HookBlocked)",
    );
    throw error;
  }
  if (fold.verdict === "deny") {
    const init: Parameters<typeof deny>[2] = {
      toolName,
      callId,
      reason: fold.reason ?? "denied by a tool.pre hook",
      interrupt: fold.interrupt,
    };
    if (fold.hook !== undefined) init.hook = fold.hook;
    return await deny(host, op, init);
  }
  return fold;
}

/** A mutable deep copy of frozen arguments for the tool (it may change its own copy). */
function structuredCloneArgs(args: Readonly<Record<string, unknown>>): Record<string, unknown> {
  try {
    return structuredClone(args) as Record<string, unknown>;
  } catch {
    return { ...args };
  }
}

/**
 * Asks for approval: inline through `options.approve`, or by rejecting with
 * `ApprovalRequiredError`. Resolves to replacement arguments (or `undefined`); a rejection
 * throws `ToolDeniedError`.
 */
async function askApproval(
  host: ActHost,
  op: ActDeadline,
  options: ActOptions | undefined,
  ask: {
    toolName: string;
    callId: string;
    args: Readonly<Record<string, unknown>>;
    reason: string | undefined;
    hook: string | undefined;
  },
): Promise<Readonly<Record<string, unknown>> | undefined> {
  const pending: { -readonly [K in keyof PendingApproval]: PendingApproval[K] } = {
    runId: options?.runId ?? "",
    branchId: host.id,
    callId: ask.callId,
    toolName: ask.toolName,
    args: ask.args,
    requestedAt: Date.now(),
    argsHash: argsHash(ask.args),
  };
  if (ask.hook !== undefined) pending.policy = ask.hook;
  const sessionId = host.session?.id;
  if (typeof sessionId === "string") pending.sessionId = sessionId;
  if (ask.reason !== undefined) pending.reason = ask.reason;
  const approval: PendingApproval = Object.freeze(pending);
  await safeEmit(
    host,
    new ApprovalRequested({ data: approval }),
    op,
    "observer (ApprovalRequested)",
  );
  const approve = options?.approve;
  if (approve === undefined) throw new ApprovalRequiredError(approval);
  const answered = await op.run(
    "approval",
    Promise.resolve().then(() => approve(approval, { signal: op.signal ?? neverAborted() })),
  );
  const answer = normalizeAnswer(answered);
  const data: { -readonly [K in keyof ApprovalAnsweredData]: ApprovalAnsweredData[K] } = {
    runId: approval.runId,
    callId: ask.callId,
    toolName: ask.toolName,
    approve: answer.approve,
  };
  if (answer.by !== undefined) data.by = answer.by;
  if (!answer.approve && answer.reason !== undefined) data.reason = answer.reason;
  if (answer.approve && answer.updatedArgs !== undefined) data.updatedArgs = answer.updatedArgs;
  await safeEmit(
    host,
    new ApprovalAnswered({ data: Object.freeze(data) }),
    op,
    "observer (ApprovalAnswered)",
  );
  if (!answer.approve) {
    const init: Parameters<typeof deny>[2] = {
      toolName: ask.toolName,
      callId: ask.callId,
      reason: answer.reason ?? "rejected by the approver",
      hook: answer.by === undefined ? "approval" : `approval by ${answer.by}`,
    };
    if (answer.interrupt === true) init.interrupt = true;
    return await deny(host, op, init);
  }
  return answer.updatedArgs;
}

const APPROVED: ApprovalAnswer = Object.freeze({ approve: true });
const REJECTED: ApprovalAnswer = Object.freeze({ approve: false });

let NEVER: AbortSignal | null = null;
function neverAborted(): AbortSignal {
  return NEVER ??= new AbortController().signal;
}

/**
 * Runs several actions, concurrently (default) or in order. Failures become error outputs
 * unless `suppressErrors` is `false`; a blocking guard still rejects. An unknown strategy is a
 * `TypeError` before anything runs.
 *
 * @example
 * ```ts
 * import { Branch } from "@hookscope/core/session";
 * import { Tool } from "@hookscope/core/action";
 * import assert from "node:assert/strict";
 *
 * const branch = new Branch();
 * branch.actions.register(new Tool({ name: "echo", func: (a: Record<string, unknown>) => a.v }));
 * const results = await branch.actAll([
 *   { function: "echo", arguments: { v: 1 } },
 *   { function: "missing", arguments: {} },
 * ], { strategy: "sequential" });
 * assert.equal(results[0].output, 1);
 * assert.match(String((results[1].output as { error: string }).error), /not registered/);
 * ```
 */
export async function actAll(
  host: ActHost,
  requests: readonly ActionRequestInit[],
  options?: ActAllOptions,
): Promise<ActionResult[]> {
  const strategy = options?.strategy ?? "concurrent";
  if (strategy !== "concurrent" && strategy !== "sequential") {
    throw new TypeError(
      `Cannot act: unknown strategy ${
        JSON.stringify(strategy)
      }; valid strategies: "concurrent", "sequential"`,
    );
  }
  if (!Array.isArray(requests)) {
    throw new TypeError(`Cannot act: requests must be an array`);
  }
  for (const request of requests) checkRequest(request);
  const each: ActOptions = { suppressErrors: options?.suppressErrors ?? true };
  if (options?.signal) each.signal = options.signal;
  if (strategy === "concurrent") {
    return await Promise.all(requests.map((request) => act(host, request, each)));
  }
  const results: ActionResult[] = [];
  for (const request of requests) results.push(await act(host, request, each));
  return results;
}
