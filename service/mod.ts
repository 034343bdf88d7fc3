/**
 * Service hooks: a per-model hook registry, hook events with deadlines, the pre/core/post
 * template around provider events, and models over an OpenAI-compatible endpoint with streaming.
 * Needs no Session.
 *
 * @example A hooked model call against an in-process endpoint
 * ```ts
 * import { FunctionEndpoint, IModel, type ModelAnswer } from "@hookscope/core/service";
 * import assert from "node:assert/strict";
 *
 * const model = new IModel({
 *   model: "echo",
 *   endpoint: new FunctionEndpoint({ call: (payload) => payload.messages }),
 *   hookRegistry: { hooks: { postInvoke: (event) => { event.metadata.checked = true; } } },
 * });
 * const event = await model.invoke({ messages: ["hi"] });
 * assert.equal(event.status, "completed");
 * assert.deepEqual((event.response as ModelAnswer).raw, ["hi"]);
 * assert.equal(event.metadata.checked, true);
 * ```
 *
 * @module
 */

// The redaction routine the endpoints use, for code that logs what a model call produced.
export { REDACTED, redactSecrets } from "../core/mod.ts";
export { HookPhaseError } from "../core/errors.ts";
export * from "./hook_event_type.ts";
export * from "./types.ts";
export * from "./hook_registry.ts";
export * from "./load_phase_handlers.ts";
export * from "./hook_event.ts";
export * from "./hook_logger.ts";
export * from "./hooked_event.ts";
export * from "./endpoint.ts";
export * from "./endpoint_error.ts";
export * from "./endpoints/mod.ts";
export * from "./api_calling.ts";
export * from "./model_options.ts";
export * from "./imodel.ts";
