/**
 * The tool action path of a branch, in the exact order of ADR-0047 D5 with X3 and X8:
 * validate → governance gate → `tool.pre` (blocking) → `ActionManager.invoke` (preprocessor →
 * tool → postprocessor) → `tool.post` on success or `tool.error` on any invocation failure.
 *
 * @module
 */

import type { ApprovalHandler } from "../core/approval.ts";
import { EventStatus, isAbortError } from "../core/event.ts";
import { summarize } from "../core/json_safe.ts";
import type { FunctionCalling } from "../action/function_calling.ts";
import type { ActionManager, ActionRequestInit } from "../action/manager.ts";
import type { HookBus } from "../hooks/bus.ts";
import { HookPoint } from "../hooks/hook_point.ts";
import { markBlocked } from "./_blocked.ts";
import { HookBlocked, toolInvocation } from "./signal.ts";

/** What an action returns. */
export interface ActionResult {
  /** The tool's name. */
  function: string;
  /** The arguments as requested. */
  arguments: Record<string, unknown>;
  /** The tool's result, or a `{ error, … }` object for a denial or a suppressed failure. */
  output: unknown;
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
  /** Adds a message to the branch. */
  addMessage(
    message: {
      role: "action_request" | "action_response";
      content: unknown;
      sender?: string | null;
      recipient?: string | null;
    },
  ): Promise<unknown>;
  /** Emits to the session observer (`[]` when standalone). */
  emit(event: unknown): Promise<unknown[]>;
  /** Asks the session gate (`true` when standalone). */
  authorize(action: unknown): Promise<boolean>;
}

/** The output of an action the governance gate denied. */
export const GATE_DENIED_OUTPUT = "denied by governance gate";

function checkRequest(request: unknown): Required<ActionRequestInit> {
  const r = request as Partial<ActionRequestInit> | null;
  if (
    r === null || typeof r !== "object" || typeof r.function !== "string" || r.function === "" ||
    r.arguments === null || typeof r.arguments !== "object" || Array.isArray(r.arguments)
  ) {
    throw new TypeError(
      `Cannot act: the request must be an object with a non-empty string "function" and an object "arguments"`,
    );
  }
  return r as Required<ActionRequestInit>;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

async function addExchange(
  host: ActHost,
  request: Required<ActionRequestInit>,
  callId: string,
  output: unknown,
): Promise<void> {
  await host.addMessage({
    role: "action_request",
    content: { function: request.function, arguments: request.arguments, callId },
    sender: host.id,
    recipient: request.function,
  });
  await host.addMessage({
    role: "action_response",
    content: { function: request.function, arguments: request.arguments, output, callId },
    sender: request.function,
    recipient: host.id,
  });
}

async function safeEmit(host: ActHost, event: unknown): Promise<void> {
  try {
    await host.emit(event);
  } catch {
    // Observation is best effort (D6): it never changes the action's outcome.
  }
}

/**
 * Runs one tool action on a branch.
 *
 * 1. The request is validated (`TypeError`).
 * 2. The session gate is asked with a `ToolInvocation`; a denial records `GateDenied`, adds the
 *    request and a denial response to the branch, and returns the denial output. No hook fires.
 * 3. `tool.pre` `{ toolName, callId, argsSummary, branchId }` runs blocking; a throwing guard
 *    emits a `HookBlocked` audit signal (X3) and rejects with the guard's error. Nothing else.
 * 4. `ActionManager.invoke` runs the tool (its preprocessor, function and postprocessor).
 * 5. Success: `tool.post` `{ callId, toolName, resultSummary, durationMs, branchId }`, the
 *    `FunctionCalling` is emitted to the observer, request and response messages are added.
 *    Any failure (unknown tool, bad arguments, preprocessor, tool, postprocessor): `tool.error`
 *    `{ callId, toolName, error, durationMs, branchId }` (X8), then rejection, or with
 *    `suppressErrors` an error output (and the request/response messages).
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
 */
export async function act(
  host: ActHost,
  request: ActionRequestInit,
  options?: ActOptions,
): Promise<ActionResult> {
  const req = checkRequest(request);
  const callId = options?.callId;
  if (callId !== undefined && (typeof callId !== "string" || callId === "")) {
    throw new TypeError(`Cannot act: callId must be a non-empty string`);
  }
  return await runAction(host, req, callId ?? crypto.randomUUID(), options);
}

async function runAction(
  host: ActHost,
  req: Required<ActionRequestInit>,
  callId: string,
  options: ActOptions | undefined,
): Promise<ActionResult> {
  const toolName = req.function;
  const args = req.arguments;

  if (!(await host.authorize(toolInvocation(toolName, args, host.id)))) {
    const output = { error: GATE_DENIED_OUTPUT, function: toolName };
    await addExchange(host, req, callId, output);
    return { function: toolName, arguments: args, output };
  }

  const bus = host.hooks;
  if (bus !== null) {
    try {
      await bus.emit(HookPoint.TOOL_PRE, {
        toolName,
        callId,
        argsSummary: summarize(args),
        branchId: host.id,
      });
    } catch (error) {
      markBlocked(error);
      await safeEmit(host, new HookBlocked({ point: HookPoint.TOOL_PRE, callId, toolName, error }));
      throw error;
    }
  }

  const started = performance.now();
  let call: FunctionCalling | null = null;
  let failure: unknown = null;
  let failed = false;
  try {
    call = await host.actions.invoke(
      { function: toolName, arguments: args },
      options?.signal ? { signal: options.signal, callId } : { callId },
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
      await bus.emit(HookPoint.TOOL_ERROR, {
        callId,
        toolName,
        error: failure,
        durationMs,
        branchId: host.id,
      });
    }
    const aborted = options?.signal !== undefined && isAbortError(failure, options.signal);
    if (!options?.suppressErrors || aborted) throw failure;
    const message = errorMessage(failure);
    await addExchange(host, req, callId, { error: message, function: toolName, arguments: args });
    return {
      function: toolName,
      arguments: args,
      output: { error: message, message: `Error invoking action '${toolName}': ${message}` },
    };
  }

  const output = call!.response;
  if (bus !== null) {
    await bus.emit(HookPoint.TOOL_POST, {
      callId,
      toolName,
      resultSummary: summarize(output),
      durationMs,
      branchId: host.id,
    });
  }
  await safeEmit(host, call);
  await addExchange(host, req, callId, output);
  return { function: toolName, arguments: args, output };
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
