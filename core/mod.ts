/**
 * Core types shared by every hook scope: elements, events, signals, errors, JSON-safe rendering
 * and the library logger.
 *
 * @example
 * ```ts
 * import { Signal } from "@hookscope/core";
 * import { summarize } from "@hookscope/core/hooks";
 * import assert from "node:assert/strict";
 *
 * assert.equal(summarize(new Signal({ data: 1 }).data), "1");
 * ```
 *
 * @module
 */

export * from "./approval.ts";
export * from "./entity.ts";
export * from "./errors.ts";
export { MAX_PAYLOAD_DEPTH, PayloadTooDeepError } from "./_depth.ts";
export * from "./operation.ts";
export * from "./plain_data.ts";
export * from "./json_safe.ts";
export * from "./logger.ts";
export * from "./redact.ts";
export * from "./signal.ts";
export * from "./tool_source.ts";
export * from "./tool_hook.ts";
