/**
 * What `tool.pre`, `tool.post` and `tool.error` handlers receive and return: the one tool hook
 * shape (`core/tool_hook.ts`, shared with the Tool scope), where the tool came from, and the
 * bound on `tool.pre` rewrites.
 *
 * @module
 */

export type { ToolSource } from "../core/tool_source.ts";
export type {
  ToolCallContext,
  ToolErrorContext,
  ToolErrorDecision,
  ToolPostDecision,
  ToolPreAllow,
  ToolPreAsk,
  ToolPreDecision,
  ToolPreDeny,
  ToolResultContext,
} from "../core/tool_hook.ts";

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
 * const fold = await bus.decide("tool.pre", {
 *   toolName: "t", callId: "c", args: { n: 0 }, argsSummary: "",
 *   signal: new AbortController().signal, source: { kind: "local" },
 * });
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
