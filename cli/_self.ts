/**
 * How to start this `hookscope` command again as another process, with the runtime running
 * this one (the demo answers and resumes its run from separate processes).
 *
 * @module
 */

import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

/**
 * The CLI's entry beside the module at `moduleUrl`: `main.ts`, or `main.js` in the npm form
 * (where every module is compiled to `.js`).
 */
export function mainOf(moduleUrl: string = import.meta.url): URL {
  return new URL(/\.js$/.test(new URL(moduleUrl).pathname) ? "./main.js" : "./main.ts", moduleUrl);
}

/** The command and arguments that run `hookscope` with `args` in a new process. */
export function selfCommand(args: readonly string[]): { command: string; args: string[] } {
  const g = globalThis as { Deno?: unknown; Bun?: unknown };
  const process = globalThis.process;
  const execPath = process?.execPath ?? "deno";
  const main = mainOf();
  const script = main.protocol === "file:" ? fileURLToPath(main) : main.href;
  if (g.Deno !== undefined) return { command: execPath, args: ["run", "-A", script, ...args] };
  if (g.Bun !== undefined) return { command: execPath, args: [script, ...args] };
  return { command: execPath, args: [...(process?.execArgv ?? []), script, ...args] };
}

/**
 * How a person types this `hookscope` command where it was loaded from, or `null` for a checkout
 * (a `file:` module outside `node_modules`, run as `npm run hookscope --` in the repository): from
 * JSR `deno run -A jsr:@hookscope/core@VERSION/cli`, from any other URL `deno run -A URL`, from an
 * installed npm package `node PATH/cli/main.js` (`bun …` under Bun). `moduleUrl` is this module's
 * URL (a parameter so that tests can give others).
 */
export function invocation(moduleUrl: string = import.meta.url): string | null {
  const main = mainOf(moduleUrl);
  if (main.protocol === "file:") {
    if (!main.pathname.includes("/node_modules/")) return null;
    const g = globalThis as { Deno?: unknown; Bun?: unknown };
    const runtime = g.Deno !== undefined ? "deno run -A" : g.Bun !== undefined ? "bun" : "node";
    return `${runtime} ${fileURLToPath(main)}`;
  }
  // JSR serves a package version as …/@scope/name/VERSION/path.
  const jsr = /\/(@[^/]+\/[^/]+)\/(\d[^/]*)\/cli\/main\.ts$/.exec(main.pathname);
  if (jsr) return `deno run -A jsr:${jsr[1]}@${jsr[2]}/cli`;
  return `deno run -A ${main.href}`;
}

/** What a finished child process produced. */
export interface ChildResult {
  /** The exit code (`null` when killed by a signal). */
  code: number | null;
  /** Everything written to stdout. */
  stdout: string;
  /** Everything written to stderr. */
  stderr: string;
}

/**
 * Runs `hookscope args` as a child process without blocking this one (its event loop keeps
 * serving, e.g. the demo's scripted model); `onLine` sees each stdout line as it comes. The child
 * is killed after `timeoutMs` (default 120 000).
 */
export function runSelf(
  args: readonly string[],
  options: { onLine?: (line: string) => void; timeoutMs?: number } = {},
): Promise<ChildResult> {
  const { command, args: argv } = selfCommand(args);
  return new Promise((resolve, reject) => {
    const child = spawn(command, argv, {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...globalThis.process?.env, NO_COLOR: "1" },
    });
    let stdout = "";
    let stderr = "";
    let partial = "";
    child.stdout!.on("data", (chunk: Uint8Array) => {
      const text = String(chunk);
      stdout += text;
      partial += text;
      const lines = partial.split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) options.onLine?.(line);
    });
    child.stderr!.on("data", (chunk: Uint8Array) => (stderr += String(chunk)));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 120_000);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      if (partial !== "") options.onLine?.(partial);
      resolve({ code, stdout, stderr });
    });
  });
}
