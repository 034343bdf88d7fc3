/**
 * `loadPolicy`: a policy from a file — a `.ts`/`.js`/`.mjs` module exporting `policy`, or a
 * `.json` Claude settings / plugin `hooks.json` file (run through {@linkcode claudeCodeHooks}).
 *
 * @module
 */

import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { claudeCodeHooks, type ClaudeCodeHooksOptions } from "./claude_code_hooks.ts";
import type { Policy } from "./policy.ts";

/** A terminal colour code (SGR escape), built without a control character in a literal. */
const ANSI_SGR = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g");

/** A policy file that cannot be used. */
export class PolicyLoadError extends Error {
  /** The file. */
  readonly file: string;
  /** Makes the error. */
  constructor(file: string, reason: string, options?: { cause?: unknown }) {
    super(`Cannot load policy ${JSON.stringify(file)}: ${reason}`, options);
    this.name = "PolicyLoadError";
    this.file = file;
  }
}

/**
 * Loads a policy file. A module must export a function named `policy`; a module that throws
 * while loading, or exports something else, rejects with a {@linkcode PolicyLoadError}.
 *
 * @example A JSON settings file
 * ```ts
 * import { loadPolicy } from "@hookscope/core/claude";
 * import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import assert from "node:assert/strict";
 *
 * const dir = mkdtempSync(join(tmpdir(), "policy-"));
 * const file = join(dir, "settings.json");
 * writeFileSync(file, JSON.stringify({ hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "true" }] }] } }));
 * const policy = await loadPolicy(file);
 * assert.equal(typeof policy, "function");
 * rmSync(dir, { recursive: true });
 * ```
 */
export async function loadPolicy(file: string, options?: ClaudeCodeHooksOptions): Promise<Policy> {
  const absolute = resolve(file);
  if (/\.json$/i.test(file)) {
    try {
      return claudeCodeHooks(absolute, options);
    } catch (error) {
      throw new PolicyLoadError(file, (error as Error)?.message ?? String(error), { cause: error });
    }
  }
  if (!/\.(m?[jt]s|[cm]ts)$/i.test(file)) {
    throw new PolicyLoadError(
      file,
      "expected a .ts, .js or .mjs module exporting policy, or a .json Claude settings file",
    );
  }
  let module: Record<string, unknown>;
  try {
    module = await import(pathToFileURL(absolute).href);
  } catch (error) {
    // Deno colours its module errors ("not a dependency", with a hint): the reason goes to Claude
    // Code and to logs as text, so the terminal colour codes are dropped.
    const reason = String((error as Error)?.message ?? error).replace(ANSI_SGR, "");
    throw new PolicyLoadError(file, `the module failed to load: ${reason}`, { cause: error });
  }
  const policy = module.policy;
  if (typeof policy !== "function") {
    throw new PolicyLoadError(
      file,
      `it must export a function named "policy"; got ${typeof policy}`,
    );
  }
  return policy as Policy;
}
