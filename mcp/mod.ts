/**
 * MCP tools under hookscope's hooks: {@linkcode mcpTools} turns an MCP server's tools into
 * `Tool`s that go through the agent's Tool-scope chains and the session's `tool.pre`/`tool.post`
 * decisions, and keeps them in sync when the server's tool list changes.
 *
 * Needs `@modelcontextprotocol/sdk` (an optional peer dependency) and `@cfworker/json-schema`.
 *
 * @module
 */

export {
  type McpClientLike,
  type McpProgressEvent,
  McpResultTooLargeError,
  McpSchemaError,
  type McpSkipReason,
  McpToolError,
  mcpTools,
  type McpToolSet,
  McpToolSkippedError,
  type McpToolsOptions,
} from "./mcp_tools.ts";
