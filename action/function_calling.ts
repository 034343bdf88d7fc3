/**
 * `FunctionCalling`: one invocation of a {@linkcode Tool} as an `Operation` — validation at
 * construction, then preprocessor → re-validation → function → postprocessor, with the
 * error processor on any failure.
 *
 * @module
 */

import {
  type ArgumentIssue,
  type EventRunOptions,
  EventStatus,
  isAbortError,
  Operation,
  toJsonSafe,
  ToolArgumentsError,
} from "../core/mod.ts";
import { neverAborted } from "../core/_abort.ts";
import { abortable as untilAborted } from "../core/_async.ts";
import { durationClock, isThenable } from "../core/_util.ts";
import { actionOf } from "./_chain.ts";
import { isPlainObject } from "../core/_freeze.ts";
import { EFFECTS, RUN_CALL, START_AT } from "./_start.ts";
import type { z } from "zod";
import type { ProcessorContext, Tool, ToolContext } from "./tool.ts";
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
 * `invoke()` runs preprocessor → re-validation → function → postprocessor. Every failure in
 * there (a `GateDeniedError` from a security hook, a `ToolArgumentsError` after preprocessing, a
 * throwing function or processor) is first offered to the tool's error processor; if that does
 * not recover, the event ends FAILED with the error in `execution.error` — `invoke()` does not
 * reject. Only an abort through the caller's signal ends CANCELLED and rejects.
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
  /** The act path's effects channel, handed to the tool and its processors. */
  readonly #effects: ToolEffectsChannel | undefined;

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
    this.#effects = (init as { [EFFECTS]?: ToolEffectsChannel })[EFFECTS];
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
   * Runs the call once (see {@linkcode Operation.invoke} for the status rules). The whole run is one
   * step when the processors and the function are synchronous: nothing is awaited that is not a
   * thenable.
   */
  override invoke(options?: EventRunOptions): Promise<void> {
    return this.#begin(options?.signal) ?? Promise.resolve();
  }

  /**
   * `invoke()` resolving to the call itself (what `ActionManager.invoke` returns); with
   * `rejectOnFailure`, a call that ends FAILED rejects with its error instead.
   */
  [RUN_CALL](signal: AbortSignal | undefined, rejectOnFailure: boolean): Promise<this> {
    const pending = this.#begin(signal);
    if (!pending) return Promise.resolve(this);
    return pending.then(() => {
      const execution = this.execution;
      if (rejectOnFailure && execution.status === EventStatus.FAILED) throw execution.error;
      return this;
    });
  }

  /** Starts the run: `undefined` when it completed synchronously, else a promise of the end. */
  #begin(callerSignal: AbortSignal | undefined): Promise<void> | undefined {
    const execution = this.execution;
    if (execution.status !== EventStatus.PENDING) return undefined;
    const signal = callerSignal ?? neverAborted();
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
      if (tool.preprocessor) {
        const replaced = tool.preprocessor(
          { ...this.arguments },
          tool.preprocessorOptions,
          new CallContext(signal, tool.name, this.arguments, this, this.#effects),
        );
        if (isThenable(replaced)) return this.#runAsync(signal, PRE, replaced);
        this.#applyPre(replaced);
      }
      signal.throwIfAborted();
      let result = tool.execute(this.arguments, toolContext(signal, this.callId, this.#effects));
      if (isThenable(result)) return this.#runAsync(signal, FUNC, result);
      if (tool.postprocessor) {
        result = tool.postprocessor(
          result,
          tool.postprocessorOptions,
          new CallContext(signal, tool.name, this.arguments, this, this.#effects),
        );
        if (isThenable(result)) return this.#runAsync(signal, POST, result);
      }
      return result;
    } catch (error) {
      return this.#recover(error, signal);
    }
  }

  /** The rest of `#run` from the step whose result is `pending`. */
  async #runAsync(
    signal: AbortSignal,
    step: number,
    pending: PromiseLike<unknown>,
  ): Promise<unknown> {
    const tool = this.tool;
    try {
      let result: unknown;
      if (step === PRE) {
        this.#applyPre(await abortable(pending, signal));
        signal.throwIfAborted();
        result = tool.execute(this.arguments, toolContext(signal, this.callId, this.#effects));
        if (isThenable(result)) result = await abortable(result, signal);
      } else {
        result = await abortable(pending, signal);
      }
      if (step !== POST && tool.postprocessor) {
        result = tool.postprocessor(
          result,
          tool.postprocessorOptions,
          new CallContext(signal, tool.name, this.arguments, this, this.#effects),
        );
        if (isThenable(result)) result = await abortable(result, signal);
      }
      return result;
    } catch (error) {
      return await this.#recover(error, signal);
    }
  }

  // X14: arguments a preprocessor replaced are validated again; when it returned nothing, the
  // validated arguments stand (the preprocessor only ever saw a copy).
  #applyPre(replaced: unknown): void {
    if (replaced !== undefined) {
      this.arguments = validateArguments(this.tool, replaced, "after preprocessing");
    }
  }

  async #recover(error: unknown, signal: AbortSignal): Promise<unknown> {
    const tool = this.tool;
    if (isAbortError(error, signal) || !tool.errorProcessor) throw error;
    const recovered = await tool.errorProcessor(
      error,
      this.arguments,
      new CallContext(signal, tool.name, this.arguments, this, this.#effects),
    );
    if (recovered === undefined) throw error;
    return recovered;
  }
}

const PRE = 0;
const FUNC = 1;
const POST = 2;

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
  effects: ToolEffectsChannel | undefined,
): ToolContext {
  const context: { -readonly [K in keyof ToolContext]: ToolContext[K] } = { signal };
  if (callId !== undefined) context.callId = callId;
  if (effects !== undefined) context.effects = effects;
  return context;
}

/**
 * The processors' context. `callId` is read from the call when asked for: a call without a
 * caller-supplied id then draws its own id (a random UUID) only if a processor or hook reads it.
 */
class CallContext implements ProcessorContext {
  readonly signal: AbortSignal;
  readonly toolName: string;
  readonly args: Record<string, unknown>;
  readonly effects: ToolEffectsChannel | undefined;
  readonly #call: FunctionCalling;

  constructor(
    signal: AbortSignal,
    toolName: string,
    args: Record<string, unknown>,
    call: FunctionCalling,
    effects: ToolEffectsChannel | undefined,
  ) {
    this.signal = signal;
    this.toolName = toolName;
    this.args = args;
    this.effects = effects;
    this.#call = call;
  }

  get callId(): string {
    return this.#call.callId ?? this.#call.id;
  }
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
