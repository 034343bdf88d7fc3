// Stages the package as JSR serves it: exactly the files `deno publish --dry-run` lists, copied
// into a folder outside the repository, with bare specifiers rewritten through deno.json's
// `imports` (and package.json's dependencies) the way JSR rewrites them on publish (`zod` →
// `npm:zod@^4`). The dry run's list is cross-checked against deno.json `publish.include/exclude`
// applied to the files git would keep; a difference fails the staging. The dry run runs with
// --no-check: it lists the same files, and .ci/run type-checks the full dry run itself.
//
//   node --import tsx scripts/packaged/stage.ts --out DIR [--source DIR]
//
// Library use: `stage({ source, out })` resolves with the staged files and the rewrites made.

import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

/** The repository root. */
export const REPO: string = fileURLToPath(new URL("../../", import.meta.url));

/** What `stage()` made. */
export interface Staged {
  /** The folder holding the staged files. */
  readonly dir: string;
  /** Repository-relative paths of the staged files, sorted. */
  readonly files: readonly string[];
  /** deno.json of the source (name, version, exports, imports). */
  readonly denoJson: DenoJson;
  /** Every bare specifier rewritten, with its replacement (`zod` → `npm:zod@^4`). */
  readonly rewrites: ReadonlyMap<string, string>;
}

/** The parts of deno.json the tier reads. */
export interface DenoJson {
  readonly name: string;
  readonly version: string;
  readonly exports: Record<string, string>;
  readonly imports: Record<string, string>;
  readonly publish: { readonly include: string[]; readonly exclude: string[] };
}

/** The parts of package.json the tier reads. */
export interface PackageJson {
  readonly dependencies?: Record<string, string>;
  readonly peerDependencies?: Record<string, string>;
  readonly peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  readonly engines?: Record<string, string>;
  readonly license?: string;
  readonly description?: string;
}

/** The deno binary the repository's `npm ci` installed. */
export function denoBinary(): string {
  return join(REPO, "node_modules/.bin/deno");
}

/** Reads and parses a JSON file. */
export function readJson<T>(file: string): T {
  return JSON.parse(readFileSync(file, "utf8")) as T;
}

/** The file list of `deno publish --dry-run` in `source` (paths relative to it, sorted). */
export function dryRunFiles(source: string): string[] {
  const run = spawnSync(denoBinary(), ["publish", "--dry-run", "--allow-dirty", "--no-check"], {
    cwd: source,
    env: { ...process.env, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" },
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    maxBuffer: 64 * 1024 * 1024,
    timeout: 180_000,
  });
  const output = `${run.stdout}${run.stderr}`; // deno writes the list to stderr
  if (run.status !== 0) throw new Error(`Cannot stage: the dry run failed:\n${output}`);
  const start = output.indexOf("Simulating publish of");
  if (start < 0) throw new Error(`Cannot stage: no file list in the dry run's output:\n${output}`);
  const prefix = `file://${resolve(source)}/`;
  const files: string[] = [];
  for (const line of output.slice(start).split("\n")) {
    const match = line.match(/^\s+(file:\/\/\S+) \(/);
    if (!match) continue;
    if (!match[1].startsWith(prefix)) throw new Error(`Cannot stage: "${match[1]}" is outside`);
    files.push(decodeURIComponent(match[1].slice(prefix.length)));
  }
  if (!files.length) throw new Error("Cannot stage: the dry run listed no files");
  return files.sort();
}

/** A publish.include/exclude pattern as a test on a relative path (deno's glob rules). */
function globTest(pattern: string): (path: string) => boolean {
  const clean = pattern.replace(/^\.\//, "");
  if (clean.endsWith("/")) return (path) => path.startsWith(clean);
  let source = "";
  for (let i = 0; i < clean.length; i++) {
    const c = clean[i];
    if (c === "*" && clean[i + 1] === "*" && clean[i + 2] === "/") {
      source += "(?:.*/)?";
      i += 2;
    } else if (c === "*" && clean[i + 1] === "*") {
      source += ".*";
      i += 1;
    } else if (c === "*") source += "[^/]*";
    else if (c === "?") source += "[^/]";
    else source += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  const regex = new RegExp(`^${source}(?:/.*)?$`);
  return (path) => regex.test(path);
}

/** The files deno.json's publish.include/exclude select among those git keeps (tracked or new). */
export function selectedFiles(source: string, denoJson: DenoJson): string[] {
  const listed = execFileSync(
    "git",
    ["ls-files", "--cached", "--others", "--exclude-standard", "-z"],
    { cwd: source, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
  ).split("\0").filter(Boolean);
  const include = denoJson.publish.include.map(globTest);
  const exclude = denoJson.publish.exclude.map(globTest);
  // A file deleted in the work tree is still in the index: keep only those that exist.
  return [...new Set(listed)].filter((path) =>
    include.some((test) => test(path)) && !exclude.some((test) => test(path)) &&
    existsSync(join(source, path))
  ).sort();
}

/** Bare specifier → what JSR writes instead, or `null` when it is not bare. */
export function rewriteBare(
  specifier: string,
  imports: Record<string, string>,
  dependencies: Record<string, string>,
): string | null {
  if (/^(\.{0,2}\/|[a-z][a-z0-9+.-]*:)/i.test(specifier)) return null; // relative, node:, npm:, …
  if (imports[specifier] !== undefined) return imports[specifier];
  const prefix = Object.keys(imports)
    .filter((key) => key.endsWith("/") && specifier.startsWith(key))
    .sort((a, b) => b.length - a.length)[0];
  if (prefix) return imports[prefix] + specifier.slice(prefix.length);
  const name = specifier.match(/^(@[^/]+\/[^/]+|[^/]+)(\/.*)?$/);
  if (name && dependencies[name[1]] !== undefined) {
    return `npm:${name[1]}@${dependencies[name[1]]}${name[2] ?? ""}`;
  }
  throw new Error(`Cannot stage: bare specifier "${specifier}" is not in deno.json imports`);
}

/** Every static and literal dynamic import/export specifier of a module, with its position. */
export function specifiersOf(code: string): { text: string; pos: number; end: number }[] {
  const info = ts.preProcessFile(code, true, true);
  // `pos` is the opening quote's offset; the specifier follows it.
  return info.importedFiles.map((file) => ({
    text: file.fileName,
    pos: file.pos + 1,
    end: file.pos + 1 + file.fileName.length,
  }));
}

/** Replaces specifiers in `code` through `map` (returns `null` to keep one). */
export function replaceSpecifiers(code: string, map: (specifier: string) => string | null): string {
  const found = specifiersOf(code).sort((a, b) => b.pos - a.pos);
  let out = code;
  for (const { text, pos, end } of found) {
    if (out.slice(pos, end) !== text) throw new Error(`Cannot rewrite "${text}": position drift`);
    const next = map(text);
    if (next !== null && next !== text) out = out.slice(0, pos) + next + out.slice(end);
  }
  return out;
}

/** Stages the published file set of `source` into `out` (created). */
export function stage(options: { source?: string; out: string }): Staged {
  const source = resolve(options.source ?? REPO);
  const denoJson = readJson<DenoJson>(join(source, "deno.json"));
  const packageJson = readJson<PackageJson>(join(source, "package.json"));
  const dependencies = { ...packageJson.peerDependencies, ...packageJson.dependencies };
  const files = dryRunFiles(source);
  const selected = selectedFiles(source, denoJson);
  const missing = selected.filter((file) => !files.includes(file));
  const extra = files.filter((file) => !selected.includes(file));
  if (missing.length || extra.length) {
    throw new Error(
      `Cannot stage: the dry run and deno.json publish.include/exclude disagree\n` +
        `  selected but not in the dry run: ${missing.join(", ") || "none"}\n` +
        `  in the dry run but not selected: ${extra.join(", ") || "none"}`,
    );
  }
  const rewrites = new Map<string, string>();
  for (const file of files) {
    const from = join(source, file);
    const to = join(options.out, file);
    mkdirSync(dirname(to), { recursive: true });
    if (!/\.(ts|tsx|mts|js|mjs)$/.test(file)) {
      copyFileSync(from, to);
      continue;
    }
    const code = readFileSync(from, "utf8");
    const rewritten = replaceSpecifiers(code, (specifier) => {
      const next = rewriteBare(specifier, denoJson.imports, dependencies);
      if (next === null) return null;
      if (!/^(npm|jsr|node|https?):/.test(next)) {
        throw new Error(`Cannot stage: "${specifier}" in ${file} maps to a local file (${next})`);
      }
      rewrites.set(specifier, next);
      return next;
    });
    writeFileSync(to, rewritten);
  }
  return { dir: options.out, files, denoJson, rewrites };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const flag = (name: string) => {
    const at = args.indexOf(name);
    return at >= 0 ? args[at + 1] : undefined;
  };
  const out = flag("--out");
  if (!out) {
    console.error("usage: stage.ts --out DIR [--source DIR]");
    process.exit(2);
  }
  const staged = stage({ out: resolve(out), source: flag("--source") });
  console.log(`staged ${staged.files.length} files into ${staged.dir}`);
  for (const [from, to] of staged.rewrites) console.log(`  ${from} -> ${to}`);
}
