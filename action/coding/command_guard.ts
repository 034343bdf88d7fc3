/**
 * The shell-command guard: `judgeCommand`, `guardDestructive` and `destructiveCommandGuard`
 * judge a command line from its `tree-sitter-bash` parse tree (WebAssembly through
 * `web-tree-sitter`, loaded with `node:module` / `node:fs` on first use, never at module load).
 *
 * @module
 */

import type { ToolPreDeny } from "../../core/tool_hook.ts";
import type { GuardInput } from "../guards.ts";
import { loadShellParser, type ShellParser } from "./_shell_parse.ts";
import { judgeShell } from "./_shell_judge.ts";

/** What {@linkcode judgeCommand} does with a destructive command. */
export interface JudgeCommandOptions {
  /**
   * `"deny"` (default) refuses destructive commands and commands the guard cannot see into
   * (inline interpreter code, computed program names); `"ask"` hands them to a person
   * instead. A command that cannot be parsed is always denied.
   */
  onDestructive?: "deny" | "ask";
}

/**
 * A verdict of the command guard, structurally a `ToolPreDecision` (`undefined`: no opinion).
 */
export type CommandDecision =
  | undefined
  | { decision: "deny"; reason: string }
  | { decision: "ask"; reason: string };

/**
 * Judges a shell command line from its parse tree (the `tree-sitter-bash` grammar): every
 * simple command at any depth — lists, pipelines, subshells, command and process
 * substitutions, function bodies, `sh -c` / `bash -c` / `eval` / `su -c` / `ssh` strings
 * parsed again, and the programs run by `sudo`, `env`, `xargs`, `find -exec`, `nohup`,
 * `timeout`, `nice`, `prlimit`, `flock`, `script -c`, `sg`, `busybox`, `watch`, `npx`, … — is
 * judged on its program and flags, each at its most dangerous reading (every reading of a
 * wrapper's options, `bash -c` after any options, GNU long-option abbreviations such as
 * `--recur`): recursive deletes in any spelling, `find -delete`, destructive git subcommands,
 * force pushes and `-c` settings or `ext::` URLs that run programs, `sed -i` and sed's `e`,
 * `mv` out of the workspace, `tar --remove-files`, `dd of=`, `mkfs*`, `wipefs`, `shred`,
 * `truncate`, truncating or device redirections, `chmod -R` / `chown -R`, `kill -9 -1`,
 * `shutdown` / `reboot`, `crontab -r`, `rsync --delete`, dropping SQL, fork bombs. Commands it
 * cannot see into (inline interpreter code such as `python -c` or `node -e`, a shell reading its
 * input, a program name computed at run time) count as destructive. A command that cannot be
 * parsed is denied. The coding toolkit's bash tool runs the argv of this same parse (a `#`
 * comment is dropped for both), so what runs is what was judged.
 *
 * Resolves to `undefined` for a command with nothing to object to, otherwise to
 * `{ decision: "deny" | "ask", reason }`. Loads the parser (WebAssembly) on first use; when it
 * cannot load, every command is denied.
 *
 * @example Judge commands
 * ```ts
 * import { judgeCommand } from "@hookscope/core/coding";
 * import assert from "node:assert/strict";
 *
 * assert.equal(await judgeCommand("git status && ls -la"), undefined);
 * const verdict = await judgeCommand("timeout 5 nohup sh -c 'find . -delete'");
 * assert.equal(verdict?.decision, "deny");
 * assert.match(verdict?.reason ?? "", /find -delete/);
 * assert.equal((await judgeCommand("rm -r build", { onDestructive: "ask" }))?.decision, "ask");
 * assert.equal((await judgeCommand("echo 'unclosed"))?.decision, "deny");
 * ```
 */
export async function judgeCommand(
  command: string,
  options?: JudgeCommandOptions,
): Promise<CommandDecision> {
  const onDestructive = options?.onDestructive ?? "deny";
  if (onDestructive !== "deny" && onDestructive !== "ask") {
    throw new TypeError(
      `Cannot judge command: onDestructive must be "deny" or "ask", got ${
        JSON.stringify(String(onDestructive))
      }`,
    );
  }
  if (typeof command !== "string") {
    return { decision: "deny", reason: `Command is not a string (${typeof command})` };
  }
  let parse: ShellParser;
  try {
    parse = await loadShellParser();
  } catch (error) {
    return {
      decision: "deny",
      reason: `The shell parser could not be loaded, so no command can be judged: ${
        (error as Error)?.message ?? String(error)
      }`,
    };
  }
  const finding = judgeShell(parse, command);
  if (!finding) return undefined;
  if (finding.kind === "unparseable") return { decision: "deny", reason: finding.reason };
  const label = finding.kind === "opaque" ? "Cannot judge command" : "Destructive command";
  return { decision: onDestructive, reason: `${label} (${finding.reason})` };
}

/**
 * A pre hook for shell tools: a deny decision when {@linkcode judgeCommand} does not pass
 * `args.command` (a non-string command is refused), else nothing. Arguments without a `command`
 * key pass. It reads only `args` and returns a decision, so it denies the same way as an
 * `AgentSpec` security pre hook (`SecurityDeniedError`), a `Tool` preprocessor or a session
 * `tool.pre` handler (`ToolDeniedError`). `destructiveCommandGuard()` adds a tool-name filter
 * and an `ask` option for session use.
 *
 * @example Refuse a destructive command
 * ```ts
 * import { guardDestructive } from "@hookscope/core/coding";
 * import assert from "node:assert/strict";
 *
 * const verdict = await guardDestructive({ args: { command: "rm -r /" } });
 * assert.equal(verdict?.decision, "deny");
 * assert.match(verdict?.reason ?? "", /^Blocked destructive command: rm -r \//);
 * assert.equal(await guardDestructive({ args: { command: "ls -la" } }), undefined);
 * ```
 */
export async function guardDestructive(context: GuardInput): Promise<ToolPreDeny | undefined> {
  const args = context?.args;
  if (args === null || typeof args !== "object" || !("command" in args)) return undefined;
  const command = args.command;
  const verdict = await judgeCommand(command as string);
  if (!verdict) return undefined;
  return {
    decision: "deny",
    reason: `Blocked destructive command: ${
      String(command)
    }\n${verdict.reason}\nIf you need this, explain why and ask the user to run it manually.`,
  };
}

/** Options of {@linkcode destructiveCommandGuard}. */
export interface DestructiveCommandGuardOptions extends JudgeCommandOptions {
  /** Tool names whose `command` argument is judged (default `["bash", "Bash"]`; `"*"` for all). */
  tools?: readonly string[];
  /** The argument holding the command line (default `"command"`). */
  argument?: string;
}

/** A `tool.pre` payload as the guard reads it (`args` are the call's real arguments). */
export interface CommandGuardPayload {
  /** The called tool. */
  readonly toolName: string;
  /** The real arguments of the call. */
  readonly args?: Readonly<Record<string, unknown>>;
  /** Other payload fields (`callId`, `argsSummary`, …), not read by the guard. */
  readonly [key: string]: unknown;
}

/**
 * Makes a session `tool.pre` handler that judges the real `args.command` of every call to a
 * shell tool with {@linkcode judgeCommand} and returns its decision (deny or ask), or
 * `undefined` to let the call go on. A call to a guarded tool whose payload carries no
 * arguments, or whose command is not a string, is denied: the guard decides on real values.
 *
 * @example A session tool.pre guard
 * ```ts
 * import { destructiveCommandGuard } from "@hookscope/core/coding";
 * import assert from "node:assert/strict";
 *
 * const guard = destructiveCommandGuard({ onDestructive: "ask" });
 * const payload = { toolName: "bash", callId: "c1", args: { command: "git push -f origin" } };
 * assert.equal((await guard(payload))?.decision, "ask");
 * assert.equal(await guard({ toolName: "reader", callId: "c2", args: { path: "x" } }), undefined);
 * ```
 */
export function destructiveCommandGuard(
  options?: DestructiveCommandGuardOptions,
): (payload: CommandGuardPayload) => Promise<CommandDecision> {
  // "Bash" is Claude Code's name for the same tool (same `command` argument).
  const tools = [...(options?.tools ?? ["bash", "Bash"])];
  const key = options?.argument ?? "command";
  const judgeOptions: JudgeCommandOptions = { onDestructive: options?.onDestructive ?? "deny" };
  // Validate the option now rather than on the first call.
  if (judgeOptions.onDestructive !== "deny" && judgeOptions.onDestructive !== "ask") {
    throw new TypeError(
      `Cannot create command guard: onDestructive must be "deny" or "ask", got ${
        JSON.stringify(String(judgeOptions.onDestructive))
      }`,
    );
  }
  const named = {
    async destructiveCommandGuard(payload: CommandGuardPayload): Promise<CommandDecision> {
      const name = typeof payload?.toolName === "string" ? payload.toolName : "";
      const canonical = name.length > 5 && name.endsWith("_tool") ? name.slice(0, -5) : name;
      if (!tools.includes("*") && !tools.includes(canonical)) return undefined;
      const args = payload?.args;
      if (args === null || typeof args !== "object") {
        return {
          decision: "deny",
          reason: `The ${name} call carries no arguments to judge (tool.pre payload without args)`,
        };
      }
      const command = (args as Record<string, unknown>)[key];
      if (typeof command !== "string") {
        return { decision: "deny", reason: `The ${name} call has no string '${key}' argument` };
      }
      return await judgeCommand(command, judgeOptions);
    },
  };
  return named.destructiveCommandGuard;
}
