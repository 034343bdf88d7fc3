/**
 * The names a module exports, read from its source text: `export` declarations, `export { … }`
 * lists (with `as` and `type`), `export * from` and `export * as` — followed through relative
 * imports. It needs no compiler, so the export test runs it on Deno, Bun and Node alike; the
 * snapshot script checks it against `deno doc --json` each time it runs.
 *
 * @module
 */

import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";

const DECLARATION =
  /^export\s+(?:declare\s+)?(?:abstract\s+)?(?:async\s+)?(?:function\s*\*?|class|const|let|var|interface|type|enum|namespace)\s+([A-Za-z_$][\w$]*)/gm;
const LIST = /^export\s+(type\s+)?\{([^}]*)\}(?:\s*from\s*["']([^"']+)["'])?/gm;
const STAR = /^export\s+(?:type\s+)?\*(?:\s+as\s+([A-Za-z_$][\w$]*))?\s+from\s*["']([^"']+)["']/gm;

/** Block comments and whole-line comments out, so commented-out exports do not count. */
function stripComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
}

function target(from: string, specifier: string): string {
  if (!specifier.startsWith(".")) {
    throw new Error(`Cannot follow export from "${specifier}" in ${from}: not a relative path`);
  }
  return resolve(dirname(from), specifier);
}

/**
 * Every name the module at `path` exports (values and types), sorted.
 *
 * @example One entry
 * ```ts ignore
 * import { sourceExports } from "./_source_exports.ts";
 * sourceExports("hooks/mod.ts"); // ["AgentHooks", "DEFAULT_HOOKS", …]
 * ```
 */
export function sourceExports(path: string): string[] {
  return [...collect(resolve(path), new Map())].sort();
}

function collect(path: string, seen: Map<string, Set<string>>): Set<string> {
  const known = seen.get(path);
  if (known) return known;
  const names = new Set<string>();
  seen.set(path, names);
  const text = stripComments(readFileSync(path, "utf8"));
  for (const match of text.matchAll(DECLARATION)) names.add(match[1]);
  for (const match of text.matchAll(LIST)) {
    for (const item of match[2].split(",")) {
      const words = item.trim().replace(/^type\s+/, "").split(/\s+as\s+/);
      const name = (words[1] ?? words[0]).trim();
      if (name) names.add(name);
    }
    if (match[3]) target(path, match[3]); // checks the specifier is relative
  }
  for (const match of text.matchAll(STAR)) {
    if (match[1]) {
      names.add(match[1]);
      continue;
    }
    for (const name of collect(target(path, match[2]), seen)) {
      if (name !== "default") names.add(name);
    }
  }
  return names;
}

/**
 * The snapshot file name of an entry: `.` → `root`, `./store/sqlite` → `store_sqlite`.
 *
 * @example Names
 * ```ts ignore
 * snapshotName("./ai-sdk"); // "ai_sdk"
 * ```
 */
export function snapshotName(entry: string): string {
  return entry === "." ? "root" : entry.replace(/^\.\//, "").replace(/[/-]/g, "_");
}

/**
 * Whether a snapshot kind list (`class`, `const+type`, `interface`, …) has a runtime value.
 *
 * @example Kinds
 * ```ts ignore
 * isValue("const+type"); // true
 * isValue("interface"); // false
 * ```
 */
export function isValue(kinds: string): boolean {
  return kinds.split("+").some((kind) => kind !== "interface" && kind !== "type");
}
