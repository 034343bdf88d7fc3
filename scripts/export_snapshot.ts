/**
 * Export snapshots: the names each entry of deno.json `exports` makes public, one file per entry
 * under tests/exports/ (`.` is `root.txt`, `./store/sqlite` is `store_sqlite.txt`), so that a
 * change of the public surface is a reviewed diff. `tests/exports/exports_test.ts` fails when an
 * entry's names differ from its snapshot.
 *
 * The names and their kinds come from `deno doc --json`; the script also checks that the source
 * reader the test uses (tests/exports/_source_exports.ts) finds the same names.
 *
 * Usage: `deno run -A scripts/export_snapshot.ts [--update]` — without `--update` it compares and
 * exits 1 on a difference; with it, it rewrites the snapshots (and deletes those of entries that
 * are gone).
 *
 * It reads the working tree: in a checkout shared with uncommitted work of others, `--update` also
 * writes their new names, so commit only the snapshot lines of your own change.
 *
 * @module
 */

import { readdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { isValue, snapshotName, sourceExports } from "../tests/exports/_source_exports.ts";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const snapshotDir = join(root, "tests", "exports");

/** The entries of deno.json `exports`, as `[subpath, repo-relative file]`. */
export function entries(): [string, string][] {
  const config = JSON.parse(readFileSync(join(root, "deno.json"), "utf8"));
  return Object.entries(config.exports as Record<string, string>).map((
    [entry, file],
  ) => [entry, file.replace(/^\.\//, "")]);
}

const KIND: Record<string, string> = {
  class: "class",
  function: "function",
  variable: "const",
  enum: "enum",
  namespace: "namespace",
  interface: "interface",
  typeAlias: "type",
};

interface DocSymbol {
  name: string;
  declarations: { kind: string }[];
}

function docNames(file: string): Map<string, string> {
  const deno = join(root, "node_modules", "deno", "deno");
  const out = new Deno.Command(deno, {
    args: ["doc", "--json", file],
    cwd: root,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" },
  }).outputSync();
  if (!out.success) {
    throw new Error(`deno doc --json ${file} failed: ${new TextDecoder().decode(out.stderr)}`);
  }
  const doc = JSON.parse(new TextDecoder().decode(out.stdout));
  const names = new Map<string, string>();
  for (const node of Object.values(doc.nodes as Record<string, { symbols: DocSymbol[] }>)) {
    for (const symbol of node.symbols) {
      const kinds = [
        ...new Set(symbol.declarations.map((d) => KIND[d.kind]).filter((k) => k !== undefined)),
      ].sort();
      names.set(symbol.name, kinds.join("+"));
    }
  }
  return names;
}

/** The snapshot text of one entry. */
function render(entry: string, file: string, names: Map<string, string>): string {
  const sorted = [...names.keys()].sort();
  const values = sorted.filter((name) => isValue(names.get(name)!)).length;
  return [
    `# Names exported by "${entry}" (${file}): ${sorted.length} (${values} values, ${
      sorted.length - values
    } types only).`,
    "# Written by `deno run -A scripts/export_snapshot.ts --update`; checked by exports_test.ts.",
    ...sorted.map((name) => `${name} ${names.get(name)}`),
    "",
  ].join("\n");
}

if (import.meta.main) {
  const update = Deno.args.includes("--update");
  let failed = false;
  const wanted = new Set<string>();
  for (const [entry, file] of entries()) {
    const names = docNames(file);
    const fromSource = sourceExports(join(root, file));
    const docSorted = [...names.keys()].sort();
    if (docSorted.join("\n") !== fromSource.join("\n")) {
      const onlyDoc = docSorted.filter((n) => !fromSource.includes(n));
      const onlySource = fromSource.filter((n) => !names.has(n));
      console.error(
        `${entry}: the source reader and deno doc disagree (deno doc only: ${
          onlyDoc.join(", ") || "-"
        }; source only: ${onlySource.join(", ") || "-"}); fix tests/exports/_source_exports.ts`,
      );
      failed = true;
    }
    const name = snapshotName(entry);
    wanted.add(`${name}.txt`);
    const path = join(snapshotDir, `${name}.txt`);
    const text = render(entry, file, names);
    let old = "";
    try {
      old = readFileSync(path, "utf8");
    } catch { /* a new entry */ }
    if (old === text) continue;
    if (update) {
      writeFileSync(path, text);
      console.log(`wrote tests/exports/${name}.txt (${names.size} names)`);
    } else {
      console.error(`${entry}: tests/exports/${name}.txt is out of date`);
      failed = true;
    }
  }
  for (const file of readdirSync(snapshotDir)) {
    if (!file.endsWith(".txt") || wanted.has(file)) continue;
    if (update) {
      unlinkSync(join(snapshotDir, file));
      console.log(`deleted tests/exports/${file} (no such entry)`);
    } else {
      console.error(`tests/exports/${file}: no such entry in deno.json`);
      failed = true;
    }
  }
  if (failed && !update) console.error("run: deno run -A scripts/export_snapshot.ts --update");
  if (failed) Deno.exit(1);
}
