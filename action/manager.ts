/**
 * `ActionManager`: the tool registry and the invocation entry point. A manager that carries an
 * {@linkcode AgentSpec} attaches its hook chains to every tool registered on it.
 *
 * @module
 */

import { type ApprovalHandler, ToolNotFoundError } from "../core/mod.ts";
import { attachToolHooks } from "./_attach.ts";
import { durationClock } from "../core/_util.ts";
import { FunctionCalling, type FunctionCallingInit } from "./function_calling.ts";
import { type CallHost, EFFECTS, RUN_CALL, START_AT } from "./_start.ts";
import type { AgentSpec } from "./spec.ts";
import { Tool } from "./tool.ts";
import type { ToolEffectsChannel } from "./coding/file_change.ts";

/** A request to run one tool. */
export interface ActionRequestInit {
  /** The tool name. */
  function: string;
  /** The arguments (default `{}`). */
  arguments?: Record<string, unknown>;
}

/** Options of {@linkcode ActionManager.invoke}. */
export interface InvokeOptions {
  /** Aborting it cancels the call: the `FunctionCalling` ends CANCELLED and `invoke` rejects. */
  signal?: AbortSignal;
  /** A call id handed to the tool, its processors and the spec's hooks. */
  callId?: string;
  /**
   * Resolve with the `FunctionCalling` in status FAILED instead of rejecting when the call fails
   * after it started (default `false`, as `Branch.act`).
   */
  suppressErrors?: boolean;
  /**
   * Answers an `ask` of the tool's hooks inline (as `ActOptions.approve` does for `Branch.act`),
   * held to the ask's terms as there: past `expiresInMs`/`expiresAt` the wait ends (its signal
   * aborts) and the call is denied with reason `"expired"`; an answer whose `by` is not in
   * `answerableBy` denies. Without it an ask rejects with `ApprovalRequiredError` (the call ends
   * FAILED).
   */
  approve?: ApprovalHandler;
  /**
   * Where a staged run's change set is decided (handed to the tool and its processors as
   * `effects`); `Branch.act` and the agent loop give the session's.
   */
  effects?: ToolEffectsChannel;
}

/**
 * Registers tools and invokes them.
 *
 * `invoke()` follows the same failure convention as `Branch.act`: a call that fails rejects with
 * its error. Before anything runs: `TypeError` for a malformed request, `ToolNotFoundError` for an
 * unknown tool, `ToolArgumentsError` for arguments that fail the schema. After it started (the
 * `FunctionCalling` then ends FAILED): a hook's deny `ToolDeniedError` (`SecurityDeniedError`
 * from a security hook), an ask nobody answered `ApprovalRequiredError`, a `ToolArgumentsError`
 * after pre hooks, or what a preprocessor, the function or a postprocessor threw that no error
 * hook recovered. An abort through `options.signal` rejects with the abort
 * reason (the call ends CANCELLED). With `suppressErrors: true`, a failure after the start
 * resolves with the FAILED `FunctionCalling` instead (the error in `execution.error`).
 *
 * @example Register and invoke
 * ```ts
 * import { ActionManager, AgentSpec, Tool } from "@hookscope/core/action";
 * import { z } from "zod";
 * import assert from "node:assert/strict";
 *
 * const spec = new AgentSpec().post("greet", ({ result }) => ({ updatedResult: `${result}!` }));
 * const manager = new ActionManager({ spec });
 * manager.register(new Tool({
 *   name: "greet",
 *   func: ({ who }) => `hello ${who}`,
 *   requestOptions: z.object({ who: z.string() }),
 * }));
 * const call = await manager.invoke({ function: "greet", arguments: { who: "ada" } });
 * assert.equal(call.status, "completed");
 * assert.equal(call.response, "hello ada!");
 * await assert.rejects(manager.invoke({ function: "nope", arguments: {} }), {
 *   name: "ToolNotFoundError",
 * });
 * manager.register(new Tool({ name: "fail", func: () => { throw new Error("boom"); } }));
 * await assert.rejects(manager.invoke({ function: "fail" }), { message: "boom" });
 * const failed = await manager.invoke({ function: "fail" }, { suppressErrors: true });
 * assert.equal(failed.status, "failed");
 * ```
 */
export class ActionManager {
  #tools = new Map<string, Tool>();
  #spec: AgentSpec | null;

  /** Makes an empty manager; with `spec`, registered tools get its hook chains. */
  constructor(options?: { spec?: AgentSpec | null }) {
    this.#spec = options?.spec ?? null;
  }

  /** The spec whose chains are attached, or `null`. */
  get spec(): AgentSpec | null {
    return this.#spec;
  }

  /** The registered tools (with chains attached when the manager carries a spec). */
  get tools(): readonly Tool[] {
    return [...this.#tools.values()];
  }

  /**
   * Registers a tool under its name. A second tool with the same name throws unless
   * `update: true`, which replaces it. With a spec, the stored tool is a copy that runs the
   * spec's hooks around the tool's own processors; re-registering it keeps exactly one chain of
   * that spec, and a tool that carries another spec's chains gets this spec's chains outside.
   */
  register(tool: Tool, options?: { update?: boolean }): void {
    if (!(tool instanceof Tool)) {
      throw new TypeError("Cannot register tool: expected a Tool instance");
    }
    if (this.#tools.has(tool.name) && !options?.update) {
      throw new Error(
        `Cannot register tool: ${
          JSON.stringify(tool.name)
        } is already registered (pass update: true to replace it)`,
      );
    }
    this.#tools.set(tool.name, this.#spec ? attachToolHooks(tool, this.#spec) : tool);
  }

  /** Removes a tool; returns whether it was registered. */
  unregister(name: string): boolean {
    return this.#tools.delete(name);
  }

  /** The tool registered under `name`. */
  get(name: string): Tool | undefined {
    return this.#tools.get(name);
  }

  /** Whether a tool is registered under `name`. */
  has(name: string): boolean {
    return this.#tools.has(name);
  }

  /** The OpenAI-style function schemas of all tools, in registration order. */
  schemas(): Record<string, unknown>[] {
    return this.tools.map((tool) => tool.schema);
  }

  /** Runs one request; see the class documentation for what rejects and what is captured. */
  invoke(request: ActionRequestInit, options?: InvokeOptions): Promise<FunctionCalling> {
    let call: FunctionCalling;
    try {
      // The act path's call host (internal), else the public channel wrapped as one.
      const effects = options?.effects;
      const host = (options as { [EFFECTS]?: CallHost } | undefined)?.[EFFECTS] ??
        (effects === undefined ? undefined : { effects });
      call = this.#call(request, options?.callId, host);
    } catch (error) {
      return Promise.reject(error);
    }
    return call[RUN_CALL](options?.signal, options?.suppressErrors !== true, options?.approve);
  }

  #call(
    request: ActionRequestInit,
    callId: string | undefined,
    host: CallHost | undefined,
  ): FunctionCalling {
    if (request === null || typeof request !== "object") {
      throw new TypeError("Cannot invoke action: request must be an object");
    }
    if (typeof request.function !== "string" || request.function === "") {
      throw new TypeError("Cannot invoke action: request.function must be a non-empty string");
    }
    const args = request.arguments ?? {};
    const tool = this.#tools.get(request.function);
    if (!tool) throw new ToolNotFoundError(request.function, [...this.#tools.keys()]);
    const init: FunctionCallingInit & { [START_AT]: number; [EFFECTS]?: CallHost } =
      callId === undefined
        ? { tool, arguments: args, [START_AT]: durationClock() }
        : { tool, arguments: args, callId, [START_AT]: durationClock() };
    if (host !== undefined) init[EFFECTS] = host;
    return new FunctionCalling(init);
  }
}
