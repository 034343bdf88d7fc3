/**
 * `nodeFileSystem`: the {@linkcode PathFileSystem} that `guardPaths` and the coding toolkit use,
 * built on `node:fs` (works in Deno, Bun and Node).
 *
 * @module
 */

import { lstat, realpath } from "node:fs/promises";
import process from "node:process";
import type { PathFileSystem } from "../guards.ts";

/**
 * File-system access for `guardPaths` through `node:fs`: `cwd()`, `realpath()`,
 * `isSymlink()` (false for a missing path) and `linkCount()` (hard links of a regular file).
 * `guardHostPaths` and `codingSpec()` from `@hookscope/core/coding` use it by default; pass it (or
 * your own) as `fs` to `guardPaths` from `@hookscope/core/action`, which requires one.
 *
 * @example Give the path guard real symlink checks
 * ```ts
 * import { guardPaths } from "@hookscope/core/action";
 * import { nodeFileSystem } from "@hookscope/core/coding";
 * import assert from "node:assert/strict";
 *
 * const guard = guardPaths({ allowedPaths: [nodeFileSystem.cwd()], fs: nodeFileSystem });
 * assert.equal((await guard({ args: { path: "../../../../etc/passwd" } }))?.decision, "deny");
 * ```
 */
export const nodeFileSystem: PathFileSystem = {
  cwd(): string {
    return process.cwd();
  },
  realpath(path: string): Promise<string> {
    return realpath(path);
  },
  async isSymlink(path: string): Promise<boolean> {
    try {
      return (await lstat(path)).isSymbolicLink();
    } catch {
      return false;
    }
  },
  async linkCount(path: string): Promise<number> {
    try {
      const info = await lstat(path);
      return info.isFile() ? info.nlink : 0;
    } catch {
      return 0;
    }
  },
};
