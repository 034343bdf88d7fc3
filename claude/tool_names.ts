/**
 * How hookscope's coding tools look to a Claude Code hook: the Claude tool name and input shape
 * each call is shown as, and how an `updatedInput` is translated back. Tools outside the table
 * keep their name and arguments (MCP tools already use Claude's `mcp__server__tool` names when
 * an MCP adapter names them so).
 *
 * | hookscope call | Claude tool | input fields |
 * |---|---|---|
 * | `bash` | `Bash` | `command`, `timeoutMs` → `timeout` |
 * | `reader` `read` | `Read` | `path` → `file_path`, `offset` (0-based) → `offset` (1-based), `limit` |
 * | `reader` `list_dir` | `LS` | `path` |
 * | `editor` `write` | `Write` | `filePath` → `file_path`, `content` |
 * | `editor` `edit` | `Edit` | `filePath` → `file_path`, `oldString` → `old_string`, `newString` → `new_string`, `replaceAll` → `replace_all` |
 * | `search` `grep` | `Grep` | `pattern`, `path`, `include` → `glob` |
 * | `search` `find` | `Glob` | `pattern`, `path` |
 *
 * @module
 */

/** Tool arguments. */
export type ToolArgs = Readonly<Record<string, unknown>>;

interface Shape {
  /** hookscope tool name. */
  readonly tool: string;
  /** The `action` value, when the tool has several. */
  readonly action?: string;
  /** hookscope field → Claude field. */
  readonly fields: Readonly<Record<string, string>>;
}

const SHAPES: Readonly<Record<string, Shape>> = {
  Bash: { tool: "bash", fields: { command: "command", timeoutMs: "timeout" } },
  Read: {
    tool: "reader",
    action: "read",
    fields: { path: "file_path", offset: "offset", limit: "limit" },
  },
  LS: { tool: "reader", action: "list_dir", fields: { path: "path" } },
  Write: { tool: "editor", action: "write", fields: { filePath: "file_path", content: "content" } },
  Edit: {
    tool: "editor",
    action: "edit",
    fields: {
      filePath: "file_path",
      oldString: "old_string",
      newString: "new_string",
      replaceAll: "replace_all",
    },
  },
  Grep: {
    tool: "search",
    action: "grep",
    fields: { pattern: "pattern", path: "path", include: "glob" },
  },
  Glob: { tool: "search", action: "find", fields: { pattern: "pattern", path: "path" } },
};

/**
 * The default names: hookscope tool name → Claude tool name (for tools with several actions,
 * the name depends on the action; see {@linkcode toClaudeCall}).
 *
 * @example
 * ```ts
 * import { CLAUDE_TOOL_NAMES } from "@hookscope/core/claude";
 * import assert from "node:assert/strict";
 *
 * assert.equal(CLAUDE_TOOL_NAMES.bash, "Bash");
 * ```
 */
export const CLAUDE_TOOL_NAMES: Readonly<Record<string, string>> = {
  bash: "Bash",
  reader: "Read",
  editor: "Edit",
  search: "Grep",
};

/** A call as a Claude hook sees it. */
export interface ClaudeCall {
  /** The Claude tool name. */
  readonly toolName: string;
  /** The Claude tool input. */
  readonly toolInput: Record<string, unknown>;
}

function shapeFor(toolName: string, args: ToolArgs): string | null {
  if (toolName === "bash") return "Bash";
  const action = args.action;
  if (toolName === "reader") {
    return action === "list_dir" ? "LS" : action === "read" ? "Read" : null;
  }
  if (toolName === "editor") {
    return action === "write" ? "Write" : action === "edit" ? "Edit" : null;
  }
  if (toolName === "search") return action === "grep" ? "Grep" : action === "find" ? "Glob" : null;
  return null;
}

/**
 * Why a call of one of hookscope's coding tools failed, in Claude Code's terms (`Exit code N`
 * and the stderr for `Bash`, the tool's `error` otherwise), when its result says so
 * (`success: false`); `undefined` for any other call or result. The coding tools report a failure
 * as their result where Claude Code's tools fail the call, so this is when a `PostToolUseFailure`
 * hook runs instead of a `PostToolUse` one.
 *
 * @example
 * ```ts
 * import { claudeFailureOf } from "@hookscope/core/claude";
 * import assert from "node:assert/strict";
 *
 * assert.equal(
 *   claudeFailureOf("bash", { command: "false" }, { success: false, returnCode: 1, stderr: "", error: "Command exited with code 1" }),
 *   "Exit code 1",
 * );
 * assert.equal(claudeFailureOf("bash", { command: "true" }, { success: true, returnCode: 0 }), undefined);
 * assert.equal(claudeFailureOf("my_tool", {}, { success: false }), undefined);
 * ```
 */
export function claudeFailureOf(
  toolName: string,
  args: ToolArgs,
  result: unknown,
): string | undefined {
  if (shapeFor(toolName, args) === null) return undefined;
  if (result === null || typeof result !== "object") return undefined;
  const r = result as {
    success?: unknown;
    error?: unknown;
    returnCode?: unknown;
    stderr?: unknown;
  };
  if (r.success !== false) return undefined;
  if (toolName === "bash" && typeof r.returnCode === "number") {
    const stderr = typeof r.stderr === "string" ? r.stderr.trimEnd() : "";
    return stderr ? `Exit code ${r.returnCode}\n${stderr}` : `Exit code ${r.returnCode}`;
  }
  return typeof r.error === "string" && r.error !== "" ? r.error : "the tool reported a failure";
}

/**
 * Shows a hookscope call as Claude would send it to its hooks. `names` (hookscope name → Claude
 * name) renames other tools, arguments unchanged.
 *
 * @example
 * ```ts
 * import { toClaudeCall } from "@hookscope/core/claude";
 * import assert from "node:assert/strict";
 *
 * assert.deepEqual(toClaudeCall("editor", { action: "write", filePath: "a.md", content: "x" }), {
 *   toolName: "Write",
 *   toolInput: { file_path: "a.md", content: "x" },
 * });
 * ```
 */
export function toClaudeCall(
  toolName: string,
  args: ToolArgs,
  names?: Readonly<Record<string, string>>,
): ClaudeCall {
  const renamed = names?.[toolName];
  const shape = shapeFor(toolName, args);
  if (shape === null) return { toolName: renamed ?? toolName, toolInput: { ...args } };
  const { fields } = SHAPES[shape];
  const input: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(args)) {
    if (key === "action" && SHAPES[shape].action !== undefined) continue;
    const claudeKey = fields[key] ?? key;
    input[claudeKey] = shape === "Read" && key === "offset" && typeof value === "number"
      ? value + 1
      : value;
  }
  return { toolName: renamed ?? shape, toolInput: input };
}

/**
 * Translates a hook's `updatedInput` back into the hookscope tool's arguments. It replaces the
 * whole input, as in Claude Code.
 *
 * @example
 * ```ts
 * import { fromClaudeInput } from "@hookscope/core/claude";
 * import assert from "node:assert/strict";
 *
 * assert.deepEqual(fromClaudeInput("bash", { command: "ls", timeoutMs: 5 }, { command: "ls -la", timeout: 9 }), {
 *   command: "ls -la",
 *   timeoutMs: 9,
 * });
 * ```
 */
export function fromClaudeInput(
  toolName: string,
  args: ToolArgs,
  updatedInput: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const shape = shapeFor(toolName, args);
  if (shape === null) return { ...updatedInput };
  const { fields, action } = SHAPES[shape];
  const back: Record<string, string> = {};
  for (const [ours, theirs] of Object.entries(fields)) back[theirs] = ours;
  const out: Record<string, unknown> = action === undefined ? {} : { action };
  for (const [key, value] of Object.entries(updatedInput)) {
    const ours = back[key] ?? key;
    out[ours] = shape === "Read" && key === "offset" && typeof value === "number"
      ? value - 1
      : value;
  }
  return out;
}
