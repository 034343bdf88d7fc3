/**
 * `IModel`: a model bound to an endpoint and its own hook registry. It needs no Session (D1).
 *
 * @module
 */

import { EventStatus, HookPhaseError, logger } from "../core/mod.ts";
import { APICalling, type APICallingInit } from "./api_calling.ts";
import type { Endpoint, StreamChunk } from "./endpoint.ts";
import { OpenAICompatibleEndpoint } from "./endpoints/openai_compatible.ts";
import { HookEventType } from "./hook_event_type.ts";
import { HookEvent } from "./hook_event.ts";
import { HookedEvent } from "./hooked_event.ts";
import { globalHookLogger } from "./hook_logger.ts";
import { HookRegistry, type HookRegistryInit } from "./hook_registry.ts";
import { dispatchHook, INTERNALS } from "./_dispatch.ts";
import type { HookCallResult } from "./types.ts";
import { anySignal, isAbortSignal } from "../core/_abort.ts";
import { isThenable, neverAborted } from "./_util.ts";

/** The default pre-event-create hook deadline, in milliseconds. */
export const DEFAULT_CREATE_EVENT_HOOK_TIMEOUT_MS = 10_000;
/** The default pre/post-invocation hook deadline, in milliseconds. */
export const DEFAULT_INVOKE_HOOK_TIMEOUT_MS = 30_000;

/** A constructor of events a model can create. */
export type HookedEventClass = new (init: APICallingInit) => HookedEvent;

/** Options of {@linkcode IModel.createEvent}. */
export interface CreateEventOptions {
  /**
   * The event class (default `APICalling`); anything but a `HookedEvent` subclass (including the
   * abstract `HookedEvent` itself) is a `TypeError`, after the pre-create hook.
   */
  eventType?: HookedEventClass;
  /** Exit of the pre-create hook; `null`/absent: the model's `exitHook`. */
  createEventExitHook?: boolean | null;
  /** Deadline of the pre-create hook (default 10 000 ms). */
  createEventHookTimeoutMs?: number;
  /** Extra params of the pre-create hook. */
  createEventHookParams?: Record<string, unknown>;
  /** Exit of the pre-invocation hook; `null`/absent: the model's `exitHook`. */
  preInvokeExitHook?: boolean | null;
  /** Deadline of the pre-invocation hook (default 30 000 ms). */
  preInvokeHookTimeoutMs?: number;
  /** Extra params of the pre-invocation hook. */
  preInvokeHookParams?: Record<string, unknown>;
  /** Exit of the post-invocation hook; `null`/absent: the model's `exitHook`. */
  postInvokeExitHook?: boolean | null;
  /** Deadline of the post-invocation hook (default 30 000 ms). */
  postInvokeHookTimeoutMs?: number;
  /** Extra params of the post-invocation hook. */
  postInvokeHookParams?: Record<string, unknown>;
  /** Aborting it cancels the pre-create hook. */
  signal?: AbortSignal;
}

/** Options of {@linkcode IModel}. */
export interface IModelOptions {
  /** The model name, sent as `model` in every payload. */
  model: string;
  /** The endpoint; or give `baseURL` (and `apiKey`) for an OpenAI-compatible one. */
  endpoint?: Endpoint;
  /** The API root of an OpenAI-compatible endpoint. */
  baseURL?: string;
  /**
   * The API key of the `baseURL` endpoint (sent as a Bearer token, never logged). Giving it with
   * `endpoint` is a `TypeError`, not a silently unused key: an endpoint carries its own credentials.
   */
  apiKey?: string;
  /** A registry (shared), a `{ hooks, streamHandlers }` object, or nothing (a fresh registry). */
  hookRegistry?: HookRegistry | HookRegistryInit | null;
  /** The default exit of every hook (default `false`). */
  exitHook?: boolean;
  /** Transforms chunks that have no registry handler; a `null`/`undefined` return keeps the chunk. */
  streamingProcessFunc?: ((chunk: StreamChunk) => unknown) | null;
}

/**
 * What a model observer is told. `pre_call` comes when `invoke()`/`stream()` start the event
 * (before its pre-invocation hook), `post_call` when the event has ended (any status: read
 * `event.status`), `stream_chunk` for each chunk delivered to the consumer (after
 * {@linkcode IModel.processChunk}).
 */
export type ModelNotice =
  | { type: "pre_call"; model: IModel; event: APICalling; streaming: boolean }
  | { type: "post_call"; model: IModel; event: APICalling; streaming: boolean }
  | { type: "stream_chunk"; model: IModel; event: APICalling; chunk: StreamChunk };

/** Observes a model's calls; its return value is ignored and its failures are isolated. */
export type ModelObserver = (notice: ModelNotice) => unknown;

/** Options of {@linkcode IModel.invoke} and {@linkcode IModel.stream}. */
export interface ModelCallOptions extends CreateEventOptions {
  /** Called with the created event before it runs (to watch its status). */
  onEvent?: (event: HookedEvent) => void;
}

/**
 * A model: an endpoint, a hook registry and the hook defaults of ADR D4. Works standalone.
 *
 * - `createEvent(request, options)` runs the pre-create hook (if registered) with the event class,
 *   builds the event with `payload = { model, ...request }`, and attaches the pre/post-invocation
 *   hooks that have handlers. It resolves to the event (X6).
 * - `invoke(request)` resolves to the event after it ran: COMPLETED or FAILED (an abort rejects).
 * - `stream(request)` is a `ReadableStream` of chunks after {@linkcode IModel.processChunk}.
 *
 * @example A hooked, streamed call
 * ```ts
 * import { FunctionEndpoint, IModel } from "@hookscope/core/service";
 * import assert from "node:assert/strict";
 *
 * const endpoint = new FunctionEndpoint({
 *   call: () => "unused",
 *   stream: function* () {
 *     yield { type: "text", text: "hello" };
 *     yield { type: "done", finishReason: "stop" };
 *   },
 * });
 * const seen: string[] = [];
 * const model = new IModel({
 *   model: "m",
 *   endpoint,
 *   hookRegistry: {
 *     hooks: { pre_invoke: () => { seen.push("pre"); }, post_invoke: () => { seen.push("post"); } },
 *     streamHandlers: { text: (_e, _t, chunk: { text: string }) => ({ type: "text", text: chunk.text.toUpperCase() }) },
 *   },
 * });
 * const chunks = [];
 * for await (const chunk of model.stream({ messages: [] })) chunks.push(chunk);
 * assert.deepEqual(chunks, [{ type: "text", text: "HELLO" }, { type: "done", finishReason: "stop" }]);
 * assert.deepEqual(seen, ["pre", "post"]);
 * ```
 */
export class IModel {
  /** The model name. */
  readonly model: string;
  /** The endpoint. */
  readonly endpoint: Endpoint;
  /** The registry (shared by copies). */
  readonly hookRegistry: HookRegistry;
  /** The default exit of every hook. */
  readonly exitHook: boolean;
  /** Transforms chunks without a registry handler. */
  readonly streamingProcessFunc: ((chunk: StreamChunk) => unknown) | null;

  // Copy-on-write, shared with copies: a notification iterates a snapshot without copying it.
  #observers: { list: readonly ModelObserver[] } = { list: [] };

  /** Makes a model; bad options throw a `TypeError`. */
  constructor(options: IModelOptions) {
    if (options === null || typeof options !== "object") {
      throw new TypeError(`Cannot create model: options must be an object`);
    }
    const { model, endpoint, baseURL, apiKey, hookRegistry, exitHook, streamingProcessFunc } =
      options;
    if (typeof model !== "string" || model.length === 0) {
      throw new TypeError(`Cannot create model: model must be a non-empty string`);
    }
    if (endpoint !== undefined && baseURL !== undefined) {
      throw new TypeError(`Cannot create model: give either endpoint or baseURL, not both`);
    }
    if (endpoint === undefined && baseURL === undefined) {
      throw new TypeError(`Cannot create model: an endpoint or a baseURL is required`);
    }
    if (endpoint !== undefined && apiKey !== undefined) {
      // It would be silently unused: an endpoint carries its own credentials.
      throw new TypeError(`Cannot create model: apiKey goes with baseURL, not with an endpoint`);
    }
    if (
      endpoint !== undefined &&
      (endpoint === null || typeof endpoint !== "object" || typeof endpoint.call !== "function" ||
        typeof endpoint.stream !== "function")
    ) {
      throw new TypeError(`Cannot create model: endpoint must implement call() and stream()`);
    }
    if (exitHook !== undefined && typeof exitHook !== "boolean") {
      throw new TypeError(`Cannot create model: exitHook must be a boolean`);
    }
    if (
      streamingProcessFunc !== undefined && streamingProcessFunc !== null &&
      typeof streamingProcessFunc !== "function"
    ) {
      throw new TypeError(`Cannot create model: streamingProcessFunc must be a function`);
    }
    let registry: HookRegistry;
    if (hookRegistry instanceof HookRegistry) registry = hookRegistry;
    else if (hookRegistry === undefined || hookRegistry === null) registry = new HookRegistry();
    else if (typeof hookRegistry === "object" && !Array.isArray(hookRegistry)) {
      registry = new HookRegistry(hookRegistry);
    } else {
      throw new TypeError(
        `Cannot create model: hookRegistry must be a HookRegistry or { hooks, streamHandlers }`,
      );
    }
    this.model = model;
    this.endpoint = endpoint ?? new OpenAICompatibleEndpoint({ baseURL: baseURL!, apiKey });
    this.hookRegistry = registry;
    this.exitHook = exitHook ?? false;
    this.streamingProcessFunc = streamingProcessFunc ?? null;
  }

  /**
   * Creates (but does not run) an event for `request`; see the class documentation. Bad hook
   * options (a non-boolean exit, a timeout that is not a positive number, non-object params, a
   * signal that is not an `AbortSignal`) reject with a `TypeError` before any hook runs.
   */
  async createEvent(
    request: Record<string, unknown>,
    options?: CreateEventOptions,
  ): Promise<APICalling> {
    if (request === null || typeof request !== "object" || Array.isArray(request)) {
      throw new TypeError(`Cannot create event: request must be an object`);
    }
    const opts = options ?? {};
    if (options !== undefined) validateCreateEventOptions(opts);
    const eventType = (opts.eventType ?? APICalling) as HookedEventClass;
    const registry = this.hookRegistry;
    let preCreate: HookEvent | null = null;
    if (registry.canHandle({ hookType: HookEventType.PreEventCreate })) {
      preCreate = new HookEvent({
        registry,
        hookType: HookEventType.PreEventCreate,
        eventLike: eventType,
        exit: opts.createEventExitHook ?? this.exitHook,
        timeoutMs: opts.createEventHookTimeoutMs ?? DEFAULT_CREATE_EVENT_HOOK_TIMEOUT_MS,
        params: opts.createEventHookParams ?? {},
      });
      try {
        await preCreate.invoke({ signal: opts.signal });
      } catch (error) {
        globalHookLogger.log(preCreate.toJSON());
        throw error;
      }
      if (preCreate.shouldExit) {
        globalHookLogger.log(preCreate.toJSON());
        throw preCreate.exitCause ??
          new HookPhaseError("PreEventCreate hook requested exit without a cause");
      }
    }
    if (
      typeof eventType !== "function" ||
      // HookedEvent itself is abstract: it has no core to run.
      !(eventType.prototype instanceof HookedEvent)
    ) {
      if (preCreate) globalHookLogger.log(preCreate.toJSON());
      throw new TypeError(
        `Cannot create event: unsupported event type ${
          typeof eventType === "function" ? JSON.stringify(eventType.name) : `(${typeof eventType})`
        }; only HookedEvent subclasses such as APICalling are supported`,
      );
    }
    const event = new eventType({
      endpoint: this.endpoint,
      payload: { ...request, model: request.model ?? this.model },
    });
    if (preCreate) {
      preCreate.associatedEventInfo = {
        ...preCreate.associatedEventInfo,
        lionClass: event.constructor.name,
        eventId: event.id,
        eventCreatedAt: event.createdAt,
      };
      globalHookLogger.log(preCreate.toJSON());
    }
    if (registry.canHandle({ hookType: HookEventType.PreInvocation })) {
      event.createPreInvokeHook(registry, {
        exit: opts.preInvokeExitHook ?? this.exitHook,
        timeoutMs: opts.preInvokeHookTimeoutMs ?? DEFAULT_INVOKE_HOOK_TIMEOUT_MS,
        params: opts.preInvokeHookParams ?? {},
      });
    }
    if (registry.canHandle({ hookType: HookEventType.PostInvocation })) {
      event.createPostInvokeHook(registry, {
        exit: opts.postInvokeExitHook ?? this.exitHook,
        timeoutMs: opts.postInvokeHookTimeoutMs ?? DEFAULT_INVOKE_HOOK_TIMEOUT_MS,
        params: opts.postInvokeHookParams ?? {},
      });
    }
    return event as APICalling;
  }

  /** Creates and runs an event; resolves to it (COMPLETED or FAILED); an abort rejects. */
  async invoke(request: Record<string, unknown>, options?: ModelCallOptions): Promise<APICalling> {
    const event = await this.createEvent(request, options);
    options?.onEvent?.(event);
    this.#notify({ type: "pre_call", model: this, event, streaming: false });
    try {
      await event.invoke({ signal: options?.signal });
    } finally {
      this.#notify({ type: "post_call", model: this, event, streaming: false });
    }
    return event;
  }

  /**
   * Observes this model's `invoke()` and `stream()` calls (and those of its copies) without
   * taking a hook slot: observation only (ADR D6). Observers run in registration order; a
   * throwing or rejecting observer is logged and never affects the call. Returns a disposer.
   *
   * @example
   * ```ts
   * import { FunctionEndpoint, IModel } from "@hookscope/core/service";
   * import assert from "node:assert/strict";
   *
   * const model = new IModel({ model: "m", endpoint: new FunctionEndpoint({ call: () => "ok" }) });
   * const seen: string[] = [];
   * const stop = model.observe((notice) => { seen.push(`${notice.type}:${notice.event.status}`); });
   * await model.invoke({});
   * stop();
   * await model.invoke({});
   * assert.deepEqual(seen, ["pre_call:pending", "post_call:completed"]);
   * ```
   */
  observe(observer: ModelObserver): () => void {
    if (typeof observer !== "function") {
      throw new TypeError(`Cannot observe model: observer must be a function`);
    }
    const wrapped: ModelObserver = (notice) => observer(notice);
    const holder = this.#observers;
    holder.list = [...holder.list, wrapped];
    return () => {
      holder.list = holder.list.filter((o) => o !== wrapped);
    };
  }

  #notify(notice: ModelNotice): void {
    const observers = this.#observers.list;
    if (observers.length === 0) return;
    for (const observer of observers) {
      try {
        const out = observer(notice);
        if (isThenable(out)) {
          Promise.resolve(out).catch((error) => logger.warn("Model observer failed", error));
        }
      } catch (error) {
        logger.warn("Model observer failed", error);
      }
    }
  }

  /**
   * Creates and streams an event (`stream: true` is added to the request). Chunks pass through
   * {@linkcode IModel.processChunk}. Errors reach the consumer; cancelling ends the event
   * CANCELLED and aborts the request. A chunk handler that fails with exit on errors the stream
   * with its cause, closes the request and ends the event FAILED.
   *
   * Chunk handlers get a `params.signal` that aborts when the caller's signal aborts or the
   * consumer cancels, so a handler still running then can stop; the event stays CANCELLED in
   * both cases (a caller abort during a handler no longer turns it FAILED).
   *
   * Once read from, a caller abort errors the stream at once, also while the consumer is not
   * reading, so observers get `post_call` for the CANCELLED event without another read. The
   * listener on the caller's signal is added at the first read and removed when the stream ends
   * in any way.
   */
  stream(
    request: Record<string, unknown>,
    options?: ModelCallOptions,
  ): ReadableStream<StreamChunk> {
    if (request === null || typeof request !== "object" || Array.isArray(request)) {
      throw new TypeError(`Cannot stream: request must be an object`);
    }
    const signal = options?.signal;
    // Chunk handlers see the caller's abort and the consumer's cancel through one signal.
    const stop = new AbortController();
    const chunkSignal = signal ? anySignal([signal, stop.signal]) : stop.signal;
    let reader: ReadableStreamDefaultReader<unknown> | null = null;
    let opening: Promise<ReadableStreamDefaultReader<unknown>> | null = null;
    let created: APICalling | null = null;
    let ended = false;
    let onCallerAbort: (() => void) | null = null;
    const release = () => {
      if (onCallerAbort) signal?.removeEventListener("abort", onCallerAbort);
      onCallerAbort = null;
    };
    const end = () => {
      release();
      if (ended || !created) return;
      ended = true;
      this.#notify({ type: "post_call", model: this, event: created, streaming: true });
    };
    const open = () =>
      opening ??= this.createEvent({ ...request, stream: true }, options).then((event) => {
        created = event;
        options?.onEvent?.(event);
        this.#notify({ type: "pre_call", model: this, event, streaming: true });
        reader = event.stream({ signal }).getReader();
        return reader;
      });
    let listening = false;
    return new ReadableStream<StreamChunk>({
      pull: async (controller) => {
        if (!listening && signal && !signal.aborted) {
          // From the first read on (a stream never read sends nothing and holds no listener), a
          // caller abort ends the stream at once, even while the consumer is not reading: the
          // event is CANCELLED, so observers hear post_call without waiting for another read.
          listening = true;
          onCallerAbort = () => {
            controller.error(signal.reason);
            // After the event's own abort listener (registered later) has made it CANCELLED.
            queueMicrotask(end);
          };
          signal.addEventListener("abort", onCallerAbort, { once: true });
        }
        let source: ReadableStreamDefaultReader<unknown>;
        try {
          source = await open();
        } catch (error) {
          release();
          throw error;
        }
        let next: ReadableStreamReadResult<unknown>;
        try {
          next = await source.read();
        } catch (error) {
          end();
          throw error;
        }
        if (next.done) {
          end();
          controller.close();
          return;
        }
        const chunk = next.value as StreamChunk;
        let processed: unknown;
        try {
          processed = this.#process(chunk, chunkSignal);
          if (isThenable(processed)) processed = await processed;
        } catch (error) {
          if (chunkSignal.aborted) {
            // The caller aborted or the consumer cancelled while a handler ran: the event has
            // already ended CANCELLED and the request is closed.
            end();
            throw error;
          }
          // Stop the provider stream (closing the request), then record why the event ended.
          await source.cancel(error).catch(() => {});
          const event = created as APICalling | null;
          if (event) {
            event.execution.status = EventStatus.FAILED;
            event.execution.error = error;
          }
          end();
          throw error;
        }
        const delivered = (processed ?? chunk) as StreamChunk;
        if (this.#observers.list.length > 0 && created) {
          this.#notify({ type: "stream_chunk", model: this, event: created, chunk: delivered });
        }
        controller.enqueue(delivered);
      },
      cancel: async (reason) => {
        stop.abort(reason ?? new DOMException("Stream cancelled", "AbortError"));
        if (reader) await reader.cancel(reason);
        else if (opening) await (await opening.catch(() => null))?.cancel(reason);
        end();
      },
    }, { highWaterMark: 0 });
  }

  /**
   * Processes one chunk: the registry's handler for `chunk.type` wins over
   * `streamingProcessFunc`. Resolves to the replacement, or `null` to keep the original (also when
   * a handler returned an `Error` or failed with exit off). A handler failure with exit on rejects
   * with whatever it threw.
   */
  processChunk(chunk: StreamChunk, options?: { signal?: AbortSignal }): Promise<unknown> {
    try {
      const out = this.#process(chunk, options?.signal ?? neverAborted());
      return isThenable(out) ? Promise.resolve(out) : Promise.resolve(out ?? null);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** A model with the same endpoint and options, sharing the registry and the observers. */
  copy(): IModel {
    const copy = new IModel({
      model: this.model,
      endpoint: this.endpoint,
      hookRegistry: this.hookRegistry,
      exitHook: this.exitHook,
      streamingProcessFunc: this.streamingProcessFunc,
    });
    copy.#observers = this.#observers;
    return copy;
  }

  #process(chunk: StreamChunk, signal: AbortSignal): unknown {
    const key = chunk !== null && typeof chunk === "object"
      ? (chunk as { type?: unknown }).type
      : undefined;
    if (typeof key === "string" && INTERNALS.get(this.hookRegistry)?.stream.has(key)) {
      const outcome = dispatchHook(this.hookRegistry, null, {
        chunkType: key,
        chunk,
        shouldExit: this.exitHook,
        signal,
      });
      return isThenable(outcome) ? outcome.then(chunkResult) : chunkResult(outcome);
    }
    const fn = this.streamingProcessFunc;
    if (fn) {
      const out = fn(chunk);
      return isThenable(out) ? Promise.resolve(out).then((v) => v ?? null) : out ?? null;
    }
    return null;
  }
}

/**
 * Rejects bad hook options before anything runs, so a pre-create hook never runs for a call
 * that a later option would fail anyway (the event class is checked after it, as D4 says).
 */
function validateCreateEventOptions(opts: CreateEventOptions): void {
  if (typeof opts !== "object") {
    throw new TypeError(`Cannot create event: options must be an object`);
  }
  for (const phase of ["createEvent", "preInvoke", "postInvoke"] as const) {
    const exit = opts[`${phase}ExitHook`];
    if (exit !== undefined && exit !== null && typeof exit !== "boolean") {
      throw new TypeError(`Cannot create event: ${phase}ExitHook must be a boolean or null`);
    }
    const timeoutMs = opts[`${phase}HookTimeoutMs`];
    if (
      timeoutMs !== undefined &&
      (typeof timeoutMs !== "number" || Number.isNaN(timeoutMs) || timeoutMs <= 0)
    ) {
      throw new TypeError(
        `Cannot create event: ${phase}HookTimeoutMs must be a positive number; got ${
          String(timeoutMs)
        }`,
      );
    }
    const params = opts[`${phase}HookParams`];
    if (params !== undefined && (params === null || typeof params !== "object")) {
      throw new TypeError(`Cannot create event: ${phase}HookParams must be an object`);
    }
  }
  if (opts.signal !== undefined && !isAbortSignal(opts.signal)) {
    throw new TypeError(`Cannot create event: signal must be an AbortSignal`);
  }
}

function chunkResult(outcome: HookCallResult): unknown {
  // A failed handler (thrown, or cancelled) has a status; a successful one has status null.
  if (outcome.status !== null) {
    if (!outcome.shouldExit) return null;
    // Whatever was thrown (an Error, a string, the abort reason) is the cause.
    throw outcome.error ?? new HookPhaseError("Streaming hook requested exit without a cause");
  }
  const result = outcome.result;
  // A returned Error keeps the original chunk; a plain object with `name`/`message` replaces it.
  if (result === undefined || result === null || result instanceof Error) return null;
  return result;
}
