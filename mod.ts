/**
 * hookscope: the hook system LLM-agent frameworks need, in three scopes that each own their
 * control path:
 *
 * - **Session scope** (`./hooks`, `./session`): `HookBus` ordered, awaited dispatch with
 *   `StopHook` and a blocking `tool.pre`, recording `HookSignal`s into a `SessionObserver`.
 * - **Service scope** (`./service`): a per-model `HookRegistry` around each provider call, with
 *   deadlines, exit/cancel status and per-chunk stream handlers. Needs no Session.
 * - **Tool scope** (`./action`): per-Tool preprocessors/postprocessors, `AgentSpec` hook chains
 *   and security guards.
 *
 * A tool call is hooked in one shape wherever it is hooked: one context object
 * (`ToolCallContext`) in, one decision (`ToolPreDecision`, `ToolPostDecision`,
 * `ToolErrorDecision`) out — as a `Tool` processor, an `AgentSpec` hook or a session `tool.*`
 * handler.
 *
 * This entry exports what an application writes (79 names): the classes it constructs, the
 * handler and decision types it implements, the signals it observes and the errors it catches.
 * Everything else — host interfaces, fold internals, tuning constants, free-function twins of
 * methods, utilities — is in the entry of its scope (`./hooks`, `./session`, `./service`,
 * `./action`, `./store`). This entry uses only web-standard APIs; runtime-specific code lives
 * behind `./coding`, `./store/sqlite`, `./store/postgres` and `./cli`.
 *
 * @example Ordered Session hooks
 * ```ts
 * import { HookBus, StopHook } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const bus = new HookBus();
 * const seen: string[] = [];
 * bus.on("tool.pre", ({ toolName }) => { seen.push(`guard ${toolName}`); });
 * bus.on("tool.pre", () => { throw new StopHook(); });
 * bus.on("tool.pre", () => { seen.push("never"); });
 * await bus.emit("tool.pre", {
 *   toolName: "bash", callId: "c1", args: {}, argsSummary: "{}",
 *   signal: new AbortController().signal, source: { kind: "local" },
 * });
 * assert.deepEqual(seen, ["guard bash"]);
 * ```
 *
 * @module
 */

// Session scope: dispatch, hook points, decisions, signals' base class.
export {
  type AgentHooks,
  ApprovalRequiredError,
  HOOK_POINTS,
  HookBus,
  HookConfigError,
  type HookContext,
  type HookHandler,
  type HookOptions,
  type HookPayloads,
  HookPoint,
  HookSignal,
  HookTimeoutError,
  registerHandler,
  Signal,
  type SignalSink,
  StopHook,
  type ToolCallContext,
  ToolDeniedError,
  type ToolErrorContext,
  type ToolErrorDecision,
  type ToolPostDecision,
  type ToolPreDecision,
  type ToolResultContext,
  type ToolSource,
  UnknownHandlerError,
  UnknownHookPointError,
} from "./hooks/mod.ts";

// Composition: sessions, branches, the act path and the agent loop, approvals, replay.
export {
  type ActionResult,
  type ActOptions,
  type AgentRunOptions,
  type AgentStreamEvent,
  type ApprovalAnswer,
  ApprovalAnswered,
  type ApprovalHandler,
  ApprovalRequested,
  Branch,
  type BranchOptions,
  BranchOwnershipError,
  type DecisionChange,
  type Gate,
  GateDenied,
  HookBlocked,
  type Message,
  MessageAdded,
  type MessageInit,
  type MessageRole,
  type OperateResult,
  type PendingApproval,
  type Policy,
  replayDecisions,
  Session,
  SessionObserver,
  type SessionOptions,
  ToolDenied,
  type ToolInvocation,
  WouldAsk,
  WouldDeny,
} from "./session/mod.ts";

// Service scope: models, their hook registry and endpoints.
export {
  type Endpoint,
  EndpointError,
  FunctionEndpoint,
  HookRegistry,
  IModel,
  type IModelOptions,
  OpenAICompatibleEndpoint,
  type PhaseHandler,
  type StreamChunk,
  type StreamHandler,
} from "./service/mod.ts";

// Tool scope: tools, their manager, AgentSpec hook chains, the path guard.
export {
  ActionManager,
  type ActionRequestInit,
  AgentSpec,
  EventStatus,
  guardPaths,
  PermissionDeniedError,
  SecurityDeniedError,
  Tool,
  ToolArgumentsError,
  type ToolContext,
  ToolNotFoundError,
} from "./action/mod.ts";

// Stores: the interface and the in-memory one.
export { MemoryStore, type SessionStore } from "./store/mod.ts";
