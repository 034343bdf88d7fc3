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
 * const message = await session.defaultBranch!.addMessage({ role: "user", content: "hi" });
 * await session.defaultBranch!.drainSignals();
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
 * for tool calls). It is an audit signal: the gate never suppresses it (X4).
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
 * A blocking hook (a `tool.pre` guard) threw and stopped a tool call (X3). The bus records no
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
