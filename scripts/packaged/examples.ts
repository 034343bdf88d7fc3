// The ```ts examples of README.md and docs/*.md: extraction (for the packaged consumers, which
// run the README's against the installed package) and a strict type check of every one of them
// with two libs: Deno's default and ["ES2023", "DOM", "DOM.Iterable", "DOM.AsyncIterable"] (what
// a browser or Node-20-only project sees). The public names (`@hookscope/core/…`) map to the
// checkout's entries.
//
//   node --import tsx scripts/packaged/examples.ts check

import { spawn } from "node:child_process";
import {
  copyFileSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join, relative } from "node:path";
import { denoBinary, type DenoJson, readJson, REPO } from "./stage.ts";

/** One ```ts block of a Markdown file. */
export interface Example {
  /** The Markdown file, repository-relative. */
  readonly doc: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  /** The nearest heading above the block. */
  readonly heading: string;
  /** The code. */
  readonly code: string;
  /** Module specifiers it imports. */
  readonly imports: readonly string[];
}

/** Every ```ts block of `doc` (repository-relative). */
export function examplesOf(doc: string): Example[] {
  const lines = readFileSync(join(REPO, doc), "utf8").split("\n");
  const out: Example[] = [];
  let heading = doc;
  for (let i = 0; i < lines.length; i++) {
    const title = lines[i].match(/^#{1,6}\s+(.*)$/);
    if (title) heading = title[1].trim();
    if (!/^```(ts|typescript)\s*$/.test(lines[i])) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]); i++) body.push(lines[i]);
    const code = `${body.join("\n")}\n`;
    const imports = [...code.matchAll(/^\s*import\s[^;]*?from\s+"([^"]+)"/gm)].map((m) => m[1]);
    out.push({ doc, line: start + 1, heading, code, imports });
  }
  return out;
}

/** README.md and docs/*.md, repository-relative. */
export function documents(): string[] {
  const docs = readdirSync(join(REPO, "docs")).filter((name) => name.endsWith(".md")).sort();
  return ["README.md", ...docs.map((name) => `docs/${name}`)];
}

/** A file name for an example: `readme_07.ts`, `docs_adapters_01.ts`. */
export function exampleFile(example: Example, index: number): string {
  const stem = example.doc.replace(/\.md$/, "").replace(/[^a-zA-Z0-9]+/g, "_").toLowerCase();
  return `${stem}_${String(index + 1).padStart(2, "0")}.ts`;
}

/** The two libs every example must check under. */
export const LIBS: Record<string, string[] | undefined> = {
  "deno default": undefined,
  "ES2023 + DOM": ["ES2023", "DOM"],
};

/** Result of one `deno check` over all examples with one lib. */
export interface CheckResult {
  readonly lib: string;
  readonly ok: boolean;
  readonly files: number;
  readonly output: string;
}

/** Type-checks every example of README.md and docs/*.md under strict, once per lib. */
export function checkExamples(): Promise<CheckResult[]> {
  const dir = join(REPO, "tmp/packaged/examples");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const denoJson = readJson<DenoJson & { compilerOptions: Record<string, unknown> }>(
    join(REPO, "deno.json"),
  );
  // Deno's manual node_modules mode reads the packages beside the config: give it the checkout's.
  symlinkSync(join(REPO, "node_modules"), join(dir, "node_modules"));
  copyFileSync(join(REPO, "package.json"), join(dir, "package.json"));
  const files: string[] = [];
  for (const doc of documents()) {
    examplesOf(doc).forEach((example, index) => {
      const file = exampleFile(example, index);
      // Where the block is, for the error messages.
      writeFileSync(join(dir, file), `// ${example.doc}:${example.line}\n${example.code}`);
      files.push(file);
    });
  }
  const imports: Record<string, string> = {};
  for (const [key, target] of Object.entries(denoJson.imports)) {
    imports[key] = target.startsWith("./") ? `${relative(dir, REPO)}/${target.slice(2)}` : target;
  }
  for (const [key, target] of Object.entries(denoJson.exports)) {
    imports[`${denoJson.name}${key.slice(1)}`] = `${relative(dir, REPO)}/${target.slice(2)}`;
  }
  // Both libs at once: each check is one process.
  return Promise.all(
    Object.entries(LIBS).map(([lib, libs]) => {
      const config = join(dir, `deno.${lib.replace(/\W+/g, "_")}.json`);
      const compilerOptions = { ...denoJson.compilerOptions, ...(libs ? { lib: libs } : {}) };
      writeFileSync(
        config,
        JSON.stringify({ imports, lock: false, nodeModulesDir: "manual", compilerOptions }),
      );
      return new Promise<CheckResult>((resolve) => {
        const child = spawn(denoBinary(), ["check", "--config", config, ...files], {
          cwd: dir,
          env: { ...process.env, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" },
          stdio: ["ignore", "pipe", "pipe"],
        });
        let output = "";
        child.stdout.on("data", (d: Uint8Array) => (output += new TextDecoder().decode(d)));
        child.stderr.on("data", (d: Uint8Array) => (output += new TextDecoder().decode(d)));
        const timer = setTimeout(() => child.kill("SIGKILL"), 300_000);
        child.on("close", (code) => {
          clearTimeout(timer);
          resolve({ lib, ok: code === 0, files: files.length, output });
        });
      });
    }),
  );
}

if (import.meta.url === `file://${process.argv[1]}` && process.argv[2] === "check") {
  let failed = 0;
  for (const result of await checkExamples()) {
    console.log(`${result.ok ? "ok" : "FAIL"} ${result.files} examples, lib ${result.lib}`);
    if (!result.ok) {
      failed++;
      console.log(result.output.split("\n").filter((line) => !/^Check /.test(line)).join("\n"));
    }
  }
  process.exit(failed ? 1 : 0);
}
