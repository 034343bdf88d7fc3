/**
 * Finds import cycles among the library's modules: every strongly connected group of files that
 * import each other's values (`import type` and `export type` are left out: they vanish at run
 * time). Prints each group with one path around it, and exits 1 when any is found. The layering
 * test (`tests/architecture/layers_test.ts`) checks the same in the suite.
 *
 * Usage: `deno run -A scripts/import_cycles.ts [--all]` (`--all` also counts type-only imports)
 *
 * @module
 */

import { dirname, join, normalize, relative } from "node:path";
import process from "node:process";
import { cycleFrom, cycleGroups, importGraph } from "./_import_graph.ts";

const ROOT = normalize(join(dirname(new URL(import.meta.url).pathname), ".."));
const withTypes = process.argv.includes("--all");

const graph = importGraph(ROOT);
const groups = cycleGroups(graph, withTypes);
const name = (file: string) => relative(ROOT, file);
console.log(
  `${graph.size} modules, ${groups.length} ${withTypes ? "import" : "value-import"} cycle group(s)`,
);
for (const group of groups) {
  const members = new Set(group);
  console.log(`- ${group.length} files: ${group.map(name).sort().join(", ")}`);
  console.log(
    `  e.g. ${cycleFrom(graph, group.sort()[0], members, withTypes).map(name).join(" → ")}`,
  );
}
process.exitCode = groups.length > 0 ? 1 : 0;
