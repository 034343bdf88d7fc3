/**
 * The model call a LangChain agent's service hooks see, and the error a refusing hook raises.
 *
 * @module
 */

import { HookPhaseError } from "../core/errors.ts";

/**
 * What a `preInvoke` / `postInvoke` handler of `hookscopeMiddleware`'s `modelHooks` receives
 * for one model call of a `createAgent` run. A `preInvoke` handler may replace `messages`; a
 * `postInvoke` handler sees `response` (LangChain's `AIMessage`) and may replace it.
 */
export interface LangChainModelCall {
  /** Always `"langchain"`. */
  readonly type: "langchain";
  /** The chat model's provider (its `_llmType()`) and model id (`model`, `modelName` or class). */
  readonly model: { readonly provider: string; readonly modelId: string };
  /** The messages sent to the model (LangChain `BaseMessage`s, without the system message). */
  messages: unknown[];
  /** The system prompt of this step (`""` when none). */
  readonly systemPrompt: string;
  /** The names of the tools offered to the model. */
  readonly tools: readonly string[];
  /** The model's answer (post-invoke only). */
  response?: unknown;
}

/**
 * A model call of a LangChain agent that a service `preInvoke` hook refused (it threw, returned
 * an `Error`, or did not settle within its deadline): the model was not called and the run
 * rejects with this error. A `HookPhaseError`, so code that catches those catches it too.
 *
 * @example
 * ```ts
 * import { ModelCallRefusedError } from "@hookscope/core/langchain";
 * import { HookPhaseError } from "@hookscope/core/service";
 * import assert from "node:assert/strict";
 *
 * const error = new ModelCallRefusedError("gpt-x", new Error("budget spent"));
 * assert.ok(error instanceof HookPhaseError);
 * assert.equal(error.reason, "budget spent");
 * assert.equal(error.message, 'Model call refused by a pre-invoke hook: "gpt-x": budget spent');
 * ```
 */
export class ModelCallRefusedError extends HookPhaseError {
  /** The model id of the refused call. */
  readonly modelId: string;
  /** Why: the hook's error message (or the thrown value as text). */
  readonly reason: string;

  /** Makes the error; `cause` is what the hook threw or returned. */
  constructor(modelId: string, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(`Model call refused by a pre-invoke hook: ${JSON.stringify(modelId)}: ${reason}`, {
      cause,
    });
    this.name = "ModelCallRefusedError";
    this.modelId = modelId;
    this.reason = reason;
  }
}
