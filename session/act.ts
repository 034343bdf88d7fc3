/**
 * The tool action path of a branch, in this order:
 * validate → governance gate → `tool.pre` (blocking) → `ActionManager.invoke` (preprocessor →
 * tool → postprocessor) → `tool.post` on success or `tool.error` on any invocation failure. Every
 * hook on the way takes one context object and returns a decision.
 *
 * @module
 */

import type { ApprovalHandler } from "../core/approval.ts";
import type { ActionManager, ActionRequestInit } from "../action/manager.ts";
import type { HookBus } from "../hooks/bus.ts";
import { checkOptions, checkRequest, runOutcome, settleOutcome } from "./_act_path.ts";

export { GATE_DENIED_OUTPUT } from "./_act_path.ts";

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
   * deadline rejects with an error naming the step that was still running. At most 2^31 − 1
   * (about 24.8 days); `Infinity` is no deadline.
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

/**
 * Runs one tool action on a branch.
 *
 * 1. The request is validated (`TypeError`).
 * 2. The session gate is asked with a `ToolInvocation`; a denial records `GateDenied` (the
 *    observer) and `ToolDenied`, and the call is **denied** (below). No hook fires.
 * 3. `tool.pre` `{ toolName, callId, args, signal, source, argsSummary, branchId }` runs and its
 *    typed decisions are folded (deny > ask > allow, rewrites in chain order):
 *    - a handler that throws (or times out) records `HookBlocked`: the call is **blocked**;
 *    - `deny` records `ToolDenied`: the call is **denied**;
 *    - `ask` with `options.approve` asks it (a rejection is a denial); without, records
 *      `ApprovalRequested`: the call is **pending**; the answer is recorded as `ApprovalAnswered`;
 *    - shadow-mode verdicts are recorded as `WouldDeny` / `WouldAsk`.
 * 4. `ActionManager.invoke` runs the tool with the final arguments (validated again by its
 *    schema: `ToolArgumentsError`), its preprocessor, function and postprocessor, and the
 *    `AgentSpec` hooks. Their decisions mean what a `tool.pre` decision means: a deny (an
 *    `AgentSpec` security hook's: `SecurityDeniedError`) records `ToolDenied`: **denied**; an ask
 *    goes through the approval path above (a call already approved for the same arguments is
 *    not asked about again); their `context` strings reach the model after `tool.pre`'s.
 * 5. Success (**ran**): `tool.post` `{ callId, toolName, args, signal, source, result,
 *    resultSummary, durationMs, branchId }` (a handler's `updatedResult` replaces the output),
 *    the `FunctionCalling` is emitted to the observer. Any other failure (unknown tool, bad
 *    arguments, preprocessor, tool, postprocessor): `tool.error` `{ callId, toolName, args,
 *    signal, source, error, durationMs, branchId }` (**failed**); a handler's `updatedResult`
 *    recovers it (**ran**, without `tool.post`), its `context` reaches the model.
 *
 * Every outcome but pending writes its exchange once (request and response messages, the
 * response carrying the hooks' `context` strings); a failure only with `suppressErrors`. Then
 * `act` settles: ran resolves to the result; failed rejects with the failure, or with
 * `suppressErrors` resolves to an error output; denied rejects with a `ToolDeniedError` (every
 * denial, `by` says whose: `"gate"`, `"hook"`, `"approval"`, `"security"`; the model reads
 * `Denied: <reason>`); blocked rejects with the guard's error (the model reads `Blocked by a
 * tool.pre guard: …`); pending rejects with `ApprovalRequiredError` and writes nothing.
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
 * branch.actions.register(new Tool({ name: "add", execute: (a: Record<string, unknown>) => Number(a.x) + 1 }));
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
 * branch.actions.register(new Tool({ name: "bash", execute: () => "ran" }));
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
  return settleOutcome(await runOutcome(host, req, options), options?.suppressErrors === true);
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
 * branch.actions.register(new Tool({ name: "echo", execute: (a: Record<string, unknown>) => a.v }));
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
