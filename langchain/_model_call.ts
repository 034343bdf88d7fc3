/**
 * The model-call half of `hookscopeMiddleware`: runs the service scope's `preInvoke` and
 * `postInvoke` handlers around each model call of a `createAgent` run and emits `api.pre_call` /
 * `api.post_call` on the session's bus.
 *
 * @module
 */

import { EventStatus, HookPhaseError } from "../core/mod.ts";
import { summarize } from "../core/json_safe.ts";
import { redactSecrets } from "../core/redact.ts";
import type { HookBus } from "../hooks/bus.ts";
import { HookEvent, HookEventType, HookRegistry } from "../service/mod.ts";
import type { LangChainModelCall } from "./model_call.ts";
import { ModelCallRefusedError } from "./model_call.ts";

/** What the model-call wrapper needs from the middleware's options. */
export interface ModelCallSettings {
  registry?: HookRegistry;
  bus?: HookBus;
  exitHook: boolean;
  timeoutMs: number;
}

const DEFAULT_TIMEOUT_MS = 30_000;

/** Checks the model-hook options; bad input throws a `TypeError`. */
export function modelCallSettings(
  registry: unknown,
  bus: HookBus | undefined,
  exitHook: unknown,
  timeoutMs: unknown,
): ModelCallSettings {
  if (registry !== undefined && !(registry instanceof HookRegistry)) {
    throw new TypeError("Cannot create middleware: modelHooks must be a HookRegistry");
  }
  if (exitHook !== undefined && typeof exitHook !== "boolean") {
    throw new TypeError("Cannot create middleware: modelHookExit must be a boolean");
  }
  if (
    timeoutMs !== undefined &&
    (typeof timeoutMs !== "number" || !Number.isFinite(timeoutMs) || timeoutMs <= 0)
  ) {
    throw new TypeError("Cannot create middleware: modelHookTimeoutMs must be a positive number");
  }
  return {
    registry: registry as HookRegistry | undefined,
    bus,
    exitHook: (exitHook as boolean | undefined) ?? false,
    timeoutMs: (timeoutMs as number | undefined) ?? DEFAULT_TIMEOUT_MS,
  };
}

/** The provider and model id of a LangChain chat model, as far as it tells. */
function identify(model: unknown): { provider: string; modelId: string } {
  const m = model as {
    _llmType?: () => unknown;
    model?: unknown;
    modelName?: unknown;
    constructor?: { name?: unknown };
  } | null;
  let provider = "langchain";
  try {
    const type = typeof m?._llmType === "function" ? m._llmType() : undefined;
    if (typeof type === "string" && type !== "") provider = type;
  } catch { /* a model without a type keeps "langchain" */ }
  const id = typeof m?.model === "string"
    ? m.model
    : typeof m?.modelName === "string"
    ? m.modelName
    : typeof m?.constructor?.name === "string"
    ? m.constructor.name
    : provider;
  return { provider, modelId: id };
}

function tokensOf(
  response: unknown,
): { prompt?: number; completion?: number; total?: number } | null {
  const usage = (response as { usage_metadata?: Record<string, unknown> } | null)?.usage_metadata;
  if (!usage || typeof usage !== "object") return null;
  const n = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : undefined);
  return {
    prompt: n(usage.input_tokens),
    completion: n(usage.output_tokens),
    total: n(usage.total_tokens),
  };
}

function toolNames(tools: unknown): string[] {
  if (!Array.isArray(tools)) return [];
  return tools.map((t) => {
    const name = (t as { name?: unknown } | null)?.name;
    return typeof name === "string" ? name : "";
  }).filter((name) => name !== "");
}

/** Runs one phase; returns what went wrong, or `undefined`. */
async function runPhase(
  settings: ModelCallSettings,
  hookType: HookEventType,
  call: LangChainModelCall,
  signal: AbortSignal | undefined,
): Promise<{ cause: unknown } | undefined> {
  const hook = new HookEvent({
    registry: settings.registry!,
    hookType,
    eventLike: call,
    exit: settings.exitHook,
    timeoutMs: settings.timeoutMs,
  });
  await hook.invoke(signal ? { signal } : undefined);
  const status = hook.status as string;
  const ok = status === EventStatus.COMPLETED && hook.execution.error == null;
  if (ok && !hook.shouldExit) return undefined;
  return { cause: hook.exitCause ?? hook.execution.error };
}

/**
 * Wraps one model call: `api.pre_call`, `preInvoke` (a failure refuses the call with
 * `ModelCallRefusedError`), the call, `postInvoke` (a failure is logged by the registry, or
 * rejects with `HookPhaseError` under `exitHook`), `api.post_call`.
 */
export async function wrapModelCall(
  settings: ModelCallSettings,
  // deno-lint-ignore no-explicit-any
  request: any,
  // deno-lint-ignore no-explicit-any
  handler: (request: any) => unknown,
): Promise<unknown> {
  const { registry, bus } = settings;
  const model = identify(request.model);
  const call: LangChainModelCall = {
    type: "langchain",
    model,
    messages: Array.isArray(request.messages) ? request.messages : [],
    systemPrompt: typeof request.systemPrompt === "string" ? request.systemPrompt : "",
    tools: toolNames(request.tools),
  };
  const signal = request.runtime?.signal as AbortSignal | undefined;
  const post = (status: string, started: number, response?: unknown) =>
    bus?.emit("api.post_call", {
      model: model.modelId,
      provider: model.provider,
      status,
      latencyMs: performance.now() - started,
      tokens: tokensOf(response),
    });
  await bus?.emit("api.pre_call", {
    model: model.modelId,
    provider: model.provider,
    requestSummary: summarize(redactSecrets(call.messages.map((m) => messageView(m)))),
  });
  const started = performance.now();
  if (registry?.canHandle({ hookType: HookEventType.PreInvocation })) {
    const failed = await runPhase(settings, HookEventType.PreInvocation, call, signal);
    if (failed) {
      await post(EventStatus.CANCELLED, started);
      throw new ModelCallRefusedError(model.modelId, failed.cause);
    }
  }
  let response: unknown;
  try {
    response = await handler(
      call.messages === request.messages ? request : { ...request, messages: call.messages },
    );
  } catch (error) {
    await post(EventStatus.FAILED, started);
    throw error;
  }
  call.response = response;
  if (registry?.canHandle({ hookType: HookEventType.PostInvocation })) {
    const failed = await runPhase(settings, HookEventType.PostInvocation, call, signal);
    if (failed && settings.exitHook) {
      await post(EventStatus.FAILED, started, response);
      const cause = failed.cause;
      throw cause instanceof Error
        ? cause
        : new HookPhaseError(`Post-invoke hook failed: ${String(cause)}`, { cause });
    }
  }
  await post(EventStatus.COMPLETED, started, call.response);
  return call.response;
}

function messageView(message: unknown): unknown {
  const m = message as { type?: unknown; content?: unknown } | null;
  return m && typeof m === "object" ? { type: m.type, content: m.content } : m;
}
