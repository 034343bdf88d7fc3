/**
 * `CodingToolkit`: the reader, editor, bash and search tools confined to one workspace, with
 * their own hook builders.
 *
 * @module
 */

import process from "node:process";
import { attachToolHooks } from "../_attach.ts";
import { AgentSpec } from "../spec.ts";
import type { Tool } from "../tool.ts";
import { type BashSandbox, bashTool } from "./_bash.ts";
import { type ResolvedSandbox, validateSandboxOptions } from "./_bwrap.ts";
import { resolveSandbox } from "./_resolve_sandbox.ts";
import { editorTool } from "./_editor.ts";
import { readerTool } from "./_reader.ts";
import { searchTool } from "./_search.ts";
import { Workspace } from "./_workspace.ts";
import type { SandboxOptions } from "./sandbox.ts";
import {
  type CheckpointManifest,
  type EffectsStore,
  listCheckpoints,
  undoChanges,
} from "./_commit.ts";
import type {
  FileChange,
  ToolEffectsChannel,
  ToolEffectsHook,
  ToolEffectsPayload,
} from "./file_change.ts";
import { decideEffects } from "./effects_policy.ts";
import { registerStagedProbe } from "./_effects_registry.ts";
import { defaultEffectsDir, openEffectsStore } from "./_effects_home.ts";

export { defaultEffectsDir };
import { DEFAULT_MAX_PENDING_BYTES, DEFAULT_PENDING_TTL_MS } from "./_pending.ts";
import { decideOnBus, type EffectsBus, foldVerdicts } from "./_effects_bus.ts";

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
  /**
   * Where `bash` commands run. Default `{ kind: "auto" }`: inside bubblewrap where it is
   * installed; where it is not, `bash` throws {@linkcode SandboxUnavailableError}. Only
   * `{ kind: "none" }` runs commands on the host, and says so in the tool's description and in
   * every result (`sandbox: "none"`).
   */
  sandbox?: SandboxOptions;
  /**
   * The spec whose hooks the tools run (shared with an agent, for example `codingSpec()`);
   * default: a new empty spec, available as {@linkcode CodingToolkit.spec}.
   */
  spec?: AgentSpec;
  /**
   * Where journals, checkpoints and staged layers live (default
   * `$XDG_STATE_HOME/hookscope/effects`, else `~/.local/state/hookscope/effects`, else the
   * temporary directory; never inside the workspace). One subdirectory per workspace.
   */
  effectsDir?: string;
  /** The cap on what one checkpoint keeps, in bytes (default 256 MiB); a larger change is not applied. */
  maxCheckpointBytes?: number;
  /** The cap on all checkpoints of the workspace, in bytes (default 1 GiB; oldest go first). */
  maxCheckpointsBytes?: number;
  /**
   * How long the staged layer of a call waiting for a person's answer about its change set is
   * kept, in ms (default 24 hours). The pending approval expires with it.
   */
  pendingTtlMs?: number;
  /**
   * The cap on all staged layers kept for answers, in bytes (default 1 GiB; the oldest go
   * first). A layer larger than this cannot wait: its ask is answered inline or not at all.
   */
  maxPendingBytes?: number;
  /**
   * A shortcut for calls that run outside a session's act path (`ActionManager.invoke` on the
   * toolkit's tools, no `Branch.act`): answers a `tool.effects` ask, `true` commits the change
   * set. Calls through `Branch.act` or the agent loop ask through their approval path instead
   * (`approve` of `act`/`operate`, or a pending approval that `Session.resume` answers), and this
   * option is not asked. Without either, an asked change set is not applied and the model is
   * told so.
   */
  approveEffects?: (request: EffectsApprovalRequest) => boolean | Promise<boolean>;
}

/** What {@linkcode CodingToolkitOptions.approveEffects} is asked. */
export interface EffectsApprovalRequest extends ToolEffectsPayload {
  /** Why the hooks ask. */
  readonly reason?: string;
  /** The hash of exactly what would be committed. */
  readonly hash: string;
  /** Aborts when the call is cancelled. */
  readonly signal: AbortSignal;
}

/** A kept checkpoint, from {@linkcode CodingToolkit.checkpoints}. */
export interface CheckpointInfo {
  /** The checkpoint id. */
  readonly id: string;
  /** The call whose change set it undoes. */
  readonly callId: string;
  /** The tool. */
  readonly toolName: string;
  /** The session the call ran in, when it ran through one. */
  readonly sessionId?: string;
  /** When it was committed (ms since the epoch). */
  readonly createdAt: number;
  /** `committed` (can be undone) or `undone`. */
  readonly state: string;
  /** Bytes it keeps. */
  readonly bytes: number;
  /** The change set it committed. */
  readonly changes: readonly FileChange[];
}

/** What the toolkit's `bash` tool runs under, from {@linkcode CodingToolkit.sandboxStatus}. */
export type CodingSandboxStatus =
  | {
    kind: "bubblewrap";
    version?: string;
    processLimit: "cgroup" | "rlimit" | "none";
    /** Where bash writes: staged (`"overlay"`) or directly (`"direct"`, with the reason). */
    effects: "overlay" | "direct";
    effectsReason?: string;
  }
  | { kind: "none" }
  | { kind: "unavailable"; reason: string };

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

const BUILDERS: Record<Exclude<CodingToolName, "bash">, (workspace: Workspace) => Tool> = {
  reader: readerTool,
  editor: editorTool,
  search: searchTool,
};

/** Something tools can be registered on: an `ActionManager`, or a `Branch` (its `actions`). */
export type ToolTarget =
  | { register(tool: Tool): unknown }
  | { actions: { register(tool: Tool): unknown } };

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
 * - `bash { command, timeoutMs?, cwd? }` → `stdout`, `stderr`, `returnCode`, `timedOut`,
 *   `sandbox` (`"bubblewrap"` or `"none"`), `effects` (`"overlay"` or `"direct"` with
 *   `effectsReason`). Staged (`effects: "overlay"`, the default where overlayfs mounts): the
 *   command runs with `/bin/bash -c` against a copy-on-write view of the workspace, and its
 *   change set (`changes`) is decided by the `tool.effects` hooks before it lands (`applied`,
 *   `checkpoint`; an ask is an approval of the call, see {@linkcode ToolEffectsChannel}).
 *   Direct: argv without a shell; `;`, `&&`, `||`, `|`, backticks, `$(`, `<`, `>` and newlines
 *   are refused with `returnCode: -1`. Deadline default 30 000 ms clamped to 1..300 000, the
 *   sandbox (or, with `kind: "none"`, the process group) is killed at it; each stream is capped
 *   at 100 000 bytes with a marker. Commands run inside bubblewrap (see
 *   {@linkcode SandboxOptions}); without one the call throws {@linkcode SandboxUnavailableError}
 *   unless `sandbox: { kind: "none" }` was given. The tool's description says which of these
 *   holds once detection has run (`await toolkit.sandboxStatus()` before building the tools).
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
 * The tools run the hooks of the toolkit's {@linkcode AgentSpec} (`options.spec`, or its own
 * empty one at {@linkcode CodingToolkit.spec}) with the one lookup order (`"*"`, name,
 * `"<name>_tool"`), also hooks added after the tools were built. Add hooks on the spec
 * (`toolkit.spec.post(…)`), not on the toolkit.
 *
 * @example Build the tools with a spec's hooks
 * ```ts
 * import { CodingToolkit } from "@hookscope/core/coding";
 * import { ActionManager, AgentSpec } from "@hookscope/core/action";
 * import assert from "node:assert/strict";
 *
 * const spec = new AgentSpec().post("*", ({ result }) => ({ updatedResult: result }));
 * const toolkit = new CodingToolkit({ workspaceRoot: "/srv/project", tools: ["reader", "bash"], spec });
 * assert.equal(toolkit.spec, spec);
 * assert.deepEqual(toolkit.tools().map((tool) => tool.name), ["reader", "bash"]);
 * const manager = new ActionManager();
 * toolkit.bind(manager);
 * assert.deepEqual(manager.tools.map((tool) => tool.name), ["reader", "bash"]);
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
  #spec: AgentSpec;
  #sandbox: SandboxOptions;
  #resolved: Promise<ResolvedSandbox> | undefined;
  /** The resolved sandbox once detection has finished (the bash description states it). */
  #known: ResolvedSandbox | undefined;
  #effectsDir: string | undefined;
  #limits: { maxCheckpointBytes?: number; maxCheckpointsBytes?: number };
  #pending: { pendingTtlMs: number; maxPendingBytes: number };
  #approve: CodingToolkitOptions["approveEffects"];
  #store: Promise<EffectsStore | { unavailable: string }> | undefined;
  /** The session buses of the branches the tools were bound to (their `tool.effects` handlers). */
  #buses = new Set<() => EffectsBus | null>();
  /** The specs of the managers the tools were bound to (their effects hooks decide too). */
  #boundSpecs = new Set<AgentSpec>();

  /**
   * Records the workspace root (resolved on first tool use, so construction needs no file
   * access) and the sandbox choice (detected on the first `bash` call).
   *
   * @throws {TypeError} for unknown tool names, a bad `env`, bad `sandbox` options or a `spec`
   * that is not an `AgentSpec`.
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
    if (options?.spec !== undefined && !(options.spec instanceof AgentSpec)) {
      throw new TypeError("Cannot create coding toolkit: spec must be an AgentSpec");
    }
    this.#tools = tools;
    this.#env = bashEnvironment(options?.env);
    this.#sandbox = Object.freeze({
      ...validateSandboxOptions(options?.sandbox, "Cannot create coding toolkit"),
    });
    this.#spec = options?.spec ?? new AgentSpec({ name: "coding-toolkit" });
    this.#workspace = new Workspace(options?.workspaceRoot ?? process.cwd(), process.cwd());
    const dir = options?.effectsDir;
    if (
      dir !== undefined && (typeof dir !== "string" || !dir.startsWith("/") || dir.includes("\0"))
    ) {
      throw new TypeError("Cannot create coding toolkit: effectsDir must be an absolute path");
    }
    this.#effectsDir = dir;
    this.#limits = {};
    for (const key of ["maxCheckpointBytes", "maxCheckpointsBytes"] as const) {
      const value = options?.[key];
      if (value === undefined) continue;
      if (!Number.isSafeInteger(value) || value < 0) {
        throw new TypeError(`Cannot create coding toolkit: ${key} must be a non-negative integer`);
      }
      this.#limits[key] = value;
    }
    const ttl = options?.pendingTtlMs ?? DEFAULT_PENDING_TTL_MS;
    if (!Number.isSafeInteger(ttl) || ttl < 1) {
      throw new TypeError("Cannot create coding toolkit: pendingTtlMs must be a positive integer");
    }
    const maxPending = options?.maxPendingBytes ?? DEFAULT_MAX_PENDING_BYTES;
    if (!Number.isSafeInteger(maxPending) || maxPending < 0) {
      throw new TypeError(
        "Cannot create coding toolkit: maxPendingBytes must be a non-negative integer",
      );
    }
    this.#pending = { pendingTtlMs: ttl, maxPendingBytes: maxPending };
    if (options?.approveEffects !== undefined && typeof options.approveEffects !== "function") {
      throw new TypeError("Cannot create coding toolkit: approveEffects must be a function");
    }
    this.#approve = options?.approveEffects;
    if (this.#tools.includes("bash")) {
      registerStagedProbe(this.#spec, () => this.#stagedHere());
    }
  }

  /** Whether bash calls run staged here, covering everything they could write. */
  async #stagedHere(): Promise<boolean> {
    const resolved = await this.#resolveSandbox();
    return resolved.kind === "bubblewrap" && resolved.effects.effects === "overlay" &&
      resolved.writable.length === 0;
  }

  /**
   * The workspace's effects store: its state directory outside the workspace, with the
   * journals a killed process left completed or rolled back (once per toolkit).
   */
  #effectsStore(): Promise<EffectsStore | { unavailable: string }> {
    this.#store ??= (async () => {
      const root = await this.#workspace.realRoot();
      return await openEffectsStore(this.#effectsDir, root, this.#limits);
    })();
    this.#store.then((store) => {
      if ("unavailable" in store) this.#store = undefined;
    }, () => {
      this.#store = undefined;
    });
    return this.#store;
  }

  /** The `tool.effects` hooks of the toolkit's spec and of the specs it was bound to. */
  #effectsHooks(toolName: string): ToolEffectsHook[] {
    const hooks = [...this.#spec.effectsHooksFor(toolName)];
    for (const spec of this.#boundSpecs) hooks.push(...spec.effectsHooksFor(toolName));
    return hooks;
  }

  /**
   * The channel a call decides through: the session's (from its act path), else the toolkit's
   * own: the given hooks, then the handlers of the sessions of the branches the tools were
   * bound to (folded by their buses; shadow verdicts have no session to be recorded in here),
   * and {@linkcode CodingToolkitOptions.approveEffects} for an ask.
   */
  #channel(given: ToolEffectsChannel | undefined, signal: AbortSignal): ToolEffectsChannel {
    if (given !== undefined) return given;
    const approve = this.#approve;
    const buses = this.#buses;
    return {
      async decide(payload, hooks) {
        let verdict = await decideEffects(hooks, payload, { signal });
        for (const busOf of buses) {
          if (verdict.decision === "deny") break;
          verdict = foldVerdicts(verdict, (await decideOnBus(busOf(), payload, signal)).verdict);
        }
        return verdict;
      },
      async approve(request) {
        if (approve === undefined) {
          return {
            approve: false,
            reason:
              "a person must approve them and nobody can answer here (the call ran outside a session's act path and the toolkit has no approveEffects)",
          };
        }
        try {
          const approved = (await approve(Object.freeze({
            ...request.payload,
            ...(request.reason !== undefined ? { reason: request.reason } : {}),
            hash: request.hash,
            signal,
          }))) === true;
          return approved
            ? { approve: true }
            : { approve: false, reason: "a person rejected them" };
        } catch (error) {
          if (signal.aborted) throw signal.reason;
          return {
            approve: false,
            reason: `the approval failed: ${(error as Error)?.message ?? String(error)}`,
          };
        }
      },
      settled: () => Promise.resolve(),
    };
  }

  /**
   * Restores the workspace as it was before the committed change set of `callId`
   * (byte-identical: content, modes, symlinks) and resolves to what the undo changed. Refuses
   * with `EffectsCommitError` (`conflict`) when a later call changed the same paths, or
   * (`changed`) when the committed entries changed since, unless `force`.
   */
  async undo(callId: string, options?: { force?: boolean }): Promise<readonly FileChange[]> {
    if (typeof callId !== "string" || callId === "") {
      throw new TypeError("Cannot undo: callId must be a non-empty string");
    }
    const store = await this.#effectsStore();
    if ("unavailable" in store) throw new Error(`Cannot undo: ${store.unavailable}`);
    return await undoChanges(store, callId, options);
  }

  /** The kept checkpoints of this workspace, oldest first. */
  async checkpoints(): Promise<readonly CheckpointInfo[]> {
    const store = await this.#effectsStore();
    if ("unavailable" in store) return [];
    return (await listCheckpoints(store)).filter((m) => m.state !== "preparing").map(info);
  }

  /** The absolute workspace root as configured (symlinks are resolved when tools run). */
  get workspaceRoot(): string {
    return this.#workspace.requested;
  }

  /** The real (symlink-free) workspace root; rejects when it is not an accessible directory. */
  realWorkspaceRoot(): Promise<string> {
    return this.#workspace.realRoot();
  }

  /** The spec whose hooks the tools run (`options.spec` or the toolkit's own). */
  get spec(): AgentSpec {
    return this.#spec;
  }

  /** The sandbox kind the caller asked for (`"auto"` unless given). */
  get sandboxKind(): "auto" | "bubblewrap" | "none" {
    return this.#sandbox.kind ?? "auto";
  }

  /**
   * What `bash` runs under here: bubblewrap (with its version and process cap), the explicit
   * `none`, or `unavailable` with the reason (then `bash` throws `SandboxUnavailableError`).
   * Detection runs once; an unavailable result is checked again on the next call.
   */
  async sandboxStatus(): Promise<CodingSandboxStatus> {
    const resolved = await this.#resolveSandbox();
    if (resolved.kind === "bubblewrap") {
      return {
        kind: "bubblewrap",
        ...(resolved.version ? { version: resolved.version } : {}),
        processLimit: resolved.processLimit,
        ...(resolved.effects.effects === "overlay"
          ? { effects: "overlay" as const }
          : { effects: "direct" as const, effectsReason: resolved.effects.effectsReason }),
      };
    }
    return resolved;
  }

  #resolveSandbox(): Promise<ResolvedSandbox> {
    const pending = this.#resolved ?? resolveSandbox(this.#sandbox);
    this.#resolved = pending.then((resolved) => {
      if (resolved.kind === "unavailable") this.#resolved = undefined;
      else this.#known = resolved;
      return resolved;
    });
    return this.#resolved;
  }

  /**
   * Builds the tools, each running this toolkit's spec hooks. The bash tool's description states
   * where commands run and whether their changes are staged when detection has finished already
   * ({@linkcode CodingToolkit.sandboxStatus}); before, it describes both cases.
   */
  tools(): Tool[] {
    const bash: BashSandbox = {
      declared: this.sandboxKind,
      network: this.#sandbox.network === true,
      resolve: () => this.#resolveSandbox(),
      known: () => this.#known,
      effects: {
        store: () => this.#effectsStore(),
        hooks: (toolName) => this.#effectsHooks(toolName),
        channel: (given, signal) => this.#channel(given, signal),
        ...this.#pending,
      },
    };
    return this.#tools.map((name) =>
      attachToolHooks(
        name === "bash"
          ? bashTool(this.#workspace, this.#env, bash)
          : BUILDERS[name](this.#workspace),
        this.#spec,
      )
    );
  }

  /**
   * Builds the tools ({@linkcode CodingToolkit.tools}) and, when a target is given, registers
   * each on it: an `ActionManager` (`register`) or a `Branch` (`actions.register`).
   *
   * @throws {TypeError} when `target` has neither `register` nor `actions.register`.
   */
  bind(target?: ToolTarget): Tool[] {
    let register: ((tool: Tool) => unknown) | undefined;
    if (target !== undefined) {
      const direct = (target as { register?: unknown }).register;
      const actions = (target as { actions?: { register?: unknown } }).actions;
      if (typeof direct === "function") {
        register = (tool) => direct.call(target, tool);
      } else if (actions && typeof actions.register === "function") {
        const on = actions.register;
        register = (tool) => on.call(actions, tool);
        // A Branch: its session's tool.effects handlers decide on change sets too.
        if ("hooks" in (target as object)) {
          this.#buses.add(() => (target as { hooks?: EffectsBus | null }).hooks ?? null);
        }
      } else {
        throw new TypeError(
          "Cannot bind coding tools: target must be an ActionManager or a Branch",
        );
      }
    }
    const tools = this.tools();
    if (register) {
      // The target's own spec (an ActionManager's, a Branch's agent spec): its effects hooks
      // decide on change sets too, and its command judge learns whether calls are staged.
      const manager = typeof (target as { register?: unknown }).register === "function"
        ? target
        : (target as { actions?: unknown }).actions;
      const spec = (manager as { spec?: unknown } | undefined)?.spec;
      if (spec instanceof AgentSpec && spec !== this.#spec && !this.#boundSpecs.has(spec)) {
        this.#boundSpecs.add(spec);
        if (this.#tools.includes("bash")) registerStagedProbe(spec, () => this.#stagedHere());
      }
      for (const tool of tools) register(tool);
    }
    return tools;
  }
}

function info(manifest: CheckpointManifest): CheckpointInfo {
  return Object.freeze({
    id: manifest.id,
    callId: manifest.callId,
    toolName: manifest.toolName,
    ...(manifest.sessionId !== undefined ? { sessionId: manifest.sessionId } : {}),
    createdAt: manifest.createdAt,
    state: manifest.state,
    bytes: manifest.bytes,
    changes: manifest.changes,
  });
}
