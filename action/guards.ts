/**
 * Security pre hooks: `guardDestructive` (refuses destructive shell commands) and `guardPaths`
 * (confines `path` / `filePath` arguments), with the reference messages.
 *
 * @module
 */

import { PermissionDeniedError } from "../core/mod.ts";
import { parseArgv } from "./_argv.ts";
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

/** Words that end a command inside a command line (for the split-flag check). */
const COMMAND_BREAKS = new Set([";", "&&", "||", "|", "&"]);

/** Whether the words starting at `start` carry all of `needed` (short letters or long names). */
function hasFlags(
  words: readonly string[],
  start: number,
  needed: readonly (readonly [short: string, long: string])[],
): boolean {
  const seen = new Set<string>();
  for (let i = start; i < words.length && !COMMAND_BREAKS.has(words[i]); i++) {
    const word = words[i];
    if (word === "--") break;
    if (word.startsWith("--")) {
      for (const [short, long] of needed) if (word === long) seen.add(short);
    } else if (word.startsWith("-")) {
      for (const [short] of needed) if (word.toLowerCase().includes(short)) seen.add(short);
    }
  }
  return needed.every(([short]) => seen.has(short));
}

/** `rm` with recursive and force flags, or `git clean` with force and directory flags. */
function hasDestructiveFlags(line: string): boolean {
  const words = line.split(/\s+/).filter((word) => word !== "");
  for (let i = 0; i < words.length; i++) {
    const name = words[i].slice(words[i].lastIndexOf("/") + 1).toLowerCase();
    if (name === "rm" && hasFlags(words, i + 1, [["r", "--recursive"], ["f", "--force"]])) {
      return true;
    }
    if (
      name === "git" && words[i + 1]?.toLowerCase() === "clean" &&
      hasFlags(words, i + 2, [["f", "--force"], ["d", "-d"]])
    ) return true;
  }
  return false;
}

/**
 * The command as written plus up to three levels of it with quoting and escapes undone
 * (`"rm" -rf`, `r\m -rf`, `sh -c 'rm -rf /'`), so quoting cannot hide a pattern.
 */
function commandForms(command: string): string[] {
  const forms = [command];
  let current = command;
  for (let depth = 0; depth < 3; depth++) {
    let argv: string[];
    try {
      argv = parseArgv(current);
    } catch {
      break;
    }
    const next = argv.join(" ");
    if (next === current) break;
    forms.push(next);
    current = next;
  }
  return forms;
}

/**
 * A security pre hook for shell tools: throws `PermissionDeniedError` when `args.command`
 * contains `rm -rf`, `git push --force`, `git reset --hard`, `git clean -fd`, `drop table`,
 * `drop database`, `truncate table`, `mkfs`, `dd if=` or `> /dev/sd<letter>`
 * (case-insensitive). Other commands pass.
 *
 * Beyond the reference, quoting cannot hide a pattern: the command is also checked with its
 * quotes and backslash escapes undone (`"rm" -rf /`, `r\m -rf /`, `sh -c "rm -rf /"`), and
 * split or long flags count (`rm -r -f`, `rm --recursive --force`, `/bin/rm -R -f`,
 * `git clean -f -d`).
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
  const forms = commandForms(command);
  if (
    forms.some((form) =>
      DESTRUCTIVE.some((pattern) => pattern.test(form)) || hasDestructiveFlags(form)
    )
  ) {
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

/** The argument keys `guardPaths` checks, every one that is present. */
const PATH_KEYS: readonly string[] = ["path", "filePath", "file_path"];

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
    for (const rule of denyRules) {
      if (rule(raw, candidate)) {
        throw new PermissionDeniedError(`Path matches deny rule: ${raw}`);
      }
    }
    if (roots.length === 0) return;
    const refuse = () => new PermissionDeniedError(`Refusing to access symlink: '${raw}'`);
    const real = fs ? await realpathLoose(fs, candidate, refuse) : candidate;
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
