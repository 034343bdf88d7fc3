/**
 * `mcpSampling`: an MCP server's sampling requests (`sampling/createMessage`) answered by an
 * `IModel` the user gives, through that model's service hooks.
 *
 * @module
 */

import type { IModel } from "../service/imodel.ts";
import {
  callSignal,
  installRequestHandler,
  type McpRequestClientLike,
} from "./_request_handler.ts";
import { abortable } from "../core/_async.ts";

export type { McpRequestClientLike } from "./_request_handler.ts";

/** Options for {@linkcode mcpSampling}. */
export interface McpSamplingOptions {
  /** The model that answers. Its service hooks (`preInvoke`, …) run for every request. */
  model: IModel;
  /** The server's name in the hook params (default: the name the server reports, else `"mcp"`). */
  server?: string;
  /**
   * The most tokens one request may ask for (default 4 096): a larger `maxTokens` is lowered to
   * it, never raised.
   */
  maxTokens?: number;
  /** Deadline of one request, hooks included, in milliseconds (default 120 000). */
  timeoutMs?: number;
}

/** Why a sampling request was not answered. */
export type McpSamplingFailure = "refused" | "unsupported" | "failed";

/**
 * A sampling request the client did not answer: a service hook refused it (`"refused"`), it asked
 * for something the handler does not do (`"unsupported"`: tools, audio), or the model call failed
 * (`"failed"`). The server receives it as a JSON-RPC error with this message.
 */
export class McpSamplingError extends Error {
  /** The server. */
  readonly server: string;
  /** Why. */
  readonly reason: McpSamplingFailure;
  /** Makes the error. */
  constructor(server: string, reason: McpSamplingFailure, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "McpSamplingError";
    this.server = server;
    this.reason = reason;
  }
}

/** What a service hook of a sampling call receives in its params, under `mcp`. */
export interface McpSamplingHookParams {
  /** Always `"sampling"`: the call was asked for by a server, not by the agent. */
  readonly kind: "sampling";
  /** The server that asked. */
  readonly server: string;
  /** The server's system prompt, when it sent one. */
  readonly systemPrompt?: string;
  /** The `maxTokens` the server asked for (before the cap). */
  readonly requestedMaxTokens: number;
  /** The server's model preferences, as sent. */
  readonly modelPreferences?: unknown;
}

/** What {@linkcode mcpSampling} returns. */
export interface McpSamplingHandler {
  /** Removes the handler (the client then refuses sampling requests). */
  close(): void;
}

const DEFAULT_MAX_TOKENS = 4096;
const DEFAULT_TIMEOUT_MS = 120_000;

const STOP_REASONS: Record<string, string> = {
  stop: "endTurn",
  length: "maxTokens",
  tool_calls: "toolUse",
};

function chatContent(server: string, block: unknown): unknown {
  const b = (block ?? {}) as Record<string, unknown>;
  if (b.type === "text" && typeof b.text === "string") return { type: "text", text: b.text };
  if (b.type === "image" && typeof b.data === "string" && typeof b.mimeType === "string") {
    return { type: "image_url", image_url: { url: `data:${b.mimeType};base64,${b.data}` } };
  }
  throw new McpSamplingError(
    server,
    "unsupported",
    `Sampling request of MCP server ${JSON.stringify(server)} not answered: ${
      JSON.stringify(String(b.type))
    } content is not supported (text and images are)`,
  );
}

function chatMessages(server: string, params: Record<string, unknown>): unknown[] {
  const out: unknown[] = [];
  if (typeof params.systemPrompt === "string" && params.systemPrompt) {
    out.push({ role: "system", content: params.systemPrompt });
  }
  const messages = Array.isArray(params.messages) ? params.messages : [];
  for (const message of messages as { role?: unknown; content?: unknown }[]) {
    const role = message?.role === "assistant" ? "assistant" : "user";
    const blocks = Array.isArray(message?.content) ? message.content : [message?.content];
    const parts = blocks.map((b) => chatContent(server, b));
    const texts = parts.every((p) => (p as { type: string }).type === "text");
    out.push({
      role,
      content: texts && parts.length === 1 ? (parts[0] as { text: string }).text : parts,
    });
  }
  return out;
}

function answerOf(response: unknown): { text: string; model?: string; finish?: string } {
  const r = (response ?? {}) as Record<string, unknown>;
  const raw = (r.raw && typeof r.raw === "object" ? r.raw : r) as Record<string, unknown>;
  const choice = Array.isArray(raw.choices) ? raw.choices[0] as Record<string, unknown> : null;
  const message = (choice?.message ?? {}) as Record<string, unknown>;
  const text = typeof r.text === "string"
    ? r.text
    : typeof message.content === "string"
    ? message.content
    : "";
  const model = typeof r.model === "string" ? r.model : undefined;
  const finish = typeof r.finishReason === "string"
    ? r.finishReason
    : typeof choice?.finish_reason === "string"
    ? choice.finish_reason
    : undefined;
  return { text, ...(model ? { model } : {}), ...(finish ? { finish } : {}) };
}

/**
 * Answers an MCP server's sampling requests with `options.model`. Each request becomes one
 * `model.invoke()` of an OpenAI-style chat request (the server's system prompt, messages,
 * `maxTokens` capped at `options.maxTokens`, temperature and stop sequences), so the model's
 * service hooks run on it: a `preInvoke` hook sees `params.mcp` ({@linkcode McpSamplingHookParams},
 * `kind: "sampling"`) and refuses a server-initiated call by throwing. A refused, unsupported
 * (tools, audio) or failed request is answered with an error ({@linkcode McpSamplingError});
 * an answer is `{ role: "assistant", content: { type: "text", text }, model, stopReason }`.
 *
 * The client must be created with `capabilities: { sampling: {} }` (the SDK refuses the handler
 * otherwise; so does this function, with a `TypeError`).
 *
 * @param client A connected MCP `Client` from `@modelcontextprotocol/sdk`.
 * @param options The model, the server's name, the token cap and the deadline.
 * @returns A handle whose `close()` removes the handler.
 * @throws {TypeError} When the client cannot take the handler, or an option is invalid.
 *
 * @example A policy that refuses server-initiated model calls of one server
 * ```ts
 * import { Client } from "@modelcontextprotocol/sdk/client/index.js";
 * import { FunctionEndpoint, IModel } from "@hookscope/core/service";
 * import { mcpSampling } from "@hookscope/core/mcp";
 *
 * const model = new IModel({
 *   model: "m",
 *   endpoint: new FunctionEndpoint({ call: () => ({ choices: [{ message: { content: "ok" } }] }) }),
 *   hookRegistry: {
 *     hooks: {
 *       preInvoke: (_event, params) => {
 *         const mcp = params.mcp as { server?: string } | undefined;
 *         if (mcp?.server === "untrusted") throw new Error("no model calls for this server");
 *       },
 *     },
 *   },
 * });
 * const client = new Client({ name: "agent", version: "1.0.0" }, { capabilities: { sampling: {} } });
 * const sampling = mcpSampling(client, { model, maxTokens: 1024 });
 * sampling.close();
 * ```
 */
export function mcpSampling(
  client: McpRequestClientLike,
  options: McpSamplingOptions,
): McpSamplingHandler {
  const model = options?.model;
  if (!model || typeof model.invoke !== "function") {
    throw new TypeError("Cannot handle MCP sampling: options.model must be an IModel");
  }
  const positive = (value: number | undefined, name: string, fallback: number): number => {
    if (value === undefined) return fallback;
    if (!Number.isInteger(value) || value <= 0) {
      throw new TypeError(`Cannot handle MCP sampling: ${name} must be a positive integer`);
    }
    return value;
  };
  const cap = positive(options.maxTokens, "maxTokens", DEFAULT_MAX_TOKENS);
  const timeoutMs = positive(options.timeoutMs, "timeoutMs", DEFAULT_TIMEOUT_MS);
  const named = options.server;
  const serverName = () => named ?? client.getServerVersion?.()?.name ?? "mcp";

  const close = installRequestHandler(
    client,
    "sampling/createMessage",
    "sampling",
    "sampling",
    async (params, extra) => {
      const server = serverName();
      if (params.tools !== undefined || params.toolChoice !== undefined) {
        throw new McpSamplingError(
          server,
          "unsupported",
          `Sampling request of MCP server ${
            JSON.stringify(server)
          } not answered: tool use in sampling is not supported`,
        );
      }
      const requested = typeof params.maxTokens === "number" ? params.maxTokens : cap;
      const request: Record<string, unknown> = {
        messages: chatMessages(server, params),
        max_tokens: Math.max(1, Math.min(cap, Math.floor(requested))),
      };
      if (typeof params.temperature === "number") request.temperature = params.temperature;
      if (Array.isArray(params.stopSequences) && params.stopSequences.length > 0) {
        request.stop = params.stopSequences.filter((s) => typeof s === "string");
      }
      const mcp: McpSamplingHookParams = {
        kind: "sampling",
        server,
        requestedMaxTokens: requested,
        ...(typeof params.systemPrompt === "string" ? { systemPrompt: params.systemPrompt } : {}),
        ...(params.modelPreferences !== undefined
          ? { modelPreferences: params.modelPreferences }
          : {}),
      };
      const { signal, done } = callSignal(extra.signal, timeoutMs, "sampling");
      let event: Awaited<ReturnType<IModel["invoke"]>>;
      try {
        event = await abortable(
          // exit: false, so a throwing hook always fails the event with a HookPhaseError
          // (never the model call) and the refusal can be told from a provider failure.
          model.invoke(request, { signal, preInvokeHookParams: { mcp }, preInvokeExitHook: false }),
          signal,
        );
      } catch (error) {
        throw refusalOrFailure(server, error);
      } finally {
        done();
      }
      if (event.status !== "completed") throw refusalOrFailure(server, event.execution.error);
      const answer = answerOf(event.response);
      return {
        role: "assistant",
        content: { type: "text", text: answer.text },
        model: answer.model ?? model.model,
        stopReason: answer.finish ? (STOP_REASONS[answer.finish] ?? answer.finish) : "endTurn",
      };
    },
  );
  return { close };
}

function refusalOrFailure(server: string, error: unknown): McpSamplingError {
  if (error instanceof McpSamplingError) return error;
  const name = error instanceof Error ? error.name : "";
  const message = error instanceof Error ? error.message : String(error ?? "unknown");
  // A throwing pre-invocation hook fails the event with a HookPhaseError: the model was never
  // called.
  const refused = name === "HookPhaseError" && /pre-invo(ke|cation) hook/i.test(message);
  return new McpSamplingError(
    server,
    refused ? "refused" : "failed",
    `Sampling request of MCP server ${JSON.stringify(server)} ${
      refused ? "refused by a service hook" : "failed"
    }: ${message}`,
    { cause: error },
  );
}
