/**
 * What `hookscope hook` and `hookscope serve` share: answering one Claude Code event in a session
 * of the store (the wire side is `_claude_wire.ts`).
 *
 * @module
 */

import {
  answerClaudeEvent,
  type ClaudeEventAnswer,
  ClaudeEventError,
} from "../claude/answer_event.ts";
import type { Policy } from "../claude/policy.ts";
import { sessionIdProblem } from "../claude/_session_id.ts";
import { Session } from "../session/session.ts";
import { applyPolicy } from "../session/_apply_policy.ts";
import { deadlineSignal } from "../core/_async.ts";
import { StoreConflictError } from "../store/store_errors.ts";
import type { SessionStore } from "../store/session_store.ts";
import type { WriteBehind } from "./_write_behind.ts";

/** Answers one parsed event in the session `session_id` of `store`, with `policy` applied. */
export async function answerInStore(
  store: SessionStore,
  policy: Policy,
  event: unknown,
  timeoutMs: number,
  options?: {
    known?: Set<string>;
    deferRecord?: (recorded: Promise<void>) => void;
    /** Queue the event's writes behind the answer (`serve`); needs `deferRecord`. */
    writeBehind?: WriteBehind;
    /** Ends the wait for the policy (with `timeoutMs` of `Infinity`, the only deadline). */
    signal?: AbortSignal;
  },
): Promise<ClaudeEventAnswer> {
  const id = (event as { session_id?: unknown } | null)?.session_id as string;
  // The id names the session's transcript file and store row: a plain file name only.
  const problem = sessionIdProblem(id);
  if (problem !== undefined) throw new ClaudeEventError(problem);
  const known = options?.known;
  if (known?.has(id)) {
    // This process already made sure the row exists.
  } else if ((await store.getSession(id)) === undefined) {
    try {
      await store.createSession({ id, status: "created", model: "claude-code" } as never);
    } catch (error) {
      if (!(error instanceof StoreConflictError)) throw error;
    }
  }
  if (known) {
    if (known.size >= 10_000) known.clear();
    known.add(id);
  }
  // The session row is written before the answer (once per session and process; a conflict
  // means another process made it); the rest of the event's writes may follow the answer.
  const view = options?.deferRecord ? options.writeBehind?.view() : undefined;
  // No default branch until an event needs one (a UserPromptSubmit): less to make per event.
  const session = new Session({
    id,
    store: view?.store ?? store,
    name: "claude-code",
    defaultBranch: false,
  });
  // One deadline for the policy's setup (an `async` policy is awaited) and its answer.
  const limit = timeoutMs === Infinity ? undefined : deadlineSignal(
    timeoutMs,
    options?.signal,
    () => new Error(`the policy did not answer within ${timeoutMs} ms`),
  );
  const signal = limit?.signal ?? options?.signal;
  let undo: (() => void) | undefined;
  try {
    undo = await applyPolicy(policy, session, Infinity, signal);
    const defer = options?.deferRecord;
    return await answerClaudeEvent(session, event, {
      timeoutMs: signal ? Infinity : timeoutMs,
      // The session answers this event alone: its hook signals can wait for the answer too.
      deferHookSignals: true,
      ...(signal ? { signal } : {}),
      ...(defer
        ? {
          deferRecord: (recorded: Promise<void>) =>
            defer(view ? recorded.then(() => view.settled()) : recorded),
        }
        : {}),
    });
  } finally {
    limit?.done();
    undo?.();
  }
}
