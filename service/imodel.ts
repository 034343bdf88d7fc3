/**
 * `IModel`: a model bound to an endpoint and its own hook registry. It needs no Session.
 *
 * @module
 */

import { logger } from "../core/mod.ts";
import type { APICalling } from "./api_calling.ts";
import type { ConversationItem, Endpoint, StreamChunk } from "./endpoint.ts";
import { openAICompatible } from "./endpoints/openai_compatible.ts";
import { toOpenAIMessages } from "./endpoints/openai_messages.ts";
import type { HookRegistry } from "./hook_registry.ts";
import type { CreateEventOptions, IModelOptions, ModelCallOptions } from "./model_options.ts";
import { createModelEvent } from "./_create_event.ts";
import { validateModelOptions } from "./_model_options.ts";
import { modelStream, processChunk, type StreamHost } from "./_model_stream.ts";
import { neverAborted } from "./_util.ts";
import { isThenable } from "../core/_util.ts";
import { hookRuns } from "./_hook_run.ts";

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

/**
 * A model: an endpoint, a hook registry and its hook defaults. Works standalone.
 *
 * - `createEvent(request, options)` runs the pre-create hook (if registered) with the event class,
 *   builds the event with `payload = { model, ...request }`, and attaches the pre/post-invocation
 *   hooks that have handlers. It resolves to the event.
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
 *     hooks: { preInvoke: () => { seen.push("pre"); }, postInvoke: () => { seen.push("post"); } },
 *     streamHandlers: { text: (chunk) => ({ ...chunk, text: chunk.text.toUpperCase() }) },
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
  readonly transformChunk: ((chunk: StreamChunk) => unknown) | null;

  // Copy-on-write, shared with copies: a notification iterates a snapshot without copying it.
  #observers: { list: readonly ModelObserver[] } = { list: [] };

  /** Makes a model; bad options throw a `TypeError`. */
  constructor(options: IModelOptions) {
    const registry = validateModelOptions(options);
    const { model, endpoint, baseURL, apiKey, exitHook } = options;
    this.model = model;
    this.endpoint = endpoint ?? openAICompatible({ baseURL: baseURL!, apiKey });
    this.hookRegistry = registry;
    this.exitHook = exitHook ?? false;
    this.transformChunk = options.transformChunk ?? options.streamingProcessFunc ?? null;
  }

  /**
   * Creates (but does not run) an event for `request`; see the class documentation. Bad hook
   * options (a non-boolean exit, a timeout that is not a positive number, non-object params, a
   * signal that is not an `AbortSignal`) reject with a `TypeError` before any hook runs.
   */
  createEvent(
    request: Record<string, unknown>,
    options?: CreateEventOptions,
  ): Promise<APICalling> {
    try {
      const event = createModelEvent(this, request, options);
      return event instanceof Promise ? event : Promise.resolve(event);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Creates and runs an event; resolves to it (COMPLETED or FAILED); an abort rejects. */
  invoke(request: Record<string, unknown>, options?: ModelCallOptions): Promise<APICalling> {
    let event: APICalling | Promise<APICalling>;
    try {
      event = createModelEvent(this, request, options);
      if (!(event instanceof Promise)) {
        options?.onEvent?.(event);
        // Made just now and run at once: the event's creation time is the run's start, and the
        // run itself tells observers it ended (no promise of this method's own).
        if (this.#observers.list.length > 0) {
          this.#notify({ type: "pre_call", model: this, event, streaming: false });
        }
        const run = hookRuns.invokeEvent!(event, options?.signal, event.createdAt, this.#ended);
        if (run !== null) return run;
        return this.#invokeCreated(event, options, false);
      }
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#invokeCreated(event, options, true);
  }

  async #invokeCreated(
    created: APICalling | Promise<APICalling>,
    options: ModelCallOptions | undefined,
    announce: boolean,
  ): Promise<APICalling> {
    const event = await created;
    if (announce) {
      options?.onEvent?.(event);
      if (this.#observers.list.length > 0) {
        this.#notify({ type: "pre_call", model: this, event, streaming: false });
      }
    }
    try {
      await event.invoke(options?.signal === undefined ? undefined : { signal: options.signal });
    } finally {
      this.#ended(event);
    }
    return event;
  }

  /** Tells observers a call ended (no notice is built while nobody observes). */
  readonly #ended = (event: APICalling): void => {
    if (this.#observers.list.length > 0) {
      this.#notify({ type: "post_call", model: this, event, streaming: false });
    }
  };

  /**
   * Observes this model's `invoke()` and `stream()` calls (and those of its copies) without
   * taking a hook slot: observation only. Observers run in registration order; a
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
   * Chunk handlers get a `ctx.signal` that aborts when the caller's signal aborts or the
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
    const host: StreamHost = {
      createEvent: (req, opts) => this.createEvent(req, opts),
      process: (chunk, signal) => processChunk(this, chunk, signal),
      started: (event) => this.#notify({ type: "pre_call", model: this, event, streaming: true }),
      delivered: (event, chunk) => {
        if (this.#observers.list.length > 0) {
          this.#notify({ type: "stream_chunk", model: this, event, chunk });
        }
      },
      ended: (event) => this.#notify({ type: "post_call", model: this, event, streaming: true }),
    };
    return modelStream(host, request, options);
  }

  /**
   * Processes one chunk: the registry's handler for `chunk.type` wins over
   * `transformChunk`. Resolves to the replacement, or `null` to keep the original (also when
   * a handler returned an `Error` or failed with exit off). A handler failure with exit on rejects
   * with whatever it threw.
   */
  processChunk(chunk: StreamChunk, options?: { signal?: AbortSignal }): Promise<unknown> {
    try {
      const out = processChunk(this, chunk, options?.signal ?? neverAborted());
      return isThenable(out) ? Promise.resolve(out) : Promise.resolve(out ?? null);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * A conversation as the request's `messages`, in the endpoint's form
   * (`endpoint.renderMessages`, or the OpenAI chat-completions form when it has none). The
   * agent loop sends a branch's messages through it, so it never writes a provider's format.
   *
   * @example
   * ```ts
   * import { FunctionEndpoint, IModel } from "@hookscope/core/service";
   * import assert from "node:assert/strict";
   *
   * const model = new IModel({ model: "m", endpoint: new FunctionEndpoint({ call: () => "" }) });
   * assert.deepEqual(model.renderMessages([{ role: "user", content: "hi" }]), [
   *   { role: "user", content: "hi" },
   * ]);
   * ```
   */
  renderMessages(conversation: readonly ConversationItem[]): unknown[] {
    const endpoint = this.endpoint;
    return typeof endpoint.renderMessages === "function"
      ? endpoint.renderMessages(conversation)
      : toOpenAIMessages(conversation);
  }

  /** @deprecated Use {@linkcode IModel.transformChunk} (the same function). */
  get streamingProcessFunc(): ((chunk: StreamChunk) => unknown) | null {
    return this.transformChunk;
  }

  /** A model with the same endpoint and options, sharing the registry and the observers. */
  copy(): IModel {
    const copy = new IModel({
      model: this.model,
      endpoint: this.endpoint,
      hookRegistry: this.hookRegistry,
      exitHook: this.exitHook,
      transformChunk: this.transformChunk,
    });
    copy.#observers = this.#observers;
    return copy;
  }
}
