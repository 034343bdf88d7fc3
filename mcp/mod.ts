/**
 * MCP under hookscope's hooks: {@linkcode mcpTools} turns an MCP server's tools into `Tool`s that
 * go through the agent's Tool-scope chains and the session's `tool.pre`/`tool.post` decisions,
 * and keeps them in sync when the server's tool list changes; {@linkcode mcpSampling} answers a
 * server's sampling requests through a model's service hooks; {@linkcode mcpElicitation} answers
 * its elicitation requests on the approval path.
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
export {
  type McpRequestClientLike,
  mcpSampling,
  McpSamplingError,
  type McpSamplingFailure,
  type McpSamplingHandler,
  type McpSamplingHookParams,
  type McpSamplingOptions,
} from "./mcp_sampling.ts";
export {
  mcpElicitation,
  type McpElicitationArgs,
  type McpElicitationHandler,
  type McpElicitationOptions,
} from "./mcp_elicitation.ts";
