/**
 * `claudeCodeHooks`: runs an existing Claude Code hook configuration inside a hookscope session.
 *
 * @module
 */

import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import process from "node:process";
import type { HookContext } from "../hooks/bus.ts";
import type { ToolErrorDecision, ToolPostDecision, ToolPreDecision } from "../hooks/decision.ts";
import type { HookPayloads } from "../hooks/hook_point.ts";
import type { Session } from "../session/session.ts";
import { compileMatcher } from "./_matcher.ts";
import { runHook } from "./_run_hook.ts";
import { writeTranscript } from "./_transcript.ts";
import { ClaudeHookError } from "./hook_error.ts";
import type { Policy } from "./policy.ts";
import {
  ClaudeHookConfigError,
  type ClaudeHookSettings,
  type ClaudeLoadedHook,
  readClaudeHooks,
} from "./settings.ts";
import {
  claudeFailureOf,
  ClaudePathOutsideError,
  fromClaudeInput,
  toClaudeCall,
} from "./tool_names.ts";
import { isRecord } from "../core/_util.ts";
import { MAX_TIMER_MS } from "../core/_async.ts";

/** Options of {@linkcode claudeCodeHooks}. */
export interface ClaudeCodeHooksOptions {
  /**
   * `CLAUDE_PROJECT_DIR` and the hooks' working directory (default: the process's cwd); set it
   * to the coding toolkit's workspace root. Hooks see the calls' paths resolved against it, as
   * Claude Code sends them (absolute), and an `updatedInput` path must stay inside it.
   */
  projectDir?: string;
  /** `CLAUDE_PLUGIN_ROOT` (default: the folder above `hooks/hooks.json` when given that path). */
  pluginRoot?: string;
  /** Extra environment variables for the hooks (over the process's own). */
  env?: Record<string, string>;
  /** Per-hook deadline in milliseconds when the configuration gives no `timeout` (default 60 000). */
  timeoutMs?: number;
  /** hookscope tool name → Claude tool name, merged over {@linkcode CLAUDE_TOOL_NAMES}. */
  toolNames?: Record<string, string>;
  /**
   * Where the session's JSONL transcript is written (default: `TMPDIR/hookscope-claude-UID`, which
   * must then be this user's own folder that others cannot write to).
   */
  transcriptDir?: string;
  /** Where hook failures that are let through (`onFailure: "continue"`) are reported. */
  onError?: (error: ClaudeHookError) => void;
}

/** The hook's JSON answer, as far as hookscope reads it. */
interface Answer {
  readonly continue?: unknown;
  readonly stopReason?: unknown;
  readonly decision?: unknown;
  readonly reason?: unknown;
  readonly hookSpecificOutput?: {
    readonly permissionDecision?: unknown;
    readonly permissionDecisionReason?: unknown;
    readonly updatedInput?: unknown;
    readonly additionalContext?: unknown;
    readonly updatedToolOutput?: unknown;
    readonly updatedMCPToolOutput?: unknown;
  };
}

function loadSettings(
  settings: ClaudeHookSettings | string,
): { settings: unknown; pluginRoot?: string } {
  if (typeof settings !== "string") return { settings };
  let text: string;
  try {
    text = readFileSync(settings, "utf8");
  } catch (error) {
    throw new ClaudeHookConfigError(
      settings,
      `cannot read the file: ${(error as Error)?.message ?? error}`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ClaudeHookConfigError(settings, `not JSON: ${(error as Error)?.message ?? error}`);
  }
  const match = /^(.*)\/hooks\/hooks\.json$/.exec(settings);
  return match ? { settings: parsed, pluginRoot: match[1] || "/" } : { settings: parsed };
}

/** Parses a hook's stdout: JSON when it is an object, else plain text. */
function readAnswer(stdout: string, hook: string): Answer | null {
  const trimmed = stdout.trim();
  if (!trimmed.startsWith("{")) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch (error) {
    throw new ClaudeHookError(
      "output",
      hook,
      `printed malformed JSON: ${(error as Error)?.message ?? error}`,
    );
  }
  if (!isRecord(parsed)) {
    throw new ClaudeHookError("output", hook, "printed JSON that is not an object");
  }
  const specific = parsed.hookSpecificOutput;
  if (specific !== undefined && !isRecord(specific)) {
    throw new ClaudeHookError("output", hook, "hookSpecificOutput must be an object");
  }
  return parsed as Answer;
}

function optionalText(value: unknown, field: string, hook: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") {
    throw new ClaudeHookError("output", hook, `${field} must be a string`);
  }
  return value;
}

function hookLabel(loaded: ClaudeLoadedHook): string {
  return loaded.hook.type === "command" ? loaded.hook.command : loaded.hook.url;
}

/**
 * Turns a Claude Code hook configuration (settings.json content with a `hooks` key, a plugin's
 * `hooks/hooks.json`, or a path to either) into a hookscope {@linkcode Policy}. Each hook becomes
 * one session hook, in the configuration's order: several matching hooks run one after the other
 * and fold deny > ask > allow (Claude Code runs them in parallel; this is stricter), and each sees
 * the arguments as rewritten by the hooks before it. Hooks see Claude's tool names and input
 * shapes ({@linkcode toClaudeCall}); an `updatedInput` is translated back.
 *
 * The protocol: exit 0 with JSON (`hookSpecificOutput.permissionDecision`, `updatedInput`,
 * `additionalContext`, `decision: "block"`, `continue: false`) or plain stdout; exit 2 blocks
 * with stderr as the reason; a crash, a timeout, too much output or malformed JSON is a failure,
 * which denies at `PreToolUse` (fail closed) and is reported elsewhere, unless the hook says
 * `onFailure: "continue"` (or `"block"`).
 *
 * @example A configuration with one script
 * ```ts
 * import { claudeCodeHooks } from "@hookscope/core/claude";
 * import { Session } from "@hookscope/core";
 * import { mkdtempSync, rmSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import assert from "node:assert/strict";
 *
 * // Where the session's transcript for the hooks goes (default: TMPDIR/hookscope-claude-UID).
 * const transcriptDir = mkdtempSync(join(tmpdir(), "transcripts-"));
 * const policy = claudeCodeHooks({
 *   hooks: {
 *     PreToolUse: [{
 *       matcher: "Bash",
 *       hooks: [{ type: "command", command: "echo 'no shell today' >&2; exit 2" }],
 *     }],
 *   },
 * }, { transcriptDir });
 * const session = new Session();
 * policy(session);
 * const decision = await session.hooks.decide("tool.pre", {
 *   toolName: "bash", callId: "c1", args: { command: "ls" }, argsSummary: "",
 *   signal: new AbortController().signal, source: { kind: "local" },
 * });
 * assert.equal(decision.verdict, "deny");
 * assert.equal(decision.reason, "no shell today");
 * rmSync(transcriptDir, { recursive: true });
 * ```
 */
export function claudeCodeHooks(
  settings: ClaudeHookSettings | string,
  options?: ClaudeCodeHooksOptions,
): Policy {
  const loadedFile = loadSettings(settings);
  const hooks = readClaudeHooks(loadedFile.settings);
  const pluginRoot = options?.pluginRoot ?? loadedFile.pluginRoot;
  const timeoutMs = options?.timeoutMs ?? 60_000;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0 || timeoutMs > MAX_TIMER_MS) {
    throw new TypeError(
      `Cannot load Claude hooks: timeoutMs must be a positive number of at most ${MAX_TIMER_MS}; got ${timeoutMs}`,
    );
  }
  const matchers = hooks.map((loaded) => compileMatcher(loaded.matcher, loaded.at));
  for (const loaded of hooks) {
    if (
      loaded.hook.type === "command" && loaded.hook.command.includes("${CLAUDE_PLUGIN_ROOT}") &&
      !pluginRoot
    ) {
      throw new ClaudeHookConfigError(
        loaded.at,
        "uses ${CLAUDE_PLUGIN_ROOT} but no pluginRoot is known",
      );
    }
  }
  const names = options?.toolNames;
  return (session: Session) => {
    const projectDir = resolve(options?.projectDir ?? process.cwd());
    // Paths are POSIX in the coding tools; elsewhere they are shown as given.
    const pathRoot = projectDir.startsWith("/") ? projectDir : undefined;
    const transcriptDir = options?.transcriptDir;
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
    Object.assign(env, options?.env ?? {}, { CLAUDE_PROJECT_DIR: projectDir });
    if (pluginRoot) env.CLAUDE_PLUGIN_ROOT = pluginRoot;

    const run = async (
      loaded: ClaudeLoadedHook,
      event: Record<string, unknown>,
      context: HookContext,
    ) => {
      // Refused (the call denied at PreToolUse) for a session id that is not a plain file name.
      const transcriptPath = await writeTranscript(session, transcriptDir, projectDir);
      const input = JSON.stringify({
        session_id: session.id,
        transcript_path: transcriptPath,
        cwd: projectDir,
        permission_mode: "default",
        hook_event_name: loaded.event,
        ...event,
      });
      const hook = loaded.hook.type === "command" && pluginRoot
        ? {
          ...loaded.hook,
          command: loaded.hook.command.replaceAll("${CLAUDE_PLUGIN_ROOT}", pluginRoot),
        }
        : loaded.hook;
      return await runHook(hook, input, {
        cwd: projectDir,
        env,
        timeoutMs,
        ...(context.signal ? { signal: context.signal } : {}),
      });
    };
    /** Applies the hook's failure policy: rethrow (block) or report and go on. */
    const failed = (
      loaded: ClaudeLoadedHook,
      error: unknown,
      blockByDefault: boolean,
    ): undefined => {
      const policy = loaded.hook.onFailure ?? (blockByDefault ? "block" : "continue");
      if (policy === "block" || !(error instanceof ClaudeHookError)) throw error;
      options?.onError?.(error);
      return undefined;
    };
    const disposers: (() => void)[] = [];
    const register = (
      point:
        | "tool.pre"
        | "tool.post"
        | "tool.error"
        | "message.add"
        | "session.start"
        | "session.end",
      loaded: ClaudeLoadedHook,
      handler: (payload: never, context: HookContext) => unknown,
      match?: (payload: unknown) => boolean,
    ) => {
      const ms = loaded.hook.timeout === undefined ? timeoutMs : loaded.hook.timeout * 1000;
      disposers.push(session.hooks.on(point, handler as never, {
        name: `claude ${loaded.event} ${hookLabel(loaded)}`,
        timeoutMs: ms + 5_000, // the hook's own deadline fires first, with a clearer error
        onFailure: "block",
        ...(match ? { match } : {}),
      }));
    };

    hooks.forEach((loaded, index) => {
      const matches = matchers[index];
      const label = hookLabel(loaded);
      const toolMatch = (payload: unknown) => {
        const p = payload as { toolName: string; args?: Record<string, unknown> };
        return matches(toClaudeCall(p.toolName, p.args ?? {}, names).toolName);
      };
      switch (loaded.event) {
        case "PreToolUse":
          register(
            "tool.pre",
            loaded,
            async (payload: HookPayloads["tool.pre"], context: HookContext) => {
              const call = toClaudeCall(payload.toolName, payload.args, names, pathRoot);
              try {
                const answer = await run(loaded, {
                  tool_name: call.toolName,
                  tool_input: call.toolInput,
                  tool_use_id: payload.callId,
                }, context);
                return preDecision(
                  answer,
                  label,
                  (updated) =>
                    fromClaudeInput(payload.toolName, payload.args, updated, pathRoot, names),
                );
              } catch (error) {
                // Fail closed with a deny the model can read, unless the hook says "continue".
                if (
                  (loaded.hook.onFailure ?? "block") === "block" && error instanceof ClaudeHookError
                ) {
                  return { decision: "deny", reason: error.message };
                }
                return failed(loaded, error, true);
              }
            },
            toolMatch,
          );
          break;
        case "PostToolUse":
          register(
            "tool.post",
            loaded,
            async (payload: HookPayloads["tool.post"], context: HookContext) => {
              // A coding tool's failure is reported to PostToolUseFailure hooks instead.
              if (claudeFailureOf(payload.toolName, payload.args, payload.result) !== undefined) {
                return undefined;
              }
              const call = toClaudeCall(payload.toolName, payload.args, names, pathRoot);
              try {
                const answer = await run(loaded, {
                  tool_name: call.toolName,
                  tool_input: call.toolInput,
                  tool_response: payload.result,
                  tool_use_id: payload.callId,
                }, context);
                return postDecision(answer, label);
              } catch (error) {
                return failed(loaded, error, false);
              }
            },
            toolMatch,
          );
          break;
        case "PostToolUseFailure": {
          /** Runs the hook on a failed call; `error` is what Claude Code's `error` field says. */
          const onFailure = async (
            payload: {
              toolName: string;
              args?: Record<string, unknown>;
              callId: string;
              durationMs: number | null;
            },
            error: string,
            context: HookContext,
          ) => {
            const call = toClaudeCall(payload.toolName, payload.args ?? {}, names, pathRoot);
            try {
              const answer = await run(loaded, {
                tool_name: call.toolName,
                tool_input: call.toolInput,
                tool_use_id: payload.callId,
                error,
                ...(typeof payload.durationMs === "number"
                  ? { duration_ms: Math.round(payload.durationMs) }
                  : {}),
              }, context);
              return errorDecision(answer, label);
            } catch (error) {
              return failed(loaded, error, false);
            }
          };
          register(
            "tool.error",
            loaded,
            (payload: HookPayloads["tool.error"], context: HookContext) =>
              onFailure(
                payload,
                payload.error instanceof Error ? payload.error.message : String(payload.error),
                context,
              ),
            toolMatch,
          );
          // The coding tools report a failure as their result (`success: false`), where Claude
          // Code's tools fail the call: those results run PostToolUseFailure hooks too.
          register(
            "tool.post",
            loaded,
            (payload: HookPayloads["tool.post"], context: HookContext) => {
              const error = claudeFailureOf(payload.toolName, payload.args, payload.result);
              return error === undefined ? undefined : onFailure(payload, error, context);
            },
            toolMatch,
          );
          break;
        }
        case "UserPromptSubmit":
          register(
            "message.add",
            loaded,
            async (payload: HookPayloads["message.add"], context: HookContext) => {
              if (payload.message.role !== "user") return undefined;
              try {
                const answer = await run(loaded, {
                  prompt: typeof payload.message.content === "string"
                    ? payload.message.content
                    : JSON.stringify(payload.message.content),
                }, context);
                blockPrompt(answer, label);
              } catch (error) {
                if (error instanceof ClaudePromptBlockedError) throw error;
                failed(loaded, error, false);
              }
              return undefined;
            },
          );
          break;
        case "SessionStart":
        case "SessionEnd":
          register(
            loaded.event === "SessionStart" ? "session.start" : "session.end",
            loaded,
            async (_payload: unknown, context: HookContext) => {
              try {
                const answer = await run(
                  loaded,
                  loaded.event === "SessionStart" ? { source: "startup" } : { reason: "other" },
                  context,
                );
                if (answer.code !== 0 && answer.code !== 2) {
                  throw new ClaudeHookError(
                    "exit",
                    label,
                    `exited with code ${answer.code}: ${answer.stderr.trim()}`,
                  );
                }
              } catch (error) {
                failed(loaded, error, false);
              }
              return undefined;
            },
          );
          break;
      }
    });
    return () => {
      for (const dispose of disposers.splice(0)) dispose();
    };
  };
}

function exitFailure(answer: { code: number; stderr: string }, hook: string): ClaudeHookError {
  const detail = answer.stderr.trim();
  return new ClaudeHookError(
    "exit",
    hook,
    `exited with code ${answer.code}${detail ? `: ${detail}` : ""}`,
  );
}

function preDecision(
  answer: { code: number; stdout: string; stderr: string },
  hook: string,
  argsOf: (updatedInput: Readonly<Record<string, unknown>>) => Record<string, unknown>,
): ToolPreDecision {
  if (answer.code === 2) {
    return { decision: "deny", reason: answer.stderr.trim() || `blocked by ${hook}` };
  }
  if (answer.code !== 0) throw exitFailure(answer, hook);
  const json = readAnswer(answer.stdout, hook);
  if (json === null) return undefined;
  const specific = json.hookSpecificOutput ?? {};
  const context = optionalText(specific.additionalContext, "additionalContext", hook);
  if (json.continue === false) {
    const reason = optionalText(json.stopReason, "stopReason", hook) ?? `stopped by ${hook}`;
    return { decision: "deny", reason, interrupt: true };
  }
  let permission = specific.permissionDecision;
  let reason = optionalText(specific.permissionDecisionReason, "permissionDecisionReason", hook);
  if (permission === undefined && json.decision !== undefined) {
    // The older top-level spelling: "approve" / "block".
    if (json.decision === "block") permission = "deny";
    else if (json.decision === "approve") permission = "allow";
    else {throw new ClaudeHookError(
        "output",
        hook,
        `unknown decision ${JSON.stringify(json.decision)}`,
      );}
    reason ??= optionalText(json.reason, "reason", hook);
  }
  const updated = specific.updatedInput;
  if (updated !== undefined && !isRecord(updated)) {
    throw new ClaudeHookError("output", hook, "updatedInput must be an object");
  }
  let updatedArgs: Record<string, unknown> | undefined;
  try {
    updatedArgs = updated === undefined || permission === "deny" ? undefined : argsOf(updated);
  } catch (error) {
    // A rewrite that leaves the project folder is refused, never passed on.
    if (!(error instanceof ClaudePathOutsideError)) throw error;
    return {
      decision: "deny",
      reason: `Cannot use the rewrite of Claude hook ${JSON.stringify(hook)}: ${error.message}`,
    };
  }
  switch (permission) {
    case "deny":
      return { decision: "deny", reason: reason ?? `denied by ${hook}` };
    case "ask":
      return {
        decision: "ask",
        ...(reason ? { reason } : {}),
        ...(updatedArgs ? { updatedArgs } : {}),
      };
    case "allow":
    case undefined:
      if (permission === undefined && updatedArgs === undefined && context === undefined) {
        return undefined;
      }
      return {
        decision: "allow",
        ...(reason ? { reason } : {}),
        ...(updatedArgs ? { updatedArgs } : {}),
        ...(context ? { context } : {}),
      };
    default:
      throw new ClaudeHookError(
        "output",
        hook,
        `unknown permissionDecision ${JSON.stringify(permission)}`,
      );
  }
}

function postDecision(
  answer: { code: number; stdout: string; stderr: string },
  hook: string,
): ToolPostDecision {
  if (answer.code === 2) {
    const reason = answer.stderr.trim();
    return reason ? { context: reason } : undefined;
  }
  if (answer.code !== 0) throw exitFailure(answer, hook);
  const json = readAnswer(answer.stdout, hook);
  if (json === null) return undefined;
  const specific = json.hookSpecificOutput ?? {};
  const parts = [
    json.decision === "block" ? optionalText(json.reason, "reason", hook) : undefined,
    optionalText(specific.additionalContext, "additionalContext", hook),
  ].filter((p): p is string => p !== undefined && p !== "");
  const replaced = specific.updatedToolOutput !== undefined
    ? { updatedResult: specific.updatedToolOutput }
    : specific.updatedMCPToolOutput !== undefined
    ? { updatedResult: specific.updatedMCPToolOutput }
    : {};
  if (parts.length === 0 && !("updatedResult" in replaced)) return undefined;
  return { ...replaced, ...(parts.length ? { context: parts.join("\n") } : {}) };
}

function errorDecision(
  answer: { code: number; stdout: string; stderr: string },
  hook: string,
): ToolErrorDecision {
  // Exit 2 at PostToolUseFailure: the stderr reaches the model, as at PostToolUse.
  const decision = postDecision(answer, hook);
  return decision?.context === undefined ? undefined : { context: decision.context };
}

/** A `UserPromptSubmit` hook blocked the prompt (exit 2, or `decision: "block"`). */
export class ClaudePromptBlockedError extends Error {
  /** The hook. */
  readonly hook: string;
  /** Makes the error. */
  constructor(hook: string, reason: string) {
    super(`Prompt blocked by Claude hook ${JSON.stringify(hook)}: ${reason}`);
    this.name = "ClaudePromptBlockedError";
    this.hook = hook;
  }
}

function blockPrompt(answer: { code: number; stdout: string; stderr: string }, hook: string): void {
  if (answer.code === 2) {
    throw new ClaudePromptBlockedError(hook, answer.stderr.trim() || "blocked");
  }
  if (answer.code !== 0) throw exitFailure(answer, hook);
  const json = readAnswer(answer.stdout, hook);
  if (json?.decision === "block" || json?.continue === false) {
    const reason = optionalText(json.reason ?? json.stopReason, "reason", hook) ?? "blocked";
    throw new ClaudePromptBlockedError(hook, reason);
  }
}
