/**
 * The path guard `guardPaths` (confines `path` / `filePath` arguments) and the protected-name
 * list, with the reference messages. Web-standard: the file system is injected (`fs`); the
 * shell-command guard lives in `@hookscope/core/coding` (it needs a WebAssembly parser loaded
 * through `node:*`).
 *
 * @module
 */

import { PermissionDeniedError } from "../core/mod.ts";
import type { ToolPreDeny } from "../core/tool_hook.ts";
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

/**
 * What a guard reads: the call's real arguments. A Tool-scope hook context and a
 * session `tool.pre` payload both have this shape, so a guard works in either place.
 */
export interface GuardInput {
  /** The call's real arguments. */
  readonly args?: Readonly<Record<string, unknown>>;
}

/**
 * The hook {@linkcode guardPaths} makes: a pre hook that resolves to a deny decision or to
 * nothing. It is the same function as an `AgentSpec` security pre hook, a `Tool` preprocessor or
 * a session `tool.pre` handler, and denies the same way in each (`ToolDeniedError`; from a
 * security hook `SecurityDeniedError`).
 */
export type PathGuardHook = (context: GuardInput) => Promise<ToolPreDeny | undefined>;

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
   * The file system for the realpath, symlink and hard-link checks (for example
   * `nodeFileSystem` from `@hookscope/core/coding`, whose `guardHostPaths` passes it by
   * default). Required unless `lexicalOnly` is `true`: this entry loads no host module.
   */
  fs?: PathFileSystem;
  /**
   * `true` asks for a lexical-only guard (path arithmetic, no file-system access): symlinks and
   * hard links inside the roots that point elsewhere then pass. Insecure, so explicit.
   */
  lexicalOnly?: boolean;
}

/** The argument keys `guardPaths` checks, every one that is present. */
const PATH_KEYS: readonly string[] = ["path", "filePath", "file_path", "notebook_path"];

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
 * Makes a security pre hook that reads `args.path`, `filePath`, `file_path` and `notebook_path`
 * (Claude Code's spellings) — every one that is present, not only the first (a tool may use
 * another key than the one checked) — and returns a deny decision (`{ decision: "deny", reason }`)
 * unless each path is acceptable. Checks, in order (the reasons):
 * NUL byte → `Refusing to access path containing a NUL byte: "<raw>"`; the path itself a
 * symlink → `Refusing to access symlink: '<raw>'`; protected basename →
 * `Refusing to access protected path: '<name>'`; deny rule → `Path matches deny rule: <raw>`;
 * with allowed roots, outside every root (lexically, or after resolving symlinks in the
 * existing part of the path) → `Path not in allowed list: <raw>`. Relative paths resolve
 * against the first root. A root never matches a sibling that shares its prefix
 * (`/ws` vs `/ws-evil`). Arguments without a path pass. Glob deny rules are compiled once and
 * matched without backtracking; a rule whose braces expand too far throws `TypeError` here.
 *
 * This entry loads no host module, so the file system is a required option: without `fs` and
 * without `lexicalOnly: true` the guard throws `TypeError` when made. `guardHostPaths` from
 * `@hookscope/core/coding` passes `nodeFileSystem` by default.
 *
 * @example Confine paths to a root (lexical, no file system)
 * ```ts
 * import { guardPaths } from "@hookscope/core/action";
 * import assert from "node:assert/strict";
 *
 * const guard = guardPaths({ allowedPaths: ["/ws"], lexicalOnly: true });
 * assert.equal(await guard({ args: { path: "src/weird;name.py" } }), undefined);
 * assert.deepEqual(await guard({ args: { path: "../../etc/passwd" } }), {
 *   decision: "deny",
 *   reason: "Path not in allowed list: ../../etc/passwd",
 * });
 * assert.equal((await guard({ args: { path: "/ws-evil/x" } }))?.decision, "deny");
 * ```
 */
export function guardPaths(options?: GuardPathsOptions): PathGuardHook {
  const allowed = [...(options?.allowedPaths ?? [])];
  const denied = [...(options?.deniedPaths ?? [])];
  if (options?.lexicalOnly === true && options.fs) {
    throw new TypeError("Cannot create path guard: lexicalOnly and fs exclude each other");
  }
  const lexicalOnly = options?.lexicalOnly === true;
  if (!lexicalOnly && !options?.fs) {
    throw new TypeError(
      "Cannot create path guard: pass fs (for example nodeFileSystem from " +
        "@hookscope/core/coding, whose guardHostPaths uses it by default) for the symlink and " +
        "hard-link checks, or lexicalOnly: true for an insecure lexical-only guard",
    );
  }
  const fs: PathFileSystem | undefined = lexicalOnly ? undefined : options?.fs;
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
    async guardPaths(context: GuardInput): Promise<ToolPreDeny | undefined> {
      const args = context?.args;
      // Every path key present is checked: a tool may read another key than the one a
      // lenient guard would look at first (`{ path: "ok", filePath: "../../x" }`).
      try {
        for (const key of PATH_KEYS) {
          const raw = args?.[key];
          if (raw !== undefined && raw !== null) await check(raw);
        }
      } catch (error) {
        // A refusal is a deny decision; any other failure (a broken file system) propagates:
        // a security hook that fails denies, a session hook that fails blocks.
        if (error instanceof PermissionDeniedError) {
          return { decision: "deny", reason: error.message };
        }
        throw error;
      }
      return undefined;
    },
  };
  const check = async (raw: unknown): Promise<void> => {
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
