/**
 * The Claude Code hook protocol (`@hookscope/core/claude`): run an existing Claude Code hook
 * configuration (`.claude/settings.json`, a plugin's `hooks/hooks.json`) as a hookscope policy,
 * so the same command and http hook scripts govern a hookscope agent. Uses `node:child_process`
 * and `node:fs` (Deno, Bun, Node).
 *
 * @example Run a settings file's hooks in a session
 * ```ts
 * import { claudeCodeHooks } from "@hookscope/core/claude";
 * import { Session } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const session = new Session();
 * claudeCodeHooks({ hooks: { PreToolUse: [{ matcher: "Bash|Write", hooks: [{ type: "command", command: "true" }] }] } })(session);
 * assert.equal(session.hooks.count("tool.pre"), 1);
 * ```
 *
 * @module
 */

export * from "./policy.ts";
export * from "./settings.ts";
export * from "./tool_names.ts";
export * from "./hook_error.ts";
export * from "./claude_code_hooks.ts";
export { MAX_HOOK_OUTPUT } from "./_run_hook.ts";
export * from "./answer_event.ts";
export * from "./hook_decision_signal.ts";
export * from "./load_policy.ts";
export * from "./agent_hooks.ts";
