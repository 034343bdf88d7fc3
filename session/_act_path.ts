// The act path's engine: the gate, the tool.pre decisions and approvals, the tool, tool.post or
// tool.error, and the one writer of a call's exchange. Every call ends in one `ActOutcome`;
// `act()` (act.ts) settles it, the agent loop reads it.

import {
  type ApprovalAnswer,
  type ApprovalEffects,
  argsHash,
  type PendingApproval,
} from "../core/approval.ts";
import {
  ApprovalRequiredError,
  SecurityDeniedError,
  ToolDeniedError,
  type ToolDeniedInit,
} from "../core/errors.ts";
import { neverAborted } from "../core/_abort.ts";
import { MAX_TIMER_MS } from "../core/_async.ts";
import { normalizeAnswer } from "../core/_approval_answer.ts";
import { PayloadTooDeepError } from "../core/_depth.ts";
import { EventStatus, isAbortError } from "../core/operation.ts";
import { deepFrozenCopy, plainDataCopy, samePlainData } from "../core/_freeze.ts";
import { summarize } from "../core/json_safe.ts";
import type { FunctionCalling } from "../action/function_calling.ts";
import { ARGS_REWRITTEN, type CallHost, EFFECTS } from "../action/_start.ts";
import type { ActionRequestInit, InvokeOptions } from "../action/manager.ts";
import type { HookBus, ToolErrorFold, ToolPostFold, ToolPreFold } from "../hooks/bus.ts";
import type { ToolSource } from "../core/tool_source.ts";
import { type HookPayloads, HookPoint } from "../hooks/hook_point.ts";
import { isBlocked, markBlocked } from "./_blocked.ts";
import { ActDeadline } from "./_operation.ts";
import { answerInline, storedAnswerOf } from "../core/_inline_answer.ts";
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
import type { ActHost, ActionResult, ActOptions } from "./act.ts";
import { type ActEffects, actEffects } from "./_effects_channel.ts";
import { messageOf } from "../core/_util.ts";

/** The output of an action the governance gate denied. */
export const GATE_DENIED_OUTPUT = "denied by governance gate";

const LOCAL_SOURCE: ToolSource = Object.freeze({ kind: "local" });

/** Reads `function` and `arguments` once each; the arguments are not copied yet. */
export function checkRequest(request: unknown): Required<ActionRequestInit> {
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

export function checkOptions(options: ActOptions | undefined): void {
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
  if (timeoutMs !== undefined && timeoutMs !== Infinity && timeoutMs > MAX_TIMER_MS) {
    // A timer fires a longer delay at once; Infinity is no deadline.
    throw new TypeError(
      `Cannot act: timeoutMs must be at most ${MAX_TIMER_MS} (about 24.8 days), or Infinity for no deadline; got ${timeoutMs}`,
    );
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

/**
 * How one call on the act path ended. Every outcome but `pending` has had its exchange (the
 * request and response messages) written once, by {@linkcode writeExchange}; `result` is what the
 * caller (and the model) is told. A `failed` call is written only with `suppressErrors`.
 */
export type ActOutcome =
  | { readonly kind: "ran"; readonly result: ActionResult }
  | { readonly kind: "denied"; readonly result: ActionResult; readonly error: ToolDeniedError }
  | { readonly kind: "blocked"; readonly result: ActionResult; readonly error: unknown }
  | { readonly kind: "pending"; readonly error: ApprovalRequiredError }
  | {
    readonly kind: "failed";
    readonly result: ActionResult | null;
    readonly error: unknown;
    /** The `tool.error` hooks' `context` strings, when any (also in `result` when written). */
    readonly context?: readonly string[];
  };

/** One tool exchange to write: the request as asked and the response the model reads. */
export interface Exchange {
  /** The tool. */
  readonly toolName: string;
  /** The call id. */
  readonly callId: string;
  /** The arguments as requested (the request message). */
  readonly args: Readonly<Record<string, unknown>>;
  /** The arguments that ran, when the hooks or an approver changed them (the response message). */
  readonly ranArgs?: Readonly<Record<string, unknown>>;
  /** The response's output. */
  readonly output: unknown;
  /** `context` strings of the hooks for the model. */
  readonly context?: readonly string[] | null;
}

/**
 * The one writer of a tool exchange: adds the request and response messages to the branch (and
 * so, through `message.add`, to the store). Both are stored before either's callbacks are waited
 * for, so an abort or deadline while `message.add` handlers run leaves both messages or (when
 * the act stopped earlier) neither.
 */
export function writeExchange(
  host: Pick<ActHost, "id" | "addMessage">,
  exchange: Exchange,
  op?: ActDeadline,
): Promise<unknown> {
  // Not an `async` function (its caller awaits it): a throw still rejects.
  try {
    op?.check("message.add");
    const signal = op?.signal;
    const options = signal === undefined ? undefined : { signal };
    const { toolName, callId, args } = exchange;
    const requestAdded = host.addMessage({
      role: "action_request",
      content: { function: toolName, arguments: args, callId },
      sender: host.id,
      recipient: toolName,
    }, options);
    const content: Record<string, unknown> = {
      function: toolName,
      arguments: exchange.ranArgs ?? args,
      output: exchange.output,
      callId,
    };
    const context = exchange.context;
    if (context !== undefined && context !== null && context.length > 0) {
      content.context = context;
    }
    const responseAdded = host.addMessage({
      role: "action_response",
      content,
      sender: toolName,
      recipient: host.id,
    }, options);
    const both = Promise.all([requestAdded, responseAdded]);
    return op === undefined ? both : op.run("message.add", both);
  } catch (error) {
    return Promise.reject(error);
  }
}

/** What the model is told about a denial, whoever denied. */
export function deniedOutput(reason: string): { error: string; reason: string } {
  return { error: `Denied: ${reason}`, reason };
}

/** What the model is told about a call a throwing `tool.pre` guard blocked. */
export function blockedOutput(error: unknown): { error: string } {
  return { error: `Blocked by a tool.pre guard: ${messageOf(error)}` };
}

/**
 * How `Branch.act` settles an outcome: `ran` resolves to its result; `failed` resolves to the
 * error output with `suppressErrors` and rejects with the failure otherwise; `denied` rejects
 * with its `ToolDeniedError`, `blocked` with the guard's error, `pending` with
 * `ApprovalRequiredError`.
 */
export function settleOutcome(outcome: ActOutcome, suppressErrors: boolean): ActionResult {
  if (outcome.kind === "ran") return outcome.result;
  if (outcome.kind === "failed" && suppressErrors && outcome.result !== null) {
    return outcome.result;
  }
  throw outcome.error;
}

async function safeEmit(
  host: ActHost,
  event: unknown,
  op: ActDeadline,
  step: string,
): Promise<void> {
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
 * {@linkcode act} up to its outcome: the same path, but a denial, a block, an ask and a
 * suppressed failure resolve to an {@linkcode ActOutcome} instead of settling. An abort, a
 * missed deadline and a failing message write still reject. For the agent loop.
 */
export function actOutcome(
  host: ActHost,
  request: ActionRequestInit,
  options?: ActOptions,
): Promise<ActOutcome> {
  let req: Required<ActionRequestInit>;
  try {
    req = checkRequest(request);
    checkOptions(options);
  } catch (error) {
    return Promise.reject(error);
  }
  return runOutcome(host, req, options);
}

/**
 * Runs one checked request to its outcome (the operation's deadline and listener released when
 * it settles). Not an `async` function: `runAction` is the one frame the act path awaits.
 */
export function runOutcome(
  host: ActHost,
  req: Required<ActionRequestInit>,
  options: ActOptions | undefined,
): Promise<ActOutcome> {
  const op = new ActDeadline(options?.signal, options?.timeoutMs);
  let callId: string;
  try {
    callId = options?.callId ?? crypto.randomUUID();
  } catch (error) {
    op.finish();
    return Promise.reject(error);
  }
  return runAction(host, req, callId, options, op);
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

async function deny(
  host: ActHost,
  op: ActDeadline,
  init: {
    toolName: string;
    callId: string;
    reason: string;
    hook?: string;
    interrupt?: boolean;
    by?: "gate" | "hook" | "approval";
  },
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
): Promise<ActOutcome> {
  try {
    const toolName = request.function;
    const args = plainArguments(toolName, request.arguments) as Record<string, unknown>;
    const signal = op.signal;
    const bus = host.hooks;
    const emitOptions = signal === undefined ? undefined : { signal };
    // The call's state: what its payloads carry, the arguments, the hooks' `context` strings,
    // and the tool's side of the call (the approval path, the effects channel): one object.
    const call = new ActCall(host, bus, op, options, toolName, callId, args);
    try {
      const allowed = await op.run(
        "gate",
        host.authorize(toolInvocation(toolName, args, host.id), emitOptions),
      );
      if (!allowed) {
        await deny(host, op, {
          toolName,
          callId,
          reason: GATE_DENIED_OUTPUT,
          hook: "gate",
          by: "gate",
        });
      }
      if (bus !== null) {
        const fold = await call.judge(args);
        if (fold.updatedArgs !== undefined) call.args = fold.updatedArgs;
        if (fold.context.length > 0) call.context = [...fold.context];
        if (fold.verdict === "ask") {
          call.args = await call.approveAsk({
            toolName,
            callId,
            args: call.args,
            reason: fold.reason,
            hook: fold.hook,
            expiresAt: fold.expiresAt,
            answerableBy: fold.answerableBy,
          });
          call.approvedHash = argsHash(call.args);
        }
      }
    } catch (error) {
      return await stopped(host, op, error, toolName, callId, args);
    }
    // `frozenArgs`: what the hooks judged and the tool runs with (plain data, frozen);
    // `runArgs`: the tool's own mutable copy of it.
    let frozenArgs = call.args;
    const runArgs = structuredCloneArgs(frozenArgs);

    const started = performance.now();
    let fc: FunctionCalling | null = null;
    let failure: unknown = null;
    let failed = false;
    const invokeOptions: InvokeOptions & { [EFFECTS]: CallHost } = signal
      ? { signal, callId, suppressErrors: true, [EFFECTS]: call }
      : { callId, suppressErrors: true, [EFFECTS]: call };
    try {
      fc = await op.run(
        `tool "${toolName}"`,
        host.actions.invoke({ function: toolName, arguments: runArgs }, invokeOptions),
      );
      if (fc.status !== EventStatus.COMPLETED) {
        failed = true;
        failure = fc.execution.error;
      }
    } catch (error) {
      failed = true;
      failure = error;
    }
    const durationMs = fc?.execution.durationMs ?? performance.now() - started;
    const held = call.flush();
    if (held !== undefined) await held;
    // `context` strings of the Tool scope's hooks, after the `tool.pre` ones; the arguments its
    // hooks rewrote are the ones that ran.
    if (fc !== null) {
      if (fc.context.length > 0) call.addContext(fc.context);
      if (fc[ARGS_REWRITTEN]) frozenArgs = deepFrozenCopy(fc.arguments);
    }

    // The change set waits for a person: the call is pending (the tool kept its staged layer),
    // whatever the tool's processors made of the stop.
    const pending = call.pending;
    if (pending !== undefined && !op.aborted) return { kind: "pending", error: pending };
    if (failed && failure === call.denied && !op.aborted) {
      // A person's rejection of the change set ended the run; `ToolDenied` is recorded already.
      return await stopped(host, op, failure, toolName, callId, args);
    }
    if (
      failed && !op.aborted &&
      (failure instanceof ToolDeniedError || failure instanceof ApprovalRequiredError)
    ) {
      // A Tool-scope hook denied (or its ask was rejected, or is pending): a denial like any
      // other. A denial the act path made itself (a rejected approval) is already recorded.
      const error = failure instanceof ToolDeniedError
        ? ofCall(failure, toolName, callId)
        : failure;
      return await stopped(host, op, error, toolName, callId, args, !isBlocked(failure));
    }
    if (failed) {
      let recovered: ToolErrorFold | null = null;
      if (bus !== null) {
        const payload: HookPayloads["tool.error"] = {
          toolName,
          callId,
          signal: call.signal,
          source: call.source,
          args: frozenArgs,
          error: failure,
          durationMs,
          branchId: host.id,
        };
        if (op.aborted) bus.emit(HookPoint.TOOL_ERROR, payload).catch(() => {});
        else {
          const fold = await op.run(
            "tool.error",
            bus.decide(HookPoint.TOOL_ERROR, payload, emitOptions),
            true,
          );
          if (fold.context.length > 0) call.addContext(fold.context);
          if (fold.recovered) recovered = fold;
        }
      }
      const aborted = op.aborted ||
        (options?.signal !== undefined && isAbortError(failure, options.signal));
      if (aborted) throw failure;
      if (recovered !== null) {
        // A `tool.error` handler recovered the call: it ends with that result, as a Tool-scope
        // error hook's recovery would (`tool.post` does not run: the tool did not succeed).
        const output = recovered.result;
        await writeExchange(host, ranExchange(call, args, frozenArgs, output), op);
        return ranOutcome(call, args, output);
      }
      return await failedOutcome(
        host,
        op,
        options,
        failure,
        toolName,
        callId,
        args,
        call.context ?? [],
      );
    }

    let output = fc!.response;
    if (bus !== null) {
      let post: Promise<ToolPostFold>;
      try {
        // The call's fields written out, not spread: a literal is built in one step.
        post = bus.decide(HookPoint.TOOL_POST, {
          toolName,
          callId,
          signal: call.signal,
          source: call.source,
          args: frozenArgs,
          result: deepFrozenCopy(output),
          resultSummary: summarize(output),
          durationMs,
          branchId: host.id,
        }, emitOptions);
      } catch (error) {
        // A result nested too deeply for a hook payload: a failure the model can read.
        if (!(error instanceof PayloadTooDeepError)) throw error;
        return await failedOutcome(
          host,
          op,
          options,
          error,
          toolName,
          callId,
          args,
          call.context ?? [],
        );
      }
      const fold = await op.run("tool.post", post, true);
      if (fold.replaced) output = fold.result;
      if (fold.context.length > 0) (call.context ??= []).push(...fold.context);
    }
    await safeEmit(host, fc, op, "observer (FunctionCalling)");
    await writeExchange(host, ranExchange(call, args, frozenArgs, output), op);
    return ranOutcome(call, args, output);
  } finally {
    op.finish();
  }
}

/**
 * One call on the act path (one object per call): what its `tool.*` payloads carry besides the
 * arguments (the call's signal and the tool's source, the fields a tool hook reads wherever it is
 * registered), the arguments the hooks judged, the hooks' `context` strings, and what the call
 * hands its tool as its `CallHost`: the approval path of an ask of the Tool scope (a `Tool`
 * preprocessor, an `AgentSpec` hook), the same as a `tool.pre` ask's (recorded, answered inline
 * or left pending), and the effects channel through which a staged run (coding toolkit) decides
 * on its change set: the session's hooks, the call's approval path and the audit trail. The
 * channel is made when the tool or a hook first reads `effects`: a call that stages nothing makes
 * none.
 */
class ActCall implements CallHost {
  readonly toolName: string;
  readonly callId: string;
  /** The signal the `tool.*` payloads carry (a never-aborted one without a deadline or signal). */
  readonly signal: AbortSignal;
  /** The tool's source. */
  readonly source: ToolSource;
  /** What the hooks judged and the tool runs with (plain data, frozen). */
  args: Readonly<Record<string, unknown>>;
  /** The hooks' `context` strings for the model, in order, each once. */
  context: string[] | null = null;
  /**
   * The arguments a person approved on this call (their argsHash): a Tool-scope ask about the
   * same arguments is answered by that approval, so nobody is asked twice about one call.
   */
  approvedHash: string | undefined = undefined;
  readonly #host: ActHost;
  readonly #bus: HookBus | null;
  readonly #op: ActDeadline;
  readonly #options: ActOptions | undefined;
  #channel: ActEffects | undefined = undefined;

  constructor(
    host: ActHost,
    bus: HookBus | null,
    op: ActDeadline,
    options: ActOptions | undefined,
    toolName: string,
    callId: string,
    args: Readonly<Record<string, unknown>>,
  ) {
    this.toolName = toolName;
    this.callId = callId;
    this.signal = op.signal ?? neverAborted();
    this.source = host.actions.get(toolName)?.source ?? LOCAL_SOURCE;
    this.args = args;
    this.#host = host;
    this.#bus = bus;
    this.#op = op;
    this.#options = options;
  }

  /** Adds `context` strings (a text already there is not repeated). */
  addContext(texts: readonly string[]): void {
    for (const text of texts) {
      const context = this.context ??= [];
      if (!context.includes(text)) context.push(text);
    }
  }

  /**
   * Runs the `tool.pre` fold on `judged` (the chain re-runs on its own rewrites until they
   * settle, see `HookBus.decide`) and applies what stops the call: shadow verdicts are recorded,
   * a failing hook records `HookBlocked` and rejects with its error, a deny records `ToolDenied`
   * and rejects with `ToolDeniedError`. Resolves to the fold otherwise (verdict none, allow or
   * ask). Only for a call with a bus.
   */
  async judge(judged: Readonly<Record<string, unknown>>): Promise<ToolPreFold> {
    const host = this.#host;
    const op = this.#op;
    const signal = op.signal;
    const { toolName, callId } = this;
    const fold = await op.run(
      "tool.pre",
      this.#bus!.decide(HookPoint.TOOL_PRE, {
        toolName,
        callId,
        signal: this.signal,
        source: this.source,
        args: judged,
        argsSummary: summarize(judged),
        branchId: host.id,
      }, signal === undefined ? undefined : { signal }),
      true,
    ).catch((error) => {
      if (op.aborted) throw error;
      return { error, errorHook: undefined } as unknown as ToolPreFold;
    });
    for (const verdict of fold.shadow ?? []) {
      const data = Object.freeze({
        ...verdictData(callId, toolName, verdict.reason, verdict.hook, true),
        point: HookPoint.TOOL_PRE,
      });
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

  /**
   * Asks for approval (see {@linkcode askApproval}) and resolves to the arguments that run. When
   * the approver changed the arguments, the whole `tool.pre` chain judges them again: a deny or
   * a failure stops the call; when the chain leaves them as they are, an ask is answered by this
   * approval (it named exactly these arguments); when it rewrites them, the rewrite runs only if
   * the chain would run it without asking: nobody approved it.
   */
  async approveAsk(ask: Question): Promise<Readonly<Record<string, unknown>>> {
    const host = this.#host;
    const op = this.#op;
    const approved = await askApproval(host, op, this.#options, ask);
    if (approved === undefined || samePlainData(approved, ask.args)) return ask.args;
    if (this.#bus === null) return approved;
    const again = await this.judge(approved);
    let ran = approved;
    if (again.updatedArgs !== undefined && !samePlainData(again.updatedArgs, approved)) {
      if (again.verdict === "ask") {
        return await deny(host, op, {
          toolName: ask.toolName,
          callId: ask.callId,
          reason:
            "The tool.pre hooks rewrote the approved arguments and ask about the result; approve the arguments they settle on",
          hook: "approval",
          by: "approval",
        });
      }
      ran = again.updatedArgs;
    }
    this.addContext(again.context);
    return ran;
  }

  /** The effects channel, made at the first read. */
  get effects(): ActEffects {
    if (this.#channel !== undefined) return this.#channel;
    const host = this.#host;
    const op = this.#op;
    const options = this.#options;
    const runId = options?.runId;
    this.#channel = actEffects({
      host,
      op,
      ...(runId ? { runId } : {}),
      call: { toolName: this.toolName, callId: this.callId, args: this.args },
      ask: (question, wait) => requestAnswer(host, op, options, question, wait),
      stored: (question) =>
        storedAnswerOf(options?.approve, pendingOf(host, options, question)) ?? undefined,
      deny: (init) => deny(host, op, init),
      emit: (signal) => safeEmit(host, signal, op, "observer (effects)"),
    });
    return this.#channel;
  }

  /** Set when the change set waits for a person (the call is pending). */
  get pending(): ApprovalRequiredError | undefined {
    return this.#channel?.pending;
  }

  /** Set when a person's rejection of the change set ended the run. */
  get denied(): ToolDeniedError | undefined {
    return this.#channel?.denied;
  }

  /** Records an ask's held `EffectsDecided` (`ActEffects.flush`); `undefined` without a channel. */
  flush(): Promise<void> | undefined {
    return this.#channel?.flush();
  }

  /** Answers a Tool-scope ask through the act path's approval path. */
  async approve(pending: PendingApproval): Promise<ApprovalAnswer> {
    if (this.approvedHash !== undefined && pending.argsHash === this.approvedHash) {
      return APPROVED;
    }
    const ran = await this.approveAsk({
      toolName: this.toolName,
      callId: this.callId,
      args: pending.args,
      reason: pending.reason,
      hook: pending.policy,
      expiresAt: pending.expiresAt,
      answerableBy: pending.answerableBy,
    });
    this.approvedHash = argsHash(ran);
    return ran === pending.args
      ? APPROVED
      : { approve: true, updatedArgs: ran as Record<string, unknown> };
  }
}

/** The exchange of a call that ran (or was recovered). */
function ranExchange(
  call: ActCall,
  args: Readonly<Record<string, unknown>>,
  ranArgs: Readonly<Record<string, unknown>>,
  output: unknown,
): Exchange {
  const exchange: { -readonly [K in keyof Exchange]: Exchange[K] } = {
    toolName: call.toolName,
    callId: call.callId,
    args,
    output,
    context: call.context,
  };
  if (ranArgs !== args) exchange.ranArgs = ranArgs;
  return exchange;
}

/** The outcome of a call that ran (or was recovered), once its exchange is written. */
function ranOutcome(
  call: ActCall,
  args: Readonly<Record<string, unknown>>,
  output: unknown,
): ActOutcome {
  const result: ActionResult = {
    function: call.toolName,
    arguments: args as Record<string, unknown>,
    output,
  };
  const context = call.context;
  if (context !== null) result.context = context;
  return { kind: "ran", result };
}

/** A Tool-scope denial with this call's tool name and id (a hook there may not know them). */
function ofCall(error: ToolDeniedError, toolName: string, callId: string): ToolDeniedError {
  if (error.toolName === toolName && error.callId === callId) return error;
  if (error instanceof SecurityDeniedError) {
    return new SecurityDeniedError(error.control, error.reason, {
      cause: error.cause,
      toolName,
      callId,
    });
  }
  const init: ToolDeniedInit = { toolName, callId, reason: error.reason, by: error.by };
  if (error.hook !== undefined) init.hook = error.hook;
  if (error.interrupt) init.interrupt = true;
  return new ToolDeniedError(init, error.cause === undefined ? undefined : { cause: error.cause });
}

/** A failed call: written (and told as an error output) only with `suppressErrors`. */
async function failedOutcome(
  host: ActHost,
  op: ActDeadline,
  options: ActOptions | undefined,
  failure: unknown,
  toolName: string,
  callId: string,
  args: Readonly<Record<string, unknown>>,
  context: readonly string[],
): Promise<ActOutcome> {
  if (!options?.suppressErrors) {
    return context.length > 0
      ? { kind: "failed", result: null, error: failure, context }
      : { kind: "failed", result: null, error: failure };
  }
  const message = messageOf(failure);
  await writeExchange(host, {
    toolName,
    callId,
    args,
    output: { error: message, function: toolName, arguments: args },
    ...(context.length > 0 ? { context } : {}),
  }, op);
  const result: ActionResult = {
    function: toolName,
    arguments: args as Record<string, unknown>,
    output: { error: message, message: `Error invoking action '${toolName}': ${message}` },
  };
  if (context.length > 0) result.context = [...context];
  return context.length > 0
    ? { kind: "failed", error: failure, result, context }
    : { kind: "failed", error: failure, result };
}

/**
 * The outcome of a call the gate, the `tool.pre` hooks, an approval or a security hook stopped:
 * a `ToolDeniedError` is `denied` (its `ToolDenied` signal recorded, unless `record` is `false`
 * because `deny` did it already), an `ApprovalRequiredError` is `pending` (nothing written), a
 * guard's error is `blocked`. Anything else (an abort, a deadline) rejects.
 */
async function stopped(
  host: ActHost,
  op: ActDeadline,
  error: unknown,
  toolName: string,
  callId: string,
  args: Readonly<Record<string, unknown>>,
  record = false,
): Promise<ActOutcome> {
  if (op.aborted) throw error;
  if (error instanceof ApprovalRequiredError) return { kind: "pending", error };
  if (error instanceof ToolDeniedError) {
    if (record) {
      await safeEmit(
        host,
        new ToolDenied({
          data: verdictData(callId, toolName, error.reason, error.hook, false),
        }),
        op,
        "observer (ToolDenied)",
      );
    }
    const output = deniedOutput(error.reason);
    await writeExchange(host, { toolName, callId, args, output }, op);
    return {
      kind: "denied",
      error,
      result: { function: toolName, arguments: args as Record<string, unknown>, output },
    };
  }
  if (!isBlocked(error)) throw error;
  const output = blockedOutput(error);
  await writeExchange(host, { toolName, callId, args, output }, op);
  return {
    kind: "blocked",
    error,
    result: { function: toolName, arguments: args as Record<string, unknown>, output },
  };
}

/** A mutable deep copy of frozen arguments for the tool (it may change its own copy). */
function structuredCloneArgs(args: Readonly<Record<string, unknown>>): Record<string, unknown> {
  try {
    return structuredClone(args) as Record<string, unknown>;
  } catch {
    return { ...args };
  }
}

/** One question to a person: a call (and for a change-set approval, its change set). */
interface Question {
  toolName: string;
  callId: string;
  args: Readonly<Record<string, unknown>>;
  reason: string | undefined;
  hook: string | undefined;
  effects?: ApprovalEffects;
  expiresAt?: number | undefined;
  answerableBy?: readonly string[] | undefined;
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
  ask: Question,
): Promise<Readonly<Record<string, unknown>> | undefined> {
  const answer = (await requestAnswer(host, op, options, ask, true))!;
  if (!answer.approve) {
    const init: Parameters<typeof deny>[2] = {
      toolName: ask.toolName,
      callId: ask.callId,
      reason: answer.reason ?? "rejected by the approver",
      hook: answer.by === undefined ? "approval" : `approval by ${answer.by}`,
      by: "approval",
    };
    if (answer.interrupt === true) init.interrupt = true;
    return await deny(host, op, init);
  }
  return answer.updatedArgs;
}

/** The pending approval `ask` is put to a person as. */
function pendingOf(
  host: ActHost,
  options: ActOptions | undefined,
  ask: Question,
): PendingApproval {
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
  if (ask.expiresAt !== undefined) pending.expiresAt = ask.expiresAt;
  if (ask.answerableBy !== undefined) pending.answerableBy = ask.answerableBy;
  const sessionId = host.session?.id;
  if (typeof sessionId === "string") pending.sessionId = sessionId;
  if (ask.reason !== undefined) pending.reason = ask.reason;
  if (ask.effects !== undefined) pending.effects = ask.effects;
  return Object.freeze(pending);
}

/**
 * Puts a question to a person: records `ApprovalRequested`, then answers inline through
 * `options.approve` (recording `ApprovalAnswered`) or rejects with `ApprovalRequiredError`.
 * With `wait` false and no inline approver it records nothing and resolves to `undefined`.
 * A resumed run's stored answer that applies is not a new question: only its `ApprovalAnswered`
 * (`resumed: true`) is recorded.
 */
async function requestAnswer(
  host: ActHost,
  op: ActDeadline,
  options: ActOptions | undefined,
  ask: Question,
  wait: boolean,
): Promise<ApprovalAnswer | undefined> {
  const approve = options?.approve;
  if (approve === undefined && !wait) return undefined;
  const approval = pendingOf(host, options, ask);
  const stored = storedAnswerOf(approve, approval);
  let answer: ApprovalAnswer;
  if (stored !== undefined && stored !== null) answer = normalizeAnswer(stored);
  else {
    await safeEmit(
      host,
      new ApprovalRequested({ data: approval }),
      op,
      "observer (ApprovalRequested)",
    );
    if (approve === undefined || stored === null) throw new ApprovalRequiredError(approval);
    answer = await op.run(
      "approval",
      answerInline(approval, approve, op.signal, normalizeAnswer),
    );
  }
  const data: { -readonly [K in keyof ApprovalAnsweredData]: ApprovalAnsweredData[K] } = {
    runId: approval.runId,
    callId: ask.callId,
    toolName: ask.toolName,
    approve: answer.approve,
  };
  if (answer.by !== undefined) data.by = answer.by;
  if (!answer.approve && answer.reason !== undefined) data.reason = answer.reason;
  if (answer.approve && answer.updatedArgs !== undefined) data.updatedArgs = answer.updatedArgs;
  if (stored) data.resumed = true;
  await safeEmit(
    host,
    new ApprovalAnswered({ data: Object.freeze(data) }),
    op,
    "observer (ApprovalAnswered)",
  );
  return answer;
}

const APPROVED: ApprovalAnswer = Object.freeze({ approve: true });
