/**
 * `hookscopeMiddleware`: the service scope's hooks as an AI SDK language-model middleware.
 *
 * @module
 */

import type {
  CallParams,
  GenerateResult,
  LanguageModelMiddleware,
  MiddlewareSpecificationVersion,
  ModelInfo,
  StreamPart,
  StreamResult,
} from "./_spec.ts";
import { EventStatus, HookPhaseError } from "../core/mod.ts";
import { isThenable } from "../core/_util.ts";
import { deadline } from "../core/_async.ts";
import type { HookBus } from "../hooks/bus.ts";
import { HookEvent, HookEventType, HookRegistry, type PhaseHandler } from "../service/mod.ts";
import { reportAnswers } from "./_approvals.ts";

/** What a stream handler may return: a part replaces, an array replaces with many (`[]` drops). */
export type StreamHandlerResult = StreamPart | readonly StreamPart[] | null | undefined;

/**
 * What a per-part stream handler receives besides the part: the same fields as the service
 * scope's `StreamHandlerContext`.
 */
export interface PartHandlerContext<T extends StreamPart["type"] = StreamPart["type"]> {
  /** The part's type: the key the handler is registered under. */
  readonly chunkType: T;
  /** Whether a failure of this handler stops the stream (the middleware's `exitHook`). */
  readonly exit: boolean;
  /** Aborted when the handler's deadline (`chunkTimeoutMs`) passes. */
  readonly signal: AbortSignal;
}

/** A per-part stream handler, `(part, ctx)`; `undefined` or `null` keeps the part. */
export type PartHandler<T extends StreamPart["type"]> = (
  part: Extract<StreamPart, { type: T }>,
  ctx: PartHandlerContext<T>,
) => StreamHandlerResult | Promise<StreamHandlerResult>;

/** Stream handlers keyed by the AI SDK part type (`text-delta`, `tool-call`, `finish`, …). */
export type PartHandlers = { [T in StreamPart["type"]]?: PartHandler<T> };

/** What a streaming guardrail answers: nothing to pass, or `{ block: reason }`. */
export type GuardVerdict = undefined | void | { block: string };

/**
 * A guardrail over everything text-bearing the model produces: text, reasoning and tool-input
 * deltas of a stream, and the text, reasoning and tool-call inputs of a `generate` answer. In a
 * stream, parts are held back until `holdBackChars` characters of guarded text follow them, so a
 * phrase split across chunks, text ids or part types is caught before any of it is released.
 */
export interface StreamGuard {
  /** How many characters to hold back (default 64). */
  holdBackChars?: number;
  /**
   * Judges all the guarded text of the call so far: every text, reasoning and tool-input delta,
   * concatenated in arrival order, whatever its id (for `generate`: the content's text,
   * reasoning and tool-call inputs, concatenated in order).
   */
  check(text: string): GuardVerdict | Promise<GuardVerdict>;
}

/** Guarded part types of a stream. */
type GuardedDelta = Extract<
  StreamPart,
  { type: "text-delta" | "reasoning-delta" | "tool-input-delta" }
>;

function isGuardedDelta(part: StreamPart): part is GuardedDelta {
  return part.type === "text-delta" || part.type === "reasoning-delta" ||
    part.type === "tool-input-delta";
}

/** The guarded text of a `generate` answer: text, reasoning and tool-call inputs, in order. */
function generatedText(result: GenerateResult): string {
  let text = "";
  for (const part of (result as { content?: unknown }).content as unknown[] ?? []) {
    const p = part as { type?: unknown; text?: unknown; input?: unknown };
    if ((p.type === "text" || p.type === "reasoning") && typeof p.text === "string") text += p.text;
    else if (p.type === "tool-call" && typeof p.input === "string") text += p.input;
  }
  return text;
}

/** Raised into the stream (or thrown by `generate`) when the guardrail blocks text. */
export class StreamBlockedError extends Error {
  /** The guardrail's reason. */
  readonly reason: string;
  /** Makes the error. */
  constructor(reason: string) {
    super(`Stream blocked by guardrail: ${reason}`);
    this.name = "StreamBlockedError";
    this.reason = reason;
  }
}

/** The session part the middleware emits `api.*` points on. */
export interface MiddlewareSession {
  /** The session's bus. */
  readonly hooks: HookBus;
}

/** Options for {@linkcode hookscopeMiddleware}. */
export interface HookscopeMiddlewareOptions<
  V extends MiddlewareSpecificationVersion = "v3",
> {
  /**
   * The middleware specification to declare: `"v3"` for `ai@6` (default), `"v4"` for `ai@7`.
   * The behaviour is the same; the AI SDK's types check the declared version.
   */
  specificationVersion?: V;
  /** A registry with pre-invoke and post-invoke handlers. */
  registry?: HookRegistry;
  /** Or the handlers themselves (`preInvoke`, `postInvoke`). */
  hooks?: { preInvoke?: PhaseHandler; postInvoke?: PhaseHandler };
  /** Per-part stream handlers, `(part, ctx)` as in the service scope (`ctx.chunkType`, `exit`, `signal`). */
  streamHandlers?: PartHandlers;
  /**
   * Whether a failing handler stops the call (default `false`: it is logged and ignored); the
   * name `IModel` uses for the same policy.
   */
  exitHook?: boolean;
  /** @deprecated Use `exitHook` (same meaning); `exitHook` wins when both are given. */
  exit?: boolean;
  /** Deadline of each phase handler in milliseconds (default 30 000). */
  timeoutMs?: number;
  /** Deadline of each stream handler call in milliseconds (default 30 000). */
  chunkTimeoutMs?: number;
  /** A session whose bus gets `api.pre_call`, `api.post_call` and `api.stream_chunk`. */
  session?: MiddlewareSession;
  /** A guardrail over text, reasoning and tool-input parts (streams) and `generate` answers. */
  guard?: StreamGuard;
}

/** The event a phase handler sees; it may replace `params` (pre) or `result` (post). */
export interface MiddlewareCall {
  /** `generate` or `stream`. */
  readonly type: "generate" | "stream";
  /** The provider and model id. */
  readonly model: { readonly provider: string; readonly modelId: string };
  /** The call options; a pre-invoke handler may replace them. */
  params: CallParams;
  /** The generate result (post-invoke of `generate` only); a handler may replace it. */
  result?: GenerateResult;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_HOLD_BACK = 64;

function summary(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 200 ? text.slice(0, 199) + "…" : text;
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
    throw new TypeError(`Cannot create middleware: ${name} must be a positive number`);
  }
  return value;
}

/** A stream handler's context: its signal is made only when a handler reads it. */
class HandlerContext implements PartHandlerContext {
  readonly chunkType: StreamPart["type"];
  readonly exit: boolean;
  controller: AbortController | undefined = undefined;

  constructor(chunkType: StreamPart["type"], exit: boolean) {
    this.chunkType = chunkType;
    this.exit = exit;
  }

  get signal(): AbortSignal {
    return (this.controller ??= new AbortController()).signal;
  }
}

/**
 * Calls a stream handler. A handler that answers synchronously costs one call and one small
 * context object; an AbortController exists only when the handler reads `signal`, and a timer
 * only when the answer is a promise.
 */
function callHandler(
  handler: (part: never, ctx: PartHandlerContext) => unknown,
  part: StreamPart,
  exit: boolean,
  timeoutMs: number,
): unknown {
  const context = new HandlerContext(part.type, exit);
  const result = handler(part as never, context);
  if (!isThenable(result)) return result;
  return deadline(result, timeoutMs, undefined, () => {
    const error = new DOMException(
      `The stream handler for "${part.type}" did not settle within ${timeoutMs} ms`,
      "TimeoutError",
    );
    context.controller?.abort(error);
    return error;
  });
}

function partsOf(part: StreamPart, result: unknown): readonly StreamPart[] {
  if (Array.isArray(result)) return result;
  return result === null || result === undefined ? [part] : [result as StreamPart];
}

/**
 * Makes an AI SDK language-model middleware (specification V3, `ai@6`) that runs hookscope's
 * service-scope hooks around every call of the wrapped model:
 *
 * - `transformParams` runs the pre-invoke handler with its deadline and exit policy; it may
 *   replace `event.params`. With `exitHook: true` a failure rejects the call with `HookPhaseError`.
 * - `wrapGenerate` runs the guardrail over the answer (a block rejects with
 *   `StreamBlockedError`), then the post-invoke handler; it may replace `event.result`.
 * - `wrapStream` pipes the model's stream through a `TransformStream` that runs the stream
 *   handler of each part's type (replace, expand or drop the part), then the guardrail, and runs
 *   the post-invoke handler after the stream drained. Errors reach the consumer as the stream's
 *   error.
 * - With `session`, `api.pre_call`, `api.post_call` and `api.stream_chunk` fire on its bus.
 *
 * @param options Handlers, stream handlers, deadlines, session and guardrail.
 * @returns The middleware, for `wrapLanguageModel({ model, middleware })`.
 * @throws {TypeError} When an option has the wrong type.
 *
 * @example Upper-case every text delta of a streamed answer
 * ```ts
 * import { hookscopeMiddleware } from "@hookscope/core/ai-sdk";
 * import assert from "node:assert/strict";
 *
 * const middleware = hookscopeMiddleware({
 *   streamHandlers: {
 *     "text-delta": (part) => ({ ...part, delta: part.delta.toUpperCase() }),
 *   },
 * });
 * assert.equal(middleware.specificationVersion, "v3");
 * assert.equal(typeof middleware.wrapStream, "function");
 * ```
 */
export function hookscopeMiddleware<V extends MiddlewareSpecificationVersion = "v3">(
  options: HookscopeMiddlewareOptions<V> = {},
): LanguageModelMiddleware<V> {
  if (options === null || typeof options !== "object") {
    throw new TypeError("Cannot create middleware: options must be an object");
  }
  if (options.registry !== undefined && options.hooks !== undefined) {
    throw new TypeError("Cannot create middleware: pass registry or hooks, not both");
  }
  const specificationVersion = (options.specificationVersion ?? "v3") as V;
  if (specificationVersion !== "v3" && specificationVersion !== "v4") {
    throw new TypeError(`Cannot create middleware: specificationVersion must be "v3" or "v4"`);
  }
  const registry = options.registry ?? new HookRegistry({ hooks: options.hooks ?? {} });
  if (!(registry instanceof HookRegistry)) {
    throw new TypeError("Cannot create middleware: registry must be a HookRegistry");
  }
  const handlers: PartHandlers = { ...options.streamHandlers };
  for (const [type, handler] of Object.entries(handlers)) {
    if (typeof handler !== "function") {
      throw new TypeError(
        `Cannot create middleware: the stream handler for ${
          JSON.stringify(type)
        } is not a function`,
      );
    }
  }
  for (const key of ["exitHook", "exit"] as const) {
    if (options[key] !== undefined && typeof options[key] !== "boolean") {
      throw new TypeError(`Cannot create middleware: ${key} must be a boolean`);
    }
  }
  const exit = options.exitHook ?? options.exit ?? false;
  const timeoutMs = positive(options.timeoutMs, DEFAULT_TIMEOUT_MS, "timeoutMs");
  const chunkTimeoutMs = positive(options.chunkTimeoutMs, DEFAULT_TIMEOUT_MS, "chunkTimeoutMs");
  const bus = options.session?.hooks;
  const guard = options.guard;
  const holdBack = guard ? positive(guard.holdBackChars, DEFAULT_HOLD_BACK, "holdBackChars") : 0;
  const hasPre = registry.canHandle({ hookType: HookEventType.PreInvocation });
  const hasPost = registry.canHandle({ hookType: HookEventType.PostInvocation });
  const calls = new WeakMap<
    CallParams,
    { call: MiddlewareCall; started: number }
  >();

  const runPhase = async (hookType: HookEventType, call: MiddlewareCall): Promise<void> => {
    const hook = new HookEvent({ registry, hookType, eventLike: call, exit, timeoutMs });
    await hook.invoke();
    const failed = hook.status === EventStatus.FAILED || hook.status === EventStatus.CANCELLED;
    if (hook.shouldExit || (exit && failed)) {
      const cause = hook.exitCause ?? hook.execution.error;
      throw cause instanceof Error ? cause : new HookPhaseError(
        `${hookType === HookEventType.PreInvocation ? "Pre" : "Post"}-invoke hook failed: ${
          String(cause)
        }`,
        { cause },
      );
    }
  };

  const emit = (point: "api.pre_call" | "api.post_call" | "api.stream_chunk", payload: object) =>
    bus ? bus.emit(point as never, payload as never) : undefined;

  const postCall = async (
    call: MiddlewareCall,
    started: number,
    status: string,
    usage?: { inputTokens?: { total?: number }; outputTokens?: { total?: number } },
  ) => {
    await emit("api.post_call", {
      model: call.model.modelId,
      provider: call.model.provider,
      status,
      latencyMs: performance.now() - started,
      tokens: usage
        ? {
          prompt: usage.inputTokens?.total,
          completion: usage.outputTokens?.total,
        }
        : null,
    });
  };

  return {
    specificationVersion,
    async transformParams<P extends CallParams>(
      { type, params, model }: { type: "generate" | "stream"; params: P; model: ModelInfo },
    ): Promise<P> {
      const call: MiddlewareCall = {
        type,
        model: { provider: model.provider, modelId: model.modelId },
        params,
      };
      await emit("api.pre_call", {
        model: model.modelId,
        provider: model.provider,
        requestSummary: summary(params.prompt),
      });
      // Rejections of the AI SDK approval flow reach the model as `execution-denied` results:
      // the session's wrapTools sets record the ones they asked about.
      if (bus) await reportAnswers(bus, params.prompt);
      if (hasPre) await runPhase(HookEventType.PreInvocation, call);
      calls.set(call.params, { call, started: performance.now() });
      return call.params as P;
    },
    async wrapGenerate<G extends GenerateResult, P extends CallParams>(
      { doGenerate, params, model }: {
        doGenerate: () => PromiseLike<G>;
        params: P;
        model: ModelInfo;
      },
    ): Promise<G> {
      const entry = calls.get(params) ?? {
        call: {
          type: "generate",
          model: { provider: model.provider, modelId: model.modelId },
          params,
        },
        started: performance.now(),
      };
      let result: G;
      try {
        result = await doGenerate();
      } catch (error) {
        await postCall(entry.call, entry.started, "failed");
        throw error;
      }
      if (guard) {
        const verdict = await guard.check(generatedText(result));
        if (verdict && typeof verdict === "object" && typeof verdict.block === "string") {
          await postCall(entry.call, entry.started, "failed");
          throw new StreamBlockedError(verdict.block);
        }
      }
      entry.call.result = result;
      if (hasPost) await runPhase(HookEventType.PostInvocation, entry.call);
      await postCall(entry.call, entry.started, "completed", result.usage as never);
      return (entry.call.result ?? result) as G;
    },
    async wrapStream<S extends StreamResult, P extends CallParams>(
      { doStream, params, model }: { doStream: () => PromiseLike<S>; params: P; model: ModelInfo },
    ): Promise<S> {
      const entry = calls.get(params) ?? {
        call: {
          type: "stream",
          model: { provider: model.provider, modelId: model.modelId },
          params,
        },
        started: performance.now(),
      };
      const upstream = await doStream();
      // The guardrail's view: all guarded text so far, and the parts held back behind it (each
      // with the span of that text it carries; other parts carry none and keep their place).
      let seen = "";
      const held: { part: StreamPart; start: number; end: number }[] = [];
      const release = (controller: TransformStreamDefaultController<StreamPart>, all: boolean) => {
        const limit = all ? Infinity : seen.length - holdBack;
        while (held.length > 0) {
          const item = held[0];
          if (item.end <= limit) {
            controller.enqueue(item.part);
            held.shift();
            continue;
          }
          if (item.start < limit && isGuardedDelta(item.part)) {
            const cut = limit - item.start;
            controller.enqueue({ ...item.part, delta: item.part.delta.slice(0, cut) });
            item.part = { ...item.part, delta: item.part.delta.slice(cut) };
            item.start = limit;
          }
          return;
        }
      };
      let usage: unknown;
      let stopped = false;

      // The AI SDK's convention for a failed stream: an error part, then the end of the stream
      // (ending it cancels the model's stream upstream).
      const fail = (controller: TransformStreamDefaultController<StreamPart>, error: unknown) => {
        stopped = true;
        controller.enqueue({ type: "error", error } as StreamPart);
        controller.terminate();
      };

      const plain = !bus && !guard;
      // Parts go out synchronously unless a session or a guardrail has to see them first.
      const emitAll = (
        parts: readonly StreamPart[],
        controller: TransformStreamDefaultController<StreamPart>,
      ): void | Promise<void> => {
        if (plain) {
          for (const part of parts) {
            if (part.type === "finish") usage = part.usage;
            controller.enqueue(part);
          }
          return;
        }
        return (async () => {
          for (const part of parts) {
            if (stopped) return;
            await deliver(part, controller);
          }
        })();
      };

      const deliver = async (
        part: StreamPart,
        controller: TransformStreamDefaultController<StreamPart>,
      ): Promise<void> => {
        if (part.type === "finish") usage = part.usage;
        if (bus) {
          await emit("api.stream_chunk", {
            model: model.modelId,
            provider: model.provider,
            chunkType: part.type,
            chunkSummary: summary(part),
          });
        }
        if (!guard) {
          controller.enqueue(part);
          return;
        }
        if (!isGuardedDelta(part) || part.delta === "") {
          if (held.length === 0) controller.enqueue(part);
          else held.push({ part, start: seen.length, end: seen.length });
          return;
        }
        const start = seen.length;
        seen += part.delta;
        const verdict = await guard.check(seen);
        if (verdict && typeof verdict === "object" && typeof verdict.block === "string") {
          fail(controller, new StreamBlockedError(verdict.block));
          return;
        }
        held.push({ part, start, end: seen.length });
        release(controller, false);
      };

      const transform = new TransformStream<StreamPart, StreamPart>({
        transform: (part, controller): void | Promise<void> => {
          if (stopped) return;
          const handler = handlers[part.type];
          if (!handler) return emitAll([part], controller);
          let result: unknown;
          try {
            result = callHandler(handler as never, part, exit, chunkTimeoutMs);
          } catch (error) {
            return exit ? fail(controller, error) : emitAll([part], controller);
          }
          if (!isThenable(result)) {
            // One replacement part, nothing to wait for: enqueue it without a list.
            if (plain && !Array.isArray(result)) {
              const out = result === null || result === undefined ? part : result as StreamPart;
              if (out.type === "finish") usage = out.usage;
              controller.enqueue(out);
              return;
            }
            return emitAll(partsOf(part, result), controller);
          }
          return Promise.resolve(result).then(
            (value) => emitAll(partsOf(part, value), controller),
            (error) => exit ? fail(controller, error) : emitAll([part], controller),
          );
        },
        flush: async (controller) => {
          if (stopped) return;
          release(controller, true);
          try {
            if (hasPost) await runPhase(HookEventType.PostInvocation, entry.call);
          } catch (error) {
            controller.enqueue({ type: "error", error } as StreamPart);
            return;
          } finally {
            await postCall(entry.call, entry.started, "completed", usage as never);
          }
        },
      });
      return {
        ...upstream,
        stream: (upstream.stream as ReadableStream<StreamPart>).pipeThrough(transform),
      } as S;
    },
  };
}
