/**
 * The `Endpoint` contract a model calls, the typed answer of a call and the typed stream chunks
 * (one vocabulary), and `FunctionEndpoint`, an in-process endpoint for tests and benchmarks.
 *
 * @module
 */

import { internals, iteratorSource, readerSource } from "./_stream_run.ts";
import { toModelAnswer } from "./endpoints/_answer.ts";
import { isThenable } from "../core/_util.ts";

/** A piece of assistant text. */
export interface TextChunk {
  /** Discriminant. */
  type: "text";
  /** The text delta. */
  text: string;
  /** The choice it belongs to; present only for a choice other than the first (`n > 1`). */
  choice?: number;
}

/** A complete tool call, assembled from its deltas. */
export interface ToolCallChunk {
  /** Discriminant. */
  type: "tool_call";
  /** The call's index in the choice. */
  index: number;
  /** The provider's call id. */
  id: string;
  /** The function name. */
  name: string;
  /** The JSON arguments text, as sent (not parsed). */
  arguments: string;
  /** The choice it belongs to; present only for a choice other than the first (`n > 1`). */
  choice?: number;
}

/** Token usage, when the provider reports it. */
export interface UsageChunk {
  /** Discriminant. */
  type: "usage";
  /** Prompt tokens. */
  promptTokens: number;
  /** Completion tokens. */
  completionTokens: number;
  /** Total tokens. */
  totalTokens: number;
}

/** The last chunk of a stream. */
export interface DoneChunk {
  /** Discriminant. */
  type: "done";
  /** Why generation stopped (`"stop"`, `"tool_calls"`, …), `null` if never said. */
  finishReason: string | null;
}

/** One typed piece of a streamed completion. */
export type StreamChunk = TextChunk | ToolCallChunk | UsageChunk | DoneChunk;

/** Token usage of an answer: the {@linkcode UsageChunk} without its discriminant. */
export type AnswerUsage = Omit<UsageChunk, "type">;

/**
 * One tool call of an answer: the {@linkcode ToolCallChunk} fields (the arguments text as sent)
 * and the arguments parsed once, where the answer entered: `args`, or `null` with `argsError`
 * saying why (not JSON, not an object, nested too deeply).
 */
export interface AnswerToolCall extends Omit<ToolCallChunk, "type"> {
  /** The parsed arguments, or `null` when unusable. */
  args: Record<string, unknown> | null;
  /** Why `args` is `null`. */
  argsError?: string;
}

/**
 * What `Endpoint.call()` resolves to, whatever the provider: the words of the stream's chunks
 * gathered in one value (first choice), plus the response's id and model and the provider's
 * `raw` body for whoever needs more.
 *
 * @example
 * ```ts
 * import { FunctionEndpoint, type ModelAnswer } from "@hookscope/core/service";
 * import assert from "node:assert/strict";
 *
 * const endpoint = new FunctionEndpoint({ call: () => "hello" });
 * const answer: ModelAnswer = await endpoint.call({}, { signal: new AbortController().signal });
 * assert.equal(answer.text, "hello");
 * assert.deepEqual(answer.toolCalls, []);
 * assert.equal(answer.raw, "hello");
 * ```
 */
export interface ModelAnswer {
  /** The assistant's text (`""` when it only calls tools). */
  text: string;
  /** The tool calls, in order. */
  toolCalls: AnswerToolCall[];
  /** Token usage, or `null` when not reported. */
  usage: AnswerUsage | null;
  /** Why generation stopped (`"stop"`, `"tool_calls"`, …), `null` if never said. */
  finishReason: string | null;
  /** The provider's response id, or `null`. */
  responseId: string | null;
  /** The model that answered, as the provider names it, or `null`. */
  model: string | null;
  /** The provider's response body as received (for fields this answer does not carry). */
  raw: unknown;
}

/**
 * One conversation item to render for a provider: a `system`, `user` or `assistant` message, or an
 * `action_request` (`{ function, arguments, callId }`) / `action_response`
 * (`{ function, arguments, output, callId, context? }`) of a tool call. Structural, so any
 * message shape with these fields fits (a branch's messages do).
 */
export interface ConversationItem {
  /** `system`, `user`, `assistant`, `action_request` or `action_response`. */
  readonly role: string;
  /** The content. */
  readonly content: unknown;
  /** The item's own id, used as the call id when the content has none. */
  readonly id?: string;
}

/** Options every endpoint call receives. */
export interface EndpointCallOptions {
  /** Aborting it cancels the request. */
  signal: AbortSignal;
}

/**
 * A provider a model calls: one request/response call and one streamed call, both in the same
 * typed vocabulary, and (optionally) how a conversation is written in its request. Nothing
 * outside an endpoint reads a provider's wire format.
 */
export interface Endpoint {
  /** A short name for logs. */
  readonly name: string;
  /** Sends one request and resolves to its typed answer. */
  call(payload: Record<string, unknown>, options: EndpointCallOptions): Promise<ModelAnswer>;
  /** Sends one request and streams typed chunks; errors reach the consumer. */
  stream(
    payload: Record<string, unknown>,
    options: EndpointCallOptions,
  ): ReadableStream<StreamChunk>;
  /**
   * The request's `messages` for a conversation. Optional: without it a model sends the
   * OpenAI chat-completions form (`toOpenAIMessages`).
   */
  renderMessages?(conversation: readonly ConversationItem[]): unknown[];
}

/** What a {@linkcode FunctionEndpoint} wraps. */
export interface FunctionEndpointInit {
  /** A name for logs (default `"function"`). */
  name?: string;
  /**
   * Answers a call: a {@linkcode ModelAnswer} (missing fields filled in), a string (the text),
   * or an OpenAI chat-completions body (read as one); anything else is an answer with no text.
   * The value itself is the answer's `raw`.
   */
  call: (payload: Record<string, unknown>, options: EndpointCallOptions) => unknown;
  /** Produces stream chunks; by default one text chunk of `String(call result)` and a done chunk. */
  stream?: (
    payload: Record<string, unknown>,
    options: EndpointCallOptions,
  ) => AsyncIterable<StreamChunk> | Iterable<StreamChunk> | ReadableStream<StreamChunk>;
}

/**
 * An in-process {@linkcode Endpoint} around plain functions: no network, useful for tests,
 * benchmarks and edge functions that compute answers locally.
 *
 * @example
 * ```ts
 * import { FunctionEndpoint, IModel, type ModelAnswer } from "@hookscope/core/service";
 * import assert from "node:assert/strict";
 *
 * const endpoint = new FunctionEndpoint({
 *   call: (payload) => `echo ${(payload.messages as string[]).join()}`,
 *   stream: function* () { yield { type: "text", text: "hi" }; yield { type: "done", finishReason: "stop" }; },
 * });
 * const model = new IModel({ model: "local", endpoint });
 * const event = await model.invoke({ messages: ["ping"] });
 * assert.equal((event.response as ModelAnswer).text, "echo ping");
 *
 * const chunks = [];
 * for await (const chunk of model.stream({ messages: [] })) chunks.push(chunk);
 * assert.deepEqual(chunks.map((c) => c.type), ["text", "done"]);
 * ```
 */
export class FunctionEndpoint implements Endpoint {
  /** A short name for logs. */
  readonly name: string;
  #call: FunctionEndpointInit["call"];
  #stream: FunctionEndpointInit["stream"];

  /** Wraps the functions; a missing `call` throws a `TypeError`. */
  constructor(init: FunctionEndpointInit) {
    if (init === null || typeof init !== "object" || typeof init.call !== "function") {
      throw new TypeError(`Cannot create function endpoint: call must be a function`);
    }
    if (init.stream !== undefined && typeof init.stream !== "function") {
      throw new TypeError(`Cannot create function endpoint: stream must be a function`);
    }
    this.name = init.name ?? "function";
    this.#call = init.call;
    this.#stream = init.stream;
  }

  /** Calls the wrapped function; resolves to its value as a {@linkcode ModelAnswer}. */
  call(
    payload: Record<string, unknown>,
    options: EndpointCallOptions,
  ): Promise<ModelAnswer> {
    // Not `async`: a function that answers synchronously costs one settled promise, no await.
    try {
      options.signal.throwIfAborted();
      const out = this.#call(payload, options);
      return isThenable(out)
        ? Promise.resolve(out).then(toModelAnswer)
        : Promise.resolve(toModelAnswer(out));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Streams the wrapped generator (or the call result as one text chunk). */
  stream(
    payload: Record<string, unknown>,
    options: EndpointCallOptions,
  ): ReadableStream<StreamChunk> {
    const source = this.#source(payload, options);
    if (source instanceof ReadableStream) return source;
    return iterableToStream(source);
  }

  static {
    // What `stream()` wraps, opened without the stream (for `IModel.stream`).
    internals.endpointSource = (endpoint, payload, options) => {
      if (!(#source in endpoint)) return null;
      const source = (endpoint as FunctionEndpoint).#source(payload, options);
      if (source instanceof ReadableStream) return readerSource(source.getReader());
      return iteratorSource(
        Symbol.asyncIterator in source
          ? (source as AsyncIterable<StreamChunk>)[Symbol.asyncIterator]()
          : (source as Iterable<StreamChunk>)[Symbol.iterator](),
      );
    };
  }

  #source(
    payload: Record<string, unknown>,
    options: EndpointCallOptions,
  ): AsyncIterable<StreamChunk> | Iterable<StreamChunk> | ReadableStream<StreamChunk> {
    const make = this.#stream;
    const call = this.#call;
    return make ? make(payload, options) : (async function* (): AsyncGenerator<StreamChunk> {
      yield { type: "text", text: String(await call(payload, options)) };
      yield { type: "done", finishReason: "stop" };
    })();
  }
}

/**
 * A pull-based stream over an (async) iterable: one chunk per pull (backpressure), and a cancel
 * calls `onCancel` and then the iterator's `return()`.
 *
 * @example
 * ```ts
 * import { iterableToStream } from "@hookscope/core/service";
 * import assert from "node:assert/strict";
 *
 * const seen = [];
 * for await (const n of iterableToStream([1, 2, 3])) seen.push(n);
 * assert.deepEqual(seen, [1, 2, 3]);
 * ```
 */
export function iterableToStream<T>(
  source: AsyncIterable<T> | Iterable<T>,
  onCancel?: (reason: unknown) => void,
): ReadableStream<T> {
  const iterator: AsyncIterator<T> | Iterator<T> = Symbol.asyncIterator in source
    ? (source as AsyncIterable<T>)[Symbol.asyncIterator]()
    : (source as Iterable<T>)[Symbol.iterator]();
  return new ReadableStream<T>({
    async pull(controller) {
      const next = await iterator.next();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
    async cancel(reason) {
      onCancel?.(reason);
      await iterator.return?.(reason);
    },
  }, { highWaterMark: 0 });
}
