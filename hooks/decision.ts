/**
 * What `tool.pre` and `tool.post` handlers may return: typed decisions that allow, ask, deny or
 * rewrite a tool call, and where the tool came from.
 *
 * @module
 */

export type { ToolSource } from "../core/tool_source.ts";

/** A `tool.pre` handler lets the call run, optionally with rewritten arguments. */
export interface ToolPreAllow {
  /** Allow. */
  readonly decision: "allow";
  /** Why (shown in signals). */
  readonly reason?: string;
  /** Arguments the next handlers and the tool receive instead. */
  readonly updatedArgs?: Record<string, unknown>;
  /** Appended to what the model sees for this call (the tool message). */
  readonly context?: string;
}

/**
 * A `tool.pre` handler wants a person to approve the call first. It may bound the wait and name
 * who may answer; when several handlers ask, the approval waits until the **earliest** expiry and
 * only names **every** asking handler allows may answer (an empty intersection denies the call:
 * nobody could approve it).
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
 * const fold = await bus.decide("tool.pre", { toolName: "deploy", callId: "c1", args: {}, argsSummary: "" });
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
  /** Arguments the next handlers (and, once approved, the tool) receive instead. */
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

/** A `tool.pre` handler refuses the call. */
export interface ToolPreDeny {
  /** Deny. */
  readonly decision: "deny";
  /** Why (reaches the model and the `ToolDenied` signal). */
  readonly reason: string;
  /** In the agent loop: end the run instead of answering the model and going on. */
  readonly interrupt?: boolean;
}

/**
 * What a `tool.pre` handler may return. `undefined` (or returning nothing) is no opinion.
 * Folded over a chain: deny > ask > allow > no opinion, whatever the order; each handler sees the
 * arguments as rewritten by the handlers before it. Several asks fold into one approval: the
 * first asking handler's reason, the earliest expiry, the answerers all of them allow.
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
 * What a `tool.post` handler may return: a replacement result and/or context for the model.
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
  /** Replaces the result (the next handlers and the model see it). */
  readonly updatedResult?: unknown;
  /** Appended to what the model sees for this call. */
  readonly context?: string;
};

/**
 * What a `tool.error` handler may return: context for the model about the failure (in the
 * agent loop it is appended to the error the model sees for the call; through the Claude Code
 * protocol it is `PostToolUseFailure`'s `additionalContext`).
 *
 * @example Explain a failure
 * ```ts
 * import { HookBus, type ToolErrorDecision } from "@hookscope/core/hooks";
 * import assert from "node:assert/strict";
 *
 * const bus = new HookBus();
 * bus.on("tool.error", ({ toolName }): ToolErrorDecision =>
 *   toolName === "bash" ? { context: "the sandbox has no network" } : undefined
 * );
 * assert.equal(bus.count("tool.error"), 1);
 * ```
 */
export type ToolErrorDecision = undefined | {
  /** Appended to what the model sees for this failed call. */
  readonly context?: string;
};

/**
 * How many times at most one `tool.pre` fold runs the chain: the first pass, and up to two more
 * on the rewritten arguments (the last pass must rewrite nothing). See
 * {@linkcode UnsettledArgumentsError}.
 */
export const TOOL_PRE_PASSES = 3;

/**
 * The `tool.pre` hooks did not settle on the arguments: every hook judges the arguments that will
 * run, so after a pass that rewrote them the whole chain runs again on the result, until a pass
 * rewrites nothing; when the {@linkcode TOOL_PRE_PASSES}th pass still rewrites (a hook that
 * appends on every call, two hooks undoing each other), the call fails closed with this error
 * (the act path records `HookBlocked` and nothing runs). A rewrite must be idempotent: given
 * its own output, a hook returns no `updatedArgs` or equal ones.
 *
 * @example
 * ```ts
 * import { HookBus } from "@hookscope/core";
 * import { UnsettledArgumentsError } from "@hookscope/core/hooks";
 * import assert from "node:assert/strict";
 *
 * const bus = new HookBus();
 * bus.on("tool.pre", ({ args }) => ({ decision: "allow", updatedArgs: { n: Number(args.n) + 1 } }));
 * const fold = await bus.decide("tool.pre", { toolName: "t", callId: "c", args: { n: 0 }, argsSummary: "" });
 * assert.ok(fold.error instanceof UnsettledArgumentsError);
 * assert.equal(fold.error.passes, 3);
 * ```
 */
export class UnsettledArgumentsError extends Error {
  /** The tool. */
  readonly toolName: string;
  /** How many passes ran. */
  readonly passes: number;
  /** The last hook that rewrote the arguments, when named. */
  readonly hook?: string;
  /** Makes the error. */
  constructor(toolName: string, passes: number, hook?: string) {
    super(
      `Cannot settle the arguments of tool ${JSON.stringify(toolName)}: the tool.pre hooks ${
        hook === undefined ? "" : `(last "${hook}") `
      }still rewrote them after ${passes} passes; a rewrite must be idempotent`,
    );
    this.name = "UnsettledArgumentsError";
    this.toolName = toolName;
    this.passes = passes;
    if (hook !== undefined) this.hook = hook;
  }
}
