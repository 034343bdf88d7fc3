/**
 * The coding toolkit (`@hookscope/core/coding`): reader, editor, bash and search tools confined
 * to a workspace, the `autoFormat` post hook, the shell-command guard (`judgeCommand`,
 * `guardDestructive`, `destructiveCommandGuard`), `guardHostPaths` (`guardPaths` backed by
 * `nodeFileSystem`), and the `codingSpec()` preset. Uses
 * `node:fs`, `node:path`-free POSIX path logic and `node:child_process` (Deno, Bun, Node), and
 * Deno's permission API behind a runtime check. Nothing runs at module load.
 *
 * @example Bash writing straight to the workspace runs no shell syntax
 * ```ts
 * import { CodingToolkit } from "@hookscope/core/coding";
 * import { ActionManager } from "@hookscope/core/action";
 * import assert from "node:assert/strict";
 *
 * // effects: "direct" writes into the workspace as it runs, so only what the judge parsed runs;
 * // staged runs ("overlay", the default where it mounts) run a real shell and judge the effects.
 * const toolkit = new CodingToolkit({ tools: ["bash"], sandbox: { effects: "direct" } });
 * const manager = new ActionManager();
 * for (const tool of toolkit.bind()) manager.register(tool);
 * const call = await manager.invoke({ function: "bash", arguments: { command: "ls | wc" } });
 * const result = call.response as { success: boolean; returnCode: number; stderr: string };
 * assert.equal(result.success, false);
 * assert.equal(result.returnCode, -1);
 * assert.match(result.stderr, /^Shell syntax is not supported: a pipeline \(\|\)/);
 * ```
 *
 * @module
 */

export * from "./toolkit.ts";
export * from "./auto_format.ts";
export * from "./file_system.ts";
export * from "./sandbox.ts";
export * from "./command_guard.ts";
export * from "./path_guard.ts";
export * from "./coding_spec.ts";
export * from "./file_change.ts";
export * from "./effects_policy.ts";
export * from "./effects_error.ts";
