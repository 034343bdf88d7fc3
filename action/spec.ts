/**
 * `AgentSpec`: declarative per-tool hook lists (the ADR's `HooksMixin`) and the `coding` preset.
 *
 * @module
 */

import { SPEC_VERSION } from "./_spec_version.ts";
import { guardDestructive, guardPaths, type PathFileSystem } from "./guards.ts";

/**
 * A pre hook: gets the canonical tool name, the `action` argument (or `""`) and a copy of the
 * current arguments. An object return replaces the arguments; other returns are ignored; a
 * throw prevents the call.
 */
export type PreToolHook = (
  toolName: string,
  action: string,
  args: Record<string, unknown>,
) => Record<string, unknown> | void | Promise<Record<string, unknown> | void>;

/** A post hook (X13): real action, final arguments and the result; non-`undefined` replaces it. */
export type PostToolHook = (
  toolName: string,
  action: string,
  args: Record<string, unknown>,
  result: unknown,
) => unknown;

/** An error hook (X12): a non-`undefined` return recovers with that result. */
export type ErrorToolHook = (
  toolName: string,
  action: string,
  args: Record<string, unknown>,
  error: unknown,
) => unknown;

/** Any tool hook. */
export type ToolHook = PreToolHook | PostToolHook | ErrorToolHook;

/** The hook phases and their `hookHandlers` key prefixes. */
export const TOOL_HOOK_PHASES: readonly ["security_pre", "pre", "post", "error"] = [
  "security_pre",
  "pre",
  "post",
  "error",
];

/** One of {@linkcode TOOL_HOOK_PHASES}. */
export type ToolHookPhase = typeof TOOL_HOOK_PHASES[number];

/** Options of {@linkcode AgentSpec}. */
export interface AgentSpecInit {
  /** A name for the agent. */
  name?: string;
  /** A role label (the coding preset uses `"implementer"`). */
  role?: string;
  /** Tool names or groups the agent should get (the coding preset uses `["coding"]`). */
  tools?: readonly string[];
  /** The workspace directory (the coding preset's `cwd`). */
  cwd?: string;
}

/** Options of {@linkcode AgentSpec.coding}. */
export interface CodingSpecOptions {
  /** The workspace root the path guard allows; default `"."` (resolved through `fs`). */
  cwd?: string;
  /** Install `guardDestructive` on bash and `guardPaths` on reader and editor (default true). */
  secure?: boolean;
  /**
   * File-system access for `guardPaths` (realpath, symlinks, cwd); pass `nodeFileSystem` from
   * `@hookscope/core/coding`. Without it the path guard is lexical only and a relative `cwd`
   * cannot be resolved, so every path is denied (fail closed).
   */
  fs?: PathFileSystem;
}

/**
 * Declarative tool hooks. `pre`, `securityPre`, `post` and `onError` append under
 * `"pre:<tool>"`, `"security_pre:<tool>"`, `"post:<tool>"` and `"error:<tool>"` and return the
 * same spec; `"*"` as the tool name applies to every tool. Lookup order everywhere (X15):
 * `"*"`, the exact name, then `"<name>_tool"`.
 *
 * @example Declare hooks
 * ```ts
 * import { AgentSpec } from "@hookscope/core/action";
 * import assert from "node:assert/strict";
 *
 * const spec = new AgentSpec({ name: "demo" })
 *   .pre("search", (_tool, _action, args) => ({ ...args, maxResults: 5 }))
 *   .post("*", (_tool, _action, _args, result) => result);
 * assert.deepEqual(Object.keys(spec.hookHandlers), ["pre:search", "post:*"]);
 * ```
 */
export class AgentSpec {
  /** The hook lists by `"<phase>:<tool>"` key. */
  readonly hookHandlers: Record<string, ToolHook[]> = {};
  /** The agent's name. */
  name: string | undefined;
  /** A role label. */
  role: string | undefined;
  /** Tool names or groups. */
  tools: string[];
  /** The workspace directory. */
  cwd: string | undefined;
  /** Bumped when a hook list is created (private to the action scope). */
  [SPEC_VERSION] = 0;

  /** Makes an empty spec. */
  constructor(init?: AgentSpecInit) {
    this.name = init?.name;
    this.role = init?.role;
    this.tools = [...(init?.tools ?? [])];
    this.cwd = init?.cwd;
  }

  /** Appends a user pre hook for `toolName` (or `"*"`). */
  pre(toolName: string, handler: PreToolHook): this {
    return this.#add("pre", toolName, handler);
  }

  /** Appends a security pre hook; security hooks run before and after the user pre hooks. */
  securityPre(toolName: string, handler: PreToolHook): this {
    return this.#add("security_pre", toolName, handler);
  }

  /** Appends a post hook. */
  post(toolName: string, handler: PostToolHook): this {
    return this.#add("post", toolName, handler);
  }

  /** Appends an error hook (they run, X12). */
  onError(toolName: string, handler: ErrorToolHook): this {
    return this.#add("error", toolName, handler);
  }

  /** The hooks of one phase for a tool in lookup order: `"*"`, exact name, `"<name>_tool"`. */
  hooksFor(phase: ToolHookPhase, toolName: string): ToolHook[] {
    const canonical = canonicalToolName(toolName);
    const keys = ["*", canonical, `${canonical}_tool`];
    const out: ToolHook[] = [];
    for (const key of keys) {
      const list = this.hookHandlers[`${phase}:${key}`];
      if (list) out.push(...list);
    }
    return out;
  }

  /**
   * The coding preset: role `"implementer"`, tools `["coding"]`; when `secure` (default), the
   * `guardDestructive` security hook on `bash` and one shared `guardPaths({ allowedPaths: [cwd] })`
   * on `reader` and `editor`.
   *
   * @example The coding preset
   * ```ts
   * import { AgentSpec } from "@hookscope/core/action";
   * import assert from "node:assert/strict";
   *
   * const spec = AgentSpec.coding({ cwd: "/ws" });
   * assert.deepEqual(Object.keys(spec.hookHandlers).sort(), [
   *   "security_pre:bash",
   *   "security_pre:editor",
   *   "security_pre:reader",
   * ]);
   * ```
   */
  static coding(options?: CodingSpecOptions): AgentSpec {
    const spec = new AgentSpec({ name: "coding", role: "implementer", tools: ["coding"] });
    if (options?.cwd !== undefined) spec.cwd = options.cwd;
    if (options?.secure ?? true) {
      spec.securityPre("bash", guardDestructive);
      const guard = guardPaths({
        allowedPaths: [options?.cwd ?? "."],
        ...(options?.fs ? { fs: options.fs } : {}),
      });
      spec.securityPre("reader", guard);
      spec.securityPre("editor", guard);
    }
    return spec;
  }

  #add(phase: ToolHookPhase, toolName: string, handler: ToolHook): this {
    if (typeof toolName !== "string" || toolName === "") {
      throw new TypeError(`Cannot add ${phase} hook: tool name must be a non-empty string`);
    }
    if (typeof handler !== "function") {
      throw new TypeError(
        `Cannot add ${phase} hook for ${JSON.stringify(toolName)}: handler must be a function`,
      );
    }
    const key = `${phase}:${toolName}`;
    const list = this.hookHandlers[key];
    if (list) list.push(handler);
    else {
      this.hookHandlers[key] = [handler];
      this[SPEC_VERSION]++;
    }
    return this;
  }
}

/**
 * The canonical name hooks see: a trailing `_tool` is dropped (`"reader_tool"` → `"reader"`).
 *
 * @example
 * ```ts
 * import { canonicalToolName } from "@hookscope/core/action";
 * import assert from "node:assert/strict";
 *
 * assert.equal(canonicalToolName("bash_tool"), "bash");
 * assert.equal(canonicalToolName("bash"), "bash");
 * ```
 */
export function canonicalToolName(name: string): string {
  return name.length > 5 && name.endsWith("_tool") ? name.slice(0, -5) : name;
}
