// Validation of IModel's options and of the per-call hook options (private).

import type { CreateEventOptions, IModelOptions } from "./model_options.ts";
import { HookRegistry } from "./hook_registry.ts";
import { isAbortSignal } from "../core/_abort.ts";

/** Checks the constructor options; returns the registry to use. Bad options throw a `TypeError`. */
export function validateModelOptions(options: IModelOptions): HookRegistry {
  if (options === null || typeof options !== "object") {
    throw new TypeError(`Cannot create model: options must be an object`);
  }
  const { model, endpoint, baseURL, apiKey, hookRegistry, exitHook } = options;
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
  if (options.transformChunk != null && options.streamingProcessFunc != null) {
    throw new TypeError(
      `Cannot create model: give transformChunk or its deprecated spelling streamingProcessFunc, not both`,
    );
  }
  for (const key of ["transformChunk", "streamingProcessFunc"] as const) {
    const fn = options[key];
    if (fn !== undefined && fn !== null && typeof fn !== "function") {
      throw new TypeError(`Cannot create model: ${key} must be a function`);
    }
  }
  if (hookRegistry instanceof HookRegistry) return hookRegistry;
  if (hookRegistry === undefined || hookRegistry === null) return new HookRegistry();
  if (typeof hookRegistry === "object" && !Array.isArray(hookRegistry)) {
    return new HookRegistry(hookRegistry);
  }
  throw new TypeError(
    `Cannot create model: hookRegistry must be a HookRegistry or { hooks, streamHandlers }`,
  );
}

/**
 * Rejects bad hook options before anything runs, so a pre-create hook never runs for a call
 * that a later option would fail anyway (the event class is checked after it).
 */
export function validateCreateEventOptions(opts: CreateEventOptions): void {
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
