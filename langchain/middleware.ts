/**
 * `hookscopeMiddleware`: a LangChain.js v1 `createAgent` middleware that puts every tool call
 * under hookscope's Tool-scope chains and the session's `tool.pre`/`tool.post`/`tool.error`
 * decisions, and every model call under the service scope's `preInvoke`/`postInvoke` hooks.
 *
 * @module
 */

import { createMiddleware, ToolMessage } from "langchain";
import type { ApprovalAnswer, PendingApproval } from "../core/approval.ts";
import { ToolDeniedError } from "../core/errors.ts";
import type { ToolSource } from "../core/tool_source.ts";
import type { AgentSpec } from "../action/spec.ts";
import { Tool } from "../action/tool.ts";
import { Branch } from "../session/branch.ts";
import type { Session } from "../session/session.ts";
import type { HookRegistry } from "../service/hook_registry.ts";
import { modelCallSettings, wrapModelCall } from "./_model_call.ts";

/** Options for {@linkcode hookscopeMiddleware}. */
export interface HookscopeMiddlewareOptions {
  /** The session whose `tool.pre`/`tool.post`/`tool.error` decisions govern the calls. */
  session?: Session;
  /** The branch the calls run on (default: a new branch of `session`, or a standalone one). */
  branch?: Branch;
  /** Tool-scope chains (security pre, pre, post, error hooks) for every tool call. */
  spec?: AgentSpec;
  /** Who approved, in `ApprovalAnswered` signals, when the resume value names nobody. */
  approvedBy?: string;
  /**
   * Service-scope hooks run around each model call (`preInvoke`, `postInvoke`; their event is a
   * `LangChainModelCall`). A `preInvoke` that throws refuses the call with
   * `ModelCallRefusedError`.
   */
  modelHooks?: HookRegistry;
  /** Whether a failing `postInvoke` rejects the call (default `false`: logged and ignored). */
  modelHookExit?: boolean;
  /** Deadline of each model hook in milliseconds (default 30 000). */
  modelHookTimeoutMs?: number;
}

/**
 * The value a run pauses with when a `tool.pre` decision asks for approval: read it from the
 * result's `__interrupt__[0].value` and resume with `new Command({ resume: answer })`, where
 * `answer` is `true`, `false` or an `ApprovalAnswer` (`{ approve, updatedArgs?, reason?, by? }`).
 */
export interface HookscopeInterruptValue {
  /** Always `"hookscope.approval"`. */
  kind: "hookscope.approval";
  /** The pending approval (tool, call id, arguments, reason). */
  approval: PendingApproval;
}

/**
 * What {@linkcode hookscopeMiddleware} returns: a `createAgent` middleware (made with
 * `langchain`'s `createMiddleware`) that wraps tool calls and model calls.
 */
export interface HookscopeMiddleware {
  /** `"HookscopeMiddleware"`. */
  readonly name: string;
  /** LangChain's `wrapToolCall` hook: `(request, handler) => ToolMessage | Command`. */
  // deno-lint-ignore no-explicit-any
  wrapToolCall?: (request: any, handler: any) => Promise<any>;
  /** LangChain's `wrapModelCall` hook: `(request, handler) => AIMessage`. */
  // deno-lint-ignore no-explicit-any
  wrapModelCall?: (request: any, handler: any) => Promise<any>;
}

const SOURCE: ToolSource = Object.freeze({ kind: "langchain" });

/** What the tool handler gave back for one call, by call id. */
interface Pending {
  // deno-lint-ignore no-explicit-any
  run(args: Record<string, unknown>): Promise<any>;
  message?: unknown;
}

function contentOf(output: unknown): string {
  return typeof output === "string" ? output : JSON.stringify(output) ?? "";
}

function answerOf(value: unknown, by: string): ApprovalAnswer {
  if (value === true) return { approve: true, by };
  if (value === false || value === undefined || value === null) return { approve: false, by };
  if (typeof value === "object" && typeof (value as { approve?: unknown }).approve === "boolean") {
    const answer = value as ApprovalAnswer;
    return answer.by === undefined ? { ...answer, by } : answer;
  }
  throw new TypeError(
    "Cannot resume a hookscope approval: resume with true, false or { approve: boolean, … }",
  );
}

/**
 * A `createAgent` middleware that runs every tool call through `Branch.act`: the `AgentSpec`
 * chains and the session's `tool.pre`/`tool.post`/`tool.error` hooks and typed decisions apply,
 * and the call is recorded (messages, signals such as `ToolDenied`, `ApprovalRequested`,
 * `ApprovalAnswered`) like any other tool call.
 *
 * - **deny**: the tool does not run; the model receives `Tool call denied: <reason>` as the
 *   `ToolMessage` content (status `"error"`) and can go on.
 * - **allow with `updatedArgs`**: the tool runs with the rewritten arguments.
 * - **`context`**: the strings are appended to the tool message's content.
 * - **ask**: the run pauses with LangChain's `interrupt` (the agent needs a `checkpointer`) with
 *   a {@linkcode HookscopeInterruptValue}; resume it with `new Command({ resume: answer })`.
 *   On resume the tool node runs again, so the `tool.pre` chain runs again and
 *   `ApprovalRequested` is recorded once per pass; the tool itself runs once, after the answer.
 * - Tool failures go through the `tool.error` chain and then reach LangChain's own tool error
 *   handling unchanged.
 *
 * Each model call goes through `wrapModelCall`: `api.pre_call` on the session's bus, then the
 * `preInvoke` handler of `options.modelHooks` (it may replace `event.messages`; a throw refuses
 * the call with `ModelCallRefusedError`, the model is not called and the run rejects),
 * the call, the `postInvoke` handler (it sees and may replace `event.response`), then
 * `api.post_call` with the status, latency and token usage.
 *
 * @param options The session, branch, spec and model hooks.
 * @returns The middleware, for `createAgent({ middleware: [ … ] })`.
 *
 * @example A guard that denies a call, seen by the model as the tool's output
 * ```ts
 * import { hookscopeMiddleware } from "@hookscope/core/langchain";
 * import { Session } from "@hookscope/core";
 * import { AIMessage, createAgent, fakeModel, tool } from "langchain";
 * import { z } from "zod";
 * import assert from "node:assert/strict";
 *
 * const session = new Session();
 * session.hooks.on("tool.pre", ({ args }) =>
 *   String(args.path).includes(".env") ? { decision: "deny", reason: "secrets" } : undefined);
 * const read = tool(({ path }) => `body of ${path}`, {
 *   name: "read",
 *   description: "read a file",
 *   schema: z.object({ path: z.string() }),
 * });
 * const model = fakeModel()
 *   .respondWithTools([{ name: "read", args: { path: ".env" }, id: "c1" }])
 *   .respond(new AIMessage("done"));
 * const agent = createAgent({ model, tools: [read], middleware: [hookscopeMiddleware({ session })] });
 * const result = await agent.invoke({ messages: [{ role: "user", content: "read .env" }] });
 * const toolMessage = result.messages.find((m) => m.type === "tool")!;
 * assert.equal(toolMessage.content, "Tool call denied: secrets");
 * ```
 */
export function hookscopeMiddleware(options: HookscopeMiddlewareOptions = {}): HookscopeMiddleware {
  const session = options.session;
  const branch = options.branch ??
    (session
      ? session.newBranch({ name: "langchain", spec: options.spec })
      : new Branch({ spec: options.spec }));
  const by = options.approvedBy ?? "langchain";
  const pending = new Map<string, Pending>();
  const registered = new Set<string>();
  const models = modelCallSettings(
    options.modelHooks,
    session?.hooks,
    options.modelHookExit,
    options.modelHookTimeoutMs,
  );

  function register(name: string, description: string): void {
    if (registered.has(name)) return;
    branch.actions.register(
      new Tool({
        name,
        description,
        source: SOURCE,
        execute: (args: Record<string, unknown>, context) => {
          const entry = context.callId ? pending.get(context.callId) : undefined;
          if (entry === undefined) {
            throw new Error(`Cannot run LangChain tool "${name}": no pending call`);
          }
          return entry.run(args);
        },
      }),
      { update: true },
    );
    registered.add(name);
  }

  return createMiddleware({
    name: "HookscopeMiddleware",
    // deno-lint-ignore no-explicit-any
    wrapModelCall: (request, handler) => wrapModelCall(models, request, handler as any) as any,
    wrapToolCall: async (request, handler) => {
      const call = request.toolCall;
      const name = call.name;
      const callId = call.id ?? crypto.randomUUID();
      const description = (request.tool as { description?: unknown } | undefined)?.description;
      register(name, typeof description === "string" ? description : "");
      const entry: Pending = {
        run: async (args) => {
          const message = await handler({ ...request, toolCall: { ...call, args } });
          entry.message = message;
          if (ToolMessage.isInstance(message)) return message.content;
          return message; // a Command: passed through as the call's result
        },
      };
      pending.set(callId, entry);
      const interrupt = request.runtime?.interrupt as ((value: unknown) => unknown) | undefined;
      try {
        const result = await branch.act(
          { function: name, arguments: (call.args ?? {}) as Record<string, unknown> },
          {
            callId,
            ...(request.runtime?.signal ? { signal: request.runtime.signal } : {}),
            ...(typeof interrupt === "function"
              ? {
                approve: (approval: PendingApproval) => {
                  const value: HookscopeInterruptValue = {
                    kind: "hookscope.approval",
                    approval: { ...approval },
                  };
                  return answerOf(interrupt(value), by);
                },
              }
              : {}),
          },
        );
        const message = entry.message;
        const extra = result.context && result.context.length > 0
          ? `\n\n${result.context.join("\n")}`
          : "";
        if (ToolMessage.isInstance(message)) {
          const output = result.output;
          const same = output === message.content;
          if (same && extra === "") return message;
          return new ToolMessage({
            content: (same && typeof output === "string" ? output : contentOf(output)) + extra,
            tool_call_id: message.tool_call_id,
            name: message.name ?? name,
            ...(message.status ? { status: message.status } : {}),
            ...(message.artifact === undefined ? {} : { artifact: message.artifact }),
          });
        }
        if (message !== undefined) return message as ToolMessage;
        return new ToolMessage({
          content: contentOf(result.output) + extra,
          tool_call_id: callId,
          name,
        });
      } catch (error) {
        if (error instanceof ToolDeniedError) {
          return new ToolMessage({
            content: `Tool call denied: ${error.reason}`,
            tool_call_id: callId,
            name,
            status: "error",
          });
        }
        throw error;
      } finally {
        pending.delete(callId);
      }
    },
  }) as unknown as HookscopeMiddleware;
}
