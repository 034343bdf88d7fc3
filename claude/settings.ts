/**
 * Claude Code hook configurations (the `hooks` key of `.claude/settings.json`, or a plugin's
 * `hooks/hooks.json`): their types, and a strict reader that refuses what it cannot run.
 *
 * @module
 */

import { MAX_TIMER_MS } from "../core/_async.ts";
import { isRecord } from "../core/_util.ts";

/** The Claude Code events hookscope runs hooks for, and the hook point each maps to. */
export const CLAUDE_EVENTS = {
  PreToolUse: "tool.pre",
  PostToolUse: "tool.post",
  PostToolUseFailure: "tool.error",
  UserPromptSubmit: "message.add",
  SessionStart: "session.start",
  SessionEnd: "session.end",
} as const;

/** A Claude Code event hookscope runs hooks for. */
export type ClaudeEvent = keyof typeof CLAUDE_EVENTS;

/**
 * Claude Code events that exist but have no hookscope counterpart in a library agent: a
 * configuration may list them, and their hooks are not run (the README says so).
 */
export const CLAUDE_EVENTS_NOT_RUN: readonly string[] = [
  "Notification",
  "Stop",
  "StopFailure",
  "SubagentStart",
  "SubagentStop",
  "PreCompact",
  "PostCompact",
  "PermissionRequest",
  "PermissionDenied",
  "Setup",
  "TeammateIdle",
  "TaskCreated",
  "TaskCompleted",
  "ConfigChange",
  "CwdChanged",
  "FileChanged",
  "InstructionsLoaded",
  "WorktreeCreate",
  "WorktreeRemove",
  "Elicitation",
  "ElicitationResult",
  "UserPromptExpansion",
  "PostToolBatch",
];

/** A hook that runs a command through `sh -c`, JSON on its stdin. */
export interface ClaudeCommandHook {
  /** Kind. */
  readonly type: "command";
  /** The command line (`${CLAUDE_PLUGIN_ROOT}` and `$CLAUDE_PROJECT_DIR` work as in Claude Code). */
  readonly command: string;
  /** Seconds before the hook is killed (default: the `timeoutMs` option, else 60; at most 2 147 483). */
  readonly timeout?: number;
  /** What a failure (crash, timeout, bad output) does: `"block"` (default at `PreToolUse`) or `"continue"`. */
  readonly onFailure?: "block" | "continue";
}

/** A hook that POSTs the same JSON to a URL and reads the answer from the response body. */
export interface ClaudeHttpHook {
  /** Kind. */
  readonly type: "http";
  /** Where to POST. */
  readonly url: string;
  /** Extra request headers; `$NAME` / `${NAME}` are replaced for names in `allowedEnvVars`. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Environment variables the headers may use. */
  readonly allowedEnvVars?: readonly string[];
  /** Seconds before the request is abandoned (default: the `timeoutMs` option, else 60; at most 2 147 483). */
  readonly timeout?: number;
  /** What a failure does: `"block"` (default at `PreToolUse`) or `"continue"`. */
  readonly onFailure?: "block" | "continue";
}

/** One hook of a matcher group. */
export type ClaudeHook = ClaudeCommandHook | ClaudeHttpHook;

/** A matcher and the hooks that run when it matches. */
export interface ClaudeMatcherGroup {
  /** Tool names: exact, `A|B` lists, a regular expression, or `*` / empty / absent for all. */
  readonly matcher?: string;
  /** The hooks, run in order. */
  readonly hooks: readonly ClaudeHook[];
}

/** A configuration: settings.json content or a plugin's hooks.json (both have a `hooks` key). */
export interface ClaudeHookSettings {
  /** Event name → matcher groups. */
  readonly hooks: Readonly<Partial<Record<string, readonly ClaudeMatcherGroup[]>>>;
}

/** A Claude hook configuration hookscope cannot run as given. */
export class ClaudeHookConfigError extends TypeError {
  /** Where in the configuration (`hooks.PreToolUse[0].hooks[1]`). */
  readonly at: string;
  /** Makes the error. */
  constructor(at: string, reason: string) {
    super(`Cannot load Claude hooks: ${at}: ${reason}`);
    this.name = "ClaudeHookConfigError";
    this.at = at;
  }
}

/** One runnable hook with where it came from. */
export interface ClaudeLoadedHook {
  /** The event it runs at. */
  readonly event: ClaudeEvent;
  /** Its group's matcher (`""` matches every tool). */
  readonly matcher: string;
  /** The hook. */
  readonly hook: ClaudeHook;
  /** Where in the configuration, for errors. */
  readonly at: string;
}

function readTimeout(value: unknown, at: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
    throw new ClaudeHookConfigError(
      at,
      `timeout must be a positive number of seconds; got ${JSON.stringify(value)}`,
    );
  }
  // A longer deadline than a timer can hold fires at once on every runtime.
  if (value * 1000 > MAX_TIMER_MS) {
    throw new ClaudeHookConfigError(
      at,
      `timeout must be at most ${
        Math.floor(MAX_TIMER_MS / 1000)
      } seconds (2^31 - 1 ms, about 24.8 days); got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

function readOnFailure(value: unknown, at: string): "block" | "continue" | undefined {
  if (value === undefined || value === "block" || value === "continue") return value;
  throw new ClaudeHookConfigError(
    at,
    `onFailure must be "block" or "continue"; got ${JSON.stringify(value)}`,
  );
}

function readHook(raw: unknown, at: string): ClaudeHook {
  if (!isRecord(raw)) throw new ClaudeHookConfigError(at, "a hook must be an object");
  const timeout = readTimeout(raw.timeout, at);
  const onFailure = readOnFailure(raw.onFailure, at);
  const extra = {
    ...(timeout === undefined ? {} : { timeout }),
    ...(onFailure ? { onFailure } : {}),
  };
  if (raw.type === "command") {
    if (typeof raw.command !== "string" || raw.command.trim() === "") {
      throw new ClaudeHookConfigError(at, "a command hook needs a non-empty command");
    }
    return { type: "command", command: raw.command, ...extra };
  }
  if (raw.type === "http") {
    if (typeof raw.url !== "string" || !/^https?:\/\//i.test(raw.url)) {
      throw new ClaudeHookConfigError(
        at,
        `an http hook needs an http(s) url; got ${JSON.stringify(raw.url)}`,
      );
    }
    const headers: Record<string, string> = {};
    if (raw.headers !== undefined) {
      if (!isRecord(raw.headers)) throw new ClaudeHookConfigError(at, "headers must be an object");
      for (const [name, value] of Object.entries(raw.headers)) {
        if (typeof value !== "string") {
          throw new ClaudeHookConfigError(at, `header ${JSON.stringify(name)} must be a string`);
        }
        headers[name] = value;
      }
    }
    const allowed = raw.allowedEnvVars;
    if (
      allowed !== undefined &&
      (!Array.isArray(allowed) || !allowed.every((v) => typeof v === "string"))
    ) {
      throw new ClaudeHookConfigError(at, "allowedEnvVars must be a list of names");
    }
    return {
      type: "http",
      url: raw.url,
      headers,
      ...(allowed ? { allowedEnvVars: allowed as string[] } : {}),
      ...extra,
    };
  }
  if (raw.type === "prompt" || raw.type === "agent" || raw.type === "mcp_tool") {
    throw new ClaudeHookConfigError(
      at,
      `${
        JSON.stringify(raw.type)
      } hooks are not supported (hookscope runs "command" and "http" hooks); remove it or write it as a hookscope hook`,
    );
  }
  throw new ClaudeHookConfigError(
    at,
    `unknown hook type ${JSON.stringify(raw.type)}; valid: "command", "http"`,
  );
}

/**
 * Reads a configuration strictly: unknown events, hook types and malformed entries throw a
 * {@linkcode ClaudeHookConfigError} naming where; events with no hookscope counterpart
 * ({@linkcode CLAUDE_EVENTS_NOT_RUN}) are accepted and left out.
 *
 * @example
 * ```ts
 * import { readClaudeHooks } from "@hookscope/core/claude";
 * import assert from "node:assert/strict";
 *
 * const hooks = readClaudeHooks({
 *   hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "./check.sh" }] }] },
 * });
 * assert.equal(hooks.length, 1);
 * assert.equal(hooks[0].event, "PreToolUse");
 * assert.throws(() => readClaudeHooks({ hooks: { PreToolUze: [] } }), /unknown event "PreToolUze"/);
 * ```
 */
export function readClaudeHooks(settings: unknown): readonly ClaudeLoadedHook[] {
  if (!isRecord(settings) || !isRecord(settings.hooks)) {
    throw new ClaudeHookConfigError(
      "hooks",
      'the configuration must be an object with a "hooks" object',
    );
  }
  const out: ClaudeLoadedHook[] = [];
  for (const [event, groups] of Object.entries(settings.hooks)) {
    const at = `hooks.${event}`;
    const known = Object.hasOwn(CLAUDE_EVENTS, event);
    if (!known && !CLAUDE_EVENTS_NOT_RUN.includes(event)) {
      throw new ClaudeHookConfigError(
        at,
        `unknown event ${JSON.stringify(event)}; valid: ${
          [...Object.keys(CLAUDE_EVENTS), ...CLAUDE_EVENTS_NOT_RUN].join(", ")
        }`,
      );
    }
    if (!Array.isArray(groups)) {
      throw new ClaudeHookConfigError(at, "must be a list of matcher groups");
    }
    groups.forEach((group: unknown, g) => {
      const gat = `${at}[${g}]`;
      if (!isRecord(group)) {
        throw new ClaudeHookConfigError(gat, "a matcher group must be an object");
      }
      const matcher = group.matcher ?? "";
      if (typeof matcher !== "string") {
        throw new ClaudeHookConfigError(gat, "matcher must be a string");
      }
      if (!Array.isArray(group.hooks)) throw new ClaudeHookConfigError(gat, "hooks must be a list");
      group.hooks.forEach((hook: unknown, h) => {
        const loaded = readHook(hook, `${gat}.hooks[${h}]`);
        if (known) {
          out.push({
            event: event as ClaudeEvent,
            matcher,
            hook: loaded,
            at: `${gat}.hooks[${h}]`,
          });
        }
      });
    });
  }
  return out;
}
