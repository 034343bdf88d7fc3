/**
 * `wrapTools`: AI SDK tools under hookscope's Tool-scope chains and session decisions.
 *
 * @module
 */

import { z } from "zod";
import { ToolDeniedError } from "../core/errors.ts";
import { samePlainData } from "../core/_freeze.ts";
import type { ToolSource } from "../core/tool_source.ts";
import { findSchemaProblem, jsonSchemaValidator } from "../action/_json_schema.ts";
import type { AgentSpec } from "../action/spec.ts";
import { Tool, type ToolContext } from "../action/tool.ts";
import { neverAborted } from "../core/_abort.ts";
import { summarize } from "../core/json_safe.ts";
import { Branch } from "../session/branch.ts";
import type { ActOptions } from "../session/act.ts";
import { checkOptions, checkRequest, runOutcome, settleOutcome } from "../session/_act_path.ts";
import { messageOf } from "../core/_util.ts";
import type { Session } from "../session/session.ts";
import { type FlowAnswer, flowAnswers, listenForAnswers, reportAnswers } from "./_approvals.ts";

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

/**
 * Two {@linkcode wrapTools} calls put a tool of the same name on one branch: the second is
 * refused (the first set's calls would otherwise run the second set's tool).
 *
 * @example
 * ```ts
 * import { ToolNameCollisionError, wrapTools } from "@hookscope/core/ai-sdk";
 * import { Branch } from "@hookscope/core/session";
 * import assert from "node:assert/strict";
 *
 * const branch = new Branch();
 * wrapTools({ read: { execute: () => "a" } }, { branch });
 * assert.throws(() => wrapTools({ read: { execute: () => "b" } }, { branch }), ToolNameCollisionError);
 * ```
 */
export class ToolNameCollisionError extends TypeError {
  /** The tool name both sets use. */
  readonly toolName: string;
  /** The branch they were wrapped onto. */
  readonly branchId: string;
  /** Makes the error. */
  constructor(toolName: string, branchId: string) {
    super(
      `Cannot wrap AI SDK tool ${
        JSON.stringify(toolName)
      }: another wrapTools set on branch ${branchId} has a tool of that name (wrap them in one call, or use another branch)`,
    );
    this.name = "ToolNameCollisionError";
    this.toolName = toolName;
    this.branchId = branchId;
  }
}

/**
 * A wrapped tool failed and `tool.error` hooks added context for the model: the AI SDK tells the
 * model only a tool error's message, so the message is the failure's followed by the context
 * (after a blank line), and `cause` is the failure itself. A failure without context rejects as
 * it was thrown.
 *
 * @example
 * ```ts
 * import { ToolFailedError, wrapTools } from "@hookscope/core/ai-sdk";
 * import { Session } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const session = new Session();
 * session.hooks.on("tool.error", () => ({ context: "the file may have moved: list the folder" }));
 * const tools = wrapTools({
 *   read: {
 *     execute: (input: { path: string }, _options: unknown): string => {
 *       throw new Error(`ENOENT: ${input.path}`);
 *     },
 *   },
 * }, { session });
 * const failed = await Promise.resolve(tools.read.execute!({ path: "a.md" }, { toolCallId: "c1" }))
 *   .catch((e: unknown) => e);
 * assert.ok(failed instanceof ToolFailedError);
 * assert.equal(failed.message, "ENOENT: a.md\n\nthe file may have moved: list the folder");
 * assert.equal((failed.cause as Error).message, "ENOENT: a.md");
 * ```
 */
export class ToolFailedError extends Error {
  /** The tool. */
  readonly toolName: string;
  /** The call id. */
  readonly callId: string;
  /** The `tool.error` hooks' context strings, in chain order. */
  readonly context: readonly string[];
  /** Makes the error. */
  constructor(toolName: string, callId: string, cause: unknown, context: readonly string[]) {
    super(`${messageOf(cause)}\n\n${context.join("\n")}`, { cause });
    this.name = "ToolFailedError";
    this.toolName = toolName;
    this.callId = callId;
    this.context = Object.freeze([...context]);
  }
}

const SOURCE: ToolSource = Object.freeze({ kind: "ai-sdk" });
/** Tool names wrapped onto each branch, across wrapTools calls. */
const wrappedNames = new WeakMap<Branch, Set<string>>();
/** How many asked-about calls a tool set remembers before it forgets the oldest. */
const MAX_ASKED = 1024;

function inputSchemaOf(name: string, schema: unknown) {
  if (schema instanceof z.ZodType) {
    return { inputSchema: schema as z.ZodType<Record<string, unknown>> };
  }
  const json = (schema as { jsonSchema?: unknown } | null)?.jsonSchema;
  if (json && typeof json === "object" && !Array.isArray(json)) {
    const problem = findSchemaProblem(json);
    if (problem !== null) {
      throw new TypeError(`Cannot wrap AI SDK tool ${JSON.stringify(name)}: ${problem}`);
    }
    const parameters = json as Record<string, unknown>;
    if (parameters.type === "object") {
      return { parameters, inputSchema: jsonSchemaValidator(parameters) };
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
 *   chain, so the AI SDK's own tool-approval flow pauses the run (`tool-approval-request`). A
 *   call runs only when the conversation it is given holds an approval
 *   (`tool-approval-response` with `approved: true`) for its call id, of a tool call with exactly
 *   its arguments; then the approval is recorded (`ApprovalRequested`, `ApprovalAnswered`). An
 *   `ask` without such an approval rejects with `ApprovalRequiredError`.
 * - **rejection**: a rejected call is recorded like an approval (`ApprovalRequested`,
 *   `ApprovalAnswered` with `approve: false`, `ToolDenied`) when the rejection is seen: by
 *   `hookscopeMiddleware({ session })` in the next prompt, by a wrapped tool of the session in
 *   the conversation it is given, or by {@linkcode recordApprovalAnswers}. A set remembers at
 *   most 1 024 unanswered asks (the oldest is forgotten first) and forgets each once answered.
 * - **names**: two `wrapTools` calls on one branch may not share a tool name
 *   ({@linkcode ToolNameCollisionError}); wrap the tools in one call, or give each its branch.
 * - Tool failures reject, as the AI SDK expects (a `tool-error` the model sees). When
 *   `tool.error` hooks add context, the rejection is a {@linkcode ToolFailedError} whose message
 *   carries it (the failure as `cause`), so the model reads it with the error.
 *
 * The session's `tool.pre` handlers run twice for a call whose approval is asked (once to decide
 * on the approval request, once when the approved call runs); keep them free of side effects.
 *
 * @param tools The AI SDK tools, by name.
 * @param options The session, branch and spec.
 * @returns The same names with wrapped tools (the original objects are not changed).
 * @throws {TypeError} When a tool's JSON Schema is malformed.
 * @throws {ToolNameCollisionError} When another set on the branch has a tool of the same name.
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
  const taken = wrappedNames.get(branch) ?? new Set<string>();
  for (const [name, original] of Object.entries(tools)) {
    if (original === null || typeof original !== "object") {
      throw new TypeError(`Cannot wrap AI SDK tool ${JSON.stringify(name)}: not a tool object`);
    }
    if (typeof original.execute === "function" && taken.has(name)) {
      throw new ToolNameCollisionError(name, branch.id);
    }
  }
  const pending = new Map<string, ToolCallOptionsLike>();
  /** Calls whose approval this set asked for, not answered yet: call id -> tool name. */
  const asked = new Map<string, string>();
  /** Calls being recorded as rejected: their tool must not run. */
  const rejecting = new Set<string>();
  const by = options.approvedBy ?? "ai-sdk";
  const out: Record<string, AiSdkToolLike> = {};

  /** Records the rejections among `answers` of calls this set asked about, once each. */
  const noteAnswers = async (answers: Map<string, FlowAnswer>): Promise<void> => {
    for (const answer of answers.values()) {
      const name = asked.get(answer.toolCallId);
      if (name === undefined || answer.approved) continue;
      asked.delete(answer.toolCallId);
      const args = answer.input !== null && typeof answer.input === "object" &&
          !Array.isArray(answer.input)
        ? answer.input as Record<string, unknown>
        : {};
      const rejection = {
        approve: false as const,
        by,
        ...(answer.reason === undefined ? {} : { reason: answer.reason }),
      };
      rejecting.add(answer.toolCallId);
      try {
        // The tool.pre chain judges the call again and asks; the rejection is its answer
        // (ApprovalRequested, ApprovalAnswered with approve false, ToolDenied). The tool
        // cannot run here (`rejecting`).
        await branch.act({ function: name, arguments: args }, {
          callId: answer.toolCallId,
          approve: () => rejection,
        });
      } catch {
        // a denial (expected), or a failure of the guard below: nothing ran either way
      } finally {
        rejecting.delete(answer.toolCallId);
      }
    }
  };
  if (bus) listenForAnswers(bus, { noteAnswers });

  for (const [name, original] of Object.entries(tools)) {
    const execute = original.execute;
    if (typeof execute !== "function") {
      out[name] = original; // a client-side tool: nothing runs here
      continue;
    }
    taken.add(name);
    branch.actions.register(
      new Tool({
        name,
        description: original.description ?? "",
        source: SOURCE,
        ...inputSchemaOf(name, original.inputSchema),
        execute: (args: Record<string, unknown>, context: ToolContext) => {
          if (context.callId && rejecting.has(context.callId)) {
            throw new ToolDeniedError({
              toolName: name,
              callId: context.callId,
              reason: "rejected in the AI SDK approval flow",
              hook: "approval",
            });
          }
          const sdk = (context.callId && pending.get(context.callId)) || { toolCallId: "" };
          return execute(args, { ...sdk, abortSignal: context.signal });
        },
      }),
      { update: true },
    );

    const ownApproval = original.needsApproval;
    const needsApproval = bus
      ? async (input: unknown, sdk: ToolCallOptionsLike): Promise<boolean> => {
        if (sdk?.messages) await noteAnswers(flowAnswers(sdk.messages));
        if (ownApproval === true) return true;
        if (typeof ownApproval === "function" && await ownApproval(input, sdk)) return true;
        const args = (input ?? {}) as Record<string, unknown>;
        const fold = await bus.decide("tool.pre", {
          toolName: name,
          callId: sdk.toolCallId,
          args,
          argsSummary: summarize(args),
          branchId: branch.id,
          signal: sdk?.abortSignal ?? neverAborted(),
          source: SOURCE,
        });
        if (fold.verdict !== "ask") return false;
        asked.delete(sdk.toolCallId);
        asked.set(sdk.toolCallId, name);
        if (asked.size > MAX_ASKED) asked.delete(asked.keys().next().value as string);
        return true;
      }
      : ownApproval;

    out[name] = {
      ...original,
      ...(needsApproval === undefined ? {} : { needsApproval }),
      execute: async (input: unknown, sdk: ToolCallOptionsLike) => {
        const callId = sdk?.toolCallId || crypto.randomUUID();
        const answers = flowAnswers(sdk?.messages);
        await noteAnswers(answers);
        // Approved means: the conversation holds an approval for this call id, and the call it
        // approved had exactly these arguments.
        const answer = answers.get(callId);
        const approved = answer !== undefined && answer.approved && answer.hasInput &&
          samePlainData(answer.input, input ?? {});
        asked.delete(callId);
        pending.set(callId, sdk);
        try {
          // Branch.act, reading the outcome itself: a failure's tool.error context must reach
          // the model, and the AI SDK tells it only the error's message.
          const options: ActOptions = {
            callId,
            ...(sdk?.abortSignal ? { signal: sdk.abortSignal } : {}),
            ...(approved ? { approve: () => ({ approve: true as const, by }) } : {}),
          };
          const request = checkRequest({ function: name, arguments: input ?? {} });
          checkOptions(options);
          const outcome = await runOutcome(branch, request, options);
          if (outcome.kind === "failed" && outcome.context !== undefined) {
            throw new ToolFailedError(name, callId, outcome.error, outcome.context);
          }
          return settleOutcome(outcome, false).output;
        } catch (error) {
          if (error instanceof ToolDeniedError) return `Tool call denied: ${error.reason}`;
          throw error; // failures, and an ApprovalRequiredError the approval flow did not catch
        } finally {
          pending.delete(callId);
        }
      },
    };
  }
  wrappedNames.set(branch, taken);
  return out as T;
}

/**
 * Records the answers of the AI SDK approval flow found in `messages` (the `ModelMessage[]` you
 * pass to `generateText`/`streamText`) for every {@linkcode wrapTools} set of `session`: a
 * rejection of a call a set asked about is recorded like an approval (`ApprovalRequested`,
 * `ApprovalAnswered` with `approve: false`, `ToolDenied`) and the set forgets the call. The
 * middleware (`hookscopeMiddleware({ session })`) does the same with every prompt it sees, and a
 * wrapped tool with every conversation it is given; call this when neither sees the rejection
 * (a model without the middleware that answers without calling a wrapped tool).
 *
 * @param session The session the tool sets were wrapped with.
 * @param messages The conversation, with the `tool-approval-response` parts.
 *
 * @example
 * ```ts
 * import { recordApprovalAnswers } from "@hookscope/core/ai-sdk";
 * import { Session } from "@hookscope/core";
 *
 * await recordApprovalAnswers(new Session(), [{ role: "user", content: "hi" }]);
 * ```
 */
export function recordApprovalAnswers(
  session: { readonly hooks: object },
  messages: readonly unknown[],
): Promise<void> {
  return reportAnswers(session.hooks, messages);
}
