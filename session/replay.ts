/**
 * `replayDecisions`: what a policy would have decided for every tool call a session recorded.
 *
 * @module
 */

import { summarize } from "../core/json_safe.ts";
import { deadline } from "../core/_async.ts";
import { neverAborted } from "../core/_abort.ts";
import type { ToolSource } from "../core/tool_source.ts";
import type { SessionStore, SignalRow } from "../store/session_store.ts";
import type { Policy } from "./policy.ts";
import { Session } from "./session.ts";
import { applyPolicy, PolicySetupError } from "./_apply_policy.ts";
import { isRecord } from "../core/_util.ts";

/** A verdict, as recorded or replayed. */
export type ReplayVerdict = "allow" | "ask" | "deny" | "none";

/** One recorded call whose verdict (or rewrite) changes under the replayed policy. */
export interface DecisionChange {
  /** The session. */
  readonly sessionId: string;
  /** The call. */
  readonly callId: string;
  /** The tool. */
  readonly toolName: string;
  /** The arguments as the model sent them. */
  readonly args: Readonly<Record<string, unknown>>;
  /** What was decided then. */
  readonly recorded: ReplayVerdict;
  /** What the policy decides now (`deny` when it failed: fail closed, with `error`). */
  readonly replayed: ReplayVerdict;
  /** The hook that decided now, when the fold names one. */
  readonly hook?: string;
  /** The reason given now. */
  readonly reason?: string;
  /** What the policy threw, or why it did not answer. */
  readonly error?: string;
  /** The arguments the policy rewrites to now, when they differ from what ran then. */
  readonly updatedArgs?: Readonly<Record<string, unknown>>;
  /** When the call was recorded (milliseconds since the epoch). */
  readonly ts: number;
  /** Whether the outcome or the rewrite changed (`false` only with `includeUnchanged`). */
  readonly changed: boolean;
}

const LOCAL_SOURCE: ToolSource = Object.freeze({ kind: "local" });

/** One recorded `tool.pre`, ready to replay. */
interface RecordedCall {
  /** The call. */
  readonly callId: string;
  /** The tool. */
  readonly toolName: string;
  /** The arguments as the model sent them. */
  readonly args: Readonly<Record<string, unknown>>;
  /** The arguments that ran (after rewrites), when known. */
  readonly ran?: Readonly<Record<string, unknown>>;
  /** Where the tool came from, as recorded. */
  readonly source?: ToolSource;
  /** What was decided. */
  readonly recorded: ReplayVerdict;
  /** When. */
  readonly ts: number;
}

/** Options of {@linkcode replayDecisions}. */
export interface ReplayOptions {
  /** Only calls recorded at or after this time (milliseconds since the epoch). */
  since?: number;
  /** Longest wait for the policy per call, in milliseconds (default 10 000). */
  timeoutMs?: number;
  /** Also yield the calls whose outcome does not change, with `changed: false`. */
  includeUnchanged?: boolean;
}

/** The session name a replaying session carries: a hook with side effects checks it and stays quiet. */
export const REPLAY_SESSION_NAME = "hookscope-replay";

/** Reads a session's recorded tool calls, oldest first (hookscope sessions and Claude Code sessions alike). */
async function recordedCalls(
  store: SessionStore,
  sessionId: string,
): Promise<RecordedCall[]> {
  const modelArgs = new Map<string, Record<string, unknown>>();
  for (const message of await store.listMessages({ sessionId })) {
    const content = message.content;
    if (message.role !== "action_request" || !isRecord(content)) continue;
    if (typeof content.callId === "string" && isRecord(content.arguments)) {
      modelArgs.set(content.callId, content.arguments);
    }
  }
  const calls = new Map<
    string,
    {
      toolName: string;
      args?: Record<string, unknown>;
      ran?: Record<string, unknown>;
      source?: ToolSource;
      recorded: ReplayVerdict;
      ts: number;
    }
  >();
  let afterSeq: number | undefined;
  for (;;) {
    const rows: SignalRow[] = await store.listSessionSignals(sessionId, {
      limit: 1000,
      ...(afterSeq === undefined ? {} : { afterSeq }),
    });
    if (rows.length === 0) break;
    afterSeq = rows[rows.length - 1].seq;
    for (const row of rows) {
      const p = row.payload;
      if (row.kind === "HookSignal" && p.point === "tool.pre" && isRecord(p.payload)) {
        const payload = p.payload;
        if (typeof payload.callId !== "string" || typeof payload.toolName !== "string") continue;
        const seen = calls.get(payload.callId);
        if (!seen) {
          calls.set(payload.callId, {
            toolName: payload.toolName,
            ...(isRecord(payload.args) ? { ran: payload.args } : {}),
            ...(isRecord(payload.source) && typeof payload.source.kind === "string"
              ? { source: payload.source as unknown as ToolSource }
              : {}),
            recorded: "none",
            ts: row.ts,
          });
        }
        continue;
      }
      const data = isRecord(p.data) ? p.data : null;
      if (data === null || typeof data.callId !== "string") continue;
      const call = calls.get(data.callId);
      if (row.kind === "ToolDenied" && call) call.recorded = "deny";
      else if (row.kind === "ApprovalRequested" && call && call.recorded !== "deny") {
        call.recorded = "ask";
      } else if (
        row.kind === "ClaudeHookDecision" && data.event === "PreToolUse" &&
        typeof data.toolName === "string"
      ) {
        const verdict = data.verdict;
        calls.set(data.callId, {
          toolName: data.toolName,
          ...(isRecord(data.toolInput) ? { args: data.toolInput } : {}),
          ...(isRecord(data.updatedInput)
            ? { ran: data.updatedInput }
            : isRecord(data.toolInput)
            ? { ran: data.toolInput }
            : {}),
          recorded: verdict === "deny" || verdict === "ask" || verdict === "allow"
            ? verdict
            : "none",
          ts: row.ts,
        });
      }
    }
  }
  const out: RecordedCall[] = [];
  for (const [callId, call] of calls) {
    const args = modelArgs.get(callId) ?? call.args ?? call.ran;
    if (!args) continue;
    const recorded = call.recorded === "none" && call.ran && !sameJson(call.ran, args)
      ? "allow"
      : call.recorded;
    out.push({
      callId,
      toolName: call.toolName,
      args,
      ...(call.ran ? { ran: call.ran } : {}),
      ...(call.source ? { source: call.source } : {}),
      recorded,
      ts: call.ts,
    });
  }
  return out.sort((a, b) => a.ts - b.ts);
}

/** Canonical JSON (sorted keys): equal values give equal text. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (isRecord(value)) {
    return `{${
      Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(",")
    }}`;
  }
  return JSON.stringify(value) ?? "null";
}

function sameJson(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

/** allow and none both let the call run: they are the same outcome. */
function outcome(verdict: ReplayVerdict): "run" | "ask" | "deny" {
  return verdict === "allow" || verdict === "none" ? "run" : verdict;
}

function within<T>(work: Promise<T>, ms: number): Promise<T> {
  return deadline(
    work,
    ms,
    undefined,
    () => new Error(`the policy did not answer within ${ms} ms`),
  );
}

/**
 * Re-evaluates every recorded `tool.pre` of a session under `policy`, with the arguments as the
 * model sent them, and yields each call whose outcome changes (deny, ask, or runs — `allow` and
 * no opinion both run) or whose rewritten arguments differ from what ran. Nothing runs and nothing
 * is written: the policy is applied to a fresh session without a store, tools or model, named
 * {@linkcode REPLAY_SESSION_NAME}, so a hook with side effects can tell (`session.name`) and stay
 * quiet. A policy that throws or does not answer gives `replayed: "deny"` (fail closed) with
 * `error`, and the replay goes on. An `async` policy is awaited before the first call (within
 * `timeoutMs`); a setup that rejects or does not finish gives every call `replayed: "deny"` with
 * its `PolicySetupError` message as `error`.
 *
 * @example A stricter policy over a recorded session
 * ```ts
 * import { MemoryStore, replayDecisions, Session, Tool } from "@hookscope/core";
 * import { z } from "zod";
 * import assert from "node:assert/strict";
 *
 * const store = new MemoryStore();
 * const session = new Session({ store });
 * await session.start();
 * session.defaultBranch.actions.register(new Tool({
 *   name: "bash", description: "run", inputSchema: z.object({ command: z.string() }),
 *   execute: ({ command }: { command: string }) => `ran ${command}`,
 * }));
 * await session.defaultBranch.act({ function: "bash", arguments: { command: "curl example.test" } });
 * await session.drainSignals();
 * const changes = [];
 * for await (const change of replayDecisions(store, session.id, (s) =>
 *   s.hooks.on("tool.pre", ({ args }) =>
 *     String(args.command).startsWith("curl") ? { decision: "deny", reason: "no network" } : undefined
 *   ))) changes.push(change);
 * assert.equal(changes.length, 1);
 * assert.equal(changes[0].recorded, "none");
 * assert.equal(changes[0].replayed, "deny");
 * ```
 */
export async function* replayDecisions(
  store: SessionStore,
  sessionId: string,
  policy: Policy | ((session: Session) => PromiseLike<void | (() => void)>),
  options?: ReplayOptions,
): AsyncGenerator<DecisionChange, void, undefined> {
  if (typeof policy !== "function") throw new TypeError("Cannot replay: policy must be a function");
  const timeoutMs = options?.timeoutMs ?? 10_000;
  const calls = await recordedCalls(store, sessionId);
  const session = new Session({ name: REPLAY_SESSION_NAME, defaultBranch: false });
  let undo: (() => void) | undefined;
  let setupError: string | undefined;
  try {
    undo = await applyPolicy(policy, session, timeoutMs);
  } catch (error) {
    // An `async` policy whose setup failed has not registered its hooks: every call fails closed.
    if (!(error instanceof PolicySetupError)) throw error;
    setupError = error.message;
  }
  try {
    for (const call of calls) {
      if (options?.since !== undefined && call.ts < options.since) continue;
      const base = {
        sessionId,
        callId: call.callId,
        toolName: call.toolName,
        args: call.args,
        recorded: call.recorded,
        ts: call.ts,
      };
      if (setupError !== undefined) {
        yield { ...base, replayed: "deny", error: setupError, changed: call.recorded !== "deny" };
        continue;
      }
      let fold;
      try {
        fold = await within(
          session.hooks.decide("tool.pre", {
            toolName: call.toolName,
            callId: call.callId,
            args: call.args,
            argsSummary: summarize(call.args),
            signal: neverAborted(),
            source: call.source ?? LOCAL_SOURCE,
          }),
          timeoutMs,
        );
      } catch (error) {
        yield {
          ...base,
          replayed: "deny",
          error: (error as Error)?.message ?? String(error),
          changed: call.recorded !== "deny",
        };
        continue;
      }
      if (fold.error !== undefined) {
        const error = (fold.error as Error)?.message ?? String(fold.error);
        yield {
          ...base,
          replayed: "deny",
          error,
          ...(fold.errorHook ? { hook: fold.errorHook } : {}),
          changed: call.recorded !== "deny",
        };
        continue;
      }
      const replayed = fold.verdict;
      const final = fold.updatedArgs ?? call.args;
      const rewriteChanged = outcome(replayed) === "run" && call.ran !== undefined &&
        !sameJson(final, call.ran);
      const changed = outcome(replayed) !== outcome(call.recorded) || rewriteChanged;
      if (!changed && !options?.includeUnchanged) continue;
      yield {
        ...base,
        replayed,
        ...(fold.hook ? { hook: fold.hook } : {}),
        ...(fold.reason ? { reason: fold.reason } : {}),
        ...(rewriteChanged || (fold.updatedArgs && !sameJson(final, call.args))
          ? { updatedArgs: final }
          : {}),
        changed,
      };
    }
  } finally {
    if (typeof undo === "function") undo();
  }
}
