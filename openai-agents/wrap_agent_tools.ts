/**
 * `wrapAgentTools`: the function tools of an OpenAI Agents SDK `Agent` under hookscope's
 * Tool-scope chains and the session's `tool.pre`/`tool.post`/`tool.error` decisions, with the
 * SDK's own approval flow (`needsApproval`, interruptions, `RunState`) for `ask`.
 *
 * @module
 */

import type { ApprovalAnswer } from "../core/approval.ts";
import { ApprovalRequiredError, ToolDeniedError } from "../core/errors.ts";
import { neverAborted } from "../core/_abort.ts";
import { summarize } from "../core/json_safe.ts";
import type { ToolSource } from "../core/tool_source.ts";
import { AgentSpec } from "../action/spec.ts";
import { Tool, type ToolContext } from "../action/tool.ts";
import { describeValue, isRecord, unknownOptionProblem } from "../core/_util.ts";
import { Branch } from "../session/branch.ts";
import { Session } from "../session/session.ts";

/** Options for {@linkcode wrapAgentTools}. */
export interface WrapAgentToolsOptions {
  /** The session whose `tool.pre`/`tool.post`/`tool.error` decisions govern the calls. */
  session?: Session;
  /** The branch the calls run on (default: a new branch of `session`, or a standalone one). */
  branch?: Branch;
  /** Tool-scope chains (security pre, pre, post, error hooks) for every wrapped tool. */
  spec?: AgentSpec;
  /** Who approved, in `ApprovalAnswered` signals, when the answer names nobody (default `"openai-agents"`). */
  approvedBy?: string;
}

/**
 * What {@linkcode wrapAgentTools} needs of an `Agent` of `@openai/agents`: its tools and `clone`.
 * The shapes are declared here, so the entry has no type dependency on the SDK.
 */
export interface AgentLike {
  /** The agent's tools (function tools are wrapped, others passed through). */
  readonly tools: readonly unknown[];
  /** Makes a copy with other settings (the SDK's `agent.clone({ tools })`). */
  clone(config: { tools?: unknown[] }): unknown;
}

/** What {@linkcode answerApproval} needs of an interruption (`RunToolApprovalItem`). */
export interface ApprovalItemLike {
  /** The agent whose tool asked. */
  readonly agent: object;
  /** The model's tool call (`callId`, `name`, `arguments`). */
  readonly rawItem: unknown;
  /** The tool's name. */
  readonly name?: string | undefined;
  /** The call's arguments as the model sent them (JSON). */
  readonly arguments?: string | undefined;
}

/** What {@linkcode answerApproval} needs of a `RunState`: its `approve` and `reject`. */
export interface RunStateLike<I = never> {
  /** Approves the call (the SDK's `state.approve(item)`). */
  approve(item: I): void;
  /** Rejects the call with the message the model gets (the SDK's `state.reject`). */
  reject(item: I, options?: { message?: string }): void;
}

/** The parts of an SDK function tool the wrapper reads and replaces. */
interface FunctionToolLike {
  type: "function";
  name: string;
  description?: string;
  parameters?: unknown;
  // deno-lint-ignore no-explicit-any
  invoke(runContext: any, input: string, details?: any): Promise<unknown>;
  // deno-lint-ignore no-explicit-any
  needsApproval?(runContext: any, input: any, callId?: string): Promise<boolean>;
}

/** The run context methods the wrapper uses. */
interface RunContextLike {
  isToolApproved(approval: { toolName: string; callId: string }): boolean | undefined;
}

/** What one wrapped agent knows: its branch, its name for `by`, pending `by` answers. */
interface Controller {
  readonly branch: Branch;
  readonly by: string;
  /** `by` of approvals answered through `answerApproval` in this process, by call id. */
  readonly approvedBy: Map<string, string>;
}

const SOURCE: ToolSource = Object.freeze({ kind: "openai-agents" });
const OPTION_KEYS: ReadonlySet<string> = new Set(["session", "branch", "spec", "approvedBy"]);

function wrapFail(what: string): never {
  throw new TypeError(`Cannot wrap agent tools: ${what}`);
}

/**
 * Checks the options of wrapAgentTools up front: a key it does not know (a misspelt `sesion`
 * would leave the tools under no policy) or a value of another kind is a TypeError naming it.
 */
function checkWrapOptions(options: unknown): asserts options is WrapAgentToolsOptions {
  if (!isRecord(options)) wrapFail(`options must be an object; got ${describeValue(options)}`);
  const unknown = unknownOptionProblem(options, OPTION_KEYS);
  if (unknown !== undefined) wrapFail(unknown);
  const { session, branch, spec, approvedBy } = options;
  if (session !== undefined && !(session instanceof Session)) {
    wrapFail(`session must be a Session; got ${describeValue(session)}`);
  }
  if (branch !== undefined && !(branch instanceof Branch)) {
    wrapFail(`branch must be a Branch; got ${describeValue(branch)}`);
  }
  if (spec !== undefined && !(spec instanceof AgentSpec)) {
    wrapFail(`spec must be an AgentSpec; got ${describeValue(spec)}`);
  }
  if (spec !== undefined && branch !== undefined && branch.actions.spec !== spec) {
    // The branch's own tools get its manager's spec: this one would be silently left out.
    wrapFail("spec is not the branch's spec; make the branch with it (new Branch({ spec }))");
  }
  if (approvedBy !== undefined && (typeof approvedBy !== "string" || approvedBy === "")) {
    wrapFail(`approvedBy must be a non-empty string; got ${describeValue(approvedBy)}`);
  }
}
const controllers = new WeakMap<object, Controller>();

function isFunctionTool(tool: unknown): tool is FunctionToolLike {
  const t = tool as { type?: unknown; invoke?: unknown; name?: unknown } | null;
  return t !== null && typeof t === "object" && t.type === "function" &&
    typeof t.invoke === "function" && typeof t.name === "string";
}

function argsOf(input: string): Record<string, unknown> | undefined {
  let value: unknown;
  try {
    value = input === "" ? {} : JSON.parse(input);
  } catch {
    return undefined;
  }
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? value as Record<string, unknown>
    : undefined;
}

function outputOf(value: unknown, context: readonly string[] | undefined): unknown {
  if (!context || context.length === 0) return value;
  const text = typeof value === "string" ? value : JSON.stringify(value) ?? "";
  return `${text}\n\n${context.join("\n")}`;
}

/** The output of a call one of these branches already answered (say, restored from a store). */
function recordedOutput(branches: readonly Branch[], callId: string): unknown {
  for (const message of branches.flatMap((b) => b.messages)) {
    if (message.role !== "action_response") continue;
    const content = message.content as
      | { callId?: unknown; output?: unknown; context?: unknown }
      | null;
    if (content?.callId !== callId) continue;
    const context = Array.isArray(content.context) ? content.context as string[] : undefined;
    return outputOf(content.output, context) ?? "";
  }
  return undefined;
}

/**
 * Puts the function tools of an OpenAI Agents SDK `Agent` under hookscope. Returns a clone of the
 * agent (`agent.clone({ tools })`; the original is not changed) whose function tools run through
 * `Branch.act`: the `AgentSpec` chains and the session's `tool.pre`/`tool.post`/`tool.error`
 * hooks decide, and each call is recorded (messages, `ToolDenied`, `ApprovalRequested`,
 * `ApprovalAnswered`) like any other tool call.
 *
 * - **deny**: the tool does not run; the model gets `Tool call denied: <reason>` as the tool's
 *   output and the run goes on.
 * - **allow with `updatedArgs`**: the tool runs with the rewritten arguments (its own schema
 *   validates them again).
 * - **`context`**: the strings are appended to the tool's output, after a blank line.
 * - **ask**: the wrapped tool's `needsApproval` asks the session's `tool.pre` chain, so the run
 *   stops with an interruption (`result.interruptions`) and `ApprovalRequested` is recorded.
 *   Answer it with {@linkcode answerApproval} (or the SDK's `state.approve` / `state.reject`) and
 *   run the state again, in this process or, through `state.toString()` and
 *   `RunState.fromString(wrapped, text)`, in another one that wrapped the same agent. The
 *   approved call runs once, when the run resumes; its `ApprovalRequested` and
 *   `ApprovalAnswered` are recorded then.
 * - Tool failures go through the `tool.error` chain and then reach the SDK's own error handling
 *   (by default the model sees an error message).
 *
 * Hosted, computer, shell and apply-patch tools are passed through unchanged. The tool's own
 * `needsApproval` still applies: when it asks, the call is interrupted whatever the hooks say.
 *
 * @param agent The SDK agent.
 * @param options The session, branch, spec and approver name.
 * @returns The wrapped clone, for `run(wrapped, …)` and `RunState.fromString(wrapped, …)`.
 * @throws {TypeError} When `agent` is not an SDK agent, two function tools share a name, or an
 *   option is unknown or of another kind (`session` not a `Session`, `branch` not a `Branch`,
 *   `spec` not an `AgentSpec` or not the given branch's).
 *
 * @example A guard that denies a call, seen by the model as the tool's output
 * ```ts
 * import { wrapAgentTools } from "@hookscope/core/openai-agents";
 * import { Session } from "@hookscope/core";
 * import { Agent, RunContext, tool } from "@openai/agents";
 * import { z } from "zod";
 * import assert from "node:assert/strict";
 *
 * const session = new Session();
 * session.hooks.on("tool.pre", ({ args }) =>
 *   String(args.path).includes(".env") ? { decision: "deny", reason: "secrets" } : undefined);
 * const read = tool({
 *   name: "read",
 *   description: "read a file",
 *   parameters: z.object({ path: z.string() }),
 *   execute: ({ path }) => `body of ${path}`,
 * });
 * const agent = wrapAgentTools(new Agent({ name: "reader", tools: [read] }), { session });
 * const wrapped = agent.tools[0] as typeof read;
 * const out = await wrapped.invoke(new RunContext(), '{"path":".env"}', {
 *   toolCall: { type: "function_call", callId: "c1", name: "read", arguments: '{"path":".env"}' },
 * });
 * assert.equal(out, "Tool call denied: secrets");
 * ```
 */
export function wrapAgentTools<A extends AgentLike>(
  agent: A,
  options: WrapAgentToolsOptions = {},
): A {
  const tools = (agent as { tools?: unknown } | null)?.tools as unknown[] | undefined;
  if (
    agent === null || typeof agent !== "object" || !Array.isArray(tools) ||
    typeof (agent as { clone?: unknown }).clone !== "function"
  ) {
    throw new TypeError("Cannot wrap agent tools: expected an Agent of @openai/agents");
  }
  checkWrapOptions(options);
  const session = options.session;
  const branch = options.branch ??
    (session
      ? session.newBranch({ name: "openai-agents", spec: options.spec })
      : new Branch({ spec: options.spec }));
  const bus = session?.hooks ?? branch.hooks;
  const controller: Controller = {
    branch,
    by: options.approvedBy ?? "openai-agents",
    approvedBy: new Map(),
  };
  /** What the SDK passed to the wrapper's `invoke`, by call id, while the call runs. */
  const running = new Map<
    string,
    { runContext: unknown; details: unknown; original: FunctionToolLike }
  >();
  const names = new Set<string>();

  const wrapped = tools.map((original: unknown) => {
    if (!isFunctionTool(original)) return original;
    const name = original.name;
    if (names.has(name)) {
      throw new TypeError(
        `Cannot wrap agent tools: two function tools are named ${JSON.stringify(name)}`,
      );
    }
    names.add(name);
    branch.actions.register(
      new Tool({
        name,
        description: original.description ?? "",
        source: SOURCE,
        ...(original.parameters && typeof original.parameters === "object"
          ? { parameters: original.parameters as Record<string, unknown> }
          : {}),
        execute: (args: Record<string, unknown>, context: ToolContext) => {
          const call = context.callId ? running.get(context.callId) : undefined;
          if (call === undefined) {
            throw new Error(`Cannot run agent tool ${JSON.stringify(name)}: no pending call`);
          }
          return call.original.invoke(call.runContext, JSON.stringify(args), call.details);
        },
      }),
      { update: true },
    );

    const ownApproval = original.needsApproval;
    return {
      ...original,
      // deno-lint-ignore no-explicit-any
      needsApproval: async (runContext: any, input: any, callId?: string): Promise<boolean> => {
        if (typeof ownApproval === "function" && await ownApproval(runContext, input, callId)) {
          return true;
        }
        if (!bus) return false;
        const args = (input !== null && typeof input === "object" && !Array.isArray(input)
          ? input
          : {}) as Record<string, unknown>;
        const id = callId ?? "";
        const fold = await bus.decide("tool.pre", {
          toolName: name,
          callId: id,
          args,
          argsSummary: summarize(args),
          branchId: branch.id,
          signal: neverAborted(),
          source: SOURCE,
        });
        if (fold.verdict !== "ask") {
          return false;
        }
        // Record the ask as the act path does (ApprovalRequested, with the arguments after every
        // rewrite and their hash): act without an approver stops at the ask, before the tool.
        try {
          await branch.act({ function: name, arguments: args }, { callId: id });
        } catch (error) {
          if (error instanceof ApprovalRequiredError) {
            return true;
          }
          if (error instanceof ToolDeniedError) {
            return false; // the chain changed its mind
          }
          throw error;
        }
        return false;
      },
      // deno-lint-ignore no-explicit-any
      invoke: async (runContext: any, input: string, details?: any): Promise<unknown> => {
        const callId = typeof details?.toolCall?.callId === "string"
          ? details.toolCall.callId as string
          : crypto.randomUUID();
        const args = argsOf(input);
        if (args === undefined) {
          return "Tool call denied: the arguments are not a JSON object";
        }
        const approved = typeof (runContext as RunContextLike | undefined)?.isToolApproved ===
            "function" &&
          (runContext as RunContextLike).isToolApproved({ toolName: name, callId }) === true;
        if (approved) {
          // A RunState resumed twice (say, by two processes restoring one stored session) holds
          // the same approved call: when a branch of the session already has its response, that
          // output is returned and the tool does not run again.
          const done = recordedOutput(session ? session.branches : [branch], callId);
          if (done !== undefined) {
            return done;
          }
        }
        running.set(callId, { runContext, details, original });
        try {
          const by = controller.approvedBy.get(callId) ?? controller.by;
          const result = await branch.act(
            { function: name, arguments: args },
            {
              callId,
              ...(details?.signal ? { signal: details.signal as AbortSignal } : {}),
              ...(approved ? { approve: () => ({ approve: true as const, by }) } : {}),
            },
          );
          return outputOf(result.output, result.context);
        } catch (error) {
          if (error instanceof ToolDeniedError) {
            return `Tool call denied: ${error.reason}`;
          }
          throw error; // failures, and an ask that appeared only when the call ran
        } finally {
          running.delete(callId);
          controller.approvedBy.delete(callId);
        }
      },
    };
  });
  const clone = (agent as unknown as { clone(config: { tools: unknown[] }): A }).clone({
    tools: wrapped,
  });
  controllers.set(clone, controller);
  return clone;
}

/**
 * Answers an interruption of an agent made by {@linkcode wrapAgentTools}, and records the answer
 * in the session: `true` or `{ approve: true, by? }` calls `state.approve(item)` (the call runs,
 * and its approval is recorded, when the state runs again); `false` or
 * `{ approve: false, reason?, by? }` calls `state.reject(item, { message })` with
 * `Tool call denied: <reason>` as the model's tool output, and records `ApprovalAnswered`
 * (`approve: false`) and `ToolDenied` at once (the SDK never calls the tool again for it).
 * `state.approve` / `state.reject` work too, but a rejection made with them is not recorded.
 *
 * @param state The run state (`result.state`, or `RunState.fromString(wrapped, text)`).
 * @param item One of `result.interruptions` (or `state.getInterruptions()`).
 * @param answer `true`, `false` or an {@linkcode ApprovalAnswer} (without `updatedArgs`: the SDK
 *   runs an approved call with the model's arguments).
 * @throws {TypeError} When `state` has no `approve` and `reject`, the item has no `rawItem` or its
 *   agent was not made by `wrapAgentTools`, or the answer has another shape or `updatedArgs`.
 *
 * @example Reject a call the policy asked about
 * ```ts
 * import { answerApproval, wrapAgentTools } from "@hookscope/core/openai-agents";
 * import assert from "node:assert/strict";
 *
 * assert.equal(typeof answerApproval, "function");
 * assert.equal(typeof wrapAgentTools, "function");
 * ```
 */
export async function answerApproval<I extends ApprovalItemLike>(
  state: RunStateLike<I>,
  item: I,
  answer: boolean | ApprovalAnswer,
): Promise<void> {
  if (
    state === null || typeof state !== "object" ||
    typeof (state as { approve?: unknown }).approve !== "function" ||
    typeof (state as { reject?: unknown }).reject !== "function"
  ) {
    throw new TypeError(
      `Cannot answer approval: state must be a RunState (with approve and reject); got ${
        describeValue(state)
      }`,
    );
  }
  const controller = item && typeof item === "object" ? controllers.get(item.agent) : undefined;
  if (controller === undefined) {
    throw new TypeError(
      "Cannot answer approval: the interruption's agent was not made by wrapAgentTools",
    );
  }
  const normalized: ApprovalAnswer = answer === true
    ? { approve: true }
    : answer === false
    ? { approve: false }
    : answer;
  if (
    normalized === null || typeof normalized !== "object" ||
    typeof normalized.approve !== "boolean"
  ) {
    throw new TypeError("Cannot answer approval: answer with true, false or { approve, … }");
  }
  if (normalized.approve && normalized.updatedArgs !== undefined) {
    throw new TypeError(
      "Cannot answer approval: the OpenAI Agents SDK runs an approved call with the model's arguments (no updatedArgs)",
    );
  }
  if (!isRecord(item.rawItem)) {
    throw new TypeError(
      `Cannot answer approval: the interruption has no rawItem (the model's tool call); got ${
        describeValue(item.rawItem)
      }; pass one of result.interruptions`,
    );
  }
  const raw = item.rawItem as { callId?: unknown; name?: unknown };
  const callId = typeof raw.callId === "string" ? raw.callId : "";
  const toolName = item.name ?? (typeof raw.name === "string" ? raw.name : "");
  const by = normalized.by ?? controller.by;
  if (normalized.approve) {
    controller.approvedBy.set(callId, by);
    state.approve(item);
    return;
  }
  const reason = normalized.reason ?? "rejected by the approver";
  state.reject(item, { message: `Tool call denied: ${reason}` });
  // Record the rejection as the act path records any answer: the tool.pre chain judges the call
  // again, asks, and the approver's "no" is recorded (ApprovalRequested, ApprovalAnswered with
  // approve false, ToolDenied). The tool cannot run here: no call of it is pending.
  const args = argsOf(item.arguments ?? "") ?? {};
  const rejection = {
    approve: false as const,
    by,
    ...(normalized.reason === undefined ? {} : { reason: normalized.reason }),
  };
  try {
    await controller.branch.act({ function: toolName, arguments: args }, {
      callId,
      approve: () => rejection,
    });
  } catch (error) {
    if (!(error instanceof ToolDeniedError)) throw error;
  }
}
