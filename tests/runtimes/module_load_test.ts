import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { join } from "node:path";
import process from "node:process";
import { ROOT, RUNTIME, tsCommand } from "./_runtime.ts";

const WEB_ENTRIES = ["mod.ts", "hooks/mod.ts", "session/mod.ts", "service/mod.ts", "action/mod.ts"];

interface ProbeResult {
  calls: { api: string; module: string }[];
  errors: { module: string; error: string }[];
  selfTest: string[];
}

/** Imports `modules` in a fresh process of this runtime with the global APIs instrumented. */
function probe(modules: readonly string[]): Promise<ProbeResult> {
  const { command, args } = tsCommand(join(ROOT, "tests/runtimes/_import_probe.ts"));
  return new Promise((resolve, reject) => {
    execFile(
      command,
      [...args, ...modules],
      { cwd: ROOT, timeout: 60_000, maxBuffer: 16 << 20, env: { ...process.env, NO_COLOR: "1" } },
      (error, stdout, stderr) => {
        const line = stdout.split("\n").find((l) => l.startsWith("PROBE "));
        if (!line) {
          reject(new Error(`probe printed no result (${error?.message ?? "exit 0"}): ${stderr}`));
          return;
        }
        resolve(JSON.parse(line.slice("PROBE ".length)) as ProbeResult);
      },
    );
  });
}

describe(`module load (${RUNTIME})`, () => {
  it("the probe's instrumentation sees timers, AbortController and random values", async () => {
    const result = await probe([]);
    assert.deepEqual(result.errors, []);
    for (
      const api of ["setTimeout", "new AbortController", "crypto.getRandomValues", "Math.random"]
    ) {
      assert.ok(result.selfTest.includes(api), `instrumentation missed ${api}: ${result.selfTest}`);
    }
  });

  it("reports a module that creates an AbortController and a random id at load", async () => {
    const result = await probe(["tests/fixtures/worker/bad_module.ts"]);
    assert.deepEqual(result.errors, []);
    const apis = result.calls.map((c) => c.api);
    assert.ok(apis.includes("new AbortController"), `calls: ${apis}`);
    assert.ok(apis.includes("crypto.randomUUID"), `calls: ${apis}`);
  });

  it("importing every web-standard entry allocates no timer, signal or random value and fetches nothing", async () => {
    const result = await probe(WEB_ENTRIES);
    assert.deepEqual(result.errors, []);
    assert.deepEqual(result.calls, []);
  });
});
