/**
 * `guardHostPaths`: `guardPaths` with the host's file system by default, the `./action` path
 * guard with `fs: nodeFileSystem` filled in, so symlinks and hard links are refused without any
 * option.
 *
 * @module
 */

import {
  guardPaths as guardPathsWith,
  type GuardPathsOptions,
  type PathGuardHook,
} from "../guards.ts";
import { nodeFileSystem } from "./file_system.ts";

/**
 * Makes the `guardPaths` pre hook of `@hookscope/core/action` (a deny decision or nothing) with
 * {@linkcode nodeFileSystem} as the default `fs`: a path that is itself a symlink, resolves
 * outside the allowed roots through a symlink, or names a hard-linked file is refused. Pass
 * `fs` to use another file system, or `lexicalOnly: true` for an (insecure) lexical-only guard.
 *
 * @example Refuse a symlink that leaves the root
 * ```ts
 * import { guardHostPaths } from "@hookscope/core/coding";
 * import { mkdtemp, rm, symlink } from "node:fs/promises";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import assert from "node:assert/strict";
 *
 * const root = await mkdtemp(join(tmpdir(), "guard-"));
 * await symlink("/etc/passwd", join(root, "link"));
 * const guard = guardHostPaths({ allowedPaths: [root] });
 * assert.deepEqual(await guard({ args: { path: "link" } }), {
 *   decision: "deny",
 *   reason: "Refusing to access symlink: 'link'",
 * });
 * await rm(root, { recursive: true });
 * ```
 */
export function guardHostPaths(options?: GuardPathsOptions): PathGuardHook {
  if (options?.lexicalOnly === true || options?.fs) return guardPathsWith(options);
  return guardPathsWith({ ...options, fs: nodeFileSystem });
}
