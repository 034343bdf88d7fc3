/**
 * The options of `IModel` and of its calls, and the default hook deadlines.
 *
 * @module
 */

import type { StreamChunk } from "./endpoint.ts";
import type { Endpoint } from "./endpoint.ts";
import type { HookedEvent } from "./hooked_event.ts";
import type { HookedEventClass, HookRegistry, HookRegistryInit } from "./hook_registry.ts";

/**
 * The default pre-event-create hook deadline, in milliseconds.
 *
 * @example
 * ```ts
 * import { DEFAULT_CREATE_EVENT_HOOK_TIMEOUT_MS } from "@hookscope/core/service";
 * import assert from "node:assert/strict";
 *
 * assert.equal(DEFAULT_CREATE_EVENT_HOOK_TIMEOUT_MS, 10_000);
 * ```
 */
export const DEFAULT_CREATE_EVENT_HOOK_TIMEOUT_MS = 10_000;

/**
 * The default pre/post-invocation hook deadline, in milliseconds.
 *
 * @example
 * ```ts
 * import { DEFAULT_INVOKE_HOOK_TIMEOUT_MS } from "@hookscope/core/service";
 * import assert from "node:assert/strict";
 *
 * assert.equal(DEFAULT_INVOKE_HOOK_TIMEOUT_MS, 30_000);
 * ```
 */
export const DEFAULT_INVOKE_HOOK_TIMEOUT_MS = 30_000;

/** Options of `IModel.createEvent`. */
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

/** Options of `IModel`. */
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
  transformChunk?: ((chunk: StreamChunk) => unknown) | null;
  /** @deprecated Use `transformChunk` (same meaning; give one of the two). */
  streamingProcessFunc?: ((chunk: StreamChunk) => unknown) | null;
}

/** Options of `IModel.invoke` and `IModel.stream`. */
export interface ModelCallOptions extends CreateEventOptions {
  /** Called with the created event before it runs (to watch its status). */
  onEvent?: (event: HookedEvent) => void;
}
