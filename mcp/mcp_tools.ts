/**
 * `mcpTools`: an MCP server's tools as hookscope `Tool`s, kept in sync with the server.
 *
 * @module
 */

import { z } from "zod";
import type { ActionManager } from "../action/manager.ts";
import { attachToolHooks } from "../action/_attach.ts";
import type { AgentSpec } from "../action/spec.ts";
import type { ToolSource } from "../core/tool_source.ts";
import { Tool, type ToolContext } from "../action/tool.ts";
import { findSchemaProblem, jsonSchemaValidator } from "../action/_json_schema.ts";

/** Options for {@linkcode mcpTools}. */
export interface McpToolsOptions {
  /** The server's name in `source.server` (default: the name the server reports, else `"mcp"`). */
  server?: string;
  /** Prefix for every tool name (for example `"fs_"`), to keep two servers' names apart. */
  prefix?: string;
  /**
   * Keeps this manager in sync: tools are registered on it now, and a `tools/list_changed`
   * notification registers new ones, replaces changed ones and unregisters removed ones. A
   * manager that carries an `AgentSpec` attaches the spec's hook chains to tools that appear later.
   */
  manager?: ActionManager;
  /** Attach this spec's hook chains to every tool (not needed when `manager` carries one). */
  spec?: AgentSpec;
  /** Deadline of one tool call in milliseconds (default 60 000). */
  timeoutMs?: number;
  /** Where a failed refresh after a list change goes (default: rethrown from `refresh()` only). */
  onError?: (error: unknown) => void;
}

/** What {@linkcode mcpTools} returns. */
export interface McpToolSet {
  /** The server's name as used in `source.server`. */
  readonly server: string;
  /** The current tools (with hooks attached when a spec was given). */
  readonly tools: readonly Tool[];
  /** Lists the server's tools again and updates `tools` and the manager. */
  refresh(): Promise<readonly Tool[]>;
  /** Stops following list changes (the client stays open: close it yourself). */
  close(): void;
}

/** An MCP server's tool list or schema cannot be used. */
export class McpSchemaError extends TypeError {
  /** The server. */
  readonly server: string;
  /** The tool, when one tool's schema is at fault. */
  readonly toolName?: string;
  /** Makes the error. */
  constructor(server: string, message: string, toolName?: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "McpSchemaError";
    this.server = server;
    if (toolName !== undefined) this.toolName = toolName;
  }
}

/** An MCP tool answered with `isError: true`; `result` keeps its content blocks. */
export class McpToolError extends Error {
  /** The tool's name on the server. */
  readonly toolName: string;
  /** The server's whole result (`content`, `structuredContent`, `isError`). */
  readonly result: Readonly<Record<string, unknown>>;
  /** Makes the error. */
  constructor(toolName: string, result: Record<string, unknown>) {
    super(`MCP tool ${JSON.stringify(toolName)} failed: ${textOf(result) || "no message"}`);
    this.name = "McpToolError";
    this.toolName = toolName;
    this.result = result;
  }
}

/**
 * The part of an MCP `Client` (from `@modelcontextprotocol/sdk`) that {@linkcode mcpTools} uses;
 * a connected SDK `Client` fits it.
 */
export interface McpClientLike {
  /** Lists one page of tools. */
  listTools(params?: { cursor?: string }): Promise<unknown>;
  /** Calls a tool. */
  callTool(
    params: { name: string; arguments?: Record<string, unknown> },
    resultSchema?: undefined,
    options?: { signal?: AbortSignal; timeout?: number },
  ): Promise<unknown>;
  /** Sets the handler of one notification, keyed by the schema's `method` literal. */
  // deno-lint-ignore no-explicit-any
  setNotificationHandler(schema: any, handler: (notification: any) => unknown): void;
  /** The server's name and version after the handshake. */
  getServerVersion?(): { name?: string } | undefined;
}

interface McpToolInfo {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

function textOf(result: Record<string, unknown>): string {
  const content = result.content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((b) => b && typeof b === "object" && (b as { type?: unknown }).type === "text")
    .map((b) => String((b as { text?: unknown }).text ?? ""))
    .join("\n")
    .slice(0, 2000);
}

const DEFAULT_TIMEOUT_MS = 60_000;

// The SDK keys notification handlers by the schema's `method` literal and accepts zod 4 schemas,
// so the adapter needs no value import from the SDK (only its types).
let listChangedSchema: z.ZodType | undefined;
function toolListChanged(): z.ZodType {
  return listChangedSchema ??= z.object({
    method: z.literal("notifications/tools/list_changed"),
    params: z.optional(z.record(z.string(), z.unknown())),
  }).loose();
}

/**
 * Lists an MCP server's tools and returns them as hookscope {@linkcode Tool}s.
 *
 * Each tool's arguments are validated against the server's JSON Schema before the call (a
 * malformed schema is an {@linkcode McpSchemaError}); every tool carries `source: { kind: "mcp",
 * server }`, which the session's `tool.pre`/`tool.post` payloads repeat. A call returns the server's
 * result with its content blocks; an `isError` result rejects with {@linkcode McpToolError}, so it
 * goes through `tool.error`. A `tools/list_changed` notification refreshes the set (and the
 * `manager`).
 *
 * @param client A connected MCP `Client` from `@modelcontextprotocol/sdk`.
 * @param options Server name, prefix, manager to keep in sync, spec, call deadline.
 * @returns The tool set; call `close()` to stop following list changes.
 * @throws {McpSchemaError} When the server's tool list or a tool's schema is malformed.
 *
 * @example An in-memory MCP server's tools, governed by a session
 * ```ts
 * import { Client } from "@modelcontextprotocol/sdk/client/index.js";
 * import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
 * import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
 * import { z } from "zod";
 * import { mcpTools } from "@hookscope/core/mcp";
 * import assert from "node:assert/strict";
 *
 * const server = new McpServer({ name: "demo", version: "1.0.0" });
 * server.registerTool("shout", { inputSchema: { text: z.string() } }, ({ text }: { text: string }) => ({
 *   content: [{ type: "text", text: text.toUpperCase() }],
 * }));
 * const [a, b] = InMemoryTransport.createLinkedPair();
 * await server.connect(a);
 * const client = new Client({ name: "agent", version: "1.0.0" });
 * await client.connect(b);
 *
 * const set = await mcpTools(client);
 * assert.deepEqual(set.tools.map((t) => t.name), ["shout"]);
 * assert.deepEqual(set.tools[0].source, { kind: "mcp", server: "demo" });
 * set.close();
 * await client.close();
 * ```
 */
export async function mcpTools(
  client: McpClientLike,
  options?: McpToolsOptions,
): Promise<McpToolSet> {
  if (client === null || typeof client !== "object" || typeof client.listTools !== "function") {
    throw new TypeError("Cannot list MCP tools: expected a connected MCP Client");
  }
  const prefix = options?.prefix ?? "";
  if (typeof prefix !== "string") {
    throw new TypeError("Cannot list MCP tools: prefix must be a string");
  }
  const timeoutMs = options?.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new TypeError("Cannot list MCP tools: timeoutMs must be a positive number");
  }
  const server = options?.server ?? client.getServerVersion?.()?.name ?? "mcp";
  const source: ToolSource = Object.freeze({ kind: "mcp", server });
  const manager = options?.manager;
  const spec = options?.spec;
  let current = new Map<string, { tool: Tool; fingerprint: string }>();
  let closed = false;

  const build = (info: McpToolInfo): Tool => {
    const problem = findSchemaProblem(info.inputSchema);
    if (problem !== null || info.inputSchema?.type !== "object") {
      throw new McpSchemaError(
        server,
        `Cannot use MCP tool ${JSON.stringify(info.name)} of server ${
          JSON.stringify(server)
        }: its input schema is malformed (${problem ?? `#/type: must be "object"`})`,
        info.name,
      );
    }
    const remoteName = info.name;
    const tool = new Tool({
      name: prefix + remoteName,
      description: info.description ?? "",
      parameters: info.inputSchema,
      requestOptions: jsonSchemaValidator(info.inputSchema),
      source,
      func: async (args: Record<string, unknown>, context: ToolContext) => {
        const result = await client.callTool({ name: remoteName, arguments: args }, undefined, {
          signal: context.signal,
          timeout: timeoutMs,
        }) as Record<string, unknown>;
        if (result.isError === true) throw new McpToolError(remoteName, result);
        return result;
      },
    });
    return spec && !manager?.spec ? attachToolHooks(tool, spec) : tool;
  };

  const list = async (): Promise<McpToolInfo[]> => {
    const all: McpToolInfo[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 1000; page++) {
      let result: { tools: McpToolInfo[]; nextCursor?: string };
      try {
        result = await client.listTools(cursor === undefined ? undefined : { cursor }) as never;
      } catch (error) {
        throw new McpSchemaError(
          server,
          `Cannot list the tools of MCP server ${JSON.stringify(server)}: ${
            error instanceof Error ? error.message : String(error)
          }`,
          undefined,
          { cause: error },
        );
      }
      all.push(...result.tools);
      cursor = result.nextCursor;
      if (!cursor) return all;
    }
    throw new McpSchemaError(server, `MCP server ${JSON.stringify(server)} paged past 1000 pages`);
  };

  const refresh = async (): Promise<readonly Tool[]> => {
    const infos = await list();
    const next = new Map<string, { tool: Tool; fingerprint: string }>();
    for (const info of infos) {
      const fingerprint = JSON.stringify([info.description ?? "", info.inputSchema]);
      const old = current.get(prefix + info.name);
      next.set(
        prefix + info.name,
        old && old.fingerprint === fingerprint ? old : { tool: build(info), fingerprint },
      );
    }
    if (manager) {
      for (const name of current.keys()) if (!next.has(name)) manager.unregister(name);
      for (const [name, entry] of next) {
        if (current.get(name) !== entry) manager.register(entry.tool, { update: true });
      }
    }
    current = next;
    return [...next.values()].map((e) => e.tool);
  };

  await refresh();
  client.setNotificationHandler(toolListChanged(), async () => {
    if (closed) return;
    try {
      await refresh();
    } catch (error) {
      options?.onError?.(error);
    }
  });

  return {
    server,
    get tools(): readonly Tool[] {
      return [...current.values()].map((e) => e.tool);
    },
    refresh,
    close(): void {
      closed = true;
    },
  };
}
