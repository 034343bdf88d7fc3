// Builds the npm form of a staged package the way JSR's npm compatibility layer does: every `.ts`
// module transpiled to `.js` with `.js` relative specifiers and `npm:name@range/sub` turned into
// `name/sub`, a `.d.ts` declaration beside it (one compiler program over every module), an
// `exports` map matching
// deno.json's, `dependencies` from package.json's `dependencies` and the (optional) peers from its
// `peerDependencies`; then `npm pack`. Every npm package the modules import must be one of those.
//
//   node --import tsx scripts/packaged/npm_pack.ts --staged DIR --out DIR

import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import ts from "typescript";
import { type DenoJson, type PackageJson, readJson, replaceSpecifiers, REPO } from "./stage.ts";

/** What `buildNpm()` made. */
export interface NpmBuild {
  /** The package folder (package.json, .js, .d.ts, README.md, LICENSE). */
  readonly dir: string;
  /** The tarball `npm pack` wrote. */
  readonly tarball: string;
  /** npm packages the modules import, by name. */
  readonly imported: readonly string[];
  /** Type errors in cli/ (Deno globals), which do not stop the emit. */
  readonly cliDiagnostics: number;
}

/** Where the npm form is compiled: under the repository's tmp/, so the compiler finds the types. */
const BUILD = join(REPO, "tmp/packaged/npm-src");

function npmName(specifier: string): { name: string; sub: string } | null {
  const match = specifier.match(/^npm:(@[^/@]+\/[^/@]+|[^/@]+)(?:@[^/]*)?(\/.*)?$/);
  return match ? { name: match[1], sub: match[2] ?? "" } : null;
}

/** Builds and packs the npm form of the staged package in `staged` into `out` (created). */
export function buildNpm(options: { staged: string; out: string }): NpmBuild {
  const staged = resolve(options.staged);
  const dir = join(resolve(options.out), "package");
  const denoJson = readJson<DenoJson>(join(staged, "deno.json"));
  const packageJson = readJson<PackageJson>(join(REPO, "package.json"));
  const allowed = { ...packageJson.peerDependencies, ...packageJson.dependencies };
  const imported = new Set<string>();
  const problems: string[] = [];
  rmSync(BUILD, { recursive: true, force: true });
  mkdirSync(BUILD, { recursive: true });
  writeFileSync(join(BUILD, "package.json"), '{ "type": "module" }\n');
  const files = execFileSync("find", [".", "-type", "f"], { cwd: staged, encoding: "utf8" })
    .split("\n").filter(Boolean).map((file) => file.replace(/^\.\//, "")).sort();
  const modules: string[] = [];
  for (const file of files) {
    if (!file.endsWith(".ts") || file.endsWith(".d.ts")) {
      const to = join(dir, file);
      mkdirSync(dirname(to), { recursive: true });
      if (file !== "deno.json") copyFileSync(join(staged, file), to);
      continue;
    }
    const code = replaceSpecifiers(readFileSync(join(staged, file), "utf8"), (specifier) => {
      if (/^\.{1,2}\//.test(specifier) || /^(node|bun):/.test(specifier)) return null;
      const npm = npmName(specifier);
      if (!npm) {
        problems.push(`${file}: "${specifier}" has no npm form`);
        return null;
      }
      if (allowed[npm.name] === undefined) {
        problems.push(`${file}: imports "${npm.name}", which package.json does not depend on`);
      }
      imported.add(npm.name);
      return npm.name + npm.sub;
    });
    const to = join(BUILD, file);
    mkdirSync(dirname(to), { recursive: true });
    writeFileSync(to, code);
    modules.push(to);
  }
  if (problems.length) throw new Error(`Cannot build the npm form:\n  ${problems.join("\n  ")}`);
  // One program over every module: `.js` with `.js` specifiers and `.d.ts` beside each. Errors
  // in cli/ do not stop the emit (it uses Deno's globals, which these libs do not declare).
  const program = ts.createProgram(modules, {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    rewriteRelativeImportExtensions: true,
    verbatimModuleSyntax: true,
    strict: true,
    declaration: true,
    skipLibCheck: true,
    types: ["node"],
    lib: ["lib.es2023.d.ts", "lib.dom.d.ts", "lib.dom.iterable.d.ts", "lib.dom.asynciterable.d.ts"],
    rootDir: BUILD,
    outDir: dir,
  });
  const emitted = program.emit();
  // Only the emit's own diagnostics (declaration emit): a full type check of the package is
  // .ci/run's `deno check`, and the consumers' tsc step checks what the declarations say.
  const diagnostics = [...emitted.diagnostics];
  const outside = diagnostics.filter((d) => !d.file?.fileName.startsWith(join(BUILD, "cli/")));
  if (emitted.emitSkipped || outside.length) {
    throw new Error(
      `Cannot build the npm form:\n${
        ts.formatDiagnostics(outside, {
          getCanonicalFileName: (name) => name,
          getCurrentDirectory: () => BUILD,
          getNewLine: () => "\n",
        })
      }`,
    );
  }
  const exports: Record<string, { types: string; default: string }> = {};
  for (const [key, target] of Object.entries(denoJson.exports)) {
    const base = target.replace(/\.ts$/, "");
    exports[key] = { types: `${base}.d.ts`, default: `${base}.js` };
  }
  const manifest = {
    name: denoJson.name,
    version: denoJson.version,
    description: packageJson.description,
    license: packageJson.license,
    type: "module",
    engines: packageJson.engines,
    exports,
    dependencies: packageJson.dependencies,
    peerDependencies: packageJson.peerDependencies,
    peerDependenciesMeta: packageJson.peerDependenciesMeta,
  };
  writeFileSync(join(dir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  const packed = execFileSync(
    "npm",
    ["pack", "--json", "--pack-destination", resolve(options.out)],
    { cwd: dir, encoding: "utf8", env: { ...process.env, npm_config_update_notifier: "false" } },
  );
  const name = (JSON.parse(packed) as { filename: string }[])[0].filename;
  return {
    dir,
    tarball: join(resolve(options.out), name),
    imported: [...imported].sort(),
    cliDiagnostics: diagnostics.length,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const flag = (name: string) => {
    const at = args.indexOf(name);
    return at >= 0 ? args[at + 1] : undefined;
  };
  const staged = flag("--staged");
  const out = flag("--out");
  if (!staged || !out) {
    console.error("usage: npm_pack.ts --staged DIR --out DIR");
    process.exit(2);
  }
  const build = buildNpm({ staged, out });
  console.log(`packed ${build.tarball} (imports ${build.imported.join(", ")})`);
}
