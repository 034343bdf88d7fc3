/**
 * Bundle size budget: bundles (esbuild, ES module for a browser/Worker target) a Worker that
 * re-exports a whole web-standard entry, and reports its raw, minified and gzipped sizes and
 * whether zod is inside. Fails (exit 1) when a budget is exceeded or when zod reaches a bundle
 * that must not have it (`./service` and `./hooks` have no tools, so no schemas).
 *
 * Usage: `node --import tsx scripts/bundle_size.ts [--json]`
 *
 * @module
 */

import { build } from "esbuild";
import { gzipSync } from "node:zlib";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** One Worker to measure. */
export interface BundleCase {
  /** A short name: the entry's subpath. */
  name: string;
  /** The entry module, repo-relative. */
  entry: string;
  /** Largest allowed gzipped size of the minified bundle, in bytes. */
  gzipBudget: number;
  /** Whether zod may be in the bundle. */
  zodAllowed: boolean;
}

/** The measured Workers and their budgets. */
export const CASES: readonly BundleCase[] = [
  { name: "./service", entry: "service/mod.ts", gzipBudget: 22_000, zodAllowed: false },
  { name: "./hooks", entry: "hooks/mod.ts", gzipBudget: 12_000, zodAllowed: false },
  { name: ".", entry: "mod.ts", gzipBudget: 90_000, zodAllowed: true },
];

/** Sizes of one bundle. */
export interface BundleSize {
  name: string;
  raw: number;
  minified: number;
  gzipped: number;
  zod: boolean;
  packages: string[];
  problems: string[];
}

async function bundleOf(root: string, entry: string, minify: boolean) {
  return await build({
    absWorkingDir: root,
    stdin: {
      contents: `export * from "./${entry}";\n` +
        `export default { fetch() { return new Response("ok"); } };\n`,
      resolveDir: root,
      sourcefile: "worker.ts",
      loader: "ts",
    },
    bundle: true,
    write: false,
    metafile: true,
    minify,
    format: "esm",
    platform: "browser",
    target: "es2022",
    logLevel: "silent",
  });
}

/** Measures every case. */
export async function measure(root: string): Promise<BundleSize[]> {
  const sizes: BundleSize[] = [];
  for (const c of CASES) {
    const raw = await bundleOf(root, c.entry, false);
    const min = await bundleOf(root, c.entry, true);
    const minified = min.outputFiles[0].contents;
    const packages = [
      ...new Set(
        Object.keys(min.metafile.inputs)
          .filter((p) => p.startsWith("node_modules/"))
          .map((p) => p.split("/").slice(1, p.split("/")[1].startsWith("@") ? 3 : 2).join("/")),
      ),
    ].sort();
    const zod = packages.includes("zod");
    const gzipped = gzipSync(minified, { level: 9 }).length;
    const problems: string[] = [];
    if (zod && !c.zodAllowed) problems.push(`zod is in the ${c.name} bundle`);
    if (gzipped > c.gzipBudget) {
      problems.push(`${c.name} is ${gzipped} bytes gzipped, over its budget of ${c.gzipBudget}`);
    }
    sizes.push({
      name: c.name,
      raw: raw.outputFiles[0].contents.length,
      minified: minified.length,
      gzipped,
      zod,
      packages,
      problems,
    });
  }
  return sizes;
}

function kb(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KiB`;
}

const argv = (globalThis as { process?: { argv?: string[] } }).process?.argv ?? [];
const isMain = argv[1] !== undefined && resolve(argv[1]) === fileURLToPath(import.meta.url);

if (isMain || (import.meta as { main?: boolean }).main) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
  const sizes = await measure(root);
  if (argv.includes("--json")) {
    console.log(JSON.stringify(sizes, null, 2));
  } else {
    for (const s of sizes) {
      console.log(
        `bundle ${s.name.padEnd(10)} raw ${kb(s.raw).padStart(10)}  minified ${
          kb(s.minified).padStart(10)
        }  gzipped ${kb(s.gzipped).padStart(9)}  packages: ${s.packages.join(", ") || "none"}`,
      );
    }
  }
  const problems = sizes.flatMap((s) => s.problems);
  for (const p of problems) console.log(`bundle budget exceeded: ${p}`);
  if (problems.length > 0) {
    (globalThis as { process?: { exitCode?: number } }).process!.exitCode = 1;
  }
}
