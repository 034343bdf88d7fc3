/**
 * `codingSpec()`: the coding preset, an `AgentSpec` with the shell-command guard on `bash` and
 * a file-system-backed path guard on `reader` and `editor`.
 *
 * @module
 */

import type { PathFileSystem } from "../guards.ts";
import { AgentSpec } from "../spec.ts";
import { guardDestructive } from "./command_guard.ts";
import { keepDataPolicy, type KeepDataPolicyOptions } from "./effects_policy.ts";
import { stagedFor } from "./_effects_registry.ts";
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
  /**
   * The `tool.effects` policy on bash (default `true`: {@linkcode keepDataPolicy} with its
   * defaults; an object: with those options; `false`: none, every change set commits).
   */
  effects?: boolean | KeepDataPolicyOptions;
}

/**
 * The coding preset: an {@linkcode AgentSpec} with role `"implementer"` and tools `["coding"]`;
 * when `secure` (default), the `guardDestructive` security hook on `bash` (a parsed judgement
 * of the command) and one shared `guardHostPaths({ allowedPaths: [cwd] })` on `reader` and
 * `editor`, which resolves symlinks and refuses hard links through `nodeFileSystem` unless `fs` or
 * `lexicalPaths` says otherwise. (Was `AgentSpec.coding()` in `@hookscope/core/action`.)
 *
 * Effects: the `keepDataPolicy()` `tool.effects` hook on `bash` (unless `effects: false`):
 * deleting or truncating a file that existed, touching `.git` internals, `.env*` or key
 * files, or changing more than 200 entries needs a person. Where the toolkit using this spec
 * stages its bash runs (`effects: "overlay"`, no extra writable paths), the command judge on
 * `bash` is advice (reported in the result and the `tool.effects` payload as `advice`), not a
 * block: what a command does is decided on its change set. Where it does not, the judge
 * blocks as before.
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
 * assert.equal(spec.effectsHooksFor("bash").length, 1);
 * ```
 */
export function codingSpec(options?: CodingSpecOptions): AgentSpec {
  const spec = new AgentSpec({ name: "coding", role: "implementer", tools: ["coding"] });
  if (options?.cwd !== undefined) spec.cwd = options.cwd;
  if (options?.secure ?? true) {
    const judge = {
      // The judge blocks only where effects do not cover the call.
      async guardDestructive(
        context: Parameters<typeof guardDestructive>[0],
      ): ReturnType<typeof guardDestructive> {
        if (await stagedFor(spec)) return undefined;
        return await guardDestructive(context);
      },
    };
    spec.securityPre("bash", judge.guardDestructive);
    const guard = guardHostPaths({
      allowedPaths: [options?.cwd ?? "."],
      ...(options?.fs ? { fs: options.fs } : {}),
      ...(options?.lexicalPaths === true ? { lexicalOnly: true } : {}),
    });
    spec.securityPre("reader", guard);
    spec.securityPre("editor", guard);
  }
  const effects = options?.effects ?? true;
  if (effects !== false) {
    spec.effects("bash", keepDataPolicy(effects === true ? undefined : effects));
  }
  return spec;
}
