/**
 * Security pre hooks: `guardDestructive` / `judgeCommand` / `destructiveCommandGuard` (judge a
 * shell command from its parse tree) and `guardPaths`
 * (confines `path` / `filePath` arguments), with the reference messages.
 *
 * @module
 */

import { PermissionDeniedError } from "../core/mod.ts";
import { loadShellParser, type ShellParser } from "./_shell_parse.ts";
import { judgeShell } from "./_shell_judge.ts";
import { realpathLoose } from "./_realpath.ts";
import {
  baseName,
  globMatcher,
  hasGlobChars,
  isAbsolutePath,
  isInside,
  normalizePath,
  resolvePath,
} from "./_path.ts";

/** What {@linkcode judgeCommand} does with a destructive command. */
export interface JudgeCommandOptions {
  /**
   * `"deny"` (default) refuses destructive commands and commands the guard cannot see into
   * (inline interpreter code, computed program names); `"ask"` hands them to a person
   * instead. A command that cannot be parsed is always denied.
   */
  onDestructive?: "deny" | "ask";
}

/**
 * A verdict of the command guard, structurally a `ToolPreDecision` (`undefined`: no opinion).
 */
export type CommandDecision =
  | undefined
  | { decision: "deny"; reason: string }
  | { decision: "ask"; reason: string };

/**
 * Judges a shell command line from its parse tree (the `tree-sitter-bash` grammar): every
 * simple command at any depth — lists, pipelines, subshells, command and process
 * substitutions, function bodies, `sh -c` / `bash -c` / `eval` / `su -c` / `ssh` strings
 * parsed again, and the programs run by `sudo`, `env`, `xargs`, `find -exec`, `nohup`,
 * `timeout`, `nice`, `command`, `exec`, `watch`, `npx`, … — is judged on its program and
 * flags: recursive deletes in any spelling, `find -delete`, destructive git subcommands and
 * force pushes, `dd of=`, `mkfs*`, `wipefs`, `shred`, `truncate`, truncating or device
 * redirections, `chmod -R` / `chown -R`, `kill -9 -1`, `shutdown` / `reboot`, `crontab -r`,
 * `rsync --delete`, dropping SQL, fork bombs. Commands it cannot see into (inline
 * interpreter code such as `python -c` or `node -e`, a shell reading its input, a program name
 * computed at run time) count as destructive. A command that cannot be parsed is denied.
 *
 * Resolves to `undefined` for a command with nothing to object to, otherwise to
 * `{ decision: "deny" | "ask", reason }`. Loads the parser (WebAssembly) on first use; when it
 * cannot load, every command is denied.
 *
 * @example Judge commands
 * ```ts
 * import { judgeCommand } from "@hookscope/core/action";
 * import assert from "node:assert/strict";
 *
 * assert.equal(await judgeCommand("git status && ls -la"), undefined);
 * const verdict = await judgeCommand("timeout 5 nohup sh -c 'find . -delete'");
 * assert.equal(verdict?.decision, "deny");
 * assert.match(verdict?.reason ?? "", /find -delete/);
 * assert.equal((await judgeCommand("rm -r build", { onDestructive: "ask" }))?.decision, "ask");
 * assert.equal((await judgeCommand("echo 'unclosed"))?.decision, "deny");
 * ```
 */
export async function judgeCommand(
  command: string,
  options?: JudgeCommandOptions,
): Promise<CommandDecision> {
  const onDestructive = options?.onDestructive ?? "deny";
  if (onDestructive !== "deny" && onDestructive !== "ask") {
    throw new TypeError(
      `Cannot judge command: onDestructive must be "deny" or "ask", got ${
        JSON.stringify(String(onDestructive))
      }`,
    );
  }
  if (typeof command !== "string") {
    return { decision: "deny", reason: `Command is not a string (${typeof command})` };
  }
  let parse: ShellParser;
  try {
    parse = await loadShellParser();
  } catch (error) {
    return {
      decision: "deny",
      reason: `The shell parser could not be loaded, so no command can be judged: ${
        (error as Error)?.message ?? String(error)
      }`,
    };
  }
  const finding = judgeShell(parse, command);
  if (!finding) return undefined;
  if (finding.kind === "unparseable") return { decision: "deny", reason: finding.reason };
  const label = finding.kind === "opaque" ? "Cannot judge command" : "Destructive command";
  return { decision: onDestructive, reason: `${label} (${finding.reason})` };
}

/**
 * A security pre hook for shell tools (Tool scope): rejects with `PermissionDeniedError` when
 * {@linkcode judgeCommand} does not pass `args.command` (a non-string command is refused).
 * Arguments without a `command` key pass.
 *
 * @example Refuse a destructive command
 * ```ts
 * import { guardDestructive } from "@hookscope/core/action";
 * import assert from "node:assert/strict";
 *
 * await assert.rejects(guardDestructive("bash", "", { command: "rm -r /" }), {
 *   name: "PermissionDeniedError",
 *   message: /^Blocked destructive command: rm -r \//,
 * });
 * assert.equal(await guardDestructive("bash", "", { command: "ls -la" }), undefined);
 * ```
 */
export async function guardDestructive(
  _toolName: string,
  _action: string,
  args: Record<string, unknown>,
): Promise<void> {
  if (args === null || typeof args !== "object" || !("command" in args)) return;
  const command = args.command;
  const verdict = await judgeCommand(command as string);
  if (verdict) {
    throw new PermissionDeniedError(
      `Blocked destructive command: ${
        String(command)
      }\n${verdict.reason}\nIf you need this, explain why and ask the user to run it manually.`,
    );
  }
}

/** Options of {@linkcode destructiveCommandGuard}. */
export interface DestructiveCommandGuardOptions extends JudgeCommandOptions {
  /** Tool names whose `command` argument is judged (default `["bash"]`; `"*"` for all). */
  tools?: readonly string[];
  /** The argument holding the command line (default `"command"`). */
  argument?: string;
}

/** A `tool.pre` payload as the guard reads it (`args` are the call's real arguments). */
export interface CommandGuardPayload {
  /** The called tool. */
  readonly toolName: string;
  /** The real arguments of the call. */
  readonly args?: Readonly<Record<string, unknown>>;
  /** Other payload fields (`callId`, `argsSummary`, …), not read by the guard. */
  readonly [key: string]: unknown;
}

/**
 * Makes a session `tool.pre` handler that judges the real `args.command` of every call to a
 * shell tool with {@linkcode judgeCommand} and returns its decision (deny or ask), or
 * `undefined` to let the call go on. A call to a guarded tool whose payload carries no
 * arguments, or whose command is not a string, is denied: the guard decides on real values.
 *
 * @example A session tool.pre guard
 * ```ts
 * import { destructiveCommandGuard } from "@hookscope/core/action";
 * import assert from "node:assert/strict";
 *
 * const guard = destructiveCommandGuard({ onDestructive: "ask" });
 * const payload = { toolName: "bash", callId: "c1", args: { command: "git push -f origin" } };
 * assert.equal((await guard(payload))?.decision, "ask");
 * assert.equal(await guard({ toolName: "reader", callId: "c2", args: { path: "x" } }), undefined);
 * ```
 */
export function destructiveCommandGuard(
  options?: DestructiveCommandGuardOptions,
): (payload: CommandGuardPayload) => Promise<CommandDecision> {
  const tools = [...(options?.tools ?? ["bash"])];
  const key = options?.argument ?? "command";
  const judgeOptions: JudgeCommandOptions = { onDestructive: options?.onDestructive ?? "deny" };
  // Validate the option now rather than on the first call.
  if (judgeOptions.onDestructive !== "deny" && judgeOptions.onDestructive !== "ask") {
    throw new TypeError(
      `Cannot create command guard: onDestructive must be "deny" or "ask", got ${
        JSON.stringify(String(judgeOptions.onDestructive))
      }`,
    );
  }
  const named = {
    async destructiveCommandGuard(payload: CommandGuardPayload): Promise<CommandDecision> {
      const name = typeof payload?.toolName === "string" ? payload.toolName : "";
      const canonical = name.length > 5 && name.endsWith("_tool") ? name.slice(0, -5) : name;
      if (!tools.includes("*") && !tools.includes(canonical)) return undefined;
      const args = payload?.args;
      if (args === null || typeof args !== "object") {
        return {
          decision: "deny",
          reason: `The ${name} call carries no arguments to judge (tool.pre payload without args)`,
        };
      }
      const command = (args as Record<string, unknown>)[key];
      if (typeof command !== "string") {
        return { decision: "deny", reason: `The ${name} call has no string '${key}' argument` };
      }
      return await judgeCommand(command, judgeOptions);
    },
  };
  return named.destructiveCommandGuard;
}

/**
 * The file-system access `guardPaths` needs beyond lexical path arithmetic. `nodeFileSystem`
 * from `@hookscope/core/coding` implements it; inject your own for other hosts or tests.
 */
export interface PathFileSystem {
  /** The current working directory (absolute). */
  cwd(): string;
  /** The canonical path (symlinks resolved); rejects when the path does not exist. */
  realpath(path: string): Promise<string>;
  /** Whether the path itself is a symbolic link (`false` when missing). */
  isSymlink(path: string): Promise<boolean>;
  /**
   * How many hard links a regular file has (`0` when missing or not a regular file). Optional:
   * without it the guard cannot see hard links.
   */
  linkCount?(path: string): Promise<number>;
}

/** The hook {@linkcode guardPaths} makes: a security pre hook that resolves or rejects. */
export type PathGuardHook = (
  toolName: string,
  action: string,
  args: Record<string, unknown>,
) => Promise<void>;

/** Options of {@linkcode guardPaths}. */
export interface GuardPathsOptions {
  /** Roots a path must lie under (relative ones resolve against `fs.cwd()`). */
  allowedPaths?: readonly string[];
  /**
   * Deny rules: an absolute path denies itself and its descendants; a relative rule with
   * `*`, `?` or `[` is a glob matched against each component; any other relative rule denies
   * paths containing it (raw) or whose basename contains it.
   */
  deniedPaths?: readonly string[];
  /**
   * The file system for the realpath, symlink and hard-link checks. Default: the host's
   * (`node:fs`, loaded on first use) wherever one exists; where none can be loaded (an edge
   * runtime) the guard is lexical.
   */
  fs?: PathFileSystem;
  /**
   * `true` asks for a lexical-only guard (path arithmetic, no file-system access): symlinks and
   * hard links inside the roots that point elsewhere then pass. Insecure, so explicit.
   */
  lexicalOnly?: boolean;
}

/** The argument keys `guardPaths` checks, every one that is present. */
const PATH_KEYS: readonly string[] = ["path", "filePath", "file_path"];

/** File names never handed to a tool, compared case-insensitively. */
export const PROTECTED_BASENAMES: readonly string[] = [
  ".env",
  ".envrc",
  ".netrc",
  "_netrc",
  "id_rsa",
  "id_dsa",
  "id_ed25519",
  "id_ecdsa",
  ".htpasswd",
  ".pgpass",
  ".npmrc",
  ".pypirc",
  ".git-credentials",
  ".my.cnf",
];

/**
 * Name patterns of protected files, matched against the whole lower-case file name:
 * every `.env` variant (`.env.local`, `.env.production`, `prod.env`), private keys and
 * certificates (`*.pem`, `*.key`, `*.p12`, `*.pfx`, `*.jks`, `*.keystore`), and SSH keys
 * under any suffix (`id_rsa.bak`, `id_ed25519-old`).
 */
export const PROTECTED_PATTERNS: readonly RegExp[] = [
  /^\.env(\..*|-.*|_.*)?$/,
  /\.env$/,
  /\.(pem|key|p12|pfx|jks|keystore|ppk|asc|gpg|kdbx)$/,
  /^id_(rsa|dsa|ecdsa|ed25519)([._-].*)?$/,
  /^\.?(netrc|pgpass|git-credentials|htpasswd)([._-].*)?$/,
];

/**
 * Whether a file name is protected (see {@linkcode PROTECTED_BASENAMES} and
 * {@linkcode PROTECTED_PATTERNS}). The reader, the editor, `search` and `guardPaths` all use
 * this one list, on the name given and on the name the path resolves to.
 *
 * @example
 * ```ts
 * import { isProtectedBasename } from "@hookscope/core/action";
 * import assert from "node:assert/strict";
 *
 * assert.equal(isProtectedBasename(".ENV"), true);
 * assert.equal(isProtectedBasename(".env.production"), true);
 * assert.equal(isProtectedBasename("server.pem"), true);
 * assert.equal(isProtectedBasename("env.ts"), false);
 * ```
 */
export function isProtectedBasename(name: string): boolean {
  const lower = String(name).toLowerCase();
  return PROTECTED_BASENAMES.includes(lower) ||
    PROTECTED_PATTERNS.some((pattern) => pattern.test(lower));
}

/**
 * Makes a security pre hook that reads `args.path`, `filePath` and `file_path` — every one that
 * is present, not only the first (a tool may use another key than the one checked) — and throws
 * `PermissionDeniedError` unless each path is acceptable. Checks, in order:
 * NUL byte → `Refusing to access path containing a NUL byte: "<raw>"`; the path itself a
 * symlink → `Refusing to access symlink: '<raw>'`; protected basename →
 * `Refusing to access protected path: '<name>'`; deny rule → `Path matches deny rule: <raw>`;
 * with allowed roots, outside every root (lexically, or after resolving symlinks in the
 * existing part of the path) → `Path not in allowed list: <raw>`. Relative paths resolve
 * against the first root. A root never matches a sibling that shares its prefix
 * (`/ws` vs `/ws-evil`). Arguments without a path pass. Glob deny rules are compiled once and
 * matched without backtracking; a rule whose braces expand too far throws `TypeError` here.
 *
 * @example Confine paths to a root (lexical, no file system)
 * ```ts
 * import { guardPaths } from "@hookscope/core/action";
 * import assert from "node:assert/strict";
 *
 * const guard = guardPaths({ allowedPaths: ["/ws"] });
 * assert.equal(await guard("reader", "read", { path: "src/weird;name.py" }), undefined);
 * await assert.rejects(guard("reader", "read", { path: "../../etc/passwd" }), {
 *   message: "Path not in allowed list: ../../etc/passwd",
 * });
 * await assert.rejects(guard("reader", "read", { path: "/ws-evil/x" }), {
 *   name: "PermissionDeniedError",
 * });
 * ```
 */
export function guardPaths(options?: GuardPathsOptions): PathGuardHook {
  const allowed = [...(options?.allowedPaths ?? [])];
  const denied = [...(options?.deniedPaths ?? [])];
  if (options?.lexicalOnly === true && options.fs) {
    throw new TypeError("Cannot create path guard: lexicalOnly and fs exclude each other");
  }
  const lexicalOnly = options?.lexicalOnly === true;
  let hostFs: Promise<PathFileSystem | undefined> | null = null;
  const fileSystem = (): Promise<PathFileSystem | undefined> => {
    if (lexicalOnly) return Promise.resolve(undefined);
    if (options?.fs) return Promise.resolve(options.fs);
    hostFs ??= loadHostFileSystem();
    return hostFs;
  };
  for (const list of [allowed, denied]) {
    for (const entry of list) {
      if (typeof entry !== "string" || entry === "" || entry.includes("\0")) {
        throw new TypeError(
          `Cannot create path guard: invalid path rule ${JSON.stringify(String(entry))}`,
        );
      }
    }
  }
  const denyRules = denied.map(compileDenyRule);
  const named = {
    async guardPaths(
      _toolName: string,
      _action: string,
      args: Record<string, unknown>,
    ): Promise<void> {
      // Every path key present is checked: a tool may read another key than the one a
      // lenient guard would look at first (`{ path: "ok", filePath: "../../x" }`).
      for (const key of PATH_KEYS) {
        const raw = args?.[key];
        if (raw !== undefined && raw !== null) await check(raw);
      }
    },
  };
  const check = async (raw: unknown): Promise<void> => {
    const fs = await fileSystem();
    if (typeof raw !== "string") {
      throw new PermissionDeniedError(`Refusing to access non-string path: (${typeof raw})`);
    }
    if (raw.includes("\0")) {
      throw new PermissionDeniedError(
        `Refusing to access path containing a NUL byte: ${JSON.stringify(raw)}`,
      );
    }
    const roots = allowed.map((root) => absolute(root, fs, raw));
    const base = roots[0] ?? (fs ? fs.cwd() : "/");
    const candidate = resolvePath(base, raw);
    if (fs && await fs.isSymlink(candidate)) {
      throw new PermissionDeniedError(`Refusing to access symlink: '${raw}'`);
    }
    const name = baseName(candidate);
    if (isProtectedBasename(name)) {
      throw new PermissionDeniedError(`Refusing to access protected path: '${name}'`);
    }
    if (fs?.linkCount) {
      const links = await fs.linkCount(candidate);
      if (links > 1) {
        throw new PermissionDeniedError(
          `Refusing to access a hard-linked file: '${raw}' (${links} links)`,
        );
      }
    }
    for (const rule of denyRules) {
      if (rule(raw, candidate)) {
        throw new PermissionDeniedError(`Path matches deny rule: ${raw}`);
      }
    }
    if (roots.length === 0) return;
    const refuse = () => new PermissionDeniedError(`Refusing to access symlink: '${raw}'`);
    const real = fs ? await realpathLoose(fs, candidate, refuse) : candidate;
    if (fs && isProtectedBasename(baseName(real))) {
      throw new PermissionDeniedError(`Refusing to access protected path: '${baseName(real)}'`);
    }
    for (const root of roots) {
      if (!isInside(root, candidate)) continue;
      const realRoot = fs ? await realpathLoose(fs, root, refuse) : root;
      if (isInside(realRoot, real)) return;
    }
    throw new PermissionDeniedError(`Path not in allowed list: ${raw}`);
  };
  return named.guardPaths;
}

/** The host's file system through `node:fs`, or `undefined` where it cannot be loaded. */
async function loadHostFileSystem(): Promise<PathFileSystem | undefined> {
  try {
    const [{ lstat, realpath }, processModule] = await Promise.all([
      import("node:fs/promises"),
      import("node:process"),
    ]);
    const process = processModule.default;
    if (typeof realpath !== "function" || typeof process?.cwd !== "function") return undefined;
    return {
      cwd: () => process.cwd(),
      realpath: (path) => realpath(path),
      isSymlink: (path) => lstat(path).then((info) => info.isSymbolicLink(), () => false),
      linkCount: (path) => lstat(path).then((info) => (info.isFile() ? info.nlink : 0), () => 0),
    };
  } catch {
    return undefined;
  }
}

function absolute(path: string, fs: PathFileSystem | undefined, raw: string): string {
  if (isAbsolutePath(path)) return normalizePath(path);
  if (!fs) {
    throw new PermissionDeniedError(
      `Cannot resolve allowed path '${path}' without a file system; refusing '${raw}'`,
    );
  }
  return resolvePath(fs.cwd(), path);
}

/** A deny rule compiled once, when the guard is made. */
type DenyRule = (raw: string, candidate: string) => boolean;

function compileDenyRule(rule: string): DenyRule {
  if (isAbsolutePath(rule)) {
    const root = normalizePath(rule);
    return (_raw, candidate) => isInside(root, candidate);
  }
  if (hasGlobChars(rule)) {
    const matches = globMatcher(rule);
    return (_raw, candidate) => candidate.split("/").some((part) => part !== "" && matches(part));
  }
  return (raw, candidate) => raw.includes(rule) || baseName(candidate).includes(rule);
}
