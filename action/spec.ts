/**
 * `AgentSpec`: declarative per-tool hook lists; the coding preset is `codingSpec()` in
 * `@hookscope/core/coding`.
 *
 * @module
 */

import { SPEC_VERSION } from "./_spec_version.ts";
import type { ToolEffectsChannel, ToolEffectsHook } from "./coding/file_change.ts";
import type {
  ToolCallContext,
  ToolErrorContext,
  ToolErrorDecision,
  ToolPostDecision,
  ToolPreDecision,
  ToolResultContext,
} from "../core/tool_hook.ts";

/**
 * What every Tool-scope hook receives: one object, the same shape in every phase (`result` is
 * set for post hooks, `error` for error hooks). It is the session's `tool.*` payload shape
 * ({@linkcode ToolCallContext}: `toolName`, `callId`, `args`, `signal`, `source`) plus `action`,
 * so a hook written against `ToolCallContext` runs here, as a `Tool` processor and as a
 * session `tool.pre` handler alike.
 *
 * @example Read the context in a pre hook
 * ```ts
 * import { AgentSpec, type ToolHookContext } from "@hookscope/core/action";
 * import assert from "node:assert/strict";
 *
 * const seen: string[] = [];
 * const spec = new AgentSpec().pre("search", (context: ToolHookContext) => {
 *   seen.push(`${context.toolName} ${context.callId} ${context.source.kind}`);
 *   return { decision: "allow", updatedArgs: { ...context.args, maxResults: 5 } };
 * });
 * assert.equal(spec.registered("pre").length, 1);
 * ```
 */
export interface ToolHookContext extends ToolCallContext {
  /**
   * The canonical tool name for `AgentSpec` hooks (a trailing `_tool` dropped); the tool's name
   * for its processors.
   */
  readonly toolName: string;
  /** The call's `action` argument when it is a string, else `""`. */
  readonly action: string;
  /**
   * The arguments: for pre hooks the current ones (rewritten by the hooks before), for post and
   * error hooks the final ones the function ran with. Each pre hook gets its own shallow copy;
   * return `updatedArgs` to change them.
   */
  readonly args: Record<string, unknown>;
  /** The call id (the one given to `invoke`/`act`, else the call's own id). */
  readonly callId: string;
  /** Aborts when the call is cancelled or its deadline passes. */
  readonly signal: AbortSignal;
  /** The result so far (post hooks). */
  readonly result?: unknown;
  /** The failure (error hooks). */
  readonly error?: unknown;
  /**
   * The session's effects channel, when the call runs through its act path: a hook that runs a
   * staged program (`autoFormat`) decides on its change set there.
   */
  readonly effects?: ToolEffectsChannel;
}

/** The context of a post hook: {@linkcode ToolHookContext} with the result so far. */
export interface PostToolHookContext extends ToolHookContext, ToolResultContext {
  /** The arguments the function ran with. */
  readonly args: Record<string, unknown>;
  /** The result so far (the function's, or the previous post hook's `updatedResult`). */
  readonly result: unknown;
}

/** The context of an error hook: {@linkcode ToolHookContext} with the failure. */
export interface ErrorToolHookContext extends ToolHookContext, ToolErrorContext {
  /** The arguments the call ran (or was to run) with. */
  readonly args: Record<string, unknown>;
  /** What the preprocessor, function or postprocessor threw. */
  readonly error: unknown;
}

/**
 * A pre hook (also a security pre hook, and a `Tool`'s preprocessor): returns a
 * {@linkcode ToolPreDecision} — `{ decision: "allow", updatedArgs?, context? }` lets the call
 * go on (with rewritten arguments), `{ decision: "ask", reason? }` asks a person first (the
 * approval path of `Branch.act`, or `approve` of `ActionManager.invoke`), `{ decision: "deny",
 * reason }` refuses it (`ToolDeniedError`; `SecurityDeniedError` from a security hook) — or
 * nothing (no opinion). A throw fails the call (denies it, from a security hook). Any other
 * return is a `ToolHookReturnError`.
 */
export type PreToolHook = (
  context: ToolHookContext,
) => ToolPreDecision | void | PromiseLike<ToolPreDecision | void>;

/**
 * A post hook (and a `Tool`'s postprocessor): returns a {@linkcode ToolPostDecision} —
 * `updatedResult` replaces the result, `context` reaches the model — or nothing.
 */
export type PostToolHook = (
  context: PostToolHookContext,
) => ToolPostDecision | void | PromiseLike<ToolPostDecision | void>;

/**
 * An error hook (and a `Tool`'s error processor): returns a {@linkcode ToolErrorDecision} —
 * `updatedResult` recovers with that result, `context` reaches the model — or nothing (the
 * error stands). A throw replaces the error.
 */
export type ErrorToolHook = (
  context: ErrorToolHookContext,
) => ToolErrorDecision | void | PromiseLike<ToolErrorDecision | void>;

/** Any tool hook. */
export type ToolHook = PreToolHook | PostToolHook | ErrorToolHook;

/** The hook phases, in the order a call meets them. */
export const TOOL_HOOK_PHASES: readonly ["securityPre", "pre", "post", "error"] = [
  "securityPre",
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

/** One registered hook, as {@linkcode AgentSpec.registered} lists it. */
export interface RegisteredToolHook {
  /** The phase. */
  readonly phase: ToolHookPhase;
  /** The tool name it was registered for (`"*"` for every tool). */
  readonly toolName: string;
  /** The hook. */
  readonly handler: ToolHook;
}

/**
 * Declarative tool hooks. `pre`, `securityPre`, `post` and `onError` append a hook for a tool
 * (`"*"` for every tool) and return the same spec. Lookup order everywhere: `"*"`, the exact
 * name, then `"<name>_tool"`. Every hook takes one context object and returns a decision (see
 * {@linkcode PreToolHook}, {@linkcode PostToolHook}, {@linkcode ErrorToolHook}).
 *
 * @example Declare hooks
 * ```ts
 * import { AgentSpec } from "@hookscope/core/action";
 * import assert from "node:assert/strict";
 *
 * const spec = new AgentSpec({ name: "demo" })
 *   .pre("search", ({ args }) => ({ decision: "allow", updatedArgs: { ...args, maxResults: 5 } }))
 *   .post("*", ({ result }) => ({ updatedResult: result }));
 * assert.deepEqual(spec.registered().map((h) => `${h.phase} ${h.toolName}`), ["pre search", "post *"]);
 * ```
 */
export class AgentSpec {
  #hooks = new Map<string, ToolHook[]>();
  #effects = new Map<string, ToolEffectsHook[]>();
  /** The agent's name. */
  name: string | undefined;
  /** A role label. */
  role: string | undefined;
  /** Tool names or groups. */
  tools: string[];
  /** The workspace directory. */
  cwd: string | undefined;
  /** Bumped whenever a hook is added (private to the action scope: tool chains cache by it). */
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
    return this.#add("securityPre", toolName, handler);
  }

  /** Appends a post hook. */
  post(toolName: string, handler: PostToolHook): this {
    return this.#add("post", toolName, handler);
  }

  /** Appends an error hook: they run in order until one recovers (`updatedResult`). */
  onError(toolName: string, handler: ErrorToolHook): this {
    return this.#add("error", toolName, handler);
  }

  /**
   * Appends a `tool.effects` hook for `toolName` (or `"*"`): it decides on the change set of a
   * staged run (coding toolkit, `effects: "overlay"`) before it reaches the workspace.
   */
  effects(toolName: string, handler: ToolEffectsHook): this {
    if (typeof toolName !== "string" || toolName === "") {
      throw new TypeError(`Cannot add effects hook: tool name must be a non-empty string`);
    }
    if (typeof handler !== "function") {
      throw new TypeError(
        `Cannot add effects hook for ${JSON.stringify(toolName)}: handler must be a function`,
      );
    }
    const list = this.#effects.get(toolName);
    if (list) list.push(handler);
    else this.#effects.set(toolName, [handler]);
    return this;
  }

  /** The `tool.effects` hooks for a tool in lookup order: `"*"`, exact name, `"<name>_tool"`. */
  effectsHooksFor(toolName: string): ToolEffectsHook[] {
    const canonical = canonicalToolName(toolName);
    return [
      ...this.#effects.get("*") ?? [],
      ...this.#effects.get(canonical) ?? [],
      ...this.#effects.get(`${canonical}_tool`) ?? [],
    ];
  }

  /** The hooks of one phase for a tool in lookup order: `"*"`, exact name, `"<name>_tool"`. */
  hooksFor(phase: ToolHookPhase, toolName: string): ToolHook[] {
    const canonical = canonicalToolName(toolName);
    const keys = ["*", canonical, `${canonical}_tool`];
    const out: ToolHook[] = [];
    for (const key of keys) {
      const list = this.#hooks.get(`${phase}\u0000${key}`);
      if (list) out.push(...list);
    }
    return out;
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
    const key = `${phase}\u0000${toolName}`;
    const list = this.#hooks.get(key);
    if (list) list.push(handler);
    else this.#hooks.set(key, [handler]);
    this[SPEC_VERSION]++;
    return this;
  }

  /**
   * Every hook registered on this spec, in registration order per phase and tool (a copy).
   *
   * @param phase Only this phase.
   * @param toolName Only hooks registered under exactly this name (no lookup order).
   * @returns The hooks with their phase and tool name.
   */
  registered(phase?: ToolHookPhase, toolName?: string): RegisteredToolHook[] {
    const out: RegisteredToolHook[] = [];
    for (const [key, list] of this.#hooks) {
      const at = key.indexOf("\u0000");
      const p = key.slice(0, at) as ToolHookPhase;
      const t = key.slice(at + 1);
      if ((phase !== undefined && p !== phase) || (toolName !== undefined && t !== toolName)) {
        continue;
      }
      for (const handler of list) out.push({ phase: p, toolName: t, handler });
    }
    return out;
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
