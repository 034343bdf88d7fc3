/**
 * `CodingToolkit`: the reader, editor, bash and search tools confined to one workspace, with
 * their own hook builders.
 *
 * @module
 */

import process from "node:process";
import { attachToolHooks } from "../factory.ts";
import { AgentSpec, type ErrorToolHook, type PostToolHook, type PreToolHook } from "../spec.ts";
import type { Tool } from "../tool.ts";
import { bashTool } from "./_bash.ts";
import { editorTool } from "./_editor.ts";
import { readerTool } from "./_reader.ts";
import { searchTool } from "./_search.ts";
import { Workspace } from "./_workspace.ts";

/** The coding tools a toolkit can build. */
export const CODING_TOOLS: readonly ["reader", "editor", "bash", "search"] = [
  "reader",
  "editor",
  "bash",
  "search",
];

/** One of {@linkcode CODING_TOOLS}. */
export type CodingToolName = typeof CODING_TOOLS[number];

/** Options of {@linkcode CodingToolkit}. */
export interface CodingToolkitOptions {
  /** The workspace root (default: the process's current directory); must exist. */
  workspaceRoot?: string;
  /** Which tools to build (default all four). */
  tools?: readonly CodingToolName[];
  /**
   * The environment `bash` commands run with. Default: only the variables a shell needs
   * ({@linkcode SAFE_ENV_KEYS}: `PATH`, `HOME`, locale, `TERM`, `TMPDIR`, `TZ`, `USER`), so a
   * command cannot print the host's API keys; `"inherit"` passes the whole host environment; an
   * object is used exactly as given.
   */
  env?: "inherit" | Readonly<Record<string, string>>;
}

/** The host variables `bash` commands get by default. */
export const SAFE_ENV_KEYS: readonly string[] = Object.freeze([
  "PATH",
  "HOME",
  "LANG",
  "LC_ALL",
  "LC_CTYPE",
  "TERM",
  "TMPDIR",
  "TZ",
  "USER",
  "LOGNAME",
]);

function bashEnvironment(
  option: CodingToolkitOptions["env"],
): Readonly<Record<string, string>> | undefined {
  if (option === "inherit") return undefined;
  if (option !== undefined) {
    if (option === null || typeof option !== "object" || Array.isArray(option)) {
      throw new TypeError(`Cannot create coding toolkit: env must be "inherit" or an object`);
    }
    for (const [key, value] of Object.entries(option)) {
      if (typeof value !== "string") {
        throw new TypeError(`Cannot create coding toolkit: env.${key} must be a string`);
      }
    }
    return Object.freeze({ ...option });
  }
  const env: Record<string, string> = {};
  for (const key of SAFE_ENV_KEYS) {
    const value = process.env[key];
    if (typeof value === "string") env[key] = value;
  }
  return Object.freeze(env);
}

const BUILDERS: Record<CodingToolName, (workspace: Workspace) => Tool> = {
  reader: readerTool,
  editor: editorTool,
  bash: bashTool,
  search: searchTool,
};

/**
 * The coding tools, all confined to one workspace root (realpath-checked; symlinks pointing out,
 * `..` escapes, NUL bytes and protected names are refused as `{ success: false, error }`).
 *
 * - `reader { action: "read" | "list_dir", path, offset?, limit? }` → `content` with `N\t`
 *   numbered lines (default 2 000 lines), `totalLines`; or directory `entries` (at most 1 000
 *   in name order; a longer listing adds `totalEntries` and `truncated: true`). Only regular
 *   files are read (a FIFO or device is `Not a regular file: …`, it would block), and none over
 *   10 000 000 bytes (`File too large to read: …`; it is not loaded).
 * - `editor { action: "write" | "edit", filePath, content?, oldString?, newString?, replaceAll? }`
 *   → overwriting or editing requires a read of the unchanged file first (same mtime, size and
 *   SHA-256 of the content, so a same-size change with a restored mtime counts); `edit` needs exactly
 *   one occurrence unless `replaceAll`; an existing path that is not a regular file, or a file
 *   with more than one hard link (it may be linked from outside the workspace), is refused;
 *   a new file is created exclusively, so of concurrent writes creating one file only the first
 *   succeeds (`File appeared since it was checked: …`).
 * - `bash { command, timeoutMs?, cwd? }` → `stdout`, `stderr`, `returnCode`, `timedOut`; argv
 *   without a shell; `;`, `&&`, `||`, `|`, backticks, `$(`, `<`, `>` and newlines are refused
 *   with `returnCode: -1`; deadline default 30 000 ms clamped to 1..300 000, the process group
 *   is killed at it; each stream is capped at 100 000 bytes with a marker.
 * - `search { action: "grep" | "find", pattern, path?, include?, maxResults? }` → grep:
 *   `content` lines `path:line:text`, `totalMatches`, `shown` (default 50); find: `content`,
 *   `totalFound`, `shown` (default 100). Implemented in TypeScript; `.git` and `node_modules`
 *   are skipped, symlinks are not followed, protected files (`.env`, `id_rsa`, …) are never
 *   read and only regular files are. A pattern whose
 *   backtracking could explode (a repeated group holding a quantifier or an alternation such as
 *   `(a+)+` or `(a|b)*`, two or more unbounded quantifiers such as `.*.*x`) runs on a built-in
 *   linear-time matcher instead of `RegExp`, with the same results; such a pattern that also
 *   needs backreferences, lookaround or named groups is refused as `Invalid pattern: …`. Globs
 *   are matched without backtracking. grep matches the first 10 000 characters of each line (a
 *   minified file's huge lines would otherwise stall even `a.*x`; lines are shown cut at 500),
 *   and a final newline does not count as an empty last line. A search stops after 20 000 ms
 *   and returns what it found with `timedOut: true`.
 *
 * Hooks added with `securityPre`/`pre`/`post`/`onError` attach to the bound tools with the one
 * lookup order (`"*"`, name, `"<name>_tool"`), also when added after `bind()`.
 *
 * @example Build the tools and add hooks
 * ```ts
 * import { CodingToolkit } from "@hookscope/core/coding";
 * import assert from "node:assert/strict";
 *
 * const toolkit = new CodingToolkit({ workspaceRoot: "/srv/project", tools: ["reader", "bash"] })
 *   .post("*", (_tool, _action, _args, result) => result);
 * assert.deepEqual(toolkit.bind().map((tool) => tool.name), ["reader", "bash"]);
 * assert.throws(() => new CodingToolkit({ tools: ["shell" as "bash"] }), TypeError);
 * ```
 *
 * @example Read and edit in a temporary workspace (needs file access)
 * ```ts ignore
 * import { CodingToolkit } from "@hookscope/core/coding";
 * import { ActionManager } from "@hookscope/core/action";
 * import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import assert from "node:assert/strict";
 *
 * const root = mkdtempSync(join(tmpdir(), "hookscope-doc-"));
 * try {
 *   writeFileSync(join(root, "a.txt"), "hello\nworld\n");
 *   const manager = new ActionManager();
 *   for (const tool of new CodingToolkit({ workspaceRoot: root }).bind()) manager.register(tool);
 *   const read = await manager.invoke({ function: "reader", arguments: { action: "read", path: "a.txt" } });
 *   assert.equal((read.response as { content: string }).content, "1\thello\n2\tworld");
 *   const edit = await manager.invoke({
 *     function: "editor",
 *     arguments: { action: "edit", filePath: "a.txt", oldString: "world", newString: "there" },
 *   });
 *   assert.equal((edit.response as { success: boolean }).success, true);
 * } finally {
 *   rmSync(root, { recursive: true, force: true });
 * }
 * ```
 */
export class CodingToolkit {
  #workspace: Workspace;
  #tools: CodingToolName[];
  #env: Readonly<Record<string, string>> | undefined;
  #spec = new AgentSpec({ name: "coding-toolkit" });

  /**
   * Records the workspace root (resolved on first tool use, so construction needs no file
   * access); unknown tool names throw `TypeError`.
   */
  constructor(options?: CodingToolkitOptions) {
    const tools = [...(options?.tools ?? CODING_TOOLS)];
    const unknown = tools.filter((name) => !CODING_TOOLS.includes(name));
    if (unknown.length) {
      throw new TypeError(
        `Cannot create coding toolkit: unknown coding tool(s) ${
          unknown.map((n) => JSON.stringify(n)).join(", ")
        }; valid: ${CODING_TOOLS.map((n) => `"${n}"`).join(", ")}`,
      );
    }
    this.#tools = tools;
    this.#env = bashEnvironment(options?.env);
    this.#workspace = new Workspace(options?.workspaceRoot ?? process.cwd(), process.cwd());
  }

  /** The absolute workspace root as configured (symlinks are resolved when tools run). */
  get workspaceRoot(): string {
    return this.#workspace.requested;
  }

  /** The real (symlink-free) workspace root; rejects when it is not an accessible directory. */
  realWorkspaceRoot(): Promise<string> {
    return this.#workspace.realRoot();
  }

  /** The spec holding this toolkit's hooks. */
  get spec(): AgentSpec {
    return this.#spec;
  }

  /** Adds a security pre hook for a tool (or `"*"`). */
  securityPre(tool: string, hook: PreToolHook): this {
    this.#spec.securityPre(tool, hook);
    return this;
  }

  /** Adds a user pre hook. */
  pre(tool: string, hook: PreToolHook): this {
    this.#spec.pre(tool, hook);
    return this;
  }

  /** Adds a post hook. */
  post(tool: string, hook: PostToolHook): this {
    this.#spec.post(tool, hook);
    return this;
  }

  /** Adds an error hook. */
  onError(tool: string, hook: ErrorToolHook): this {
    this.#spec.onError(tool, hook);
    return this;
  }

  /**
   * Builds the tools with this toolkit's hooks attached. `branch` is accepted for API
   * compatibility and not used: register the tools on `branch.actions` yourself (or let
   * `createAgent` do it).
   */
  bind(_branch?: unknown): Tool[] {
    return this.#tools.map((name) =>
      attachToolHooks(
        name === "bash" ? bashTool(this.#workspace, this.#env) : BUILDERS[name](this.#workspace),
        this.#spec,
      )
    );
  }
}
