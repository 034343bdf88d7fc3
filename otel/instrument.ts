/**
 * `instrument`: OpenTelemetry spans, per the GenAI semantic conventions, for a session or a model.
 *
 * @module
 */

import {
  context,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
  type Tracer,
} from "@opentelemetry/api";
import { Signal } from "../core/mod.ts";
import type { HookHandler, HookPoint } from "../hooks/mod.ts";
import { IModel, type ModelNotice } from "../service/mod.ts";
import type { Session } from "../session/session.ts";

/**
 * What {@linkcode instrument} needs of an OpenTelemetry `Tracer` (from `@opentelemetry/api`);
 * `trace.getTracer(name)` returns one.
 */
export interface TracerLike {
  /** Starts a span. */
  startSpan(
    name: string,
    options?: { kind?: number; attributes?: Record<string, unknown> },
    context?: unknown,
  ): unknown;
}

/** Options for {@linkcode instrument}. */
export interface InstrumentOptions {
  /** The tracer spans are made with (`trace.getTracer("my-app")`). */
  tracer: TracerLike;
  /**
   * Record message and tool content (`gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`,
   * the request summary). Off by default: content may hold personal data.
   */
  captureContent?: boolean;
  /** Applied to every captured content string before it is recorded (default: unchanged). */
  redact?: (text: string) => string;
  /** The agent's name on `invoke_agent` spans (default: the session's name, else `"agent"`). */
  agentName?: string;
  /**
   * `gen_ai.provider.name` on every span (default: derived from the endpoint — `openai` for the
   * OpenAI-compatible endpoint, else the endpoint's name).
   */
  providerName?: string;
}

/** The well-known `gen_ai.provider.name` for a hookscope endpoint name. */
function providerOf(name: unknown, option: string | undefined): string | undefined {
  if (option) return option;
  if (typeof name !== "string" || !name) return undefined;
  return name === "openai_compatible" ? "openai" : name;
}

function jsonText(value: unknown): string {
  try {
    return typeof value === "string" ? value : JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function errorOf(error: unknown): { type: string; message: string } {
  return error instanceof Error
    ? { type: error.name, message: error.message }
    : { type: "Error", message: String(error) };
}

/** Span bookkeeping shared by the session and model paths. */
class Spans {
  readonly #tracer: Tracer;
  readonly #content: ((text: string) => string) | null;
  agent: Span | null = null;
  readonly chats = new Map<string, Span>();
  readonly tools = new Map<string, Span>();
  readonly providerName: string | undefined;

  constructor(options: InstrumentOptions) {
    this.providerName = options.providerName;
    this.#tracer = options.tracer as Tracer;
    this.#content = options.captureContent ? (options.redact ?? ((t) => t)) : null;
  }

  start(name: string, attributes: Record<string, string | number>, kind = SpanKind.INTERNAL) {
    const parent = this.agent ? trace.setSpan(context.active(), this.agent) : context.active();
    return this.#tracer.startSpan(name, { kind, attributes }, parent);
  }

  content(span: Span, key: string, value: unknown): void {
    if (this.#content) span.setAttribute(key, this.#content(jsonText(value)));
  }

  fail(span: Span, error: unknown, errorType?: string): void {
    const { type: thrown, message } = errorOf(error);
    const type = errorType ?? thrown;
    span.setAttribute("error.type", type);
    span.setStatus({
      code: SpanStatusCode.ERROR,
      message: this.#content ? this.#content(message) : type,
    });
  }

  endAll(): void {
    for (const span of [...this.tools.values(), ...this.chats.values()]) span.end();
    this.tools.clear();
    this.chats.clear();
    this.agent?.end();
    this.agent = null;
  }
}

function usageOf(response: unknown): { input?: number; output?: number } {
  const usage = (response as { usage?: Record<string, unknown> } | null)?.usage;
  if (!usage || typeof usage !== "object") return {};
  const n = (v: unknown) => typeof v === "number" ? v : undefined;
  return {
    input: n(usage.prompt_tokens) ?? n(usage.input_tokens),
    output: n(usage.completion_tokens) ?? n(usage.output_tokens),
  };
}

function instrumentModel(model: IModel, spans: Spans): () => void {
  const byEvent = new Map<string, Span>();
  return model.observe((notice: ModelNotice) => {
    const id = notice.event.id;
    if (notice.type === "pre_call") {
      const span = spans.start(`chat ${model.model}`, {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": providerOf(model.endpoint.name, spans.providerName) ?? "unknown",
        "gen_ai.request.model": model.model,
      }, SpanKind.CLIENT);
      spans.content(span, "gen_ai.input.messages", notice.event.payload.messages);
      byEvent.set(id, span);
    } else if (notice.type === "post_call") {
      const span = byEvent.get(id);
      if (!span) return;
      byEvent.delete(id);
      const response = notice.event.response as Record<string, unknown> | null;
      if (typeof response?.model === "string") {
        span.setAttribute("gen_ai.response.model", response.model);
      }
      const usage = usageOf(response);
      if (usage.input !== undefined) span.setAttribute("gen_ai.usage.input_tokens", usage.input);
      if (usage.output !== undefined) span.setAttribute("gen_ai.usage.output_tokens", usage.output);
      const choices = (response as { choices?: { finish_reason?: unknown }[] } | null)?.choices;
      if (Array.isArray(choices)) {
        const reasons = choices.map((c) => c?.finish_reason).filter((r) => typeof r === "string");
        if (reasons.length) {
          span.setAttribute("gen_ai.response.finish_reasons", reasons as string[]);
        }
      }
      if (notice.event.status !== "completed") spans.fail(span, notice.event.execution.error);
      span.end();
    }
  });
}

function instrumentSession(session: Session, spans: Spans, agentName: string): () => void {
  const bus = session.hooks;
  const off: (() => unknown)[] = [];
  const on = <P extends HookPoint>(point: P, handler: HookHandler<P>) =>
    off.push(bus.on(point, handler));

  const openAgent = () => {
    if (spans.agent) return;
    spans.agent = spans.start(`invoke_agent ${agentName}`, {
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": agentName,
      "gen_ai.conversation.id": session.id,
    });
    const provider = providerOf(
      (session as { model?: { endpoint?: { name?: unknown } } }).model?.endpoint?.name,
      spans.providerName,
    );
    if (provider) spans.agent.setAttribute("gen_ai.provider.name", provider);
  };
  on("session.start", () => openAgent());
  on("session.end", (payload) => {
    const agent = spans.agent;
    if (!agent) return;
    if (payload.status && payload.status !== "completed") spans.fail(agent, payload.error);
    spans.endAll();
  });
  on("api.pre_call", (payload) => {
    const span = spans.start(`chat ${payload.model}`, {
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": providerOf(payload.provider, spans.providerName) ?? "unknown",
      "gen_ai.request.model": payload.model,
    }, SpanKind.CLIENT);
    spans.content(span, "gen_ai.input.messages", payload.requestSummary);
    spans.chats.set(String(payload.eventId ?? payload.model), span);
  });
  on("api.post_call", (payload) => {
    const key = String(payload.eventId ?? payload.model);
    const span = spans.chats.get(key);
    if (!span) return;
    spans.chats.delete(key);
    if (payload.tokens?.prompt !== undefined) {
      span.setAttribute("gen_ai.usage.input_tokens", payload.tokens.prompt);
    }
    if (payload.tokens?.completion !== undefined) {
      span.setAttribute("gen_ai.usage.output_tokens", payload.tokens.completion);
    }
    if (payload.status !== "completed") spans.fail(span, payload.status);
    span.end();
  });
  on("tool.pre", (payload) => {
    const span = spans.start(`execute_tool ${payload.toolName}`, {
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": payload.toolName,
      "gen_ai.tool.call.id": payload.callId,
    });
    const args = (payload as { args?: unknown }).args;
    spans.content(span, "gen_ai.tool.call.arguments", args ?? payload.argsSummary);
    spans.tools.set(payload.callId, span);
  });
  on("tool.post", (payload) => {
    const span = spans.tools.get(payload.callId);
    if (!span) return;
    spans.tools.delete(payload.callId);
    const result = (payload as { result?: unknown }).result;
    spans.content(span, "gen_ai.tool.call.result", result ?? payload.resultSummary);
    span.end();
  });
  on("tool.error", (payload) => {
    const span = spans.tools.get(payload.callId);
    if (!span) return;
    spans.tools.delete(payload.callId);
    spans.fail(span, payload.error);
    span.end();
  });
  // Decisions, blocks, approvals and timeouts are audit signals: each becomes an event on the
  // tool span of its call (ending it when the call will not run), or on the agent span.
  off.push(session.observer.observe({ type: Signal }, (signal) => {
    const kind = signal.constructor.name;
    if (kind === "HookSignal" || kind === "MessageAdded") return;
    const data = (signal.data ?? signal) as Record<string, unknown>;
    const callId = typeof data.callId === "string" ? data.callId : undefined;
    const attributes: Record<string, string> = { "hookscope.signal": kind };
    for (const key of ["toolName", "reason", "hook", "by", "point"] as const) {
      const value = data[key];
      if (typeof value === "string") attributes[`hookscope.${key}`] = value;
    }
    const error = data.error as { name?: string; message?: string } | undefined;
    if (error?.message) attributes["hookscope.reason"] ??= error.message;
    let span = (callId && spans.tools.get(callId)) || null;
    if (!span && callId && typeof data.toolName === "string") {
      // A guard earlier in the tool.pre chain stopped it before this listener ran: the call
      // still gets its span, so the trace shows what was refused.
      span = spans.start(`execute_tool ${data.toolName}`, {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": data.toolName,
        "gen_ai.tool.call.id": callId,
      });
      spans.tools.set(callId, span);
    }
    span ??= spans.agent;
    span?.addEvent("hookscope.decision", attributes);
    if (callId && span && (kind === "HookBlocked" || kind === "ToolDenied")) {
      // error.type is the error class the call fails with: the thrown one for a block,
      // ToolDeniedError for a policy denial.
      const errorType = kind === "ToolDenied" ? "ToolDeniedError" : (error?.name || "Error");
      spans.fail(span, attributes["hookscope.reason"] ?? kind, errorType);
      span.end();
      spans.tools.delete(callId);
    }
  }));
  return () => {
    for (const dispose of off) dispose();
    spans.endAll();
  };
}

/**
 * Emits OpenTelemetry spans for a session or a model, following the GenAI semantic conventions:
 * `invoke_agent {name}` from `session.start` to `session.end`, `chat {model}` per model call
 * (`gen_ai.provider.name`, request and response model, token usage, finish reasons),
 * `execute_tool {name}` per tool call (`gen_ai.tool.name`, `gen_ai.tool.call.id`); chat and tool
 * spans are children of the open agent span. Hook decisions, blocks, approvals and timeouts become
 * span events. Content (arguments, results, messages) is recorded only with `captureContent`,
 * after `redact`.
 *
 * @param target A `Session` (spans from its hook points and audit signals; its model's calls
 *   arrive through the session's `api.*` points) or an `IModel` used without a session.
 * @param options The tracer, content capture and redaction.
 * @returns A disposer that removes every listener and ends open spans.
 * @throws {TypeError} When the target or the tracer is missing.
 *
 * @example Spans for a standalone model
 * ```ts
 * import { trace } from "@opentelemetry/api";
 * import { FunctionEndpoint, IModel } from "@hookscope/core/service";
 * import { instrument } from "@hookscope/core/otel";
 *
 * const model = new IModel({ model: "m", endpoint: new FunctionEndpoint({ call: () => ({}) }) });
 * const stop = instrument(model, { tracer: trace.getTracer("demo") });
 * await model.invoke({ messages: [] });
 * stop();
 * ```
 */
export function instrument(target: Session | IModel, options: InstrumentOptions): () => void {
  if (!options || typeof options.tracer?.startSpan !== "function") {
    throw new TypeError("Cannot instrument: options.tracer must be an OpenTelemetry Tracer");
  }
  if (options.redact !== undefined && typeof options.redact !== "function") {
    throw new TypeError("Cannot instrument: redact must be a function");
  }
  const spans = new Spans(options);
  if (target instanceof IModel) return instrumentModel(target, spans);
  if (target && typeof (target as Session).hooks?.on === "function") {
    const session = target as Session;
    return instrumentSession(
      session,
      spans,
      options.agentName ?? (session as { name?: string }).name ?? "agent",
    );
  }
  throw new TypeError("Cannot instrument: the target must be a Session or an IModel");
}
