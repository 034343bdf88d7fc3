// Shared by the tests that run the hookscope CLI as a subprocess (hook, serve, replay): the Deno
// binary, the arguments that run cli/main.ts with the repository's config, and `serve` started
// on a free port.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import process from "node:process";

export const ROOT: string = fileURLToPath(new URL("../../", import.meta.url));

/** The native Deno binary when npm installed it (the launcher script costs a Node start per run). */
export const DENO: string = existsSync(join(ROOT, "node_modules/deno/deno"))
  ? join(ROOT, "node_modules/deno/deno")
  : join(ROOT, "node_modules/.bin/deno");

/**
 * `deno` arguments that run the CLI, from any working directory, with the start-up flag the docs
 * recommend for command hooks (dynamic imports load when reached, not at start).
 */
export const CLI: readonly string[] = [
  "run",
  "-A",
  "--unstable-lazy-dynamic-imports",
  "--config",
  join(ROOT, "deno.json"),
  join(ROOT, "cli/main.ts"),
];

/** Starts `hookscope serve ARGS --port 0` and resolves once it prints its address. */
export function startServe(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(DENO, [...CLI, "serve", ...args, "--port", "0"], {
    env: { ...process.env, ...env } as Record<string, string>,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${out} ${err}`)), 60_000);
    child.stderr!.on("data", (d) => (err += d));
    child.stdout!.on("data", (d) => {
      out += d;
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve({ child, url: match[1] });
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited ${code}: ${err}`));
    });
  });
}

/** Ends a process started with `detached: true`, with everything it started. */
export function stopGroup(child: ChildProcess | undefined): void {
  try {
    if (child?.pid !== undefined) process.kill(-child.pid, "SIGTERM");
  } catch {
    // already gone
  }
}
