/**
 * `answerClaudeEvent`: answers one Claude Code hook event (the JSON Claude Code sends a command
 * or http hook) from a hookscope session's policy, in the protocol's own terms.
 *
 * @module
 */

import { summarize } from "../core/json_safe.ts";
import { abortable, type DeadlineSignal, deadlineSignal } from "../core/_async.ts";
import type { Session } from "../session/session.ts";
import { setImmediate } from "node:timers";
import { RECORD_HOOK } from "../core/_record.ts";
import type { SignalSink } from "../core/signal.ts";
import { HookSignal } from "../hooks/hook_signal.ts";
import type { HookPoint } from "../hooks/hook_point.ts";
import { ClaudeHookDecision, type ClaudeHookDecisionData } from "./hook_decision_signal.ts";
import { recordApproval } from "./_approvals.ts";
import { isRecord, messageOf } from "../core/_util.ts";
import { EMIT_RESULTS, type ResultSink } from "../hooks/_emit_results.ts";
import type { EmitOptions } from "../hooks/bus.ts";
import type { AddMessageOptions } from "../session/branch.ts";
import type { ToolSource } from "../core/tool_source.ts";

/** Where the tools of a Claude Code event come from (the `source` of their `tool.*` payloads). */
const CLAUDE_SOURCE: ToolSource = Object.freeze({ kind: "claude-code" });

/** The answer to one event: the JSON to print or send back, and the exit code. */
export interface ClaudeEventAnswer {
  /** The protocol's JSON output (`{}` for no opinion). */
  readonly output: Record<string, unknown>;
  /** 0, or 2 where the protocol blocks through stderr. */
  readonly exitCode: 0 | 2;
  /** What to print on stderr with exit code 2. */
  readonly stderr?: string;
  /** The recorded decision. */
  readonly decision: ClaudeHookDecisionData;
}

/** A Claude Code hook event that cannot be answered: not the protocol's shape. */
export class ClaudeEventError extends TypeError {
  /** Makes the error. */
  constructor(reason: string) {
    super(`Cannot answer Claude hook event: ${reason}`);
    this.name = "ClaudeEventError";
  }
}

/** Options of {@linkcode answerClaudeEvent}. */
export interface AnswerClaudeEventOptions {
  /**
   * Longest wait for the policy, in milliseconds (default 20 000, below Claude Code's own);
   * `Infinity` arms no timer of its own (the caller's `signal` then carries the deadline).
   */
  timeoutMs?: number;
  /** Aborts the wait (the answer then follows the failure policy). */
  signal?: AbortSignal;
  /**
   * Called with the promise of the decision's recording instead of awaiting it (a server answers
   * first and records after: the recording starts on a later turn of the event loop); by default
   * the answer waits until the signal is stored.
   */
  deferRecord?: (recorded: Promise<void>) => void;
  /**
   * With `deferRecord`: the `HookSignal`s of the decision are held while the policy runs and
   * recorded with the decision, in order and with their own times (the session's observers see
   * them after the answer). Only for a session that answers this one event: the session's bus is
   * bound to a holder meanwhile (`hookscope serve` makes a session per event).
   */
  deferHookSignals?: boolean;
}

/** A sink that keeps hook signals for later, as the observer would have recorded them. */
class HeldHookSignals {
  readonly held: { point: string; payload: Record<string, unknown>; createdAt: number }[] = [];
  emit(event: unknown): Promise<unknown> {
    // The bus records through RECORD_HOOK; anything else goes to the real observer later.
    this.held.push({ point: "", payload: { event }, createdAt: Date.now() });
    return Promise.resolve();
  }
  [RECORD_HOOK](point: string, payload: Record<string, unknown>): undefined {
    this.held.push({ point, payload: { ...payload }, createdAt: Date.now() });
    return undefined;
  }
  /** Records what was held into `sink`, in order. */
  async replay(sink: SignalSink): Promise<void> {
    for (const { point, payload, createdAt } of this.held) {
      await sink.emit(
        point === "" ? payload.event : new HookSignal({
          point: point as HookPoint,
          payload: Object.freeze(payload),
          createdAt,
        }),
      );
    }
  }
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function text(value: unknown, field: string, required: boolean): string | undefined {
  if (value === undefined && !required) return undefined;
  if (typeof value !== "string" || value === "") {
    throw new ClaudeEventError(`${field} must be a non-empty string`);
  }
  return value;
}

const NOTHING = (): void => {};

function policyDeadline(options?: AnswerClaudeEventOptions): DeadlineSignal {
  const ms = options?.timeoutMs ?? 20_000;
  // The caller's signal is the deadline (a server arms one timer per request for everything).
  if (ms === Infinity && options?.signal) return { signal: options.signal, done: NOTHING };
  return deadlineSignal(
    ms,
    options?.signal,
    () => new Error(`the policy did not answer within ${ms} ms`),
  );
}

/**
 * Answers one Claude Code hook event from `session`'s hooks, records a
 * {@linkcode ClaudeHookDecision} signal, and returns the protocol's output:
 *
 * | event | hookscope point | answer |
 * |---|---|---|
 * | `PreToolUse` | `tool.pre` (`decide`) | `permissionDecision` `deny`/`ask`/`allow`, `permissionDecisionReason`, `updatedInput`, `additionalContext` |
 * | `PostToolUse` | `tool.post` (`decide`) | `updatedToolOutput` (and `updatedMCPToolOutput` for `mcp__` tools), `additionalContext` |
 * | `PostToolUseFailure` | `tool.error` (`decide`) | `additionalContext` |
 * | `UserPromptSubmit` | `message.add` of a user message on the default branch | a handler that throws (or times out) or returns `{ decision: "deny", reason }` → `decision: "block"`, `reason` (the first in chain order); `context` → `additionalContext` |
 * | `SessionStart` / `SessionEnd` | `session.start` / `session.end` | `SessionStart`: the handlers' `{ context }`, in order → `additionalContext` |
 * | any other | recorded only | `{}` |
 *
 * A policy that throws or does not answer within `timeoutMs` denies a `PreToolUse` (fail
 * closed) and blocks a `UserPromptSubmit`; elsewhere it is recorded and the answer is `{}`.
 * At `UserPromptSubmit` every `message.add` handler runs, as for any message (the prompt is
 * stored either way), and counts as a gate: the first that throws, times out or denies (a
 * handler registered with `onFailure: "continue"` does not count when it fails) blocks the
 * prompt with its reason. Elsewhere a `message.add` handler's failure is isolated and its
 * return value ignored, as always.
 * An `ask` is recorded as an `ApprovalRequested`; a later `PostToolUse` or `PostToolUseFailure`
 * of the same call (approved, it ran) or `PermissionDenied` (refused) records the
 * `ApprovalAnswered`, `by: "claude-code"`. A refusal in Claude Code's interactive prompt sends no
 * event, so that ask stays unanswered in the record.
 * Tool names and inputs are Claude's, as sent (`Bash`, `command`): the coding guards accept them.
 *
 * @example Deny a command from a session policy
 * ```ts
 * import { answerClaudeEvent } from "@hookscope/core/claude";
 * import { Session } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const session = new Session({ id: "claude-session-1" });
 * session.hooks.on("tool.pre", ({ args }) =>
 *   String(args.command).startsWith("rm ") ? { decision: "deny", reason: "no rm" } : undefined
 * );
 * const answer = await answerClaudeEvent(session, {
 *   session_id: "claude-session-1", hook_event_name: "PreToolUse",
 *   tool_name: "Bash", tool_input: { command: "rm -rf x" }, tool_use_id: "toolu_1",
 * });
 * assert.deepEqual(answer.output, {
 *   hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "no rm" },
 * });
 * ```
 */
export async function answerClaudeEvent(
  session: Session,
  event: unknown,
  options?: AnswerClaudeEventOptions,
): Promise<ClaudeEventAnswer> {
  if (!isRecord(event)) throw new ClaudeEventError("the event must be a JSON object");
  const name = text(event.hook_event_name, "hook_event_name", true) as string;
  const defer = options?.deferRecord;
  const bus = session.hooks;
  const observer = bus.observer;
  const held = defer && options?.deferHookSignals && observer ? new HeldHookSignals() : undefined;
  if (held) bus.bind(held);
  const { signal, done } = policyDeadline(options);
  let answer: ClaudeEventAnswer;
  try {
    answer = await answer_(session, name, event, signal);
  } catch (error) {
    if (held) {
      bus.bind(observer);
      void held.replay(observer!).catch(() => {});
    }
    throw error;
  } finally {
    done();
  }
  const record = async () => {
    if (held) {
      bus.bind(observer);
      await held.replay(observer!);
    }
    await session.observer.emit(new ClaudeHookDecision({ data: answer.decision }));
    await recordApproval(session, event, answer.decision);
    await session.drainSignals();
  };
  if (defer) defer(nextTurn().then(record));
  else await record();
  return answer;
}

async function answer_(
  session: Session,
  name: string,
  event: Record<string, unknown>,
  signal: AbortSignal,
): Promise<ClaudeEventAnswer> {
  switch (name) {
    case "PreToolUse": {
      const toolName = text(event.tool_name, "tool_name", true) as string;
      const callId = text(event.tool_use_id, "tool_use_id", false) ?? `claude-${Date.now()}`;
      if (!isRecord(event.tool_input)) throw new ClaudeEventError("tool_input must be an object");
      const args = event.tool_input;
      const base = { event: name, callId, toolName, toolInput: args };
      let fold;
      try {
        fold = await abortable(
          session.hooks.decide(
            "tool.pre",
            { toolName, callId, args, argsSummary: summarize(args), signal, source: CLAUDE_SOURCE },
            { signal },
          ),
          signal,
        );
      } catch (error) {
        return deny(
          base,
          `hookscope policy failed: ${messageOf(error)}`,
          undefined,
          messageOf(error),
        );
      }
      if (fold.error !== undefined) {
        const why = messageOf(fold.error);
        return deny(base, `hookscope policy failed: ${why}`, fold.errorHook, why);
      }
      const hook = fold.hook;
      const context = fold.context.length ? fold.context.join("\n") : undefined;
      const updated = fold.updatedArgs as Record<string, unknown> | undefined;
      if (fold.verdict === "deny") return deny(base, fold.reason ?? "denied by policy", hook);
      if (fold.verdict === "none" && !updated && !context) {
        return { output: {}, exitCode: 0, decision: { ...base, verdict: "none" } };
      }
      const permission = fold.verdict === "ask" ? "ask" : "allow";
      const specific: Record<string, unknown> = {
        hookEventName: name,
        permissionDecision: permission,
      };
      if (fold.reason) specific.permissionDecisionReason = fold.reason;
      if (updated) specific.updatedInput = { ...updated };
      if (context) specific.additionalContext = context;
      return {
        output: { hookSpecificOutput: specific },
        exitCode: 0,
        decision: {
          ...base,
          verdict: permission,
          ...(fold.reason ? { reason: fold.reason } : {}),
          ...(hook ? { hook } : {}),
          ...(updated ? { updatedInput: updated } : {}),
          ...(context ? { context } : {}),
        },
      };
    }
    case "PostToolUse": {
      const toolName = text(event.tool_name, "tool_name", true) as string;
      const callId = text(event.tool_use_id, "tool_use_id", false) ?? `claude-${Date.now()}`;
      const args = isRecord(event.tool_input) ? event.tool_input : {};
      const base = { event: name, callId, toolName };
      let fold;
      try {
        fold = await abortable(
          session.hooks.decide("tool.post", {
            callId,
            toolName,
            args,
            result: event.tool_response,
            resultSummary: summarize(event.tool_response),
            durationMs: null,
            signal,
            source: CLAUDE_SOURCE,
          }, { signal }),
          signal,
        );
      } catch (error) {
        return {
          output: {},
          exitCode: 0,
          decision: { ...base, verdict: "none", error: messageOf(error) },
        };
      }
      const context = fold.context.length ? fold.context.join("\n") : undefined;
      const specific: Record<string, unknown> = { hookEventName: name };
      if (fold.replaced) {
        specific.updatedToolOutput = fold.result;
        if (toolName.startsWith("mcp__")) specific.updatedMCPToolOutput = fold.result;
      }
      if (context) specific.additionalContext = context;
      const changed = fold.replaced || context !== undefined;
      return {
        output: changed ? { hookSpecificOutput: specific } : {},
        exitCode: 0,
        decision: { ...base, verdict: changed ? "allow" : "none", ...(context ? { context } : {}) },
      };
    }
    case "PostToolUseFailure": {
      const toolName = text(event.tool_name, "tool_name", true) as string;
      const callId = text(event.tool_use_id, "tool_use_id", false) ?? `claude-${Date.now()}`;
      const args = isRecord(event.tool_input) ? event.tool_input : {};
      const base = { event: name, callId, toolName };
      let fold;
      try {
        fold = await abortable(
          session.hooks.decide("tool.error", {
            callId,
            toolName,
            args,
            error: event.error ?? null,
            durationMs: typeof event.duration_ms === "number" ? event.duration_ms : null,
            signal,
            source: CLAUDE_SOURCE,
          }, { signal }),
          signal,
        );
      } catch (error) {
        return {
          output: {},
          exitCode: 0,
          decision: { ...base, verdict: "none", error: messageOf(error) },
        };
      }
      // Claude Code cannot take a recovered result here; the context reaches the model.
      const context = fold.context.length ? fold.context.join("\n") : undefined;
      return context === undefined
        ? { output: {}, exitCode: 0, decision: { ...base, verdict: "none" } }
        : {
          output: { hookSpecificOutput: { hookEventName: name, additionalContext: context } },
          exitCode: 0,
          decision: { ...base, verdict: "allow", context },
        };
    }
    case "UserPromptSubmit": {
      const prompt = text(event.prompt, "prompt", true) as string;
      const fold = new PromptFold();
      try {
        await abortable(
          session.defaultBranch.addMessage(
            { role: "user", content: prompt },
            { signal, [EMIT_RESULTS]: fold.sink } as AddMessageOptions,
          ),
          signal,
        );
      } catch (error) {
        // A handler registered with onFailure "block" (seen by the fold already), a timeout,
        // an abort or another callback's failure: the prompt is blocked (fail closed).
        fold.block(messageOf(error), undefined, true);
      }
      if (fold.reason !== undefined) {
        return {
          output: { decision: "block", reason: fold.reason },
          exitCode: 0,
          decision: {
            event: name,
            verdict: "block",
            reason: fold.reason,
            ...(fold.hook ? { hook: fold.hook } : {}),
            ...(fold.error !== undefined ? { error: fold.error } : {}),
          },
        };
      }
      const context = fold.context.length ? fold.context.join("\n") : undefined;
      return context === undefined
        ? { output: {}, exitCode: 0, decision: { event: name, verdict: "none" } }
        : {
          output: { hookSpecificOutput: { hookEventName: name, additionalContext: context } },
          exitCode: 0,
          decision: { event: name, verdict: "allow", context },
        };
    }
    case "SessionStart":
    case "SessionEnd": {
      const context: string[] = [];
      try {
        if (name === "SessionStart") {
          // Each handler's `{ context }`, in chain order (a failure is reported, as by emit).
          const sink: ResultSink = (outcome, failed) => {
            if (failed || outcome === null || typeof outcome !== "object") return;
            const added = (outcome as { context?: unknown }).context;
            if (typeof added === "string" && added !== "") context.push(added);
          };
          await abortable(
            session.start({ source: event.source ?? null }, {
              signal,
              [EMIT_RESULTS]: sink,
            } as EmitOptions),
            signal,
          );
        } else {
          await abortable(
            session.end({ status: "completed", reason: event.reason ?? null }, { signal }),
            signal,
          );
        }
      } catch (error) {
        return {
          output: {},
          exitCode: 0,
          decision: { event: name, verdict: "none", error: messageOf(error) },
        };
      }
      if (context.length === 0) {
        return { output: {}, exitCode: 0, decision: { event: name, verdict: "none" } };
      }
      const joined = context.join("\n");
      return {
        output: { hookSpecificOutput: { hookEventName: name, additionalContext: joined } },
        exitCode: 0,
        decision: { event: name, verdict: "allow", context: joined },
      };
    }
    default:
      return { output: {}, exitCode: 0, decision: { event: name, verdict: "none" } };
  }
}

/**
 * The fold of a prompt's `message.add` handlers on the protocol path: every handler runs (as
 * for any message); the prompt is blocked when one threw (or timed out) or returned a deny, with
 * the first such handler's reason in chain order; `{ decision: "allow", context }` or
 * `{ context }` adds context. A returned decision is read once; one that is neither an allow nor
 * a deny with a reason blocks too (as a malformed `tool.pre` decision fails closed).
 */
class PromptFold {
  reason: string | undefined = undefined;
  hook: string | undefined = undefined;
  error: string | undefined = undefined;
  readonly context: string[] = [];

  block(reason: string, hook: string | undefined, failed: boolean): void {
    if (this.reason !== undefined) return;
    this.reason = reason;
    this.hook = hook;
    if (failed) this.error = reason;
  }

  readonly sink: ResultSink = (outcome, failed, hook) => {
    if (failed) return this.block(messageOf(outcome), hook, true);
    if (outcome === null || typeof outcome !== "object") return;
    let decision: unknown, reason: unknown, context: unknown;
    try {
      const value = outcome as Record<string, unknown>;
      decision = value.decision;
      reason = value.reason;
      context = value.context;
    } catch (error) {
      return this.block(promptProblem(hook, `reading it threw (${messageOf(error)})`), hook, true);
    }
    if (decision === "deny") {
      if (typeof reason === "string" && reason !== "") return this.block(reason, hook, false);
      return this.block(promptProblem(hook, "a deny needs a non-empty string reason"), hook, true);
    }
    if (decision !== undefined && decision !== "allow") {
      const got = typeof decision === "string" ? JSON.stringify(decision) : typeof decision;
      return this.block(
        promptProblem(hook, `decision must be "allow" or "deny"; got ${got}`),
        hook,
        true,
      );
    }
    if (typeof context === "string" && context !== "") this.context.push(context);
  };
}

function promptProblem(hook: string | undefined, problem: string): string {
  return `Cannot apply message.add decision${hook ? ` of "${hook}"` : ""}: ${problem}`;
}

function deny(
  base: { event: string; callId: string; toolName: string; toolInput?: Record<string, unknown> },
  reason: string,
  hook?: string,
  error?: string,
): ClaudeEventAnswer {
  return {
    output: {
      hookSpecificOutput: {
        hookEventName: base.event,
        permissionDecision: "deny",
        permissionDecisionReason: reason,
      },
    },
    exitCode: 0,
    decision: {
      ...base,
      verdict: "deny",
      reason,
      ...(hook ? { hook } : {}),
      ...(error ? { error } : {}),
    },
  };
}
