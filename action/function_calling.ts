/**
 * `FunctionCalling`: one invocation of a {@linkcode Tool} as an `Operation` — validation at
 * construction, then preprocessor → re-validation → function → postprocessor, with the
 * error processor on any failure.
 *
 * @module
 */

import {
  type ApprovalHandler,
  ApprovalRequiredError,
  argsHash,
  type ArgumentIssue,
  type EventRunOptions,
  EventStatus,
  isAbortError,
  Operation,
  type PendingApproval,
  toJsonSafe,
  ToolArgumentsError,
  ToolDeniedError,
  type ToolSource,
} from "../core/mod.ts";
import { neverAborted } from "../core/_abort.ts";
import { normalizeAnswer } from "../core/_approval_answer.ts";
import { answerInline } from "../core/_inline_answer.ts";
import { abortable as untilAborted } from "../core/_async.ts";
import { plainDataCopy, samePlainData } from "../core/_freeze.ts";
import {
  foldAskTerms,
  type PreDecisionRead,
  readPreDecision,
  readResultDecision,
  type ResultDecisionRead,
} from "../core/_tool_decision.ts";
import { durationClock, isThenable } from "../core/_util.ts";
import { actionOf } from "./_chain.ts";
import { isPlainObject } from "../core/_freeze.ts";
import {
  ARGS_REWRITTEN,
  ASKED_BY,
  type CallHost,
  CHECKED,
  EFFECTS,
  NOTE,
  RUN_CALL,
  START_AT,
} from "./_start.ts";
import type { z } from "zod";
import type { ToolHookContext } from "./spec.ts";
import type { Tool, ToolContext } from "./tool.ts";
import type { ToolEffectsChannel } from "./coding/file_change.ts";

/** Options of {@linkcode FunctionCalling}. */
export interface FunctionCallingInit {
  /** The tool to run. */
  tool: Tool;
  /** The arguments, validated against the tool's schema at construction. */
  arguments: Record<string, unknown>;
  /** A call id handed to the function and processors (for example the `Branch.act` call id). */
  callId?: string;
}

/**
 * One call of a tool. The constructor validates the arguments and throws `ToolArgumentsError`
 * (with the zod issues) when they do not fit; nothing runs then.
 *
 * `invoke()` runs preprocessor → re-validation → function → postprocessor. Each processor takes
 * one context object ({@linkcode ToolHookContext}) and returns a decision: the preprocessor's
 * `deny` ends the call FAILED with `ToolDeniedError` (a security hook's with
 * `SecurityDeniedError`), its `ask` is answered through `options.approve` (without one the call
 * ends FAILED with `ApprovalRequiredError`), `updatedArgs` are validated again; the
 * postprocessor's `updatedResult` replaces the result; `context` strings collect in
 * {@linkcode FunctionCalling.context}. Every failure (a `ToolArgumentsError` after
 * preprocessing, a throwing function or processor, a return that is not a decision:
 * `ToolHookReturnError`) is first offered to the tool's error processor, whose `updatedResult`
 * recovers; if nothing recovers, the event ends FAILED with the error in `execution.error` —
 * `invoke()` does not reject. A denial and a pending approval are not offered to it (they are
 * decisions). Only an abort through the caller's signal ends CANCELLED and rejects.
 *
 * @example Invoke a tool directly
 * ```ts
 * import { FunctionCalling, Tool } from "@hookscope/core/action";
 * import { z } from "zod";
 * import assert from "node:assert/strict";
 *
 * const double = new Tool({
 *   name: "double",
 *   execute: ({ n }) => n * 2,
 *   inputSchema: z.object({ n: z.number() }),
 * });
 * const call = new FunctionCalling({ tool: double, arguments: { n: 21 } });
 * await call.invoke();
 * assert.equal(call.status, "completed");
 * assert.equal(call.response, 42);
 * assert.throws(
 *   () => new FunctionCalling({ tool: double, arguments: { n: "x" } }),
 *   { name: "ToolArgumentsError" },
 * );
 * ```
 */
export class FunctionCalling extends Operation {
  /** The tool being called. */
  readonly tool: Tool;
  /** The arguments: validated at construction, replaced by the final ones after preprocessing. */
  arguments: Record<string, unknown>;
  /** The call id, if one was given. */
  readonly callId: string | undefined;
  #startAt: number | undefined;
  /**
   * The act path's per-call state (its effects channel, made when first read, and its approval
   * path), or the `effects` option wrapped.
   */
  readonly #host: CallHost | undefined;
  /**
   * What the hooks of a run left (made at first need: a call without hooks or an approver
   * allocates nothing for them): the approver, `context` strings, whether arguments were rewritten.
   */
  #hooks: HookState | null = null;

  /** Validates the arguments; throws `ToolArgumentsError` when they do not fit the schema. */
  constructor(init: FunctionCallingInit) {
    const startAt = (init as { [START_AT]?: number } | null)?.[START_AT];
    super(startAt === undefined ? undefined : { createdAt: startAt });
    this.#startAt = startAt;
    if (init === null || typeof init !== "object") {
      throw new TypeError("Cannot create function call: options must be an object");
    }
    if (!isToolLike(init.tool)) {
      throw new TypeError("Cannot create function call: tool must be a Tool");
    }
    this.tool = init.tool;
    this.callId = init.callId;
    this.#host = (init as { [EFFECTS]?: CallHost })[EFFECTS];
    this.arguments = validateArguments(init.tool, init.arguments, "");
  }

  /** The `action` argument when it is a string, else `""` (what tool hooks receive). */
  get action(): string {
    return actionOf(this.arguments);
  }

  /** JSON-safe form: element fields, `execution`, `function` (the tool name), `arguments`, `callId`. */
  override toJSON(): Record<string, unknown> {
    const base = super.toJSON();
    delete base.tool;
    return {
      ...base,
      function: this.tool.name,
      arguments: toJsonSafe(this.arguments),
      callId: this.callId ?? null,
    };
  }

  /**
   * The `context` strings the tool's hooks added for the model (allow decisions of its pre
   * chain, its post hooks, its error hooks), in the order they ran; empty when none. `Branch.act`
   * hands them to the model with the result, after those of the session's `tool.pre` hooks.
   */
  get context(): readonly string[] {
    return this.#hooks?.context ?? NO_CONTEXT;
  }

  /**
   * Runs the call once (see {@linkcode Operation.invoke} for the status rules). The whole run is one
   * step when the processors and the function are synchronous: nothing is awaited that is not a
   * thenable. `options.approve` answers an `ask` of the tool's hooks; without it an ask ends the
   * call FAILED with `ApprovalRequiredError`.
   */
  override invoke(options?: FunctionCallingRunOptions): Promise<void> {
    return this.#begin(options?.signal, options?.approve) ?? Promise.resolve();
  }

  /**
   * `invoke()` resolving to the call itself (what `ActionManager.invoke` returns); with
   * `rejectOnFailure`, a call that ends FAILED rejects with its error instead.
   */
  [RUN_CALL](
    signal: AbortSignal | undefined,
    rejectOnFailure: boolean,
    approve?: ApprovalHandler,
  ): Promise<this> {
    const pending = this.#begin(signal, approve);
    if (!pending) return Promise.resolve(this);
    return pending.then(() => {
      const execution = this.execution;
      if (rejectOnFailure && execution.status === EventStatus.FAILED) throw execution.error;
      return this;
    });
  }

  /** The act path's effects channel (for the hook contexts). */
  get [EFFECTS](): ToolEffectsChannel | undefined {
    return this.#host?.effects;
  }

  /** Whether a hook of the tool (its preprocessor, an approval's edit) changed the arguments. */
  get [ARGS_REWRITTEN](): boolean {
    return this.#hooks?.rewritten === true;
  }

  /** Adds a `context` string for the model (once: a text said again is not repeated). */
  [NOTE](text: string): void {
    const hooks = this.#hooks ??= { approve: undefined, context: null, rewritten: false };
    const list = hooks.context ??= [];
    if (!list.includes(text)) list.push(text);
  }

  /** Starts the run: `undefined` when it completed synchronously, else a promise of the end. */
  #begin(
    callerSignal: AbortSignal | undefined,
    approve: ApprovalHandler | undefined,
  ): Promise<void> | undefined {
    const execution = this.execution;
    if (execution.status !== EventStatus.PENDING) return undefined;
    if (approve !== undefined && typeof approve !== "function") {
      throw new TypeError("Cannot invoke function call: approve must be a function");
    }
    const signal = callerSignal ?? neverAborted();
    if (approve !== undefined) this.#hooks = { approve, context: null, rewritten: false };
    execution.status = EventStatus.PROCESSING;
    const started = this.#startAt ?? durationClock();
    this.#startAt = undefined;
    let out: unknown;
    try {
      signal.throwIfAborted();
      out = this.#run(signal);
    } catch (error) {
      return this.#failed(error, signal, started);
    }
    if (isThenable(out)) return this.#settle(out, signal, started);
    execution.response = out;
    execution.error = null;
    execution.status = EventStatus.COMPLETED;
    execution.durationMs = durationClock() - started;
    return undefined;
  }

  /** Runs preprocessor → re-validation → function → postprocessor (error processor on failure). */
  protected async _invoke(signal: AbortSignal): Promise<unknown> {
    return await this.#run(signal);
  }

  async #settle(out: PromiseLike<unknown>, signal: AbortSignal, started: number): Promise<void> {
    const execution = this.execution;
    try {
      execution.response = await out;
      execution.error = null;
      execution.status = EventStatus.COMPLETED;
      execution.durationMs = durationClock() - started;
    } catch (error) {
      await this.#failed(error, signal, started);
    }
  }

  #failed(error: unknown, signal: AbortSignal, started: number): Promise<void> {
    const execution = this.execution;
    execution.response = null;
    execution.error = error;
    execution.durationMs = durationClock() - started;
    if (isAbortError(error, signal)) {
      execution.status = EventStatus.CANCELLED;
      return Promise.reject(error);
    }
    execution.status = EventStatus.FAILED;
    return Promise.resolve();
  }

  /** The work: a value when every step was synchronous, else a promise of it. */
  #run(signal: AbortSignal): unknown {
    const tool = this.tool;
    try {
      const pre = tool.preprocessor;
      if (pre !== null) {
        // The chains' preprocessor copies the arguments for each hook it calls itself.
        const context = new HookContext(
          this,
          signal,
          this.arguments,
          !isChecked(pre),
          undefined,
          undefined,
        );
        const out = pre(context);
        if (isThenable(out)) return this.#runAsync(signal, PRE, out, undefined);
        const asked = this.#applyPre(out, signal);
        if (asked !== undefined) return this.#runAsync(signal, ASKED, asked, undefined);
      }
      signal.throwIfAborted();
      const result = tool.execute(this.arguments, toolContext(signal, this.callId, this.#host));
      if (isThenable(result)) return this.#runAsync(signal, FUNC, result, undefined);
      const postprocessor = tool.postprocessor;
      if (postprocessor === null) return result;
      const out = postprocessor(
        new HookContext(this, signal, this.arguments, false, result, undefined),
      );
      if (isThenable(out)) return this.#runAsync(signal, POST, out, result);
      return this.#applyPost(out, result);
    } catch (error) {
      return this.#recover(error, signal);
    }
  }

  /** The rest of `#run` from the step whose result is `pending`. */
  async #runAsync(
    signal: AbortSignal,
    step: number,
    pending: PromiseLike<unknown>,
    ran: unknown,
  ): Promise<unknown> {
    const tool = this.tool;
    try {
      let result: unknown;
      if (step === POST) return this.#applyPost(await abortable(pending, signal), ran);
      if (step === FUNC) result = await abortable(pending, signal);
      else {
        if (step === PRE) {
          const asked = this.#applyPre(await abortable(pending, signal), signal);
          if (asked !== undefined) await abortable(asked, signal);
        } else await abortable(pending, signal);
        signal.throwIfAborted();
        result = tool.execute(this.arguments, toolContext(signal, this.callId, this.#host));
        if (isThenable(result)) result = await abortable(result, signal);
      }
      const postprocessor = tool.postprocessor;
      if (postprocessor === null) return result;
      let out = postprocessor(
        new HookContext(this, signal, this.arguments, false, result, undefined),
      );
      if (isThenable(out)) out = await abortable(out, signal);
      return this.#applyPost(out, result);
    } catch (error) {
      return await this.#recover(error, signal);
    }
  }

  /**
   * Applies the preprocessor's decision: a deny throws `ToolDeniedError`; `updatedArgs` are
   * validated again (X14: when it returned no rewrite, the validated arguments stand — the
   * preprocessor only ever saw a copy); an ask returns the promise of its approval. With
   * `approved` (the decision on arguments a person just approved and edited), an ask is answered
   * by that approval, unless the preprocessor rewrote them: then nobody approved what would run.
   */
  #applyPre(out: unknown, signal: AbortSignal, approved = false): Promise<void> | undefined {
    if (out === undefined) return undefined;
    const tool = this.tool;
    const pre = tool.preprocessor!;
    // The chains' allow is read and checked already (an ask carries its terms unread).
    const read = isChecked(pre) && (out as { decision?: unknown }).decision === "allow"
      ? out as PreDecisionRead
      : readPreDecision(out, tool.name, "preprocessor", pre, "preprocessor");
    if (read === undefined) return undefined;
    const hook = (out as { [ASKED_BY]?: string })[ASKED_BY] ?? (pre.name || "preprocessor");
    if (read.decision === "deny") {
      throw this.#denied(read.reason as string, hook, read.interrupt === true, "hook");
    }
    const ask = read.decision === "ask";
    if (read.updatedArgs !== undefined) {
      if (approved && ask && !samePlainData(read.updatedArgs, this.arguments)) {
        throw this.#denied(
          "The tool's hooks rewrote the approved arguments and ask about the result; approve the arguments they settle on",
          "approval",
          false,
          "approval",
        );
      }
      this.#rewrite(read.updatedArgs, "after preprocessing");
    }
    if (!ask) {
      if (read.context !== undefined) this[NOTE](read.context);
      return undefined;
    }
    return approved ? undefined : this.#approval(read, hook, signal);
  }

  #denied(
    reason: string,
    hook: string,
    interrupt: boolean,
    by: "hook" | "approval",
  ): ToolDeniedError {
    const callId = this.callId ?? this.id;
    return new ToolDeniedError({ toolName: this.tool.name, callId, reason, hook, interrupt, by });
  }

  /**
   * Asks for approval of the current arguments: through `approve` (the act path's approval path,
   * or the caller's handler), else `ApprovalRequiredError`. A rejection throws `ToolDeniedError`
   * (`by: "approval"`). An approval with other arguments has them validated and judged by the
   * preprocessor again (see `#applyPre`).
   */
  async #approval(ask: PreDecisionRead, hook: string, signal: AbortSignal): Promise<void> {
    const tool = this.tool;
    const args = plainDataCopy(
      this.arguments,
      `Cannot ask approval for tool ${JSON.stringify(tool.name)}`,
      "arguments",
      true,
    ) as Readonly<Record<string, unknown>>;
    const pending: { -readonly [K in keyof PendingApproval]: PendingApproval[K] } = {
      runId: "",
      callId: this.callId ?? this.id,
      toolName: tool.name,
      args,
      requestedAt: Date.now(),
      argsHash: argsHash(args),
      policy: hook,
      ...(ask.ask === undefined ? {} : foldAskTerms(undefined, ask.ask)),
    };
    if (ask.reason !== undefined) pending.reason = ask.reason;
    const approval: PendingApproval = Object.freeze(pending);
    const approve = this.#hooks?.approve;
    const host = this.#host;
    if (approve === undefined && host?.approve === undefined) {
      throw new ApprovalRequiredError(approval);
    }
    // The caller's own handler is held to the ask's terms here (expiry, who may answer); the act
    // path's handler holds its own to them already.
    const answer = approve !== undefined
      ? await answerInline(
        approval,
        approve,
        signal === neverAborted() ? undefined : signal,
        normalizeAnswer,
      )
      : normalizeAnswer(
        await abortable(Promise.resolve().then(() => host!.approve!(approval, { signal })), signal),
      );
    if (!answer.approve) {
      throw this.#denied(
        answer.reason ?? "rejected by the approver",
        answer.by === undefined ? "approval" : `approval by ${answer.by}`,
        answer.interrupt === true,
        "approval",
      );
    }
    const edited = answer.updatedArgs;
    if (edited === undefined || samePlainData(edited, args)) return;
    this.#rewrite(edited, "after approval");
    const pre = tool.preprocessor!;
    let out = pre(
      new HookContext(this, signal, this.arguments, !isChecked(pre), undefined, undefined),
    );
    if (isThenable(out)) out = await abortable(out, signal);
    this.#applyPre(out, signal, true);
  }

  /** Replaces the arguments with a hook's, validated again (X14). */
  #rewrite(args: Record<string, unknown>, when: string): void {
    const hooks = this.#hooks ??= { approve: undefined, context: null, rewritten: false };
    if (!hooks.rewritten && samePlainData(args, this.arguments)) return;
    this.arguments = validateArguments(this.tool, args, when);
    hooks.rewritten = true;
  }

  /** Applies the postprocessor's decision to the function's result. */
  #applyPost(out: unknown, result: unknown): unknown {
    if (out === undefined) return result;
    const post = this.tool.postprocessor!;
    const read = isChecked(post)
      ? out as ResultDecisionRead
      : readResultDecision(out, this.tool.name, "post", "postprocessor", post, "postprocessor");
    if (read === undefined) return result;
    if (read.context !== undefined) this[NOTE](read.context);
    return "updatedResult" in read ? read.updatedResult : result;
  }

  async #recover(error: unknown, signal: AbortSignal): Promise<unknown> {
    const tool = this.tool;
    const processor = tool.errorProcessor;
    // A denial and a pending approval are decisions, not failures: no error hook sees them.
    if (
      processor === null || isAbortError(error, signal) || error instanceof ToolDeniedError ||
      error instanceof ApprovalRequiredError
    ) throw error;
    const out = await processor(
      new HookContext(this, signal, this.arguments, false, undefined, error),
    );
    const read = readResultDecision(
      out,
      tool.name,
      "error",
      "errorProcessor",
      processor,
      "errorProcessor",
    );
    if (read === undefined) throw error;
    if (read.context !== undefined) this[NOTE](read.context);
    if (!("updatedResult" in read)) throw error;
    return read.updatedResult;
  }
}

/** Options of {@linkcode FunctionCalling.invoke}. */
export interface FunctionCallingRunOptions extends EventRunOptions {
  /**
   * Answers an `ask` of the tool's hooks (inline approval), held to the ask's expiry and
   * `answerableBy` (an expired wait or an answerer not named denies). Without it an ask ends the
   * call FAILED with `ApprovalRequiredError`. `Branch.act` passes its own, which goes through the
   * session's approval path.
   */
  approve?: ApprovalHandler;
}

const NO_CONTEXT: readonly string[] = Object.freeze([]);

/** The state of one run's hooks (see `FunctionCalling#hooks`). */
interface HookState {
  readonly approve: ApprovalHandler | undefined;
  context: string[] | null;
  rewritten: boolean;
}
const PRE = 0;
const FUNC = 1;
const POST = 2;
const ASKED = 3;

/**
 * Waits for a pending tool step, unless the call's signal aborts first (then rejects with its
 * reason): a tool, processor or Tool-scope hook that ignores the signal cannot keep the call
 * running. A call nobody can abort waits directly.
 */
function abortable<T>(pending: PromiseLike<T>, signal: AbortSignal): PromiseLike<T> {
  return signal === neverAborted() ? pending : untilAborted(pending, signal);
}

function toolContext(
  signal: AbortSignal,
  callId: string | undefined,
  host: CallHost | undefined,
): ToolContext {
  if (host !== undefined) return new HostedToolContext(signal, callId, host);
  return callId === undefined ? { signal } : { signal, callId };
}

/**
 * What the tool receives on a call with a host: `effects` is read from the host when the tool
 * reads it (the act path makes its channel then).
 */
class HostedToolContext implements ToolContext {
  readonly signal: AbortSignal;
  readonly callId: string | undefined;
  readonly #host: CallHost;

  constructor(signal: AbortSignal, callId: string | undefined, host: CallHost) {
    this.signal = signal;
    this.callId = callId;
    this.#host = host;
  }

  get effects(): ToolEffectsChannel | undefined {
    return this.#host.effects;
  }
}

/**
 * The processors' context (every tool hook's shape). With `copy`, the processor gets its own copy
 * of the arguments, made when it first reads `args` (X14: a preprocessor only ever sees a copy);
 * without, the call's own arguments (the chains' processors, which copy them for each hook, and
 * postprocessors). The call's fields are getters read from the call when asked for: a call
 * without a caller-supplied id draws its own id (a random UUID) only if a processor or hook reads
 * `callId`.
 */
class HookContext implements ToolHookContext {
  readonly args: Record<string, unknown>;
  readonly signal: AbortSignal;
  readonly result: unknown;
  readonly error: unknown;
  readonly #call: FunctionCalling;

  constructor(
    call: FunctionCalling,
    signal: AbortSignal,
    args: Record<string, unknown>,
    copy: boolean,
    result: unknown,
    error: unknown,
  ) {
    this.args = copy ? { ...args } : args;
    this.signal = signal;
    this.result = result;
    this.error = error;
    this.#call = call;
  }

  // Read from the call when asked for: a hook that reads one field costs the others nothing.
  get toolName(): string {
    return this.#call.tool.name;
  }

  get action(): string {
    return actionOf(this.args);
  }

  get source(): ToolSource {
    return this.#call.tool.source;
  }

  get effects(): ToolEffectsChannel | undefined {
    return this.#call[EFFECTS];
  }

  get callId(): string {
    return this.#call.callId ?? this.#call.id;
  }

  [NOTE](text: string): void {
    this.#call[NOTE](text);
  }
}

/** Whether a processor is one of the chains' (`attachToolHooks`): see `CHECKED`. */
function isChecked(processor: object): boolean {
  return (processor as { [CHECKED]?: true })[CHECKED] === true;
}

function isToolLike(value: unknown): value is Tool {
  return value !== null && typeof value === "object" &&
    typeof (value as Tool).execute === "function" && typeof (value as Tool).name === "string";
}

/** Validates arguments against a tool's schema; returns the parsed copy or throws. */
function validateArguments(
  tool: Tool,
  args: unknown,
  when: string,
): Record<string, unknown> {
  if (!isPlainObject(args)) {
    throw new ToolArgumentsError(tool.name, [{
      path: [],
      message: `Expected an object of arguments, got ${args === null ? "null" : typeof args}`,
      code: "invalid_type",
    }], when);
  }
  const validator = tool.validator;
  if (!validator) return { ...args };
  const parsed = (validator as z.ZodType).safeParse(args);
  if (!parsed.success) {
    const issues: ArgumentIssue[] = parsed.error.issues.map((issue) => ({
      path: issue.path,
      message: issue.message,
      code: issue.code,
    }));
    throw new ToolArgumentsError(tool.name, issues, when);
  }
  if (!isPlainObject(parsed.data)) {
    throw new ToolArgumentsError(tool.name, [{
      path: [],
      message: "The schema did not produce an object of arguments",
      code: "invalid_type",
    }], when);
  }
  return parsed.data;
}
