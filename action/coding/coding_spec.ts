/**
 * `codingSpec()`: the coding preset, an `AgentSpec` with the shell-command guard on `bash` and
 * a file-system-backed path guard on `reader` and `editor`.
 *
 * @module
 */

import type { PathFileSystem } from "../guards.ts";
import { AgentSpec } from "../spec.ts";
import { guardDestructive } from "./command_guard.ts";
import { guardHostPaths } from "./path_guard.ts";

/** Options of {@linkcode codingSpec}. */
export interface CodingSpecOptions {
  /** The workspace root the path guard allows; default `"."` (resolved through `fs`). */
  cwd?: string;
  /** Install `guardDestructive` on bash and `guardPaths` on reader and editor (default true). */
  secure?: boolean;
  /**
   * File-system access for `guardPaths` (realpath, symlinks, hard links, cwd); default
   * {@linkcode nodeFileSystem}.
   */
  fs?: PathFileSystem;
  /** `true` asks for a lexical-only path guard (insecure: symlinks and hard links pass). */
  lexicalPaths?: boolean;
}

/**
 * The coding preset: an {@linkcode AgentSpec} with role `"implementer"` and tools `["coding"]`;
 * when `secure` (default), the `guardDestructive` security hook on `bash` (a parsed judgement
 * of the command) and one shared `guardHostPaths({ allowedPaths: [cwd] })` on `reader` and
 * `editor`, which resolves symlinks and refuses hard links through `nodeFileSystem` unless `fs` or
 * `lexicalPaths` says otherwise. (Was `AgentSpec.coding()` in `@hookscope/core/action`.)
 *
 * @example The coding preset
 * ```ts
 * import { codingSpec } from "@hookscope/core/coding";
 * import assert from "node:assert/strict";
 *
 * const spec = codingSpec({ cwd: "/ws" });
 * assert.equal(spec.role, "implementer");
 * assert.deepEqual(spec.registered().map((h) => `${h.phase} ${h.toolName}`).sort(), [
 *   "securityPre bash",
 *   "securityPre editor",
 *   "securityPre reader",
 * ]);
 * ```
 */
export function codingSpec(options?: CodingSpecOptions): AgentSpec {
  const spec = new AgentSpec({ name: "coding", role: "implementer", tools: ["coding"] });
  if (options?.cwd !== undefined) spec.cwd = options.cwd;
  if (options?.secure ?? true) {
    spec.securityPre("bash", guardDestructive);
    const guard = guardHostPaths({
      allowedPaths: [options?.cwd ?? "."],
      ...(options?.fs ? { fs: options.fs } : {}),
      ...(options?.lexicalPaths === true ? { lexicalOnly: true } : {}),
    });
    spec.securityPre("reader", guard);
    spec.securityPre("editor", guard);
  }
  return spec;
}
