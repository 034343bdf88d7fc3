/**
 * The one shape of a tool hook, shared by the three places a tool call can be hooked — a `Tool`'s
 * processors, an `AgentSpec`'s hooks and a session's `tool.*` hooks: one context object in, one
 * decision out. A function written against these types can be registered in any of the three and
 * decides the same way in each.
 *
 * @module
 */

import type { ToolSource } from "./tool_source.ts";

/**
 * What every tool hook receives: the call, as one object. A `Tool` preprocessor, an `AgentSpec`
 * pre hook and a session `tool.pre` handler all get (at least) these fields. (A type, not an
 * interface, so the session's payload types built on it stay assignable to
 * `Record<string, unknown>`.)
 *
 * @example One guard, three places
 * ```ts
 * import { HookBus, type ToolCallContext, type ToolPreDecision } from "@hookscope/core";
 * import { AgentSpec, Tool } from "@hookscope/core/action";
 * import assert from "node:assert/strict";
 *
 * const noRm = ({ args }: ToolCallContext): ToolPreDecision =>
 *   String(args.command).includes("rm ") ? { decision: "deny", reason: "no rm" } : undefined;
 * new Tool({ name: "bash", execute: () => "ran", preprocessor: noRm });
 * new AgentSpec().pre("bash", noRm);
 * new HookBus().on("tool.pre", noRm);
 * assert.deepEqual(
 *   noRm({
 *     toolName: "bash", callId: "c1", args: { command: "rm -r x" },
 *     signal: new AbortController().signal, source: { kind: "local" },
 *   }),
 *   { decision: "deny", reason: "no rm" },
 * );
 * ```
 */
export type ToolCallContext = {
  /** The tool's name. */
  readonly toolName: string;
  /** The call id (the model's tool-call id on the act path). */
  readonly callId: string;
  /**
   * The arguments the call would run with now (rewritten by the hooks before this one). A hook
   * changes them by returning `updatedArgs`, never by writing to this object.
   */
  readonly args: Readonly<Record<string, unknown>>;
  /** Aborts when the call is cancelled or its deadline passes. */
  readonly signal: AbortSignal;
  /** Where the tool comes from (`{ kind: "local" }` unless an adapter says otherwise). */
  readonly source: ToolSource;
};

/**
 * What a post hook receives: {@linkcode ToolCallContext} with the result so far (a `Tool`
 * postprocessor, an `AgentSpec` post hook, a session `tool.post` handler).
 *
 * @example
 * ```ts
 * import type { ToolPostDecision, ToolResultContext } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const redact = ({ result }: ToolResultContext): ToolPostDecision =>
 *   typeof result === "string" ? { updatedResult: result.replaceAll("hunter2", "***") } : undefined;
 * assert.deepEqual(
 *   redact({
 *     toolName: "t", callId: "c", args: {}, signal: new AbortController().signal,
 *     source: { kind: "local" }, result: "pw hunter2",
 *   }),
 *   { updatedResult: "pw ***" },
 * );
 * ```
 */
export type ToolResultContext = ToolCallContext & {
  /** The result so far (the tool's, or the previous hook's `updatedResult`). */
  readonly result: unknown;
};

/**
 * What an error hook receives: {@linkcode ToolCallContext} with the failure (a `Tool` error
 * processor, an `AgentSpec` error hook, a session `tool.error` handler).
 *
 * @example
 * ```ts
 * import type { ToolErrorContext, ToolErrorDecision } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const offline = ({ error }: ToolErrorContext): ToolErrorDecision =>
 *   error instanceof TypeError ? { updatedResult: { offline: true } } : { context: "retry later" };
 * assert.deepEqual(
 *   offline({
 *     toolName: "fetch", callId: "c", args: {}, signal: new AbortController().signal,
 *     source: { kind: "local" }, error: new TypeError("fetch failed"),
 *   }),
 *   { updatedResult: { offline: true } },
 * );
 * ```
 */
export type ToolErrorContext = ToolCallContext & {
  /** What failed the call (the tool, a processor or a hook threw it). */
  readonly error: unknown;
};

/** A pre hook lets the call run, optionally with rewritten arguments. */
export interface ToolPreAllow {
  /** Allow. */
  readonly decision: "allow";
  /** Why (shown in signals). */
  readonly reason?: string;
  /** Arguments the next hooks and the tool receive instead. */
  readonly updatedArgs?: Record<string, unknown>;
  /** Appended to what the model sees for this call (the tool message). */
  readonly context?: string;
}

/**
 * A pre hook wants a person to approve the call first. It may bound the wait and name who may
 * answer; when several hooks ask, the approval waits until the **earliest** expiry and only names
 * **every** asking hook allows may answer (an empty intersection denies the call: nobody could
 * approve it).
 *
 * @example Ask the on-call engineer, for ten minutes at most
 * ```ts
 * import { HookBus, type ToolPreAsk } from "@hookscope/core/hooks";
 * import assert from "node:assert/strict";
 *
 * const bus = new HookBus();
 * bus.on("tool.pre", (): ToolPreAsk => ({
 *   decision: "ask",
 *   reason: "deploys need a person",
 *   expiresInMs: 10 * 60_000,
 *   answerableBy: ["ana", "bo"],
 * }), { name: "deploy-policy" });
 * const fold = await bus.decide("tool.pre", {
 *   toolName: "deploy", callId: "c1", args: {}, argsSummary: "",
 *   signal: new AbortController().signal, source: { kind: "local" },
 * });
 * assert.equal(fold.verdict, "ask");
 * assert.deepEqual(fold.answerableBy, ["ana", "bo"]);
 * assert.ok(fold.expiresAt !== undefined && fold.expiresAt > Date.now());
 * ```
 */
export interface ToolPreAsk {
  /** Ask. */
  readonly decision: "ask";
  /** Why (shown to the approver). */
  readonly reason?: string;
  /** Arguments the next hooks (and, once approved, the tool) receive instead. */
  readonly updatedArgs?: Record<string, unknown>;
  /**
   * How long a person has, in milliseconds from the ask (a positive number). Past it the
   * approval resolves as rejected with reason `"expired"` and the store refuses answers
   * (`ApprovalConflictError`, `why: "expired"`).
   */
  readonly expiresInMs?: number;
  /**
   * When the approval stops waiting, in milliseconds since the epoch (as `expiresInMs`, as an
   * absolute time). With both, the earlier one counts.
   */
  readonly expiresAt?: number;
  /**
   * Who may answer: the names an answer's `by` must be one of (the console's token names, the
   * CLI's `--by`). Anyone when absent. A non-empty array of non-empty strings.
   */
  readonly answerableBy?: readonly string[];
}

/** A pre hook refuses the call. */
export interface ToolPreDeny {
  /** Deny. */
  readonly decision: "deny";
  /** Why (reaches the model and the `ToolDenied` signal). */
  readonly reason: string;
  /** In the agent loop: end the run instead of answering the model and going on. */
  readonly interrupt?: boolean;
}

/**
 * What a pre hook may return (a `Tool` preprocessor, an `AgentSpec` pre or security pre hook, a
 * session `tool.pre` handler). `undefined` (or returning nothing) is no opinion. Folded over a
 * chain: deny > ask > allow > no opinion, whatever the order; each hook sees the arguments as
 * rewritten by the hooks before it. Several asks fold into one approval: the first asking hook's
 * reason, the earliest expiry, the answerers all of them allow. A deny rejects the call with `ToolDeniedError`; an ask goes
 * to the approval path (an inline `approve` handler, or a pending approval).
 *
 * @example A guard that denies on the real arguments
 * ```ts
 * import { HookBus, type ToolPreDecision } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const bus = new HookBus();
 * bus.on("tool.pre", ({ args }): ToolPreDecision =>
 *   JSON.stringify(args).includes("rm -rf")
 *     ? { decision: "deny", reason: "destructive command" }
 *     : undefined
 * );
 * assert.equal(bus.count("tool.pre"), 1);
 * ```
 */
export type ToolPreDecision = undefined | ToolPreAllow | ToolPreAsk | ToolPreDeny;

/**
 * What a post hook may return: a replacement result and/or context for the model. `undefined`
 * keeps the result.
 *
 * @example Redact a result
 * ```ts
 * import { HookBus, type ToolPostDecision } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const bus = new HookBus();
 * bus.on("tool.post", ({ result }): ToolPostDecision =>
 *   typeof result === "string" ? { updatedResult: result.replaceAll("secret", "***") } : undefined
 * );
 * assert.equal(bus.count("tool.post"), 1);
 * ```
 */
export type ToolPostDecision = undefined | {
  /** Replaces the result (the next hooks and the model see it). */
  readonly updatedResult?: unknown;
  /** Appended to what the model sees for this call. */
  readonly context?: string;
};

/**
 * What an error hook may return: `updatedResult` recovers (the call ends with that result
 * instead of the failure), `context` is appended to what the model sees for this call.
 * `undefined` lets the failure stand; a throw replaces it (in the Tool scope).
 *
 * @example Recover with a fallback
 * ```ts
 * import { AgentSpec } from "@hookscope/core/action";
 * import type { ToolErrorDecision } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const spec = new AgentSpec().onError("fetch", ({ error }): ToolErrorDecision => ({
 *   updatedResult: { offline: true, reason: String(error) },
 * }));
 * assert.equal(spec.registered("error").length, 1);
 * ```
 */
export type ToolErrorDecision = undefined | {
  /** Recovers: the call's result instead of the failure. */
  readonly updatedResult?: unknown;
  /** Appended to what the model sees for this call. */
  readonly context?: string;
};
