/**
 * The signals a session records besides `HookSignal`: `MessageAdded`, `GateDenied`, `HookBlocked`,
 * and the `ToolInvocation` a governance gate is asked about.
 *
 * @module
 */

import { Signal, type SignalInit } from "../core/signal.ts";
import type { HookPoint } from "../hooks/mod.ts";

/**
 * A message was added to a branch; `data` is the message. A branch emits it to its session's
 * observer after the message is stored.
 *
 * @example Observe messages
 * ```ts
 * import { MessageAdded, Session } from "@hookscope/core/session";
 * import assert from "node:assert/strict";
 *
 * const session = new Session();
 * const seen: MessageAdded[] = [];
 * session.observe({ type: MessageAdded }, (signal) => { seen.push(signal); });
 * const message = await session.defaultBranch.addMessage({ role: "user", content: "hi" });
 * await session.defaultBranch.drainSignals();
 * assert.equal(seen[0].data, message);
 * ```
 */
export class MessageAdded extends Signal {
  /** Makes the signal; `init.data` is the message. */
  constructor(init?: SignalInit) {
    super(init);
  }
}

/**
 * A governance gate denied an action; `data` is the denied action (a {@linkcode ToolInvocation}
 * for tool calls). It is an audit signal: the gate never suppresses it.
 *
 * @example Denials are recorded and delivered
 * ```ts
 * import { GateDenied, Session } from "@hookscope/core/session";
 * import assert from "node:assert/strict";
 *
 * const session = new Session();
 * session.gate(() => false);
 * const denied: GateDenied[] = [];
 * session.observe({ type: GateDenied }, (signal) => { denied.push(signal); });
 * assert.equal(await session.authorize({ function: "rm" }), false);
 * assert.deepEqual(denied[0].data, { function: "rm" });
 * ```
 */
export class GateDenied extends Signal {
  /** Makes the signal; `init.data` is the denied action. */
  constructor(init?: SignalInit) {
    super(init);
  }
}

/** What a {@linkcode HookBlocked} is made from. */
export interface HookBlockedInit extends Omit<SignalInit, "data"> {
  /** The blocking point (`tool.pre`). */
  point: HookPoint;
  /** The call that was blocked. */
  callId: string;
  /** The tool that was blocked. */
  toolName: string;
  /** What the blocking handler threw (any value; only its name and message are kept). */
  error: unknown;
}

/**
 * A blocking hook (a `tool.pre` guard) threw and stopped a tool call. The bus records no
 * `HookSignal` for it; this audit signal says who was blocked and why, and bypasses the gate.
 * `opId` is the `callId`.
 *
 * @example
 * ```ts
 * import { HookBlocked } from "@hookscope/core/session";
 * import assert from "node:assert/strict";
 *
 * const signal = new HookBlocked({
 *   point: "tool.pre", callId: "c1", toolName: "bash", error: new RangeError("not allowed"),
 * });
 * assert.deepEqual(signal.error, { name: "RangeError", message: "not allowed" });
 * assert.equal(signal.opId, "c1");
 * ```
 */
export class HookBlocked extends Signal {
  /** The blocking point. */
  readonly point: HookPoint;
  /** The blocked call. */
  readonly callId: string;
  /** The blocked tool. */
  readonly toolName: string;
  /** The thrown error's name and message. */
  readonly error: { readonly name: string; readonly message: string };
  /** The operation id persisted with the signal: the `callId`. */
  readonly opId: string;

  /** Makes the signal. */
  constructor(init: HookBlockedInit) {
    if (init === null || typeof init !== "object") {
      throw new TypeError("Cannot create HookBlocked: init must be an object");
    }
    const { point, callId, toolName, error, ...rest } = init;
    for (const [key, value] of [["point", point], ["callId", callId], ["toolName", toolName]]) {
      if (typeof value !== "string") {
        throw new TypeError(`Cannot create HookBlocked: ${key} must be a string`);
      }
    }
    super(rest);
    this.point = point;
    this.callId = callId;
    this.toolName = toolName;
    this.opId = callId;
    this.error = Object.freeze(describeError(error));
  }
}

function describeError(error: unknown): { name: string; message: string } {
  if (error instanceof Error) return { name: error.name, message: error.message };
  if (error !== null && typeof error === "object") {
    const e = error as { name?: unknown; message?: unknown };
    return {
      name: typeof e.name === "string" ? e.name : "Error",
      message: typeof e.message === "string" ? e.message : String(error),
    };
  }
  return { name: "Error", message: String(error) };
}

/** A tool call a governance gate is asked to allow. */
export interface ToolInvocation {
  /** The tool's name. */
  readonly function: string;
  /** The call's arguments. */
  readonly arguments: Readonly<Record<string, unknown>>;
  /** The calling branch's id, or `null`. */
  readonly branchId: string | null;
}

/**
 * Makes a frozen {@linkcode ToolInvocation}; arguments that are not a plain object become `{}`
 * (as the reference does), and the arguments are copied shallowly.
 *
 * @example A gate that reads the invocation
 * ```ts
 * import { Session, toolInvocation, type ToolInvocation } from "@hookscope/core/session";
 * import assert from "node:assert/strict";
 *
 * const session = new Session();
 * session.gate((action) => (action as ToolInvocation).function !== "bash");
 * assert.equal(await session.authorize(toolInvocation("bash", { command: "ls" }, "b1")), false);
 * assert.equal(await session.authorize(toolInvocation("reader", {}, null)), true);
 * ```
 */
export function toolInvocation(
  name: string,
  args?: unknown,
  branchId: string | null = null,
): ToolInvocation {
  if (typeof name !== "string" || name.length === 0) {
    throw new TypeError("Cannot create tool invocation: function must be a non-empty string");
  }
  if (branchId !== null && typeof branchId !== "string") {
    throw new TypeError("Cannot create tool invocation: branchId must be a string or null");
  }
  const plain = args !== null && typeof args === "object" && !Array.isArray(args)
    ? Object.freeze({ ...(args as Record<string, unknown>) })
    : Object.freeze({});
  return Object.freeze({ function: name, arguments: plain, branchId });
}

/** What a decision signal ({@linkcode ToolDenied}, {@linkcode WouldDeny}, {@linkcode WouldAsk}) carries. */
export interface ToolVerdictData {
  /** The call. */
  readonly callId: string;
  /** The tool. */
  readonly toolName: string;
  /** Why (a deny always has one). */
  readonly reason?: string;
  /** The name of the hook that decided, when known. */
  readonly hook?: string;
  /** `true` for a shadow-mode verdict that was not applied. */
  readonly shadow: boolean;
  /**
   * The hook point whose handler gave the verdict: `"tool.pre"` (the call) or `"tool.effects"`
   * (its change set). Set on {@linkcode WouldDeny} and {@linkcode WouldAsk}.
   */
  readonly point?: "tool.pre" | "tool.effects";
}

function callOpId(data: unknown): string {
  const callId = (data as { callId?: unknown } | null)?.callId;
  return typeof callId === "string" ? callId : "";
}

/**
 * A `tool.pre` handler denied a tool call (the call did not run). An audit signal: persisted
 * and never suppressed by the gate. `data` is a {@linkcode ToolVerdictData} with `shadow: false`;
 * `opId` is the call id.
 *
 * @example
 * ```ts
 * import { ToolDenied } from "@hookscope/core/session";
 * import assert from "node:assert/strict";
 *
 * const signal = new ToolDenied({ data: { callId: "c1", toolName: "bash", reason: "no", shadow: false } });
 * assert.equal(signal.opId, "c1");
 * ```
 */
export class ToolDenied extends Signal {
  /** Makes the signal; `init.data` is a {@linkcode ToolVerdictData}. */
  constructor(init?: SignalInit) {
    super(init);
  }
  /** The call id (persisted as the signal's operation id). */
  get opId(): string {
    return callOpId(this.data);
  }
}

/**
 * A shadow-mode `tool.pre` handler would have denied a call (or a `tool.effects` handler its
 * change set); nothing was applied. `data` is a
 * {@linkcode ToolVerdictData} with `shadow: true` and the `point` of the handler.
 *
 * @example
 * ```ts
 * import { WouldDeny } from "@hookscope/core/session";
 * import assert from "node:assert/strict";
 *
 * const signal = new WouldDeny({
 *   data: { callId: "c1", toolName: "bash", reason: "no", shadow: true, point: "tool.pre" },
 * });
 * assert.equal(signal.opId, "c1");
 * ```
 */
export class WouldDeny extends Signal {
  /** Makes the signal; `init.data` is a {@linkcode ToolVerdictData}. */
  constructor(init?: SignalInit) {
    super(init);
  }
  /** The call id. */
  get opId(): string {
    return callOpId(this.data);
  }
}

/**
 * A shadow-mode `tool.pre` handler would have asked for approval (or a `tool.effects` handler
 * about its change set); nothing was applied. `data`
 * is a {@linkcode ToolVerdictData} with `shadow: true` and the `point` of the handler.
 *
 * @example
 * ```ts
 * import { WouldAsk } from "@hookscope/core/session";
 * import assert from "node:assert/strict";
 *
 * const signal = new WouldAsk({
 *   data: { callId: "c1", toolName: "bash", shadow: true, point: "tool.effects" },
 * });
 * assert.equal(signal.opId, "c1");
 * ```
 */
export class WouldAsk extends Signal {
  /** Makes the signal; `init.data` is a {@linkcode ToolVerdictData}. */
  constructor(init?: SignalInit) {
    super(init);
  }
  /** The call id. */
  get opId(): string {
    return callOpId(this.data);
  }
}

/**
 * A tool call waits for approval; `data` is the {@linkcode PendingApproval}. Persisted, never
 * gated away; `opId` is the call id.
 *
 * @example
 * ```ts
 * import { ApprovalRequested } from "@hookscope/core/session";
 * import assert from "node:assert/strict";
 *
 * const signal = new ApprovalRequested({
 *   data: { runId: "", callId: "c1", toolName: "bash", args: {}, requestedAt: 0 },
 * });
 * assert.equal(signal.opId, "c1");
 * ```
 */
export class ApprovalRequested extends Signal {
  /** Makes the signal; `init.data` is the {@linkcode PendingApproval}. */
  constructor(init?: SignalInit) {
    super(init);
  }
  /** The call id. */
  get opId(): string {
    return callOpId(this.data);
  }
}

/** What an {@linkcode ApprovalAnswered} carries. */
export interface ApprovalAnsweredData {
  /** The run, `""` for a direct `act`. */
  readonly runId: string;
  /** The call. */
  readonly callId: string;
  /** The tool. */
  readonly toolName: string;
  /** The answer. */
  readonly approve: boolean;
  /** Why (a rejection). */
  readonly reason?: string;
  /** Who answered, when known. */
  readonly by?: string;
  /** Replacement arguments the approver gave. */
  readonly updatedArgs?: Readonly<Record<string, unknown>>;
  /**
   * `true` when the answer was given while the run waited and is applied on resume (no new
   * `ApprovalRequested` precedes it: nobody was asked again).
   */
  readonly resumed?: boolean;
}

/**
 * An approval was answered (inline or on resume); `data` is an {@linkcode ApprovalAnsweredData}
 * with who answered. Persisted, never gated away; `opId` is the call id.
 *
 * @example
 * ```ts
 * import { ApprovalAnswered } from "@hookscope/core/session";
 * import assert from "node:assert/strict";
 *
 * const signal = new ApprovalAnswered({
 *   data: { runId: "", callId: "c1", toolName: "bash", approve: true, by: "ana" },
 * });
 * assert.equal(signal.opId, "c1");
 * ```
 */
export class ApprovalAnswered extends Signal {
  /** Makes the signal; `init.data` is an {@linkcode ApprovalAnsweredData}. */
  constructor(init?: SignalInit) {
    super(init);
  }
  /** The call id. */
  get opId(): string {
    return callOpId(this.data);
  }
}
