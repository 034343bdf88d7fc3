// Which runtime runs the tests, and how to run a TypeScript file as a child process with it.

import process from "node:process";
import { fileURLToPath } from "node:url";

const g = globalThis as { Deno?: unknown; Bun?: unknown };

/** The repository root (absolute path). */
export const ROOT: string = fileURLToPath(new URL("../../", import.meta.url));

/** The name of the runtime running this test. */
export const RUNTIME: "deno" | "bun" | "node" = g.Deno !== undefined
  ? "deno"
  : g.Bun !== undefined
  ? "bun"
  : "node";

/** The command that runs `file` (a TypeScript file) with the current runtime. */
export function tsCommand(file: string): { command: string; args: string[] } {
  if (RUNTIME === "deno") return { command: process.execPath, args: ["run", "-A", file] };
  if (RUNTIME === "bun") return { command: process.execPath, args: [file] };
  return { command: process.execPath, args: ["--import", "tsx", file] };
}
