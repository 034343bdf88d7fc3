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
  /** The tool's display title, when the source gives one (MCP `title` or `annotations.title`). */
  readonly title?: string;
  /**
   * Behaviour hints the source declares (MCP tool annotations). They come from the server and are
   * untrusted: a policy may ask before a `destructiveHint` tool, but should not allow a call only
   * because a server says `readOnlyHint`.
   */
  readonly annotations?: ToolAnnotations;
  /** The JSON Schema the source declares for the tool's structured result (MCP `outputSchema`). */
  readonly outputSchema?: Readonly<Record<string, unknown>>;
}

/**
 * Behaviour hints of a tool, as MCP tool annotations name them.
 *
 * @example
 * ```ts
 * import type { ToolAnnotations } from "@hookscope/core/hooks";
 * import assert from "node:assert/strict";
 *
 * const hints: ToolAnnotations = { destructiveHint: true, readOnlyHint: false };
 * assert.equal(hints.destructiveHint, true);
 * ```
 */
export interface ToolAnnotations {
  /** The tool does not change its environment. */
  readonly readOnlyHint?: boolean;
  /** The tool may delete or overwrite (meaningful when not read-only). */
  readonly destructiveHint?: boolean;
  /** Calling it again with the same arguments has no further effect. */
  readonly idempotentHint?: boolean;
  /** The tool reaches an open world (the web, other people), not a closed domain. */
  readonly openWorldHint?: boolean;
}
