/**
 * Where a tool comes from.
 *
 * @module
 */

/**
 * Where a tool comes from: `local` (defined in this process), `mcp` (an MCP server, named by
 * `server`), `ai-sdk` (an AI SDK tool), or another kind an adapter names. `Tool.source` holds it
 * and the `tool.pre`/`tool.post` payloads repeat it.
 *
 * @example
 * ```ts
 * import type { ToolSource } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const source: ToolSource = { kind: "mcp", server: "files" };
 * assert.equal(source.kind, "mcp");
 * ```
 */
export interface ToolSource {
  /** The kind of source. */
  readonly kind: "local" | "mcp" | "ai-sdk" | (string & Record<never, never>);
  /** The server or provider the tool comes from, when there is one. */
  readonly server?: string;
}
