/**
 * The Tool scope: per-Tool mutable interception. A {@linkcode Tool} owns its
 * preprocessor, postprocessor and error processor; a {@linkcode FunctionCalling} runs them in
 * order; an {@linkcode ActionManager} registers tools and, when it carries an
 * {@linkcode AgentSpec}, attaches the spec's hook chains to every tool. Every hook takes one
 * context object and returns a decision — the vocabulary of the session's `tool.*` hooks
 * (`ToolPreDecision`, `ToolPostDecision`, `ToolErrorDecision`). Web-standard only.
 *
 * @example A tool with hook chains, without a Session
 * ```ts
 * import { ActionManager, AgentSpec, Tool } from "@hookscope/core/action";
 * import { z } from "zod";
 * import assert from "node:assert/strict";
 *
 * const spec = new AgentSpec()
 *   .securityPre("run", ({ args }) =>
 *     /\brm\b/.test(String(args.command))
 *       ? { decision: "deny", reason: "Blocked destructive command" }
 *       : undefined
 *   )
 *   .pre("run", ({ args }) => ({
 *     decision: "allow",
 *     updatedArgs: { ...args, command: String(args.command).trim() },
 *   }));
 * const manager = new ActionManager({ spec });
 * manager.register(new Tool({
 *   name: "run",
 *   execute: ({ command }) => `ran ${command}`,
 *   inputSchema: z.object({ command: z.string() }),
 * }));
 * const ok = await manager.invoke({ function: "run", arguments: { command: " ls " } });
 * assert.equal(ok.response, "ran ls");
 * await assert.rejects(
 *   manager.invoke({ function: "run", arguments: { command: "rm -rf /" } }),
 *   { name: "SecurityDeniedError" },
 * );
 * ```
 *
 * @module
 */

export {
  ApprovalRequiredError,
  Entity,
  EventStatus,
  GateDeniedError,
  Operation,
  PermissionDeniedError,
  SecurityDeniedError,
  ToolArgumentsError,
  ToolDeniedError,
  ToolHookReturnError,
  ToolNotFoundError,
} from "../core/mod.ts";
export { isAbortError, isEventStatus } from "../core/operation.ts";
export type { ArgumentIssue, ToolHookReturnInit } from "../core/errors.ts";
export type {
  ApprovalAnswer,
  ApprovalHandler,
  PendingApproval,
  ToolCallContext,
  ToolErrorContext,
  ToolErrorDecision,
  ToolPostDecision,
  ToolPreAllow,
  ToolPreAsk,
  ToolPreDecision,
  ToolPreDeny,
  ToolResultContext,
} from "../core/mod.ts";
export type { EntityInit, EventRunOptions, Execution } from "../core/mod.ts";
export * from "./tool.ts";
export * from "./function_calling.ts";
export * from "./manager.ts";
export * from "./spec.ts";

export * from "./guards.ts";
