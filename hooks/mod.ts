/**
 * Session scope: ordered hook dispatch (`HookBus`), the hook point vocabulary, the declarative
 * loader and the built-in logging handlers, with what they are built on: the `Signal` base class
 * and its sink, the library's `logger`, and the JSON-safe rendering behind payload summaries.
 *
 * @example
 * ```ts
 * import { HookBus } from "@hookscope/core/hooks";
 * import assert from "node:assert/strict";
 *
 * const bus = new HookBus();
 * const calls: string[] = [];
 * bus.on("session.start", (payload) => { calls.push(payload.sessionId); });
 * await bus.emit("session.start", { sessionId: "s1" });
 * assert.deepEqual(calls, ["s1"]);
 * ```
 *
 * @module
 */

export { ApprovalRequiredError, ToolDeniedError } from "../core/errors.ts";
export {
  HookConfigError,
  HookTimeoutError,
  StopHook,
  UnknownHandlerError,
  UnknownHookPointError,
} from "./errors.ts";
export type { DeniedBy, ToolDeniedInit } from "../core/errors.ts";
export * from "../core/signal.ts";
export * from "../core/tool_source.ts";
export * from "../core/logger.ts";
export * from "../core/json_safe.ts";
export * from "./hook_point.ts";
export * from "./hook_signal.ts";
export * from "./decision.ts";
export * from "./hook_options.ts";
export * from "./bus.ts";
export * from "./wiring.ts";
export * from "./builtins.ts";
export * from "./loader.ts";
