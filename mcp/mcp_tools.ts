/**
 * `mcpTools`: an MCP server's tools as hookscope `Tool`s, kept in sync with the server.
 *
 * @module
 */

import { z } from "zod";
import { ActionManager } from "../action/manager.ts";
import { attachToolHooks } from "../action/_attach.ts";
import { AgentSpec } from "../action/spec.ts";
import type { ToolAnnotations, ToolSource } from "../core/tool_source.ts";
import { Tool, type ToolContext } from "../action/tool.ts";
import { findSchemaProblem, jsonSchemaValidator } from "../action/_json_schema.ts";
import { MAX_TIMER_MS } from "../core/_async.ts";
import { describeValue, isRecord, unknownOptionProblem } from "../core/_util.ts";

/** Options for {@linkcode mcpTools}. */
export interface McpToolsOptions {
  /** The server's name in `source.server` (default: the name the server reports, else `"mcp"`). */
  server?: string;
  /**
   * Prefix for every tool name (for example `"fs_"`, or `"mcp__files__"` as Claude Code names
   * them), to keep two servers' names apart. Without one, a server tool whose name is taken on the
   * `manager` is skipped (see {@linkcode McpToolSet.skipped}), never put in the other's place.
   */
  prefix?: string;
  /**
   * Keeps this manager in sync: tools are registered on it now, and a `tools/list_changed`
   * notification registers new ones, replaces changed ones and unregisters removed ones. A
   * manager that carries an `AgentSpec` attaches the spec's hook chains to tools that appear later.
   */
  manager?: ActionManager;
  /** Attach this spec's hook chains to every tool (not needed when `manager` carries one). */
  spec?: AgentSpec;
  /** Deadline of one tool call in milliseconds (default 60 000; at most 2^31 − 1). */
  timeoutMs?: number;
  /**
   * Where a failed refresh after a list change goes, and every tool that is not offered (a name
   * collision, a task-only tool) as an {@linkcode McpToolSkippedError} (default: only
   * {@linkcode McpToolSet.skipped} records them; a failed refresh rethrows from `refresh()`).
   */
  onError?: (error: unknown) => void;
  /**
   * Receives the server's progress notifications for each call (a `progressToken` is sent with
   * every call when this is set).
   */
  onProgress?: (event: McpProgressEvent) => void;
  /** Each progress notification restarts the call's deadline (default false), as the SDK offers. */
  resetTimeoutOnProgress?: boolean;
  /** With `resetTimeoutOnProgress`, the most a call may take in all, in milliseconds. */
  maxTotalTimeoutMs?: number;
  /**
   * The most UTF-8 bytes of a tool description offered to the model (default 16 384); a longer
   * one is cut and ends with a visible marker.
   */
  maxDescriptionBytes?: number;
  /**
   * The most bytes (UTF-8 of its JSON) of a tool result (default 1 048 576); a larger result
   * rejects with {@linkcode McpResultTooLargeError} and never reaches the branch or the model.
   */
  maxResultBytes?: number;
}

/** One progress notification of a running MCP tool call. */
export interface McpProgressEvent {
  /** Always `"progress"`. */
  readonly type: "progress";
  /** The server, as in `source.server`. */
  readonly server: string;
  /** The tool's name as offered (with the prefix). */
  readonly tool: string;
  /** The call's id, when the caller gave one. */
  readonly callId?: string;
  /** Progress so far (increases with every notification). */
  readonly progress: number;
  /** The total, when the server knows it. */
  readonly total?: number;
  /** The server's message, when it sent one. */
  readonly message?: string;
}

/**
 * Why a server tool is not offered: its name is taken on the manager, the server listed it twice,
 * it can only run as a task, or its definition (name, input schema) cannot be used.
 */
export type McpSkipReason = "name-taken" | "duplicate" | "task-required" | "invalid-schema";

/** A server tool that is not offered, and why (in {@linkcode McpToolSet.skipped} and `onError`). */
export class McpToolSkippedError extends Error {
  /** The server. */
  readonly server: string;
  /** The tool's name as it would have been offered. */
  readonly toolName: string;
  /** Why it is skipped. */
  readonly reason: McpSkipReason;
  /** Makes the error (`options.cause`: the {@linkcode McpSchemaError} of an invalid schema). */
  constructor(
    server: string,
    toolName: string,
    reason: McpSkipReason,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = "McpToolSkippedError";
    this.server = server;
    this.toolName = toolName;
    this.reason = reason;
  }
}

/** A tool result larger than `maxResultBytes`; it goes through `tool.error`. */
export class McpResultTooLargeError extends Error {
  /** The tool's name on the server. */
  readonly toolName: string;
  /** The result's size in bytes (UTF-8 of its JSON). */
  readonly bytes: number;
  /** The cap. */
  readonly limit: number;
  /** Makes the error. */
  constructor(toolName: string, bytes: number, limit: number) {
    super(
      `MCP tool ${
        JSON.stringify(toolName)
      } returned ${bytes} bytes, more than the ${limit}-byte result cap (maxResultBytes)`,
    );
    this.name = "McpResultTooLargeError";
    this.toolName = toolName;
    this.bytes = bytes;
    this.limit = limit;
  }
}

/** What {@linkcode mcpTools} returns. */
export interface McpToolSet {
  /** The server's name as used in `source.server`. */
  readonly server: string;
  /** The current tools (with hooks attached when a spec was given). */
  readonly tools: readonly Tool[];
  /** Lists the server's tools again and updates `tools` and the manager. */
  refresh(): Promise<readonly Tool[]>;
  /** The server tools not offered at the last refresh, and why. */
  readonly skipped: readonly McpToolSkippedError[];
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
  /**
   * Sends a request with a result schema (the SDK `Client`'s `request`). Used only when
   * `listTools` rejects a page, to list it again without the SDK's all-or-nothing check.
   */
  request?(
    request: { method: string; params?: Record<string, unknown> },
    // deno-lint-ignore no-explicit-any
    schema: any,
  ): Promise<unknown>;
  /** Calls a tool. */
  callTool(
    params: { name: string; arguments?: Record<string, unknown> },
    resultSchema?: undefined,
    options?: {
      signal?: AbortSignal;
      timeout?: number;
      // deno-lint-ignore no-explicit-any
      onprogress?: (progress: any) => void;
      resetTimeoutOnProgress?: boolean;
      maxTotalTimeout?: number;
    },
  ): Promise<unknown>;
  /** Sets the handler of one notification, keyed by the schema's `method` literal. */
  // deno-lint-ignore no-explicit-any
  setNotificationHandler(schema: any, handler: (notification: any) => unknown): void;
  /** The server's name and version after the handshake. */
  getServerVersion?(): { name?: string } | undefined;
}

interface McpToolInfo {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  execution?: { taskSupport?: string };
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
const DEFAULT_MAX_DESCRIPTION_BYTES = 16 * 1024;
const DEFAULT_MAX_RESULT_BYTES = 1024 * 1024;
const LIST_CHANGED = "notifications/tools/list_changed";
const HINTS = ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"] as const;

// UTF-8 length of a string without encoding it.
function utf8Bytes(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c < 0xdc00 && i + 1 < text.length) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

// `text` cut to at most `limit` UTF-8 bytes (marker included), ending with a visible marker.
function capText(text: string, limit: number): string {
  const bytes = utf8Bytes(text);
  if (bytes <= limit) return text;
  const marker = `\n[description cut: ${bytes} bytes, limit ${limit}]`;
  let end = 0;
  let used = 0;
  const room = Math.max(0, limit - utf8Bytes(marker));
  while (end < text.length) {
    const c = text.charCodeAt(end);
    const pair = c >= 0xd800 && c < 0xdc00 && end + 1 < text.length;
    const size = c < 0x80 ? 1 : c < 0x800 ? 2 : pair ? 4 : 3;
    if (used + size > room) break;
    used += size;
    end += pair ? 2 : 1;
  }
  return text.slice(0, end) + marker;
}

function sourceOf(server: string, info: McpToolInfo, maxText: number): ToolSource {
  const source: {
    kind: "mcp";
    server: string;
    title?: string;
    annotations?: ToolAnnotations;
    outputSchema?: Record<string, unknown>;
  } = { kind: "mcp", server };
  const annotations = info.annotations;
  const title = typeof info.title === "string"
    ? info.title
    : typeof annotations?.title === "string"
    ? annotations.title
    : undefined;
  if (title !== undefined) source.title = capText(title, Math.min(maxText, 1024));
  if (annotations && typeof annotations === "object") {
    const hints: Record<string, boolean> = {};
    for (const hint of HINTS) {
      if (typeof annotations[hint] === "boolean") hints[hint] = annotations[hint] as boolean;
    }
    if (Object.keys(hints).length > 0) source.annotations = Object.freeze(hints);
  }
  if (info.outputSchema && typeof info.outputSchema === "object") {
    source.outputSchema = info.outputSchema;
  }
  return Object.freeze(source);
}

// One notification handler per client serves every tool set on it, and chains to the handler that
// was set before the first set (the user's own, or the client's `listChanged` option).
interface Dispatcher {
  readonly sets: Set<() => void>;
  readonly previous?: (notification: unknown) => unknown;
}
const dispatchers = new WeakMap<object, Dispatcher>();

function follow(client: McpClientLike, onChange: () => void): () => void {
  let dispatcher = dispatchers.get(client);
  if (!dispatcher) {
    const handlers = (client as { _notificationHandlers?: unknown })._notificationHandlers;
    const previous = handlers instanceof Map
      ? handlers.get(LIST_CHANGED) as ((notification: unknown) => unknown) | undefined
      : undefined;
    const created: Dispatcher = { sets: new Set(), ...(previous ? { previous } : {}) };
    dispatcher = created;
    dispatchers.set(client, created);
    client.setNotificationHandler(toolListChanged(), async (notification: unknown) => {
      for (const set of [...created.sets]) set();
      await created.previous?.(notification);
    });
  }
  dispatcher.sets.add(onChange);
  const sets = dispatcher.sets;
  return () => sets.delete(onChange);
}

// Whether a listTools rejection is the SDK's result validation (a zod error), not the transport.
function isParseError(error: unknown): boolean {
  if (!error || typeof error !== "object") return false;
  const e = error as { name?: unknown; issues?: unknown };
  return Array.isArray(e.issues) || e.name === "ZodError" || e.name === "$ZodError";
}

let looseListSchema: z.ZodType | undefined;
function looseToolList(): z.ZodType {
  return looseListSchema ??= z.object({
    tools: z.array(z.unknown()),
    nextCursor: z.optional(z.string()),
  }).loose();
}

// The SDK validates structured results against the output schemas it cached in listTools; a page
// listed through the fallback gives it the tools it can use.
function cacheOutputSchemas(client: McpClientLike, tools: unknown[]): void {
  const cache = (client as { cacheToolMetadata?: (tools: unknown[]) => void }).cacheToolMetadata;
  if (typeof cache !== "function") return;
  const usable = tools.filter((t) => {
    const info = t as McpToolInfo | null;
    return !!info && typeof info.name === "string" && info.inputSchema?.type === "object" &&
      (info.outputSchema === undefined || info.outputSchema?.type === "object");
  });
  try {
    cache.call(client, usable);
  } catch {
    // the cache only speeds up the SDK's own checks
  }
}

// The SDK keys notification handlers by the schema's `method` literal and accepts zod 4 schemas,
// so the adapter needs no value import from the SDK (only its types).
let listChangedSchema: z.ZodType | undefined;
function toolListChanged(): z.ZodType {
  return listChangedSchema ??= z.object({
    method: z.literal("notifications/tools/list_changed"),
    params: z.optional(z.record(z.string(), z.unknown())),
  }).loose();
}

const OPTION_KEYS: ReadonlySet<string> = new Set([
  "server",
  "prefix",
  "manager",
  "spec",
  "timeoutMs",
  "onError",
  "onProgress",
  "resetTimeoutOnProgress",
  "maxTotalTimeoutMs",
  "maxDescriptionBytes",
  "maxResultBytes",
]);

function optionFail(what: string): never {
  throw new TypeError(`Cannot list MCP tools: ${what}`);
}

/**
 * Checks the kinds of mcpTools' options up front: an unknown key (a misspelt `manager` or `spec`
 * would leave the tools under no policy) or a value of another kind is a TypeError naming it.
 */
function checkOptions(options: unknown): void {
  if (options === undefined) return;
  if (!isRecord(options)) optionFail(`options must be an object; got ${describeValue(options)}`);
  const unknown = unknownOptionProblem(options, OPTION_KEYS);
  if (unknown !== undefined) optionFail(unknown);
  const { server, manager, spec, onError, onProgress, resetTimeoutOnProgress } = options;
  if (server !== undefined && (typeof server !== "string" || server === "")) {
    optionFail(`server must be a non-empty string; got ${describeValue(server)}`);
  }
  if (manager !== undefined && !(manager instanceof ActionManager)) {
    optionFail(`manager must be an ActionManager; got ${describeValue(manager)}`);
  }
  if (spec !== undefined && !(spec instanceof AgentSpec)) {
    optionFail(`spec must be an AgentSpec; got ${describeValue(spec)}`);
  }
  if (onError !== undefined && typeof onError !== "function") {
    optionFail(`onError must be a function; got ${describeValue(onError)}`);
  }
  if (onProgress !== undefined && typeof onProgress !== "function") {
    optionFail(`onProgress must be a function; got ${describeValue(onProgress)}`);
  }
  if (resetTimeoutOnProgress !== undefined && typeof resetTimeoutOnProgress !== "boolean") {
    optionFail(
      `resetTimeoutOnProgress must be a boolean; got ${describeValue(resetTimeoutOnProgress)}`,
    );
  }
}

/**
 * Lists an MCP server's tools and returns them as hookscope {@linkcode Tool}s.
 *
 * Each tool's arguments are validated against the server's JSON Schema before the call (a
 * tool with a malformed schema is skipped, its {@linkcode McpSchemaError} as the cause); every tool carries `source: { kind: "mcp",
 * server }`, which the session's `tool.pre`/`tool.post` payloads repeat. A call returns the server's
 * result with its content blocks; an `isError` result rejects with {@linkcode McpToolError}, so it
 * goes through `tool.error`. A `tools/list_changed` notification refreshes the set (and the
 * `manager`).
 *
 * @param client A connected MCP `Client` from `@modelcontextprotocol/sdk`.
 * @param options Server name, prefix, manager to keep in sync, spec, call deadline.
 * @returns The tool set; call `close()` to stop following list changes.
 * @throws {TypeError} When `client` is not a client, or an option is unknown or of another kind
 *   (`manager` not an `ActionManager`, `spec` not an `AgentSpec`, `timeoutMs` not positive or above
 *   2^31 − 1, …).
 * @throws {McpSchemaError} When the server's tool list cannot be read. A tool whose definition
 *   cannot be used (a malformed input schema, no name) is not offered: it is in
 *   {@linkcode McpToolSet.skipped} with reason `"invalid-schema"`, and the other tools are.
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
  checkOptions(options);
  const prefix = options?.prefix ?? "";
  if (typeof prefix !== "string") {
    throw new TypeError("Cannot list MCP tools: prefix must be a string");
  }
  const timeoutMs = options?.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (typeof timeoutMs !== "number" || !Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new TypeError("Cannot list MCP tools: timeoutMs must be a positive number");
  }
  // The SDK arms a timer with it, and a longer one than a timer can hold fires at once.
  if (timeoutMs > MAX_TIMER_MS) {
    throw new TypeError(
      `Cannot list MCP tools: timeoutMs must be at most ${MAX_TIMER_MS} (about 24.8 days); got ${timeoutMs}`,
    );
  }
  const positive = (value: number | undefined, name: string, fallback: number): number => {
    if (value === undefined) return fallback;
    if (!Number.isInteger(value) || value <= 0) {
      throw new TypeError(`Cannot list MCP tools: ${name} must be a positive integer`);
    }
    return value;
  };
  const maxDescriptionBytes = positive(
    options?.maxDescriptionBytes,
    "maxDescriptionBytes",
    DEFAULT_MAX_DESCRIPTION_BYTES,
  );
  const maxResultBytes = positive(
    options?.maxResultBytes,
    "maxResultBytes",
    DEFAULT_MAX_RESULT_BYTES,
  );
  const maxTotalTimeout = options?.maxTotalTimeoutMs === undefined
    ? undefined
    : positive(options.maxTotalTimeoutMs, "maxTotalTimeoutMs", 1);
  const onProgress = options?.onProgress;
  const server = options?.server ?? client.getServerVersion?.()?.name ?? "mcp";
  const manager = options?.manager;
  const spec = options?.spec;
  // Entries this set offers; `registered` is the tool object it put on the manager, so it never
  // removes or replaces a tool that someone else registered under the same name.
  let current = new Map<string, { tool: Tool; fingerprint: string; registered?: Tool }>();
  let skipped: McpToolSkippedError[] = [];
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
    const name = prefix + remoteName;
    const tool = new Tool({
      name,
      description: capText(
        typeof info.description === "string" ? info.description : "",
        maxDescriptionBytes,
      ),
      parameters: info.inputSchema,
      inputSchema: jsonSchemaValidator(info.inputSchema),
      source: sourceOf(server, info, maxDescriptionBytes),
      execute: async (args: Record<string, unknown>, context: ToolContext) => {
        // A signal of this call only: the SDK adds an abort listener to the signal it is given
        // and never removes it, so a long-lived caller signal is linked, and unlinked at the end.
        const outer = context.signal;
        const controller = new AbortController();
        const abort = (): void => controller.abort(outer.reason);
        if (outer.aborted) abort();
        else outer.addEventListener("abort", abort, { once: true });
        try {
          const result = await client.callTool({ name: remoteName, arguments: args }, undefined, {
            signal: controller.signal,
            timeout: timeoutMs,
            ...(onProgress
              ? {
                onprogress: (p: { progress: number; total?: number; message?: string }) => {
                  onProgress({
                    type: "progress",
                    server,
                    tool: name,
                    ...(context.callId !== undefined ? { callId: context.callId } : {}),
                    progress: p.progress,
                    ...(typeof p.total === "number" ? { total: p.total } : {}),
                    ...(typeof p.message === "string" ? { message: p.message } : {}),
                  });
                },
              }
              : {}),
            ...(options?.resetTimeoutOnProgress ? { resetTimeoutOnProgress: true } : {}),
            ...(maxTotalTimeout !== undefined ? { maxTotalTimeout } : {}),
          }) as Record<string, unknown>;
          const bytes = utf8Bytes(JSON.stringify(result) ?? "");
          if (bytes > maxResultBytes) {
            throw new McpResultTooLargeError(remoteName, bytes, maxResultBytes);
          }
          if (result.isError === true) throw new McpToolError(remoteName, result);
          return result;
        } finally {
          outer.removeEventListener("abort", abort);
        }
      },
    });
    return spec && !manager?.spec ? attachToolHooks(tool, spec) : tool;
  };

  const list = async (): Promise<McpToolInfo[]> => {
    const all: McpToolInfo[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 1000; page++) {
      let result: { tools: McpToolInfo[]; nextCursor?: string };
      const params = cursor === undefined ? undefined : { cursor };
      try {
        try {
          result = await client.listTools(params) as never;
        } catch (error) {
          // The SDK refuses a whole page for one tool it cannot parse: list the page again with
          // a loose schema, so each tool is judged on its own (and a bad one skipped).
          if (!isParseError(error) || typeof client.request !== "function") throw error;
          result = await client.request(
            { method: "tools/list", ...(params ? { params } : {}) },
            looseToolList(),
          ) as never;
          cacheOutputSchemas(client, result.tools);
        }
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

  const skip = (
    name: string,
    reason: McpSkipReason,
    message: string,
    cause?: unknown,
  ): void => {
    const error = new McpToolSkippedError(
      server,
      name,
      reason,
      message,
      cause === undefined ? undefined : { cause },
    );
    skipped.push(error);
    options?.onError?.(error);
  };

  const listOnce = async (): Promise<readonly Tool[]> => {
    const infos = await list();
    const next = new Map<string, { tool: Tool; fingerprint: string; registered?: Tool }>();
    const built: McpToolInfo[] = [];
    skipped = [];
    for (const info of infos) {
      if (!info || typeof info !== "object" || typeof info.name !== "string" || !info.name) {
        const shown = typeof (info as { name?: unknown })?.name === "string"
          ? prefix + (info as { name: string }).name
          : "";
        skip(
          shown,
          "invalid-schema",
          `MCP server ${JSON.stringify(server)} lists a tool without a name; it is not offered`,
        );
        continue;
      }
      const name = prefix + info.name;
      if (next.has(name) || built.some((b) => prefix + b.name === name)) {
        skip(
          name,
          "duplicate",
          `MCP server ${JSON.stringify(server)} lists ${
            JSON.stringify(name)
          } twice; the first is offered`,
        );
        continue;
      }
      if (info.execution?.taskSupport === "required") {
        skip(
          name,
          "task-required",
          `MCP tool ${JSON.stringify(name)} of server ${
            JSON.stringify(server)
          } is not offered: it requires task-based execution, which mcpTools does not run`,
        );
        continue;
      }
      const ours = current.get(name);
      const holder = manager?.get(name);
      if (holder !== undefined && (ours?.registered === undefined || holder !== ours.registered)) {
        skip(
          name,
          "name-taken",
          `MCP tool ${JSON.stringify(name)} of server ${
            JSON.stringify(server)
          } is not offered: the name is already registered on the manager (use prefix to namespace it)`,
        );
        continue;
      }
      const fingerprint = JSON.stringify([
        info.title ?? null,
        info.description ?? "",
        info.inputSchema,
        info.outputSchema ?? null,
        info.annotations ?? null,
      ]);
      const old =
        ours && ours.fingerprint === fingerprint && (!manager || ours.registered === holder)
          ? ours
          : undefined;
      let entry = old;
      if (!entry) {
        try {
          entry = { tool: build(info), fingerprint };
        } catch (error) {
          // One unusable tool never blocks the others (at start or on a list change).
          skip(
            name,
            "invalid-schema",
            `MCP tool ${JSON.stringify(name)} of server ${JSON.stringify(server)} is not offered: ${
              error instanceof Error ? error.message : String(error)
            }`,
            error,
          );
          continue;
        }
      }
      next.set(name, entry);
      built.push(info);
    }
    if (manager) {
      for (const [name, entry] of current) {
        // Remove only what this set put there and still holds the name.
        if (!next.has(name) && entry.registered && manager.get(name) === entry.registered) {
          manager.unregister(name);
        }
      }
      for (const [name, entry] of next) {
        if (entry.registered) continue;
        manager.register(entry.tool, { update: true });
        entry.registered = manager.get(name);
      }
    }
    current = next;
    return [...next.values()].map((e) => e.tool);
  };

  // Refreshes run one at a time, so an older list never lands after a newer one; a call made
  // while one runs gets the next, which lists after the call was made (calls made before it
  // starts share it). One that only a list change asked for does not run once the set is closed
  // or failed to start: it would change the manager for a set its caller no longer has.
  let tail: Promise<unknown> = Promise.resolve();
  let next: Promise<readonly Tool[]> | null = null;
  let asked = false;
  let failed = false;
  const queue = (byCaller: boolean): Promise<readonly Tool[]> => {
    asked ||= byCaller;
    if (next !== null) return next;
    const start = (): Promise<readonly Tool[]> | readonly Tool[] => {
      const byCallers = asked;
      next = null;
      asked = false;
      if (failed || (closed && !byCallers)) return [...current.values()].map((e) => e.tool);
      return listOnce();
    };
    const run = tail.then(start, start);
    next = run;
    tail = run;
    return run;
  };
  const refresh = (): Promise<readonly Tool[]> => queue(true);

  // Changes are followed before the first list: the SDK drops a notification that arrives while
  // no handler is set, and a server that changes its tools right after connecting sends one then.
  const unfollow = follow(client, () => {
    if (closed) return;
    queue(false).catch((error) => options?.onError?.(error));
  });
  try {
    await refresh();
  } catch (error) {
    failed = true;
    unfollow();
    throw error;
  }

  return {
    server,
    get tools(): readonly Tool[] {
      return [...current.values()].map((e) => e.tool);
    },
    get skipped(): readonly McpToolSkippedError[] {
      return [...skipped];
    },
    refresh,
    close(): void {
      closed = true;
      unfollow();
    },
  };
}
