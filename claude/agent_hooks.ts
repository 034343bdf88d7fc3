/**
 * `claudeAgentHooks`: the `hooks` option of the Claude Agent SDK's `query()`, so an SDK agent runs
 * a hookscope session's policy in-process, with every decision recorded in the session.
 *
 * @module
 */

import { MAX_TIMER_MS } from "../core/_async.ts";
import { describeValue, isRecord, unknownOptionProblem } from "../core/_util.ts";
import { Session } from "../session/session.ts";
import { answerClaudeEvent } from "./answer_event.ts";
import { CLAUDE_EVENTS, CLAUDE_EVENTS_NOT_RUN } from "./settings.ts";

// The event names a configuration may list (readClaudeHooks accepts the same).
const KNOWN_EVENTS: readonly string[] = [...Object.keys(CLAUDE_EVENTS), ...CLAUDE_EVENTS_NOT_RUN];
const OPTION_KEYS: ReadonlySet<string> = new Set(["events", "timeoutMs"]);

function fail(what: string): never {
  throw new TypeError(`Cannot make Claude Agent SDK hooks: ${what}`);
}

/** Options of {@linkcode claudeAgentHooks}. */
export interface ClaudeAgentHooksOptions {
  /**
   * The events to answer (default: every event with a hookscope counterpart, and
   * `PermissionDenied`, which records the refusal of an ask): a list of Claude Code event names;
   * a name that is not one throws.
   */
  events?: readonly string[];
  /** Longest wait for the policy per event, in milliseconds (default 20 000; at most 2^31 − 1). */
  timeoutMs?: number;
}

/** One SDK hook callback: the event input, the tool use id, and the SDK's abort signal. */
export type ClaudeAgentHookCallback = (
  input: unknown,
  toolUseId: string | undefined,
  options: { signal: AbortSignal },
) => Promise<Record<string, unknown>>;

/** One matcher group of the SDK's `hooks` option. */
export interface ClaudeAgentHookMatcher {
  /** The hooks (one: hookscope's). */
  hooks: ClaudeAgentHookCallback[];
  /** Seconds the SDK waits for the hook. */
  timeout?: number;
  /** `"block"` at `PreToolUse` and `UserPromptSubmit`: a hook that throws blocks the action. */
  onFailure?: "block" | "continue";
}

/**
 * Returns the `hooks` option for the Claude Agent SDK's `query({ prompt, options: { hooks } })`:
 * each event goes to {@linkcode answerClaudeEvent} on `session` (the same mapping as
 * `hookscope hook` and `serve`, without a process spawn). A policy that fails or times out denies
 * a `PreToolUse` (fail closed).
 *
 * @example
 * ```ts
 * import { claudeAgentHooks } from "@hookscope/core/claude";
 * import { Session } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const session = new Session();
 * session.hooks.on("tool.pre", () => ({ decision: "deny", reason: "read-only today" }));
 * const hooks = claudeAgentHooks(session, { events: ["PreToolUse"] });
 * const [callback] = hooks.PreToolUse[0].hooks;
 * const output = await callback(
 *   { session_id: "s", hook_event_name: "PreToolUse", tool_name: "Write", tool_input: { file_path: "a" }, tool_use_id: "t1" },
 *   "t1",
 *   { signal: new AbortController().signal },
 * );
 * assert.equal((output.hookSpecificOutput as { permissionDecision: string }).permissionDecision, "deny");
 * ```
 */
export function claudeAgentHooks(
  session: Session,
  options?: ClaudeAgentHooksOptions,
): Record<string, ClaudeAgentHookMatcher[]> {
  if (!(session instanceof Session)) {
    fail(`session must be a Session; got ${describeValue(session)}`);
  }
  if (options !== undefined && !isRecord(options)) {
    fail(`options must be an object; got ${describeValue(options)}`);
  }
  const unknown = unknownOptionProblem(options ?? {}, OPTION_KEYS);
  if (unknown !== undefined) fail(unknown);
  // PermissionDenied: the outcome of an ask the SDK refused (recorded as ApprovalAnswered).
  const events = options?.events ?? [...Object.keys(CLAUDE_EVENTS), "PermissionDenied"];
  if (!Array.isArray(events)) {
    fail(`events must be a list of event names; got ${describeValue(events)}`);
  }
  for (const event of events) {
    if (typeof event !== "string" || !KNOWN_EVENTS.includes(event)) {
      fail(
        `unknown event ${
          typeof event === "string" ? JSON.stringify(event) : describeValue(event)
        } in events; valid: ${KNOWN_EVENTS.join(", ")}`,
      );
    }
  }
  const timeoutMs = options?.timeoutMs ?? 20_000;
  if (typeof timeoutMs !== "number" || !Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    fail(`timeoutMs must be a positive number; got ${String(timeoutMs)}`);
  }
  if (timeoutMs > MAX_TIMER_MS) {
    fail(`timeoutMs must be at most ${MAX_TIMER_MS} (about 24.8 days); got ${timeoutMs}`);
  }
  const out: Record<string, ClaudeAgentHookMatcher[]> = {};
  for (const event of events) {
    const callback: ClaudeAgentHookCallback = async (input, toolUseId, { signal }) => {
      const event = input as Record<string, unknown>;
      const withId = toolUseId !== undefined && event.tool_use_id === undefined
        ? { ...event, tool_use_id: toolUseId }
        : event;
      const answer = await answerClaudeEvent(session, withId, { timeoutMs, signal });
      return answer.output;
    };
    const blocks = event === "PreToolUse" || event === "UserPromptSubmit";
    out[event] = [{
      hooks: [callback],
      timeout: Math.ceil(timeoutMs / 1000) + 5,
      ...(blocks ? { onFailure: "block" as const } : {}),
    }];
  }
  return out;
}
