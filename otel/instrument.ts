/**
 * `instrument`: OpenTelemetry spans and metrics, per the GenAI semantic conventions, for a
 * session or a model.
 *
 * @module
 */

import {
  context,
  metrics,
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
import { type Answer, readAnswer, StreamAnswer } from "./_genai_answer.ts";
import {
  inputMessages,
  outputMessages,
  redactDeep,
  systemInstructions,
  toolDefinitions,
} from "./_genai_content.ts";
import { GenAiMetrics, type MeterLike } from "./_genai_metrics.ts";
import { requestAttributes, serverAttributes } from "./_genai_request.ts";
import { decisionEvent } from "./_decision_events.ts";

export type { MeterLike } from "./_genai_metrics.ts";

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
   * The meter the GenAI client metrics are recorded with (`gen_ai.client.operation.duration`,
   * `gen_ai.client.token.usage`, and for streams `…time_to_first_chunk`,
   * `…time_per_output_chunk`). Default: `metrics.getMeter("@hookscope/core")` of the global
   * meter provider (a no-op until one is registered); `null` records no metrics.
   */
  meter?: MeterLike | null;
  /**
   * Record content: `gen_ai.input.messages`, `gen_ai.output.messages`,
   * `gen_ai.system_instructions`, `gen_ai.tool.definitions` (as JSON in the conventions' forms),
   * `gen_ai.tool.call.arguments` and `gen_ai.tool.call.result`. Off by default: content may hold
   * personal data.
   */
  captureContent?: boolean;
  /**
   * Applied to every captured content string before it is recorded (default: unchanged). In
   * structured content it is applied to each string value, so the JSON stays valid.
   */
  redact?: (text: string) => string;
  /** The agent's name on `invoke_agent` spans (default: the session's name, else `"agent"`). */
  agentName?: string;
  /**
   * `gen_ai.provider.name` on every span (default: derived from the endpoint — `openai` for the
   * OpenAI-compatible endpoint, else the endpoint's name).
   */
  providerName?: string;
  /**
   * Session only: more models to observe directly (a branch's own model). The session's own
   * `model` is always observed. A model whose calls only reach the session through
   * `bridgeModelToSession` gets chat spans from the `api.*` points, which carry no content and no
   * response id, model or finish reasons.
   */
  models?: readonly IModel[];
}

type Attrs = Record<string, string | number | boolean | string[]>;

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

function errorOf(error: unknown, fallback = "Error"): { type: string; message: string } {
  if (error instanceof Error) return { type: error.name || fallback, message: error.message };
  if (error && typeof error === "object" && typeof (error as Error).name === "string") {
    return { type: (error as Error).name, message: String((error as Error).message ?? "") };
  }
  return { type: fallback, message: error === undefined || error === null ? "" : String(error) };
}

function seconds(fromMs: number, toMs: number): number {
  return Math.max(0, toMs - fromMs) / 1000;
}

/** The most event ids remembered to keep a directly observed call from a second, bridged span. */
const SEEN_LIMIT = 4096;

/** Span bookkeeping shared by the session and model paths. */
class Spans {
  readonly #tracer: Tracer;
  readonly #redact: ((text: string) => string) | null;
  readonly metrics: GenAiMetrics | null;
  agent: Span | null = null;
  readonly chats = new Map<string, Span>();
  readonly tools = new Map<string, Span>();
  readonly providerName: string | undefined;
  /** Event ids of calls observed directly (FIFO-bounded). */
  readonly seen = new Set<string>();

  constructor(options: InstrumentOptions) {
    this.providerName = options.providerName;
    this.#tracer = options.tracer as Tracer;
    this.#redact = options.captureContent ? (options.redact ?? ((t) => t)) : null;
    const meter = options.meter === undefined ? metrics.getMeter("@hookscope/core") : options.meter;
    this.metrics = meter ? new GenAiMetrics(meter) : null;
  }

  get capturing(): boolean {
    return this.#redact !== null;
  }

  start(name: string, attributes: Attrs, kind = SpanKind.INTERNAL): Span {
    const parent = this.agent ? trace.setSpan(context.active(), this.agent) : context.active();
    return this.#tracer.startSpan(name, { kind, attributes }, parent);
  }

  /** Records content as a string attribute (plain text after `redact`). */
  content(span: Span, key: string, value: unknown): void {
    if (this.#redact) span.setAttribute(key, this.#redact(jsonText(value)));
  }

  /** Records structured content as JSON, `redact` applied to each string in it. */
  json(span: Span, key: string, value: unknown): void {
    if (!this.#redact || value === undefined) return;
    span.setAttribute(key, JSON.stringify(redactDeep(value, this.#redact)));
  }

  fail(span: Span, error: unknown, errorType?: string): string {
    const { type: thrown, message } = errorOf(error);
    const type = errorType ?? thrown;
    span.setAttribute("error.type", type);
    span.setStatus({
      code: SpanStatusCode.ERROR,
      message: this.#redact ? this.#redact(message || type) : type,
    });
    return type;
  }

  markSeen(id: string): void {
    this.seen.add(id);
    if (this.seen.size > SEEN_LIMIT) {
      for (const old of this.seen) {
        this.seen.delete(old);
        break;
      }
    }
  }

  endAll(): void {
    for (const span of [...this.tools.values(), ...this.chats.values()]) span.end();
    this.tools.clear();
    this.chats.clear();
    this.agent?.end();
    this.agent = null;
  }
}

interface ChatCall {
  span: Span;
  startedMs: number;
  /** The attributes every metric of the call carries. */
  metricAttrs: Record<string, string | number>;
  stream: StreamAnswer | null;
  firstChunkMs?: number;
  lastOutputMs?: number;
}

/** Chat spans and metrics for one model's calls, from its own notices. */
function observeModel(model: IModel, spans: Spans): () => void {
  const calls = new Map<string, ChatCall>();
  return model.observe((notice: ModelNotice) => {
    const event = notice.event;
    const id = event.id;
    if (notice.type === "pre_call") {
      spans.markSeen(id);
      const payload = (event.payload ?? {}) as Record<string, unknown>;
      const requestModel = typeof payload.model === "string" ? payload.model : model.model;
      const base: Record<string, string | number> = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": providerOf(model.endpoint.name, spans.providerName) ?? "unknown",
        "gen_ai.request.model": requestModel,
        ...serverAttributes(model.endpoint) as Record<string, string | number>,
      };
      const span = spans.start(`chat ${requestModel}`, {
        ...base,
        ...requestAttributes(payload, notice.streaming),
      }, SpanKind.CLIENT);
      if (spans.capturing) {
        spans.json(span, "gen_ai.input.messages", inputMessages(payload.messages));
        spans.json(span, "gen_ai.system_instructions", systemInstructions(payload));
        spans.json(span, "gen_ai.tool.definitions", toolDefinitions(payload.tools));
      }
      calls.set(id, {
        span,
        startedMs: performance.now(),
        metricAttrs: base,
        stream: notice.streaming ? new StreamAnswer() : null,
      });
    } else if (notice.type === "stream_chunk") {
      const call = calls.get(id);
      if (!call) return;
      const now = performance.now();
      const output = (call.stream ??= new StreamAnswer()).add(notice.chunk);
      if (call.firstChunkMs === undefined) {
        call.firstChunkMs = now;
        const ttfc = seconds(call.startedMs, now);
        call.span.setAttribute("gen_ai.response.time_to_first_chunk", ttfc);
        spans.metrics?.firstChunk(ttfc, call.metricAttrs);
        if (output) call.lastOutputMs = now;
      } else if (output) {
        spans.metrics?.nextChunk(seconds(call.lastOutputMs ?? call.firstChunkMs, now), {
          ...call.metricAttrs,
        });
        call.lastOutputMs = now;
      }
    } else {
      const call = calls.get(id);
      if (!call) return;
      calls.delete(id);
      const answer = mergeAnswers(readAnswer(event.response), call.stream?.answer());
      finishChat(spans, call, answer, event.status, event.execution.error);
    }
  });
}

function mergeAnswers(read: Answer, streamed: Answer | undefined): Answer {
  if (!streamed) return read;
  return {
    ...streamed,
    ...(read.id !== undefined ? { id: read.id } : {}),
    ...(read.model !== undefined ? { model: read.model } : {}),
    ...(read.inputTokens !== undefined ? { inputTokens: read.inputTokens } : {}),
    ...(read.outputTokens !== undefined ? { outputTokens: read.outputTokens } : {}),
    choices: read.choices.length > 0 ? read.choices : streamed.choices,
  };
}

function finishChat(
  spans: Spans,
  call: ChatCall,
  answer: Answer,
  status: string,
  error: unknown,
): void {
  const { span } = call;
  const attrs: Record<string, string | number> = { ...call.metricAttrs };
  if (answer.model !== undefined) {
    span.setAttribute("gen_ai.response.model", answer.model);
    attrs["gen_ai.response.model"] = answer.model;
  }
  if (answer.id !== undefined) span.setAttribute("gen_ai.response.id", answer.id);
  const reasons = answer.choices.flatMap((c) => c.finishReason ? [c.finishReason] : []);
  if (reasons.length > 0) span.setAttribute("gen_ai.response.finish_reasons", reasons);
  if (answer.inputTokens !== undefined) {
    span.setAttribute("gen_ai.usage.input_tokens", answer.inputTokens);
  }
  if (answer.outputTokens !== undefined) {
    span.setAttribute("gen_ai.usage.output_tokens", answer.outputTokens);
  }
  if (spans.capturing && answer.choices.length > 0) {
    spans.json(span, "gen_ai.output.messages", outputMessages(answer));
  }
  if (status !== "completed") {
    attrs["error.type"] = spans.fail(span, error ?? status, error ? undefined : status);
  }
  spans.metrics?.operation(seconds(call.startedMs, performance.now()), attrs, {
    input: answer.inputTokens,
    output: answer.outputTokens,
  });
  span.end();
}

interface ToolCallState {
  span: Span;
  /** The arguments as the first `tool.pre` handler saw them (JSON), to notice rewrites. */
  args: string;
}

function instrumentSession(
  session: Session,
  spans: Spans,
  agentName: string,
  models: readonly IModel[],
): () => void {
  const bus = session.hooks;
  const off: (() => unknown)[] = [];
  const on = <P extends HookPoint>(point: P, handler: HookHandler<P>, priority = 0) =>
    // Telemetry never decides: a failing listener is reported and the call goes on.
    off.push(bus.on(point, handler, { priority, name: "otel", onFailure: "continue" }));
  const sessionModel = (session as { model?: IModel | null }).model ?? null;
  const direct = new Set<IModel>(sessionModel ? [sessionModel, ...models] : models);
  for (const model of direct) off.push(observeModel(model, spans));
  const callArgs = new Map<string, string>();

  const description = (toolName: string, branchId: unknown): string | undefined => {
    const branch = session.branches.find((b) => b.id === branchId);
    const text = branch?.actions.get(toolName)?.description;
    return typeof text === "string" && text ? text : undefined;
  };
  const toolSpan = (toolName: string, callId: string, branchId: unknown): Span => {
    const attrs: Attrs = {
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": toolName,
      "gen_ai.tool.call.id": callId,
      // Every hookscope tool runs in this process, on the model's parameters.
      "gen_ai.tool.type": "function",
    };
    const text = description(toolName, branchId);
    if (text !== undefined) attrs["gen_ai.tool.description"] = text;
    const span = spans.start(`execute_tool ${toolName}`, attrs);
    spans.tools.set(callId, span);
    return span;
  };

  const openAgent = () => {
    if (spans.agent) return;
    spans.agent = spans.start(`invoke_agent ${agentName}`, {
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": agentName,
      "gen_ai.conversation.id": session.id,
    });
    const provider = providerOf(sessionModel?.endpoint?.name, spans.providerName);
    if (provider) spans.agent.setAttribute("gen_ai.provider.name", provider);
    if (sessionModel) {
      spans.agent.setAttribute("gen_ai.request.model", sessionModel.model);
      spans.agent.setAttributes(serverAttributes(sessionModel.endpoint));
    }
  };
  on("session.start", () => openAgent());
  on("session.end", (payload) => {
    const agent = spans.agent;
    if (!agent) return;
    if (payload.status && payload.status !== "completed") {
      spans.fail(agent, payload.error ?? payload.status, payload.error ? undefined : "_OTHER");
    }
    spans.endAll();
  });
  // A model bridged to the session but not observed directly: what the api.* points carry.
  const bridged = new Map<string, { startedMs: number; attrs: Record<string, string | number> }>();
  on("api.pre_call", (payload) => {
    const key = String(payload.eventId ?? payload.model);
    if (payload.eventId !== undefined && spans.seen.has(payload.eventId)) return;
    const attrs = {
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": providerOf(payload.provider, spans.providerName) ?? "unknown",
      "gen_ai.request.model": payload.model,
    };
    const streaming = (payload as { streaming?: unknown }).streaming === true;
    const span = spans.start(`chat ${payload.model}`, {
      ...attrs,
      ...(streaming ? { "gen_ai.request.stream": true } : {}),
    }, SpanKind.CLIENT);
    spans.chats.set(key, span);
    bridged.set(key, { startedMs: performance.now(), attrs });
  });
  on("api.post_call", (payload) => {
    const key = String(payload.eventId ?? payload.model);
    const span = spans.chats.get(key);
    const state = bridged.get(key);
    if (!span || !state) return;
    spans.chats.delete(key);
    bridged.delete(key);
    const attrs: Record<string, string | number> = { ...state.attrs };
    const input = payload.tokens?.prompt ?? undefined;
    const output = payload.tokens?.completion ?? undefined;
    if (input !== undefined) span.setAttribute("gen_ai.usage.input_tokens", input);
    if (output !== undefined) span.setAttribute("gen_ai.usage.output_tokens", output);
    if (payload.status !== "completed") {
      attrs["error.type"] = spans.fail(span, payload.status, payload.status);
    }
    const latency = typeof payload.latencyMs === "number" ? payload.latencyMs : undefined;
    spans.metrics?.operation(
      latency !== undefined ? latency / 1000 : seconds(state.startedMs, performance.now()),
      attrs,
      { input, output },
    );
    span.end();
  });
  // First in the chain, so the arguments are the ones the model sent and a guard that throws
  // later still finds the call's span.
  on("tool.pre", (payload) => {
    // A rewrite or an approval runs the chain again for the same call: one span.
    if (spans.tools.has(payload.callId)) return;
    const span = toolSpan(payload.toolName, payload.callId, payload.branchId);
    callArgs.set(payload.callId, jsonText(payload.args));
    spans.content(span, "gen_ai.tool.call.arguments", payload.args ?? payload.argsSummary);
  }, Number.MAX_SAFE_INTEGER);
  on("tool.post", (payload) => {
    const span = spans.tools.get(payload.callId);
    const before = callArgs.get(payload.callId);
    callArgs.delete(payload.callId);
    if (!span) return;
    spans.tools.delete(payload.callId);
    if (before !== undefined && before !== jsonText(payload.args)) {
      // The hooks (or an approver) changed the arguments: the call ran with others.
      span.addEvent(
        "hookscope.decision",
        decisionEvent("effect", "ToolArgsRewritten", { effect: "args_rewritten" }),
      );
      spans.content(span, "gen_ai.tool.call.arguments", payload.args);
    }
    spans.content(span, "gen_ai.tool.call.result", payload.result ?? payload.resultSummary);
    span.end();
  }, Number.MIN_SAFE_INTEGER);
  on("tool.error", (payload) => {
    callArgs.delete(payload.callId);
    const span = spans.tools.get(payload.callId);
    if (!span) return;
    spans.tools.delete(payload.callId);
    spans.fail(span, payload.error);
    span.end();
  });
  // Decisions, blocks, approvals and shadow verdicts are audit signals: each becomes a
  // `hookscope.decision` event on the tool span of its call (ending it when the call will not
  // run), or on the agent span.
  off.push(session.observer.observe({ type: Signal }, (signal) => {
    const kind = signal.constructor.name;
    if (kind === "HookSignal" || kind === "MessageAdded") return;
    const data = (signal.data ?? signal) as Record<string, unknown>;
    const callId = typeof data.callId === "string" ? data.callId : undefined;
    const error = data.error as { name?: string; message?: string } | undefined;
    const event = decisionEvent(null, kind, data);
    let span = (callId && spans.tools.get(callId)) || null;
    if (!span && callId && typeof data.toolName === "string" && kind !== "ApprovalAnswered") {
      span = toolSpan(data.toolName, callId, data.branchId);
    }
    span ??= spans.agent;
    span?.addEvent("hookscope.decision", event);
    if (callId && span && (kind === "HookBlocked" || kind === "ToolDenied")) {
      // error.type is the error class the call fails with: the thrown one for a block,
      // ToolDeniedError for a policy denial.
      const errorType = kind === "ToolDenied" ? "ToolDeniedError" : (error?.name || "Error");
      spans.fail(span, event["hookscope.decision.reason"] ?? kind, errorType);
      span.end();
      spans.tools.delete(callId);
      callArgs.delete(callId);
    }
  }));
  return () => {
    for (const dispose of off) dispose();
    spans.endAll();
  };
}

/**
 * Emits OpenTelemetry spans and metrics for a session or a model, following the GenAI semantic
 * conventions (`@opentelemetry/semantic-conventions` 1.45, incubating):
 *
 * - `invoke_agent {name}` from `session.start` to `session.end` (`gen_ai.agent.name`,
 *   `gen_ai.conversation.id`, `gen_ai.provider.name`);
 * - `chat {model}` (client) per model call: provider, request model and parameters
 *   (`gen_ai.request.temperature`, `.max_tokens`, `.top_p`, …, `.stream`), `server.address` /
 *   `server.port` from the endpoint URL, `gen_ai.response.model`, `.id`, `.finish_reasons`,
 *   token usage, `gen_ai.response.time_to_first_chunk` for streams, and with `captureContent`
 *   the input and output messages, system instructions and tool definitions as JSON;
 * - `execute_tool {name}` per tool call (`gen_ai.tool.name`, `.call.id`, `.type`,
 *   `.description`; arguments and result with `captureContent`);
 * - the client metrics `gen_ai.client.operation.duration` and `gen_ai.client.token.usage` (and
 *   the two chunk-timing histograms for streams) through `options.meter`;
 * - hook decisions, blocks, approvals, shadow verdicts and argument rewrites as
 *   `hookscope.decision` span events (attributes in `docs/otel_decisions.md`).
 *
 * Chat and tool spans are children of the open agent span; `error.type` is the error's class.
 *
 * @param target A `Session` (its hook points, audit signals and its model's calls) or an
 *   `IModel` used without a session.
 * @param options The tracer, meter, content capture and redaction, names.
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
  if (
    options.meter !== undefined && options.meter !== null &&
    typeof options.meter.createHistogram !== "function"
  ) {
    throw new TypeError("Cannot instrument: meter must be an OpenTelemetry Meter or null");
  }
  const models = options.models ?? [];
  if (!Array.isArray(models) || models.some((m) => !(m instanceof IModel))) {
    throw new TypeError("Cannot instrument: models must be an array of IModel");
  }
  const spans = new Spans(options);
  if (target instanceof IModel) return observeModel(target, spans);
  if (target && typeof (target as Session).hooks?.on === "function") {
    const session = target as Session;
    return instrumentSession(
      session,
      spans,
      options.agentName ?? (session as { name?: string }).name ?? "agent",
      models,
    );
  }
  throw new TypeError("Cannot instrument: the target must be a Session or an IModel");
}
