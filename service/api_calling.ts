/**
 * `APICalling`: the provider event a model creates, a {@linkcode HookedEvent} over an endpoint.
 *
 * @module
 */

import { toModelAnswer } from "./endpoints/_answer.ts";
import type { EntityInit } from "../core/mod.ts";
import { type Endpoint, FunctionEndpoint, type StreamChunk } from "./endpoint.ts";
import { HookedEvent } from "./hooked_event.ts";
import { internals } from "./_stream_run.ts";

/** What an {@linkcode APICalling} is made from. */
export interface APICallingInit extends EntityInit {
  /** The endpoint to call. */
  endpoint: Endpoint;
  /** The request body (model, messages, …). */
  payload: Record<string, unknown>;
}

/**
 * One call of an endpoint, surrounded by the model's pre/post-invocation hooks.
 *
 * @example One call; the response is the typed answer, the body kept as `raw`
 * ```ts
 * import { APICalling, FunctionEndpoint } from "@hookscope/core/service";
 * import assert from "node:assert/strict";
 *
 * const endpoint = new FunctionEndpoint({ call: (payload) => ({ model: payload.model }) });
 * const call = new APICalling({ endpoint, payload: { model: "m" } });
 * await call.invoke();
 * assert.equal(call.status, "completed");
 * assert.deepEqual((call.response as { raw: unknown }).raw, { model: "m" });
 * ```
 */
export class APICalling extends HookedEvent {
  /** The endpoint to call. */
  readonly endpoint: Endpoint;
  /** The request body. */
  readonly payload: Record<string, unknown>;

  /** Makes a PENDING call; a missing endpoint or payload throws a `TypeError`. */
  constructor(init: APICallingInit) {
    if (init === null || typeof init !== "object") {
      throw new TypeError(`Cannot create API call: init must be an object`);
    }
    const { endpoint, payload } = init;
    if (
      endpoint === null || typeof endpoint !== "object" || typeof endpoint.call !== "function" ||
      typeof endpoint.stream !== "function"
    ) {
      throw new TypeError(`Cannot create API call: endpoint must implement call() and stream()`);
    }
    if (payload === null || typeof payload !== "object" || Array.isArray(payload)) {
      throw new TypeError(`Cannot create API call: payload must be an object`);
    }
    // The element reads only its own keys (id, createdAt, metadata): no copy without the others.
    super(init);
    this.endpoint = endpoint;
    this.payload = payload;
  }

  /** Whether the payload asks for a stream (`stream: true`). */
  get streaming(): boolean {
    return this.payload.stream === true;
  }

  /**
   * Calls the endpoint; the response is its typed answer (`ModelAnswer`; a value of an endpoint
   * written before typed answers is read as one, its value kept as `raw`).
   */
  protected _coreInvoke(signal: AbortSignal): Promise<unknown> {
    const endpoint = this.endpoint;
    const answer = endpoint.call(this.payload, { signal });
    // FunctionEndpoint's own `call` answers with typed answers already: nothing to read again.
    return endpoint.call === FunctionEndpoint.prototype.call
      ? answer
      : Promise.resolve(answer).then(toModelAnswer);
  }

  /** Streams from the endpoint. */
  protected _coreStream(signal: AbortSignal): ReadableStream<StreamChunk> {
    return this.endpoint.stream(this.payload, { signal });
  }

  static {
    // The core source of a streamed run: what the endpoint's stream would wrap, when the
    // endpoint can open it (then no stream sits between the endpoint and `IModel.stream`).
    internals.coreSource = (event, signal) =>
      event instanceof APICalling
        ? internals.endpointSource?.(event.endpoint, event.payload, { signal }) ?? null
        : null;
  }

  /** A JSON-safe record; the endpoint appears by name only. */
  override toJSON(): Record<string, unknown> {
    const out = super.toJSON();
    out.endpoint = this.endpoint.name;
    return out;
  }
}
