/**
 * `mcpElicitation`: an MCP server's elicitation requests (`elicitation/create`) answered on the
 * approval path: the session's `tool.pre` decisions, then a person.
 *
 * @module
 */

import { summarize } from "../core/json_safe.ts";
import {
  type ApprovalAnswer,
  type ApprovalHandler,
  argsHash,
  type PendingApproval,
} from "../core/approval.ts";
import type { ToolSource } from "../core/tool_source.ts";
import { HookPoint } from "../hooks/hook_point.ts";
import { jsonSchemaValidator } from "../action/_json_schema.ts";
import type { Branch } from "../session/branch.ts";
import {
  ApprovalAnswered,
  ApprovalRequested,
  HookBlocked,
  ToolDenied,
  WouldAsk,
  WouldDeny,
} from "../session/signal.ts";
import { answerInline } from "../core/_inline_answer.ts";
import {
  callSignal,
  installRequestHandler,
  type McpRequestClientLike,
} from "./_request_handler.ts";
import { abortable } from "../core/_async.ts";

/** Options for {@linkcode mcpElicitation}. */
export interface McpElicitationOptions {
  /**
   * The branch whose session judges each elicitation (its `tool.pre` handlers) and records it
   * (`ToolDenied`, `ApprovalRequested`, `ApprovalAnswered`, shadow verdicts).
   */
  branch: Branch;
  /**
   * The person: asked when no hook answered (or a hook asked). `approve: true` accepts, with the
   * form's values in `updatedArgs.content`; `approve: false` declines (`interrupt: true`:
   * cancel). Without it, an elicitation no hook answered is cancelled.
   */
  approve?: ApprovalHandler;
  /** The server's name in `source.server` and the arguments (default: its reported name). */
  server?: string;
  /** The tool name the hooks see (default `"mcp_elicitation"`). */
  toolName?: string;
  /** Deadline of one elicitation, the person included, in milliseconds (default 600 000). */
  timeoutMs?: number;
}

/** What the hooks and the person judge: the arguments of the elicitation "call". */
export interface McpElicitationArgs {
  /** The server that asks. */
  readonly server: string;
  /** The server's message to the person. */
  readonly message: string;
  /** The form's JSON Schema (flat, primitive properties). */
  readonly requestedSchema: Readonly<Record<string, unknown>>;
  /** The answer, when a hook or the person gave one (`updatedArgs.content`). */
  readonly content?: Readonly<Record<string, unknown>>;
}

/** What {@linkcode mcpElicitation} returns. */
export interface McpElicitationHandler {
  /** Removes the handler (the client then refuses elicitation requests). */
  close(): void;
}

type ElicitResult =
  | { action: "accept"; content?: Record<string, unknown> }
  | { action: "decline" | "cancel" };

const DEFAULT_TIMEOUT_MS = 600_000;

function normalize(answer: unknown): ApprovalAnswer {
  if (answer === true) return { approve: true };
  if (answer === false || answer === null || typeof answer !== "object") return { approve: false };
  return answer as ApprovalAnswer;
}

/**
 * Answers an MCP server's elicitation requests the way hookscope answers an `ask`. Each request is
 * judged as a call of the tool `options.toolName` (`source: { kind: "mcp", server }`, arguments
 * {@linkcode McpElicitationArgs}) by the session's `tool.pre` handlers:
 *
 * - a deny declines it (`ToolDenied` recorded; an `interrupt` deny cancels); a failing guard
 *   declines it too (`HookBlocked`);
 * - an allow whose `updatedArgs` carry `content` accepts it with that content: a hook answered;
 * - otherwise (no opinion, an allow without content, an ask) the person answers through
 *   `options.approve`, recorded as `ApprovalRequested` / `ApprovalAnswered`: approved with
 *   `updatedArgs.content` accepts with it, approved without accepts with no content, rejected
 *   declines (`interrupt: true` cancels). Without `approve` the request is cancelled.
 *
 * Accepted content is validated against the server's `requestedSchema`; content that does not
 * match declines (the hooks and the person cannot send the server what it did not ask for). URL-
 * mode elicitations are declined.
 *
 * The client must be created with `capabilities: { elicitation: {} }`.
 *
 * @param client A connected MCP `Client` from `@modelcontextprotocol/sdk`.
 * @param options The branch, the person, names and the deadline.
 * @returns A handle whose `close()` removes the handler.
 * @throws {TypeError} When the client cannot take the handler, or an option is invalid.
 *
 * @example A hook declines every elicitation of one server; a person answers the rest
 * ```ts
 * import { Client } from "@modelcontextprotocol/sdk/client/index.js";
 * import { Session } from "@hookscope/core";
 * import { mcpElicitation } from "@hookscope/core/mcp";
 *
 * const session = new Session();
 * session.hooks.on("tool.pre", ({ source }) =>
 *   source?.server === "untrusted" ? { decision: "deny", reason: "not this server" } : undefined,
 * { match: "mcp_elicitation" });
 * const client = new Client({ name: "agent", version: "1.0.0" }, { capabilities: { elicitation: {} } });
 * const elicitation = mcpElicitation(client, {
 *   branch: session.defaultBranch,
 *   approve: () => ({ approve: true, by: "alice", updatedArgs: { content: { confirm: true } } }),
 * });
 * elicitation.close();
 * ```
 */
export function mcpElicitation(
  client: McpRequestClientLike,
  options: McpElicitationOptions,
): McpElicitationHandler {
  const branch = options?.branch;
  if (!branch || typeof branch.emit !== "function" || typeof branch.id !== "string") {
    throw new TypeError("Cannot handle MCP elicitation: options.branch must be a Branch");
  }
  const approve = options.approve;
  if (approve !== undefined && typeof approve !== "function") {
    throw new TypeError("Cannot handle MCP elicitation: approve must be a function");
  }
  const toolName = options.toolName ?? "mcp_elicitation";
  if (typeof toolName !== "string" || !toolName) {
    throw new TypeError("Cannot handle MCP elicitation: toolName must be a non-empty string");
  }
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) {
    throw new TypeError("Cannot handle MCP elicitation: timeoutMs must be a positive integer");
  }
  const named = options.server;

  const close = installRequestHandler(
    client,
    "elicitation/create",
    "elicitation",
    "elicitation",
    async (params, extra): Promise<ElicitResult> => {
      if (params.mode === "url") return { action: "decline" };
      const server = named ?? client.getServerVersion?.()?.name ?? "mcp";
      const requestedSchema =
        (params.requestedSchema && typeof params.requestedSchema === "object"
          ? params.requestedSchema
          : { type: "object", properties: {} }) as Record<string, unknown>;
      const args: McpElicitationArgs = Object.freeze({
        server,
        message: typeof params.message === "string" ? params.message : "",
        requestedSchema,
      });
      const callId = `elicit-${crypto.randomUUID()}`;
      const source: ToolSource = Object.freeze({ kind: "mcp", server });
      const { signal, done } = callSignal(extra.signal, timeoutMs, "elicitation");
      const record = (signalValue: unknown) => abortable(branch.emit(signalValue), signal);
      const verdict = (reason: string | undefined, hook: string | undefined, shadow: boolean) => ({
        callId,
        toolName,
        ...(reason !== undefined ? { reason } : {}),
        ...(hook !== undefined ? { hook } : {}),
        shadow,
      });
      const accepted = async (content: unknown): Promise<ElicitResult> => {
        if (content === undefined) return { action: "accept" };
        const checked = content !== null && typeof content === "object" && !Array.isArray(content)
          ? jsonSchemaValidator(requestedSchema).safeParse(content)
          : { success: false as const };
        if (checked.success) {
          return { action: "accept", content: content as Record<string, unknown> };
        }
        await record(
          new ToolDenied({
            data: verdict(
              "the answer does not match the server's requestedSchema",
              "elicitation",
              false,
            ),
          }),
        );
        return { action: "decline" };
      };
      let terms: { expiresAt?: number; answerableBy?: readonly string[] } = {};
      try {
        const bus = branch.hooks;
        if (bus) {
          const fold = await bus.decide(HookPoint.TOOL_PRE, {
            toolName,
            callId,
            args: args as unknown as Readonly<Record<string, unknown>>,
            argsSummary: summarize(args),
            branchId: branch.id,
            signal,
            source,
          }, { signal });
          for (const shadow of fold.shadow ?? []) {
            const data = { ...verdict(shadow.reason, shadow.hook, true), point: "tool.pre" };
            await record(
              shadow.decision === "deny" ? new WouldDeny({ data }) : new WouldAsk({ data }),
            );
          }
          if (fold.error !== undefined) {
            await record(
              new HookBlocked({ point: HookPoint.TOOL_PRE, callId, toolName, error: fold.error }),
            );
            return { action: "decline" };
          }
          if (fold.verdict === "deny") {
            await record(
              new ToolDenied({ data: verdict(fold.reason ?? "denied", fold.hook, false) }),
            );
            return { action: fold.interrupt ? "cancel" : "decline" };
          }
          const content = (fold.updatedArgs as { content?: unknown } | undefined)?.content;
          if (fold.verdict === "allow" && content !== undefined) return await accepted(content);
          if (fold.verdict === "ask") {
            terms = {
              ...(fold.expiresAt !== undefined ? { expiresAt: fold.expiresAt } : {}),
              ...(fold.answerableBy !== undefined ? { answerableBy: fold.answerableBy } : {}),
            };
          }
        }
        const pending: { -readonly [K in keyof PendingApproval]: PendingApproval[K] } = {
          runId: "",
          branchId: branch.id,
          callId,
          toolName,
          args: args as unknown as Readonly<Record<string, unknown>>,
          reason: args.message,
          requestedAt: Date.now(),
          argsHash: argsHash(args as unknown as Readonly<Record<string, unknown>>),
          ...terms,
        };
        const sessionId = branch.session?.id;
        if (typeof sessionId === "string") pending.sessionId = sessionId;
        const approval = Object.freeze(pending);
        await record(new ApprovalRequested({ data: approval }));
        if (approve === undefined) return { action: "cancel" };
        // Bounded by the approval's expiry; an answerer the hooks did not name is not taken.
        const answer = await answerInline(approval, approve, signal, normalize);
        const updatedArgs = answer.approve ? answer.updatedArgs : undefined;
        await record(
          new ApprovalAnswered({
            data: Object.freeze({
              runId: "",
              callId,
              toolName,
              approve: answer.approve === true,
              ...(answer.by !== undefined ? { by: answer.by } : {}),
              ...(!answer.approve && answer.reason !== undefined ? { reason: answer.reason } : {}),
              ...(updatedArgs !== undefined ? { updatedArgs } : {}),
            }),
          }),
        );
        if (!answer.approve) return { action: answer.interrupt ? "cancel" : "decline" };
        if (answer.argsHash !== undefined && answer.argsHash !== approval.argsHash) {
          // The person answered another question than the one pending.
          await record(
            new ToolDenied({
              data: verdict("the answer names other arguments (args_changed)", "approval", false),
            }),
          );
          return { action: "decline" };
        }
        return await accepted((updatedArgs as { content?: unknown } | undefined)?.content);
      } finally {
        done();
      }
    },
  );
  return { close };
}
