/**
 * `wrapTools`: AI SDK tools under hookscope's Tool-scope chains and session decisions.
 *
 * @module
 */

import { z } from "zod";
import { ToolDeniedError } from "../core/errors.ts";
import type { ToolSource } from "../core/tool_source.ts";
import { findSchemaProblem, jsonSchemaValidator } from "../action/_json_schema.ts";
import type { AgentSpec } from "../action/spec.ts";
import { Tool, type ToolContext } from "../action/tool.ts";
import { summarize } from "../core/json_safe.ts";
import { Branch } from "../session/branch.ts";
import type { Session } from "../session/session.ts";

/** The options the AI SDK passes to a tool's `execute` and `needsApproval`. */
export interface ToolCallOptionsLike {
  /** The model's tool-call id. */
  toolCallId: string;
  /** The conversation so far. */
  messages?: unknown[];
  /** Cancels the call. */
  abortSignal?: AbortSignal;
  /** Context the caller passed to `generateText`/`streamText`. */
  experimental_context?: unknown;
}

/** The AI SDK's `needsApproval` function. */
export type ApprovalCheck = {
  // deno-lint-ignore no-explicit-any
  check(input: any, options: ToolCallOptionsLike): unknown;
}["check"];

/** What {@linkcode wrapTools} needs of an AI SDK tool (`tool({ … })` from `ai`). */
export interface AiSdkToolLike {
  /** What the tool does. */
  description?: string;
  /** A zod schema, or the AI SDK's `jsonSchema(…)` (an object with `jsonSchema`). */
  inputSchema?: unknown;
  /** Runs the tool. */
  // deno-lint-ignore no-explicit-any
  execute?(input: any, options: ToolCallOptionsLike): unknown;
  /** The AI SDK's approval flag or function. */
  needsApproval?: boolean | ApprovalCheck;
}

/** Options for {@linkcode wrapTools}. */
export interface WrapToolsOptions {
  /** The session whose `tool.pre`/`tool.post` decisions govern the calls. */
  session?: Session;
  /** The branch the calls run on (default: a new branch of `session`, or a standalone one). */
  branch?: Branch;
  /** Tool-scope chains (security pre, pre, post, error hooks) for every wrapped tool. */
  spec?: AgentSpec;
  /** Who approved, in `ApprovalAnswered` signals, for calls the AI SDK approval flow let through. */
  approvedBy?: string;
}

const SOURCE: ToolSource = Object.freeze({ kind: "ai-sdk" });

function requestOptionsOf(name: string, schema: unknown) {
  if (schema instanceof z.ZodType) {
    return { requestOptions: schema as z.ZodType<Record<string, unknown>> };
  }
  const json = (schema as { jsonSchema?: unknown } | null)?.jsonSchema;
  if (json && typeof json === "object" && !Array.isArray(json)) {
    const problem = findSchemaProblem(json);
    if (problem !== null) {
      throw new TypeError(`Cannot wrap AI SDK tool ${JSON.stringify(name)}: ${problem}`);
    }
    const parameters = json as Record<string, unknown>;
    if (parameters.type === "object") {
      return { parameters, requestOptions: jsonSchemaValidator(parameters) };
    }
  }
  return {};
}

/**
 * Puts AI SDK tools under hookscope: every call of a wrapped tool runs through `Branch.act`, so
 * the `AgentSpec` chains and the session's `tool.pre`/`tool.post` hooks and typed decisions apply,
 * and the call is recorded (messages, signals, persistence) like any other tool call.
 *
 * - **deny**: the tool does not run; the model receives `Tool call denied: <reason>` as the
 *   tool's output and can go on.
 * - **ask**: with a session, the wrapped tool's `needsApproval` asks the session's `tool.pre`
 *   chain, so the AI SDK's own tool-approval flow pauses the run (`tool-approval-request`); once
 *   the caller approves, the call runs with the approval recorded. Without the approval flow (an
 *   `ask` that appears only when the call runs) the call rejects with `ApprovalRequiredError`.
 * - Tool failures reject, as the AI SDK expects (a `tool-error` the model sees).
 *
 * The session's `tool.pre` handlers run twice for a call whose approval is asked (once to decide
 * on the approval request, once when the approved call runs); keep them free of side effects.
 *
 * @param tools The AI SDK tools, by name.
 * @param options The session, branch and spec.
 * @returns The same names with wrapped tools (the original objects are not changed).
 * @throws {TypeError} When a tool's JSON Schema is malformed.
 *
 * @example A guard that denies a call, seen by the model as the tool's output
 * ```ts
 * import { wrapTools } from "@hookscope/core/ai-sdk";
 * import { Session } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const session = new Session();
 * session.hooks.on("tool.pre", ({ args }) =>
 *   String(args.path).includes(".env") ? { decision: "deny", reason: "secrets" } : undefined);
 * const tools = wrapTools({
 *   read: { description: "read a file", execute: (input: { path: string }, _options: unknown) => `body of ${input.path}` },
 * }, { session });
 * const out = await tools.read.execute!({ path: ".env" }, { toolCallId: "c1", messages: [] });
 * assert.equal(out, "Tool call denied: secrets");
 * ```
 */
export function wrapTools<T extends Record<string, AiSdkToolLike>>(
  tools: T,
  options: WrapToolsOptions = {},
): T {
  if (tools === null || typeof tools !== "object") {
    throw new TypeError("Cannot wrap tools: expected an object of AI SDK tools");
  }
  const session = options.session;
  const branch = options.branch ??
    (session
      ? session.newBranch({ name: "ai-sdk", spec: options.spec })
      : new Branch({ spec: options.spec }));
  const bus = session?.hooks ?? branch.hooks;
  const pending = new Map<string, ToolCallOptionsLike>();
  const approved = new Set<string>();
  const by = options.approvedBy ?? "ai-sdk";
  const out: Record<string, AiSdkToolLike> = {};

  for (const [name, original] of Object.entries(tools)) {
    if (original === null || typeof original !== "object") {
      throw new TypeError(`Cannot wrap AI SDK tool ${JSON.stringify(name)}: not a tool object`);
    }
    const execute = original.execute;
    if (typeof execute !== "function") {
      out[name] = original; // a client-side tool: nothing runs here
      continue;
    }
    branch.actions.register(
      new Tool({
        name,
        description: original.description ?? "",
        source: SOURCE,
        ...requestOptionsOf(name, original.inputSchema),
        func: (args: Record<string, unknown>, context: ToolContext) => {
          const sdk = (context.callId && pending.get(context.callId)) || { toolCallId: "" };
          return execute(args, { ...sdk, abortSignal: context.signal });
        },
      }),
      { update: true },
    );

    const ownApproval = original.needsApproval;
    const needsApproval = bus
      ? async (input: unknown, sdk: ToolCallOptionsLike): Promise<boolean> => {
        if (ownApproval === true) return true;
        if (typeof ownApproval === "function" && await ownApproval(input, sdk)) return true;
        const args = (input ?? {}) as Record<string, unknown>;
        const fold = await bus.decide("tool.pre", {
          toolName: name,
          callId: sdk.toolCallId,
          args,
          argsSummary: summarize(args),
          branchId: branch.id,
          source: SOURCE,
        });
        if (fold.verdict !== "ask") return false;
        approved.add(sdk.toolCallId);
        return true;
      }
      : ownApproval;

    out[name] = {
      ...original,
      ...(needsApproval === undefined ? {} : { needsApproval }),
      execute: async (input: unknown, sdk: ToolCallOptionsLike) => {
        const callId = sdk?.toolCallId || crypto.randomUUID();
        pending.set(callId, sdk);
        const wasAsked = approved.delete(callId);
        try {
          const result = await branch.act(
            { function: name, arguments: (input ?? {}) as Record<string, unknown> },
            {
              callId,
              ...(sdk?.abortSignal ? { signal: sdk.abortSignal } : {}),
              ...(wasAsked ? { approve: () => ({ approve: true as const, by }) } : {}),
            },
          );
          return result.output;
        } catch (error) {
          if (error instanceof ToolDeniedError) return `Tool call denied: ${error.reason}`;
          throw error; // failures, and an ApprovalRequiredError the approval flow did not catch
        } finally {
          pending.delete(callId);
        }
      },
    };
  }
  return out as T;
}
