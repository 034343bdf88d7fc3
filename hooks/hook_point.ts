/**
 * The closed vocabulary of Session hook points and their typed payloads.
 *
 * @module
 */

import { UnknownHookPointError } from "./errors.ts";
import type { ToolCallContext, ToolErrorContext, ToolResultContext } from "../core/tool_hook.ts";
import type { ToolSource } from "../core/tool_source.ts";

/**
 * The twelve Session hook points. Only some have production emit sites; see
 * {@linkcode HOOK_POINT_WIRING}.
 *
 * @example
 * ```ts
 * import { HookPoint } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * assert.equal(HookPoint.TOOL_PRE, "tool.pre");
 * ```
 */
export const HookPoint = {
  SESSION_START: "session.start",
  SESSION_END: "session.end",
  BRANCH_CREATE: "branch.create",
  API_PRE_CALL: "api.pre_call",
  API_POST_CALL: "api.post_call",
  API_STREAM_CHUNK: "api.stream_chunk",
  TOOL_PRE: "tool.pre",
  TOOL_POST: "tool.post",
  TOOL_ERROR: "tool.error",
  MESSAGE_ADD: "message.add",
  ARTIFACT_CREATED: "artifact.created",
  TOOL_EFFECTS: "tool.effects",
} as const;

/** One of the {@linkcode HookPoint} values. */
export type HookPoint = typeof HookPoint[keyof typeof HookPoint];

/**
 * The twelve point values, in declaration order.
 *
 * @example
 * ```ts
 * import { HOOK_POINTS } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * assert.equal(HOOK_POINTS.length, 12);
 * assert.equal(HOOK_POINTS[0], "session.start");
 * ```
 */
export const HOOK_POINTS: readonly HookPoint[] = Object.freeze(Object.values(HookPoint));

const IS_POINT: Readonly<Record<string, true>> = (() => {
  const table: Record<string, true> = Object.create(null);
  for (const point of HOOK_POINTS) table[point] = true;
  return table;
})();

/**
 * Whether a value is one of the hook point strings (exact value, case-sensitive).
 *
 * @example
 * ```ts
 * import { isHookPoint } from "@hookscope/core/hooks";
 * import assert from "node:assert/strict";
 *
 * assert.equal(isHookPoint("tool.post"), true);
 * assert.equal(isHookPoint("TOOL_POST"), false);
 * ```
 */
export function isHookPoint(value: unknown): value is HookPoint {
  return typeof value === "string" && IS_POINT[value] === true;
}

/**
 * Checks that a string is a hook point value and returns it typed. Names (`"SESSION_START"`),
 * padded strings and non-strings throw {@linkcode UnknownHookPointError}.
 *
 * @example
 * ```ts
 * import { UnknownHookPointError } from "@hookscope/core";
 * import { toHookPoint } from "@hookscope/core/hooks";
 * import assert from "node:assert/strict";
 *
 * assert.equal(toHookPoint("session.end"), "session.end");
 * assert.throws(() => toHookPoint("SESSION_END"), UnknownHookPointError);
 * ```
 */
export function toHookPoint(point: string, action?: string): HookPoint {
  if (typeof point === "string" && IS_POINT[point] === true) return point as HookPoint;
  throw new UnknownHookPointError(point, HOOK_POINTS, action);
}

/** A message as it travels in a `message.add` payload. */
export interface MessagePayload {
  /** The message id. */
  readonly id: string;
  /** Who wrote it. */
  readonly role: string;
  /** The content. */
  readonly content: unknown;
  /** The sender, if any. */
  readonly sender?: string | null;
  /** The recipient, if any. */
  readonly recipient?: string | null;
  /** The branch, if any. */
  readonly branchId?: string | null;
  /** Milliseconds since the epoch. */
  readonly createdAt?: number;
}

/**
 * The payload each hook point carries. Keys are camelCase. The types are closed (no index
 * signature), so a misspelt field fails to compile; emitters may still add fields at run time.
 *
 * @example A typed handler
 * ```ts
 * import type { HookPayloads } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const payload: HookPayloads["tool.pre"] = {
 *   toolName: "reader", callId: "c1", args: { path: "a.md" }, argsSummary: '{"path":"a.md"}',
 *   signal: new AbortController().signal, source: { kind: "local" },
 * };
 * assert.equal(payload.toolName, "reader");
 * ```
 */
export interface HookPayloads {
  /** A session started (Session.start). */
  "session.start": {
    sessionId: string;
    model?: string | null;
    provider?: string | null;
    effort?: string | null;
    agentName?: string | null;
    agentHash?: string | null;
    invocationId?: string | null;
    /** Why a Claude Code session started (its `SessionStart` `source`: `startup`, `resume`, …). */
    source?: string | null;
  };
  /** A session ended (Session.end). */
  "session.end": {
    sessionId: string;
    status?: string;
    error?: string | null;
    inputTokens?: number | null;
    outputTokens?: number | null;
    totalCostUsd?: number | null;
    numTurns?: number | null;
    durationMs?: number | null;
  };
  /** A branch was created in a session. */
  "branch.create": {
    branchId: string;
    model?: string | null;
    provider?: string | null;
    agentName?: string | null;
  };
  /** A model call is about to start (only through the optional model bridge). */
  "api.pre_call": {
    model: string;
    provider: string;
    eventId?: string;
    requestSummary: string;
  };
  /** A model call finished (only through the optional model bridge). */
  "api.post_call": {
    model: string;
    provider: string;
    eventId?: string;
    status: string;
    latencyMs: number;
    tokens?: { prompt?: number; completion?: number; total?: number } | null;
  };
  /** A stream chunk was handled (only through the optional model bridge). */
  "api.stream_chunk": {
    model: string;
    provider: string;
    eventId?: string;
    chunkType: string;
    chunkSummary: string;
  };
  /**
   * A tool call is about to run ({@linkcode ToolCallContext}: `toolName`, `callId`, `args`,
   * `signal`, `source`): handlers return a `ToolPreDecision`; a throwing handler blocks it.
   */
  "tool.pre": ToolCallContext & {
    /** The arguments the tool will receive (a deep-frozen copy; rewritten by earlier handlers). */
    args: Readonly<Record<string, unknown>>;
    /** A cut rendering of the arguments, for logs only: never decide on it. */
    argsSummary: string;
    branchId?: string;
  };
  /**
   * A tool call succeeded ({@linkcode ToolResultContext}: the call and its `result`): handlers
   * return a `ToolPostDecision`.
   */
  "tool.post": ToolResultContext & {
    /** The arguments the tool received (a deep-frozen copy). */
    args: Readonly<Record<string, unknown>>;
    /** The tool's result (a deep-frozen copy; replaced by earlier handlers' `updatedResult`). */
    result: unknown;
    /** A cut rendering of the result, for logs only. */
    resultSummary: string;
    durationMs: number | null;
    branchId?: string;
  };
  /**
   * A tool call failed ({@linkcode ToolErrorContext}: the call and its `error`): handlers return
   * a `ToolErrorDecision` (`updatedResult` recovers, `context` reaches the model).
   */
  "tool.error": ToolErrorContext & {
    /** The arguments the call was to run with (a deep-frozen copy). */
    args: Readonly<Record<string, unknown>>;
    durationMs: number | null;
    branchId?: string;
  };
  /** A message was added to a branch. */
  "message.add": {
    branchId: string;
    message: MessagePayload;
    sessionId?: string;
  };
  /** Reserved: no emit site exists; any fields. */
  "artifact.created": { readonly [key: string]: unknown };
  /**
   * A staged tool run (coding toolkit, `effects: "overlay"`) ended; its change set is decided
   * before it reaches the workspace (the fold of `tool.pre`: deny > ask > allow).
   */
  "tool.effects": {
    toolName: string;
    callId: string;
    /** The arguments the tool ran with. */
    args: Readonly<Record<string, unknown>>;
    /** The change set: workspace-relative paths and what happened to them. */
    changes: readonly {
      readonly path: string;
      readonly kind: "created" | "modified" | "deleted" | "mode" | "symlink";
      readonly bytesBefore?: number;
      readonly bytesAfter?: number;
      readonly type?: "file" | "directory" | "symlink";
      readonly target?: string;
    }[];
    branchId?: string;
    /** Where the tool came from. */
    source?: ToolSource;
    /** The command judge's reading of the command (advice only when effects are on). */
    advice?: string;
  };
}
