import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { isValue, snapshotName, sourceExports } from "./_source_exports.ts";

// Each entry of deno.json "exports" exports exactly the names in its snapshot
// (tests/exports/<entry>.txt): the public surface changes only as a reviewed diff.

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const UPDATE = "deno run -A scripts/export_snapshot.ts --update";
const config = JSON.parse(readFileSync(join(root, "deno.json"), "utf8"));
const exportsMap = config.exports as Record<string, string>;

function snapshot(entry: string): Map<string, string> {
  const file = join(root, "tests", "exports", `${snapshotName(entry)}.txt`);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    assert.fail(
      `"${entry}" has no snapshot tests/exports/${snapshotName(entry)}.txt; run: ${UPDATE}`,
    );
  }
  const names = new Map<string, string>();
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const [name, kinds] = line.split(" ");
    names.set(name, kinds ?? "");
  }
  return names;
}

function difference(entry: string, actual: readonly string[], expected: readonly string[]): string {
  const added = actual.filter((name) => !expected.includes(name));
  const removed = expected.filter((name) => !actual.includes(name));
  return `"${entry}" exports differ from tests/exports/${snapshotName(entry)}.txt ` +
    `(added: ${added.join(", ") || "-"}; removed: ${removed.join(", ") || "-"}). ` +
    `If the change is intended, run: ${UPDATE}`;
}

describe("export snapshots", () => {
  it("every entry of deno.json exports has a snapshot", () => {
    for (const entry of Object.keys(exportsMap)) snapshot(entry);
  });

  it("README.md and mod.ts state the root entry's count of names", () => {
    const count = snapshot(".").size;
    const readme = readFileSync(join(root, "README.md"), "utf8");
    const stated = /`@hookscope\/core` exports (\d+) names/.exec(readme)?.[1];
    assert.equal(
      Number(stated),
      count,
      `README.md says ${stated} names; the root exports ${count}`,
    );
    const doc = /application writes \((\d+) names\)/.exec(
      readFileSync(join(root, "mod.ts"), "utf8"),
    );
    assert.equal(
      Number(doc?.[1]),
      count,
      `mod.ts says ${doc?.[1]} names; the root exports ${count}`,
    );
  });

  for (const [entry, file] of Object.entries(exportsMap)) {
    it(`"${entry}" exports the names (values and types) in its snapshot`, () => {
      const expected = [...snapshot(entry).keys()].sort();
      const actual = sourceExports(join(root, file));
      assert.deepEqual(actual, expected, difference(entry, actual, expected));
    });

    it(`"${entry}" has the snapshot's values at run time`, async () => {
      const expected = [...snapshot(entry)].filter(([, kinds]) => isValue(kinds))
        .map(([name]) => name).sort();
      const module = await import(pathToFileURL(join(root, file)).href);
      const actual = Object.keys(module).filter((name) => name !== "default").sort();
      assert.deepEqual(actual, expected, difference(entry, actual, expected));
    });
  }
});
