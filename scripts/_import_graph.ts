/**
 * The library's import graph, read from its sources: which of our modules import which (relative
 * imports only), with or without type-only imports, and the strongly connected groups of that
 * graph. Used by `scripts/import_cycles.ts` and by the layering test
 * (`tests/architecture/layers_test.ts`).
 *
 * @module
 */

import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";

/** Folders that are not library code. */
const SKIP = new Set(["node_modules", "tests", "bench", "scripts", "examples", "docs", "tmp"]);

/** One relative import of a module. */
export interface ImportEdge {
  /** The imported module, an absolute path. */
  readonly to: string;
  /** Whether only types are imported (`import type`, `export type`, or every name `type`). */
  readonly typeOnly: boolean;
}

/** The library's `.ts` modules under `root` (absolute paths), leaving out tests, benches, scripts. */
export function libraryFiles(root: string, dir: string = root, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name.startsWith(".") || SKIP.has(name)) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) libraryFiles(root, path, out);
    else if (name.endsWith(".ts") && !name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

/** The relative imports and re-exports of one module's source, each marked type-only or not. */
export function relativeImports(source: string): Array<{ target: string; typeOnly: boolean }> {
  const out: Array<{ target: string; typeOnly: boolean }> = [];
  // import … from "x"; export … from "x"; import "x"
  const statement =
    /(^|\n)\s*(import|export)\s+(type\s+)?([^;]*?)\s*from\s*["']([^"']+)["']|(^|\n)\s*import\s+["']([^"']+)["']/g;
  for (const m of source.matchAll(statement)) {
    const target = m[5] ?? m[7];
    if (!target.startsWith(".")) continue;
    if (m[7] !== undefined) {
      out.push({ target, typeOnly: false });
      continue;
    }
    if (m[3] !== undefined) {
      out.push({ target, typeOnly: true });
      continue;
    }
    const clause = m[4] ?? "";
    const braces = clause.match(/\{([\s\S]*)\}/);
    const outside = braces ? clause.replace(braces[0], "").replace(/,/g, "").trim() : clause;
    const named = braces
      ? braces[1].split(",").map((s) => s.trim()).filter((s) => s.length > 0)
      : [];
    const values = named.filter((s) => !s.startsWith("type "));
    const typeOnly = braces !== null && outside.length === 0 && values.length === 0;
    out.push({ target, typeOnly });
  }
  return out;
}

/** Every library module and the library modules it imports. */
export function importGraph(root: string): Map<string, ImportEdge[]> {
  const all = libraryFiles(root);
  const known = new Set(all);
  const graph = new Map<string, ImportEdge[]>();
  for (const file of all) {
    const edges = relativeImports(readFileSync(file, "utf8"))
      .map(({ target, typeOnly }) => ({ to: normalize(join(dirname(file), target)), typeOnly }))
      .filter((edge) => known.has(edge.to));
    graph.set(file, edges);
  }
  return graph;
}

/** The top-level folder of a module (`"."` for a file at the root), relative to `root`. */
export function folderOf(root: string, file: string): string {
  const parts = relative(root, file).split(/[\\/]/);
  return parts.length > 1 ? parts[0] : ".";
}

/**
 * The groups of two or more modules that import each other (Tarjan's strongly connected
 * components), over value imports only unless `withTypes`.
 */
export function cycleGroups(graph: Map<string, ImportEdge[]>, withTypes = false): string[][] {
  const next = (v: string) =>
    (graph.get(v) ?? []).filter((e) => withTypes || !e.typeOnly).map((e) => e.to);
  let index = 0;
  const indexOf = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const visit = (v: string): void => {
    indexOf.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of next(v)) {
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
  };
  for (const v of graph.keys()) if (!indexOf.has(v)) visit(v);
  return groups;
}

/** One shortest cycle through `start` inside `group`, as a path that ends where it began. */
export function cycleFrom(
  graph: Map<string, ImportEdge[]>,
  start: string,
  group: Set<string>,
  withTypes = false,
): string[] {
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift()!;
    for (const edge of graph.get(v) ?? []) {
      if (!withTypes && edge.typeOnly) continue;
      const w = edge.to;
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
