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
 * Given the project folder, a call's path (`file_path` of `Read`, `Write`, `Edit`, `MultiEdit`,
 * `notebook_path` of `NotebookEdit`, `path` of `Grep`, `Glob`, `LS`, also for other tools renamed
 * to those names) is shown absolute, as Claude Code sends it; an `updatedInput` path comes back
 * relative to the project folder for the coding tools (in the call's own form for other tools),
 * and one outside the project folder is refused.
 *
 * @module
 */

import {
  isAbsolutePath,
  isInside,
  normalizePath,
  relativeTo,
  resolvePath,
} from "../action/_path.ts";

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

/** Claude tool name → the input field that holds its path. */
const PATH_FIELDS: Readonly<Record<string, string>> = {
  Read: "file_path",
  Write: "file_path",
  Edit: "file_path",
  MultiEdit: "file_path",
  NotebookEdit: "notebook_path",
  Grep: "path",
  Glob: "path",
  LS: "path",
};

/** `projectDir` as an absolute, normalized path. */
function projectRoot(projectDir: string): string {
  if (typeof projectDir !== "string" || !isAbsolutePath(projectDir)) {
    throw new TypeError(
      `Cannot translate a call for Claude hooks: projectDir must be an absolute path; got ${
        JSON.stringify(projectDir)
      }`,
    );
  }
  return normalizePath(projectDir);
}

/**
 * An `updatedInput` path that does not stay inside the project folder. Claude hook adapters
 * refuse the rewrite with this reason.
 *
 * @example
 * ```ts
 * import { fromClaudeInput, ClaudePathOutsideError } from "@hookscope/core/claude";
 * import assert from "node:assert/strict";
 *
 * assert.throws(
 *   () => fromClaudeInput("editor", { action: "write", filePath: "a.md", content: "" }, { file_path: "/etc/hosts", content: "" }, "/srv/app"),
 *   ClaudePathOutsideError,
 * );
 * ```
 */
export class ClaudePathOutsideError extends RangeError {
  /** The input field (`file_path`, `path`, `notebook_path`). */
  readonly field: string;
  /** The path the hook gave. */
  readonly path: string;
  /** Makes the error. */
  constructor(field: string, path: string, projectDir: string) {
    super(
      `updatedInput.${field} ${JSON.stringify(path)} is outside the project folder ${
        JSON.stringify(projectDir)
      }`,
    );
    this.name = "ClaudePathOutsideError";
    this.field = field;
    this.path = path;
  }
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
 * name) renames other tools, arguments unchanged. With `projectDir` (absolute), the call's path
 * is resolved against it, as Claude Code always sends an absolute `file_path`, `notebook_path`
 * or `path`; without it the path is shown as given.
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
 * assert.deepEqual(
 *   toClaudeCall("editor", { action: "write", filePath: "src/a.md", content: "x" }, undefined, "/srv/app"),
 *   { toolName: "Write", toolInput: { file_path: "/srv/app/src/a.md", content: "x" } },
 * );
 * ```
 */
export function toClaudeCall(
  toolName: string,
  args: ToolArgs,
  names?: Readonly<Record<string, string>>,
  projectDir?: string,
): ClaudeCall {
  const call = claudeCallOf(toolName, args, names);
  if (projectDir === undefined) return call;
  const root = projectRoot(projectDir);
  const field = pathFieldOf(toolName, args, names);
  const path = field === undefined ? undefined : call.toolInput[field];
  if (field !== undefined && typeof path === "string" && path !== "" && !path.includes("\0")) {
    call.toolInput[field] = resolvePath(root, path);
  }
  return call;
}

/** The Claude input field that holds the call's path, if the call is shown as a file tool. */
function pathFieldOf(
  toolName: string,
  args: ToolArgs,
  names: Readonly<Record<string, string>> | undefined,
): string | undefined {
  return PATH_FIELDS[shapeFor(toolName, args) ?? names?.[toolName] ?? toolName];
}

function claudeCallOf(
  toolName: string,
  args: ToolArgs,
  names: Readonly<Record<string, string>> | undefined,
): { toolName: string; toolInput: Record<string, unknown> } {
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
 * whole input, as in Claude Code. With `projectDir` (absolute; the one the call was shown with,
 * see {@linkcode toClaudeCall}), the path must stay inside it, or this throws
 * {@linkcode ClaudePathOutsideError}; a coding tool gets it relative to `projectDir` (its own
 * form), another tool relative when its own path was relative, else absolute. `names` is the
 * renaming the call was shown with.
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
 * assert.deepEqual(
 *   fromClaudeInput("reader", { action: "read", path: "a.md" }, { file_path: "/srv/app/docs/a.md" }, "/srv/app"),
 *   { action: "read", path: "docs/a.md" },
 * );
 * ```
 */
export function fromClaudeInput(
  toolName: string,
  args: ToolArgs,
  updatedInput: Readonly<Record<string, unknown>>,
  projectDir?: string,
  names?: Readonly<Record<string, string>>,
): Record<string, unknown> {
  if (projectDir === undefined) return argsOf(toolName, args, updatedInput);
  const root = projectRoot(projectDir);
  const field = pathFieldOf(toolName, args, names);
  const path = field === undefined ? undefined : updatedInput[field];
  if (field === undefined || typeof path !== "string" || path === "") {
    return argsOf(toolName, args, updatedInput);
  }
  const absolute = resolvePath(root, path);
  if (path.includes("\0") || !isInside(root, absolute)) {
    throw new ClaudePathOutsideError(field, path, root);
  }
  // The coding tools take workspace-relative paths; another tool keeps the form its path had.
  const own = args[field];
  const relative = shapeFor(toolName, args) !== null ||
    (typeof own === "string" && !isAbsolutePath(own));
  return argsOf(toolName, args, {
    ...updatedInput,
    [field]: relative ? relativeTo(root, absolute) : absolute,
  });
}

function argsOf(
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
