/**
 * Finds import cycles among the library's modules: every strongly connected group of files that
 * import each other's values (`import type` and `export type` are left out: they vanish at run
 * time). Prints each group with one path around it, and exits 1 when any is found.
 *
 * Usage: `deno run -A scripts/import_cycles.ts [--all]` (`--all` also counts type-only imports)
 *
 * @module
 */

import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import process from "node:process";

const ROOT = normalize(join(dirname(new URL(import.meta.url).pathname), ".."));
const SKIP = new Set(["node_modules", "tests", "bench", "scripts", "examples", "docs", ".git"]);
const withTypes = process.argv.includes("--all");

function files(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name.startsWith(".") || SKIP.has(name)) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) files(path, out);
    else if (name.endsWith(".ts") && !name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

/** The relative modules `source` imports values from (or anything, with `--all`). */
function valueImports(source: string): string[] {
  const out: string[] = [];
  // import … from "x"; export … from "x"; import "x"
  const statement =
    /(^|\n)\s*(import|export)\s+(type\s+)?([^;]*?)\s*from\s*["']([^"']+)["']|(^|\n)\s*import\s+["']([^"']+)["']/g;
  for (const m of source.matchAll(statement)) {
    const target = m[5] ?? m[7];
    if (!target.startsWith(".")) continue;
    if (m[7] !== undefined) {
      out.push(target);
      continue;
    }
    if (!withTypes && m[3] !== undefined) continue; // import type / export type
    const clause = m[4] ?? "";
    const braces = clause.match(/\{([\s\S]*)\}/);
    const outside = braces ? clause.replace(braces[0], "").replace(/,/g, "").trim() : clause;
    const named = braces
      ? braces[1].split(",").map((s) => s.trim()).filter((s) => s.length > 0)
      : [];
    const values = named.filter((s) => !s.startsWith("type "));
    if (withTypes || outside.length > 0 || values.length > 0 || (braces === null && clause)) {
      out.push(target);
    }
  }
  return out;
}

const all = files(ROOT);
const known = new Set(all);
const graph = new Map<string, string[]>();
for (const file of all) {
  const source = readFileSync(file, "utf8");
  graph.set(
    file,
    valueImports(source).map((t) => normalize(join(dirname(file), t))).filter((t) => known.has(t)),
  );
}

// Tarjan's strongly connected components.
let index = 0;
const indexOf = new Map<string, number>();
const low = new Map<string, number>();
const stack: string[] = [];
const onStack = new Set<string>();
const groups: string[][] = [];
function visit(v: string): void {
  indexOf.set(v, index);
  low.set(v, index);
  index++;
  stack.push(v);
  onStack.add(v);
  for (const w of graph.get(v) ?? []) {
    if (!indexOf.has(w)) {
      visit(w);
      low.set(v, Math.min(low.get(v)!, low.get(w)!));
    } else if (onStack.has(w)) {
      low.set(v, Math.min(low.get(v)!, indexOf.get(w)!));
    }
  }
  if (low.get(v) === indexOf.get(v)) {
    const group: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      group.push(w);
    } while (w !== v);
    if (group.length > 1) groups.push(group);
  }
}
for (const v of all) if (!indexOf.has(v)) visit(v);

/** One cycle through `start` inside `group` (breadth-first, shortest). */
function cycleFrom(start: string, group: Set<string>): string[] {
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift()!;
    for (const w of graph.get(v) ?? []) {
      if (!group.has(w)) continue;
      if (w === start) {
        const path = [v];
        while (path[0] !== start) path.unshift(previous.get(path[0])!);
        return [...path, start];
      }
      if (!previous.has(w)) {
        previous.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start];
}

const name = (file: string) => relative(ROOT, file);
console.log(
  `${all.length} modules, ${groups.length} ${withTypes ? "import" : "value-import"} cycle group(s)`,
);
for (const group of groups) {
  const members = new Set(group);
  console.log(`- ${group.length} files: ${group.map(name).sort().join(", ")}`);
  console.log(`  e.g. ${cycleFrom(group.sort()[0], members).map(name).join(" → ")}`);
}
process.exitCode = groups.length > 0 ? 1 : 0;
