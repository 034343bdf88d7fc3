import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { checkModuleLoad, checkSource } from "../../scripts/check_module_load.ts";
import { ROOT } from "./_runtime.ts";

async function messages(source: string, imports: string[] = []): Promise<string[]> {
  return (await checkSource("x.ts", source, imports)).map((f) => `${f.line} ${f.message}`);
}

describe("scripts/check_module_load.ts", () => {
  it("the web-standard entries of this repository pass", async () => {
    assert.deepEqual(await checkModuleLoad(ROOT), []);
  });

  it("reports an AbortController, a timer, random values and fetch at module load", async () => {
    const found = await messages([
      "const never: AbortSignal = new AbortController().signal;",
      "setTimeout(() => {}, 10);",
      "export const id = crypto.randomUUID();",
      "const r = Math.random();",
      "await fetch('http://127.0.0.1/');",
    ].join("\n"));
    assert.deepEqual(found, [
      "1 runs new AbortController() at module load",
      "2 runs setTimeout() at module load",
      "3 runs crypto.randomUUID() at module load",
      "4 runs Math.random() at module load",
      "5 awaits at module load (top-level await)",
      "5 runs fetch() at module load",
    ]);
  });

  it("looks into IIFEs and class static members, not into functions and methods", async () => {
    const found = await messages([
      "function later(): AbortSignal { return new AbortController().signal; }",
      "const table = (() => { const t: Record<string, number> = {}; setInterval(later, 1); return t; })();",
      "class A {",
      "  static shared = new AbortController();",
      "  own = new AbortController();",
      "  m(): void { setTimeout(() => {}, 1); }",
      "}",
      "export { A, later, table };",
    ].join("\n"));
    assert.deepEqual(found, [
      "2 runs setInterval() at module load",
      "4 runs new AbortController() at module load",
    ]);
  });

  it("allows pure built-ins at load", async () => {
    const found = await messages([
      "const S = { A: 'a', B: 'b' } as const;",
      "export const VALUES = Object.freeze(Object.values(S));",
      "export const KEYS = Object.keys(S).sort();",
      "export const SET: ReadonlySet<string> = new Set(VALUES);",
      "export const RE = new RegExp('x+');",
    ].join("\n"));
    assert.deepEqual(found, []);
  });

  it("reports runtime-specific APIs anywhere and direct AbortSignal statics", async () => {
    const found = await messages(
      [
        "import { readFileSync } from 'node:fs';",
        "export function f(): unknown { return Deno.env.get('X') ?? process.env.X ?? Bun.version; }",
        "export function g(s: AbortSignal): AbortSignal { return AbortSignal.any([s]); }",
        "export function h(): AbortSignal { return AbortSignal.timeout(5); }",
        "export const r = readFileSync;",
        "export const isSignal = (v: unknown): boolean => v instanceof AbortSignal;",
      ].join("\n"),
      ["node:fs", "left-pad"],
    );
    assert.deepEqual(found, [
      '1 imports "node:fs" (web-standard entries may import only "zod", "eventsource-parser")',
      '1 imports "left-pad" (web-standard entries may import only "zod", "eventsource-parser")',
      '1 imports "node:fs"',
      "2 uses the runtime-specific global Deno",
      "2 uses the runtime-specific global process",
      "2 uses the runtime-specific global Bun",
      "3 uses AbortSignal.any directly (missing in edge runtimes: use core/_abort.ts)",
      "4 uses AbortSignal.timeout directly (missing in edge runtimes: use core/_abort.ts)",
      "6 checks instanceof AbortSignal (false for a signal of another realm: use isAbortSignal)",
    ]);
  });
});
