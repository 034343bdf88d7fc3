// The layering of docs/conventions.md, read from the sources: core imports nothing of ours, the
// three scopes (hooks, service, action) never import each other, the store imports only core, and
// no two library modules import each other's values (a cycle that carries values makes load order
// matter). A mistake here fails with the offending imports named.

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { dirname, join, normalize, relative } from "node:path";
import { fileURLToPath } from "node:url";
import {
  cycleGroups,
  folderOf,
  type ImportEdge,
  importGraph,
  relativeImports,
} from "../../scripts/_import_graph.ts";

const ROOT = normalize(join(dirname(fileURLToPath(import.meta.url)), "..", ".."));

/** What each lower layer may import: folders for values, and folders for types only. */
const ALLOWED: Record<string, { values: readonly string[]; types?: readonly string[] }> = {
  core: { values: [] },
  hooks: { values: ["core"], types: ["store"] }, // HookContext.store is a SessionStore
  service: { values: ["core"] },
  action: { values: ["core"] },
  store: { values: ["core"] },
};

function crossings(graph: Map<string, ImportEdge[]>, folder: string): string[] {
  const rule = ALLOWED[folder];
  const out: string[] = [];
  for (const [file, edges] of graph) {
    if (folderOf(ROOT, file) !== folder) continue;
    for (const edge of edges) {
      const target = folderOf(ROOT, edge.to);
      if (target === folder || rule.values.includes(target)) continue;
      if (edge.typeOnly && rule.types?.includes(target)) continue;
      out.push(
        `${relative(ROOT, file)} imports ${edge.typeOnly ? "types of " : ""}${
          relative(ROOT, edge.to)
        }`,
      );
    }
  }
  return out;
}

describe("library layering", () => {
  const graph = importGraph(ROOT);

  it("reads the library's modules and their imports", () => {
    assert.ok(graph.size > 100, `only ${graph.size} modules found under ${ROOT}`);
    const session = [...graph.entries()].find(([f]) => relative(ROOT, f) === "session/session.ts");
    assert.ok(session, "session/session.ts is in the graph");
    assert.ok(session[1].some((e) => folderOf(ROOT, e.to) === "hooks"), "session imports hooks");
  });

  for (const folder of Object.keys(ALLOWED)) {
    it(`${folder}/ imports only what its layer allows`, () => {
      assert.deepEqual(crossings(graph, folder), []);
    });
  }

  it("no library modules import each other's values", () => {
    const groups = cycleGroups(graph).map((g) => g.map((f) => relative(ROOT, f)).sort());
    assert.deepEqual(groups, []);
  });

  it("tells type-only imports from value imports", () => {
    const edges = relativeImports(
      [
        'import type { A } from "./a.ts";',
        'import { type B, type C } from "./b.ts";',
        'import { D, type E } from "./d.ts";',
        'import F from "./f.ts";',
        'export type { G } from "./g.ts";',
        'export { H } from "./h.ts";',
        'import "./side.ts";',
        'import { z } from "zod";',
      ].join("\n"),
    );
    assert.deepEqual(edges, [
      { target: "./a.ts", typeOnly: true },
      { target: "./b.ts", typeOnly: true },
      { target: "./d.ts", typeOnly: false },
      { target: "./f.ts", typeOnly: false },
      { target: "./g.ts", typeOnly: true },
      { target: "./h.ts", typeOnly: false },
      { target: "./side.ts", typeOnly: false },
    ]);
  });

  it("finds a cycle when one exists", () => {
    const a = join(ROOT, "x/a.ts"), b = join(ROOT, "x/b.ts"), c = join(ROOT, "x/c.ts");
    const graph = new Map<string, ImportEdge[]>([
      [a, [{ to: b, typeOnly: false }]],
      [b, [{ to: a, typeOnly: false }, { to: c, typeOnly: true }]],
      [c, [{ to: b, typeOnly: true }]],
    ]);
    assert.deepEqual(cycleGroups(graph).map((g) => g.sort()), [[a, b]]);
    assert.equal(cycleGroups(graph, true)[0].length, 3);
  });
});
