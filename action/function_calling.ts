/**
 * `FunctionCalling`: one invocation of a {@linkcode Tool} as an `Operation` — validation at
 * construction, then preprocessor → re-validation → function → postprocessor, with the
 * error processor on any failure.
 *
 * @module
 */

import { race } from "../core/_race.ts";
import {
  type ArgumentIssue,
  isAbortError,
  Operation,
  toJsonSafe,
  ToolArgumentsError,
} from "../core/mod.ts";
import { isPlainObject } from "./_objects.ts";
import type { z } from "zod";
import type { ProcessorContext, Tool } from "./tool.ts";

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
 *   func: ({ n }) => n * 2,
 *   requestOptions: z.object({ n: z.number() }),
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

  /** Validates the arguments; throws `ToolArgumentsError` when they do not fit the schema. */
  constructor(init: FunctionCallingInit) {
    super();
    if (init === null || typeof init !== "object") {
      throw new TypeError("Cannot create function call: options must be an object");
    }
    if (!isToolLike(init.tool)) {
      throw new TypeError("Cannot create function call: tool must be a Tool");
    }
    this.tool = init.tool;
    this.callId = init.callId;
    this.arguments = validateArguments(init.tool, init.arguments, "");
  }

  /** The `action` argument when it is a string, else `""` (what tool hooks receive). */
  get action(): string {
    const action = this.arguments.action;
    return typeof action === "string" ? action : "";
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

  /** Runs preprocessor → re-validation → function → postprocessor (error processor on failure). */
  protected async _invoke(signal: AbortSignal): Promise<unknown> {
    const tool = this.tool;
    const context = (args: Record<string, unknown>): ProcessorContext => ({
      signal,
      toolName: tool.name,
      args,
      ...(this.callId === undefined ? {} : { callId: this.callId }),
    });
    try {
      if (tool.preprocessor) {
        const replaced = await abortable(
          tool.preprocessor(
            { ...this.arguments },
            tool.preprocessorOptions,
            context(this.arguments),
          ),
          signal,
        );
        if (replaced !== undefined) {
          this.arguments = validateArguments(tool, replaced, "after preprocessing");
        } else {
          this.arguments = validateArguments(tool, this.arguments, "after preprocessing");
        }
      }
      signal.throwIfAborted();
      let result: unknown = await abortable(
        tool.func(
          this.arguments,
          this.callId === undefined ? { signal } : { signal, callId: this.callId },
        ),
        signal,
      );
      if (tool.postprocessor) {
        result = await abortable(
          tool.postprocessor(result, tool.postprocessorOptions, context(this.arguments)),
          signal,
        );
      }
      return result;
    } catch (error) {
      if (isAbortError(error, signal) || !tool.errorProcessor) throw error;
      const recovered = await tool.errorProcessor(error, this.arguments, context(this.arguments));
      if (recovered === undefined) throw error;
      return recovered;
    }
  }
}

/**
 * Waits for a tool step, unless the call's signal aborts first (then rejects with its reason):
 * a tool, processor or Tool-scope hook that ignores the signal cannot keep the call running.
 */
function abortable<T>(value: T | PromiseLike<T>, signal: AbortSignal): T | Promise<T> {
  if (value === null || typeof (value as { then?: unknown })?.then !== "function") {
    return value as T;
  }
  return race(value as PromiseLike<T>, Infinity, signal);
}

function isToolLike(value: unknown): value is Tool {
  return value !== null && typeof value === "object" &&
    typeof (value as Tool).func === "function" && typeof (value as Tool).name === "string";
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
