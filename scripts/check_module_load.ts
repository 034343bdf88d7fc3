/**
 * Static check: the web-standard entries (`.`, `./hooks`, `./session`, `./service`, `./action`)
 * run nothing at module load and touch no runtime-specific API.
 *
 * For every module in the import graph of those entries (found by esbuild), the TypeScript is
 * stripped (esbuild) and parsed (acorn), then:
 * - anywhere in the module: no `Deno.*`, `process.*`, `Bun.*`, `require(…)`, no import of a
 *   `node:` module or of a package outside {@linkcode ALLOWED_PACKAGES}, no direct
 *   `AbortSignal.any` / `AbortSignal.timeout` (use `core/_abort.ts`, which has the fallback) and
 *   no `instanceof AbortSignal` (false across realms: use `isAbortSignal` from the same file);
 * - in code that runs at module load (top-level statements, variable initialisers, class static
 *   members, computed keys, decorators, IIFEs): no call or `new` other than the known-pure
 *   built-ins in {@linkcode PURE_CALLS}. So a top-level `new AbortController()`, `setTimeout(…)`,
 *   `crypto.randomUUID()`, `fetch(…)` or a call to any function of ours fails the check.
 *
 * Exits 1 with one line per finding (`file:line:column message`), 0 when clean.
 *
 * Usage: `node --import tsx scripts/check_module_load.ts` (or `deno run -A` the same file).
 *
 * @module
 */

import { build, transform } from "esbuild";
import { parse } from "acorn";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The web-standard entries (deno.json exports): they must load anywhere. */
export const WEB_ENTRIES: readonly string[] = [
  "mod.ts",
  "hooks/mod.ts",
  "session/mod.ts",
  "service/mod.ts",
  "action/mod.ts",
];

/** Packages the web-standard entries may import. */
export const ALLOWED_PACKAGES: readonly string[] = ["zod", "eventsource-parser"];

/** The only module that may call `AbortSignal.any` / `AbortSignal.timeout` directly. */
const ABORT_HELPER = "core/_abort.ts";

/**
 * Calls and constructions allowed at module load: pure built-ins that allocate nothing
 * observable (no timer, no signal, no random value, no I/O).
 */
export const PURE_CALLS: ReadonlySet<string> = new Set([
  "new Set",
  "new Map",
  "new WeakMap",
  "new WeakSet",
  "new RegExp",
  "new TextEncoder",
  "new TextDecoder",
  "RegExp",
  "Symbol",
  "Symbol.for",
  "String",
  "Number",
  "Boolean",
  "BigInt",
  "Object.freeze",
  "Object.values",
  "Object.keys",
  "Object.entries",
  "Object.fromEntries",
  "Object.create",
  "Object.assign",
  "Object.defineProperty",
  "Array.from",
  "Array.isArray",
  "JSON.stringify",
  "JSON.parse",
  "Math.max",
  "Math.min",
  "Math.floor",
  "Math.ceil",
  "Math.round",
  "Math.pow",
]);

/**
 * Calls of our own code at module load, each reviewed: the callee allocates plain objects only
 * (no timer, signal, random value or I/O). Key: `file` + space + the call as reported.
 */
export const REVIEWED_CALLS: ReadonlyMap<string, string> = new Map([
  ["core/logger.ts new Logger()", "the shared default logger: stores a level and a sink"],
  ["service/hook_logger.ts new HookLogger()", "the shared hook logger: an empty ring buffer"],
  ["hooks/_dispatch.ts Promise.resolve()", "one shared resolved promise"],
  [
    "session/persist_handlers.ts registerHandler()",
    "names the four persistence handlers in the process-global handler map (a Map.set)",
  ],
]);

/** Method names that are pure on arrays, strings and sets built at load (`[...].map(…)`). */
const PURE_METHODS: ReadonlySet<string> = new Set([
  "map",
  "filter",
  "join",
  "concat",
  "slice",
  "split",
  "flatMap",
  "includes",
  "toLowerCase",
  "toUpperCase",
  "trim",
  "replace",
  "sort",
]);

/** One problem found. */
export interface Finding {
  file: string;
  line: number;
  column: number;
  message: string;
}

// deno-lint-ignore no-explicit-any
type Node = any;

/** The local modules (repo-relative paths) reachable from `entries`, and their bare imports. */
export async function importGraph(
  root: string,
  entries: readonly string[],
): Promise<{ files: string[]; imports: Map<string, string[]> }> {
  const result = await build({
    absWorkingDir: root,
    entryPoints: [...entries],
    bundle: true,
    write: false,
    metafile: true,
    outdir: "out",
    format: "esm",
    platform: "neutral",
    packages: "external",
    logLevel: "silent",
  });
  const inputs = result.metafile!.inputs;
  const files = Object.keys(inputs).filter((f) => !f.startsWith("node_modules/")).sort();
  const imports = new Map<string, string[]>();
  for (const file of files) {
    imports.set(file, inputs[file].imports.filter((i) => i.external).map((i) => i.path));
  }
  return { files, imports };
}

/** Checks one module's source; `file` is repo-relative. */
export async function checkSource(
  file: string,
  source: string,
  externalImports: readonly string[] = [],
): Promise<Finding[]> {
  const findings: Finding[] = [];
  const stripped = await transform(source, {
    loader: "ts",
    format: "esm",
    target: "esnext",
    sourcemap: "external",
    sourcefile: file,
  });
  const js = stripped.code;
  const map = decodeMappings((JSON.parse(stripped.map) as { mappings: string }).mappings);
  const ast = parse(js, { ecmaVersion: "latest", sourceType: "module", locations: true });
  const report = (node: Node, message: string) => {
    findings.push({ file, ...originalPosition(map, node), message });
  };
  for (const path of externalImports) {
    if (path.startsWith("node:") || !isAllowedPackage(path)) {
      findings.push({
        file,
        line: 1,
        column: 1,
        message: `imports "${path}" (web-standard entries may import only ${
          ALLOWED_PACKAGES.map((p) => `"${p}"`).join(", ")
        })`,
      });
    }
  }
  // Anywhere in the module: runtime-specific globals and unguarded AbortSignal statics.
  walk(ast, (node) => {
    if (node.type === "MemberExpression" && node.object.type === "Identifier") {
      const name = node.object.name;
      if (name === "Deno" || name === "process" || name === "Bun") {
        report(node, `uses the runtime-specific global ${name}`);
      }
      const prop = propertyName(node);
      if (
        name === "AbortSignal" && (prop === "any" || prop === "timeout") && file !== ABORT_HELPER
      ) {
        report(
          node,
          `uses AbortSignal.${prop} directly (missing in edge runtimes: use core/_abort.ts)`,
        );
      }
    }
    if (
      node.type === "BinaryExpression" && node.operator === "instanceof" &&
      node.right.type === "Identifier" && node.right.name === "AbortSignal" &&
      file !== ABORT_HELPER
    ) {
      report(
        node,
        "checks instanceof AbortSignal (false for a signal of another realm: use isAbortSignal)",
      );
    }
    if (
      node.type === "CallExpression" && node.callee.type === "Identifier" &&
      node.callee.name === "require"
    ) {
      report(node, "calls require()");
    }
    if (
      (node.type === "ImportExpression" || node.type === "ImportDeclaration") &&
      node.source.type === "Literal" && typeof node.source.value === "string" &&
      node.source.value.startsWith("node:")
    ) {
      report(node, `imports "${node.source.value}"`);
    }
    return true;
  });
  // Code that runs at module load.
  for (const statement of ast.body) visitLoadTime(file, statement, report);
  return findings;
}

/** Source positions of the stripped JavaScript, from esbuild's source map (VLQ mappings). */
type LineMap = { column: number; sourceLine: number; sourceColumn: number }[][];

const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

function decodeMappings(mappings: string): LineMap {
  const lines: LineMap = [];
  let sourceLine = 0;
  let sourceColumn = 0;
  for (const lineText of mappings.split(";")) {
    const segments: LineMap[number] = [];
    let column = 0;
    for (const segment of lineText.split(",")) {
      if (segment === "") continue;
      const values: number[] = [];
      let value = 0;
      let shift = 0;
      for (const char of segment) {
        const digit = BASE64.indexOf(char);
        value += (digit & 31) << shift;
        if (digit & 32) {
          shift += 5;
        } else {
          values.push(value & 1 ? -(value >>> 1) : value >>> 1);
          value = 0;
          shift = 0;
        }
      }
      column += values[0];
      if (values.length >= 4) {
        sourceLine += values[2];
        sourceColumn += values[3];
        segments.push({ column, sourceLine, sourceColumn });
      }
    }
    lines.push(segments);
  }
  return lines;
}

/** Where `node` (a position in the stripped JavaScript) is in the TypeScript source, 1-based. */
function originalPosition(map: LineMap, node: Node): { line: number; column: number } {
  const segments = map[node.loc.start.line - 1] ?? [];
  let best = segments[0];
  for (const segment of segments) {
    if (segment.column <= node.loc.start.column) best = segment;
  }
  if (best === undefined) return { line: node.loc.start.line, column: node.loc.start.column + 1 };
  return { line: best.sourceLine + 1, column: best.sourceColumn + 1 };
}

function isAllowedPackage(path: string): boolean {
  return ALLOWED_PACKAGES.some((p) => path === p || path.startsWith(`${p}/`));
}

function propertyName(node: Node): string | undefined {
  if (!node.computed && node.property.type === "Identifier") return node.property.name;
  if (node.computed && node.property.type === "Literal") return String(node.property.value);
  return undefined;
}

/** `a.b.c` for a member chain of identifiers, else undefined. */
function calleeName(node: Node): string | undefined {
  if (node.type === "Identifier") return node.name;
  if (node.type === "MemberExpression") {
    const prop = propertyName(node);
    const object = calleeName(node.object);
    if (prop !== undefined && object !== undefined) return `${object}.${prop}`;
  }
  return undefined;
}

function isPureCall(node: Node): boolean {
  const name = calleeName(node.callee);
  const key = node.type === "NewExpression" ? `new ${name}` : name;
  if (key !== undefined && PURE_CALLS.has(key)) return true;
  // `[…].map(…)`, `Object.keys(x).sort()`: a pure method on a literal or on a pure call's result.
  if (node.type === "CallExpression" && node.callee.type === "MemberExpression") {
    const object = node.callee.object;
    const method = propertyName(node.callee);
    const pureObject = ["ArrayExpression", "Literal", "TemplateLiteral"].includes(object.type) ||
      (object.type === "CallExpression" && isPureCall(object));
    return pureObject && method !== undefined && PURE_METHODS.has(method);
  }
  return false;
}

function isReviewed(file: string, node: Node): boolean {
  return REVIEWED_CALLS.has(`${file} ${describeCall(node)}`);
}

function describeCall(node: Node): string {
  const name = calleeName(node.callee) ?? "(expression)";
  return node.type === "NewExpression" ? `new ${name}()` : `${name}()`;
}

/** Walks code that runs when the module loads, reporting calls that are not known pure. */
function visitLoadTime(
  file: string,
  root: Node,
  report: (node: Node, message: string) => void,
): void {
  walk(root, (node) => {
    switch (node.type) {
      case "FunctionDeclaration":
      case "FunctionExpression":
      case "ArrowFunctionExpression":
        return false; // runs later, when called (an IIFE is reported as a call)
      case "MethodDefinition":
        if (node.computed) visitLoadTime(file, node.key, report);
        for (const d of node.decorators ?? []) visitLoadTime(file, d, report);
        return false;
      case "PropertyDefinition":
        if (node.computed) visitLoadTime(file, node.key, report);
        if (node.static && node.value) visitLoadTime(file, node.value, report);
        return false;
      case "CallExpression":
        // An IIFE: its body runs now, so check the body as load-time code.
        if (
          node.callee.type === "ArrowFunctionExpression" ||
          node.callee.type === "FunctionExpression"
        ) {
          if (node.callee.async || node.callee.generator) {
            report(node, "runs an async or generator IIFE at module load");
          }
          visitLoadTime(file, node.callee.body, report);
          for (const arg of node.arguments) visitLoadTime(file, arg, report);
          return false;
        }
        if (!isPureCall(node) && !isReviewed(file, node)) {
          report(node, `runs ${describeCall(node)} at module load`);
        }
        return true;
      case "NewExpression":
        if (!isPureCall(node) && !isReviewed(file, node)) {
          report(node, `runs ${describeCall(node)} at module load`);
        }
        return true;
      case "TaggedTemplateExpression":
        report(node, "runs a tagged template at module load");
        return true;
      case "AwaitExpression":
        report(node, "awaits at module load (top-level await)");
        return true;
      default:
        return true;
    }
  });
}

/** Depth-first over an ESTree; `visit` returns false to skip a node's children. */
function walk(node: Node, visit: (node: Node) => boolean): void {
  if (node === null || typeof node !== "object") return;
  if (Array.isArray(node)) {
    for (const child of node) walk(child, visit);
    return;
  }
  if (typeof node.type !== "string") return;
  if (!visit(node)) return;
  for (const key of Object.keys(node)) {
    if (key === "loc" || key === "start" || key === "end" || key === "type") continue;
    const child = node[key];
    if (child !== null && typeof child === "object") walk(child, visit);
  }
}

/** Checks every module reachable from {@linkcode WEB_ENTRIES}; returns the findings. */
export async function checkModuleLoad(root: string): Promise<Finding[]> {
  const { files, imports } = await importGraph(root, WEB_ENTRIES);
  const findings: Finding[] = [];
  for (const file of files) {
    const source = readFileSync(resolve(root, file), "utf8");
    findings.push(...await checkSource(file, source, imports.get(file) ?? []));
  }
  return findings;
}

const isMain = (() => {
  const argv1 = (globalThis as { process?: { argv?: string[] } }).process?.argv?.[1];
  try {
    return argv1 !== undefined && resolve(argv1) === fileURLToPath(import.meta.url);
  } catch {
    return false;
  }
})();

if (isMain || (import.meta as { main?: boolean }).main) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
  const { files } = await importGraph(root, WEB_ENTRIES);
  const findings = await checkModuleLoad(root);
  for (const f of findings) console.log(`${f.file}:${f.line}:${f.column} ${f.message}`);
  console.log(
    `check_module_load: ${files.length} modules of ${WEB_ENTRIES.length} web-standard entries, ${findings.length} finding(s)`,
  );
  if (findings.length > 0) {
    (globalThis as { process?: { exitCode?: number } }).process!.exitCode = 1;
  }
}
