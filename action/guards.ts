/**
 * Security pre hooks: `guardDestructive` (refuses destructive shell commands) and `guardPaths`
 * (confines `path` / `filePath` arguments), with the reference messages.
 *
 * @module
 */

import { PermissionDeniedError } from "../core/mod.ts";
import {
  baseName,
  globToRegExp,
  hasGlobChars,
  isAbsolutePath,
  isInside,
  normalizePath,
  parentPath,
  resolvePath,
} from "./_path.ts";

const DESTRUCTIVE: readonly RegExp[] = [
  /\brm\s+-(?:[a-z]*r[a-z]*f|[a-z]*f[a-z]*r)[a-z]*\b/i,
  /\bgit\s+push\s+(?:.*\s)?(?:--force\b|-f\b)/i,
  /\bgit\s+reset\s+(?:.*\s)?--hard\b/i,
  /\bgit\s+clean\s+-[a-z]*f[a-z]*d|\bgit\s+clean\s+-[a-z]*d[a-z]*f/i,
  /\bdrop\s+table\b/i,
  /\bdrop\s+database\b/i,
  /\btruncate\s+table\b/i,
  /\bmkfs\b/i,
  /\bdd\s+if=/i,
  />\s*\/dev\/sd[a-z]\b/i,
];

/**
 * A security pre hook for shell tools: throws `PermissionDeniedError` when `args.command`
 * contains `rm -rf`, `git push --force`, `git reset --hard`, `git clean -fd`, `drop table`,
 * `drop database`, `truncate table`, `mkfs`, `dd if=` or `> /dev/sd<letter>`
 * (case-insensitive). Other commands pass.
 *
 * @example Refuse a destructive command
 * ```ts
 * import { guardDestructive } from "@hookscope/core/action";
 * import assert from "node:assert/strict";
 *
 * assert.throws(() => guardDestructive("bash", "", { command: "rm -rf /" }), {
 *   name: "PermissionDeniedError",
 *   message: /^Blocked destructive command: rm -rf \//,
 * });
 * assert.equal(guardDestructive("bash", "", { command: "ls -la" }), undefined);
 * ```
 */
export function guardDestructive(
  _toolName: string,
  _action: string,
  args: Record<string, unknown>,
): void {
  const command = args?.command;
  if (typeof command !== "string") return;
  if (DESTRUCTIVE.some((pattern) => pattern.test(command))) {
    throw new PermissionDeniedError(
      `Blocked destructive command: ${command}\nIf you need this, explain why and ask the user to run it manually.`,
    );
  }
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
  /** Realpath and symlink checks; without it the guard is lexical only. */
  fs?: PathFileSystem;
}

/** File names never handed to a tool, compared case-insensitively. */
export const PROTECTED_BASENAMES: readonly string[] = [
  ".env",
  ".netrc",
  "id_rsa",
  "id_ed25519",
  "id_ecdsa",
  ".htpasswd",
];

/**
 * Whether a file name is protected (see {@linkcode PROTECTED_BASENAMES}).
 *
 * @example
 * ```ts
 * import { isProtectedBasename } from "@hookscope/core/action";
 * import assert from "node:assert/strict";
 *
 * assert.equal(isProtectedBasename(".ENV"), true);
 * assert.equal(isProtectedBasename("env.ts"), false);
 * ```
 */
export function isProtectedBasename(name: string): boolean {
  return PROTECTED_BASENAMES.includes(name.toLowerCase());
}

/**
 * Makes a security pre hook that reads `args.path` (or `filePath` / `file_path`) and throws
 * `PermissionDeniedError` unless the path is acceptable. Checks, in order:
 * NUL byte → `Refusing to access path containing a NUL byte: "<raw>"`; the path itself a
 * symlink → `Refusing to access symlink: '<raw>'`; protected basename →
 * `Refusing to access protected path: '<name>'`; deny rule → `Path matches deny rule: <raw>`;
 * with allowed roots, outside every root (lexically, or after resolving symlinks in the
 * existing part of the path) → `Path not in allowed list: <raw>`. Relative paths resolve
 * against the first root. A root never matches a sibling that shares its prefix
 * (`/ws` vs `/ws-evil`). Arguments without a path pass.
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
  const fs = options?.fs;
  for (const list of [allowed, denied]) {
    for (const entry of list) {
      if (typeof entry !== "string" || entry === "" || entry.includes("\0")) {
        throw new TypeError(
          `Cannot create path guard: invalid path rule ${JSON.stringify(String(entry))}`,
        );
      }
    }
  }
  const named = {
    async guardPaths(
      _toolName: string,
      _action: string,
      args: Record<string, unknown>,
    ): Promise<void> {
      const raw = args?.path ?? args?.filePath ?? args?.file_path;
      if (raw === undefined || raw === null) return;
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
      for (const rule of denied) {
        if (matchesDenyRule(rule, raw, candidate)) {
          throw new PermissionDeniedError(`Path matches deny rule: ${raw}`);
        }
      }
      if (roots.length === 0) return;
      const real = fs ? await realpathLoose(fs, candidate, raw) : candidate;
      for (const root of roots) {
        if (!isInside(root, candidate)) continue;
        const realRoot = fs ? await realpathLoose(fs, root, raw) : root;
        if (isInside(realRoot, real)) return;
      }
      throw new PermissionDeniedError(`Path not in allowed list: ${raw}`);
    },
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

function matchesDenyRule(rule: string, raw: string, candidate: string): boolean {
  if (isAbsolutePath(rule)) return isInside(normalizePath(rule), candidate);
  if (hasGlobChars(rule)) {
    const pattern = globToRegExp(rule);
    return candidate.split("/").some((part) => part !== "" && pattern.test(part));
  }
  return raw.includes(rule) || baseName(candidate).includes(rule);
}

/** The realpath of the longest existing prefix, with the missing rest appended. */
async function realpathLoose(fs: PathFileSystem, path: string, raw: string): Promise<string> {
  const missing: string[] = [];
  let current = path;
  for (;;) {
    try {
      const real = await fs.realpath(current);
      return missing.length ? normalizePath(`${real}/${missing.reverse().join("/")}`) : real;
    } catch {
      if (current === "/") return path;
      // A dangling symlink on the way could be written through later: refuse it.
      if (await fs.isSymlink(current)) {
        throw new PermissionDeniedError(`Refusing to access symlink: '${raw}'`);
      }
      missing.push(baseName(current));
      current = parentPath(current);
    }
  }
}
