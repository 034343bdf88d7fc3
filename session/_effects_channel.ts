// The act path's effects channel: how a tool's staged run (coding toolkit) reaches the
// session's `tool.effects` handlers, the call's approval path and the audit trail. `runAction`
// builds one per call and hands it to the tool as `ToolContext.effects`.

import {
  type ApprovalAnswer,
  type ApprovalEffects,
  MAX_APPROVAL_CHANGES,
} from "../core/approval.ts";
import { ApprovalRequiredError, ToolDeniedError } from "../core/errors.ts";
import { decideEffects } from "../action/coding/effects_policy.ts";
import { decideOnBus, foldVerdicts } from "../action/coding/_effects_bus.ts";
import type {
  EffectsAnswer,
  ToolEffectsChannel,
  ToolEffectsPayload,
} from "../action/coding/file_change.ts";
import type { ActDeadline } from "./_operation.ts";
import type { ActHost } from "./act.ts";
import { changeData } from "./_effects_data.ts";
import { EffectsCommitted, EffectsDecided, EffectsDiscarded } from "./effects_signal.ts";
import { WouldAsk, WouldDeny } from "./signal.ts";

/** A change-set question as the act path's approval request takes it. */
export interface EffectsQuestion {
  readonly toolName: string;
  readonly callId: string;
  readonly args: Readonly<Record<string, unknown>>;
  readonly reason: string | undefined;
  readonly hook: string | undefined;
  readonly effects: ApprovalEffects;
  readonly expiresAt?: number;
}

/** The act path's side of the channel: what the call's outcome depends on. */
export interface ActEffects extends ToolEffectsChannel {
  /** Set when the change set waits for a person (the call is pending). */
  readonly pending: ApprovalRequiredError | undefined;
  /** Set when a person's rejection ended the run (already recorded as `ToolDenied`). */
  readonly denied: ToolDeniedError | undefined;
  /**
   * Records an ask's `EffectsDecided` that is still held (the tool never asked about it);
   * `undefined` when none is.
   */
  flush(): Promise<void> | undefined;
}

/** What the channel needs of the act path. */
export interface ActEffectsInit {
  readonly host: ActHost;
  /** The agent-loop run of the call (`""` or absent for a direct `act`). */
  readonly runId?: string;
  readonly op: ActDeadline;
  /** The call: its tool, id and the arguments it runs with (frozen). */
  readonly call: {
    readonly toolName: string;
    readonly callId: string;
    readonly args: Readonly<Record<string, unknown>>;
  };
  /**
   * Asks through the call's approval path (records `ApprovalRequested` / `ApprovalAnswered`);
   * `undefined` when `wait` is false and nobody answers inline; rejects with
   * `ApprovalRequiredError` when the call must wait.
   */
  readonly ask: (question: EffectsQuestion, wait: boolean) => Promise<ApprovalAnswer | undefined>;
  /** The stored answer (a resumed run's) that `ask` would apply to the question, if one does. */
  readonly stored: (question: EffectsQuestion) => ApprovalAnswer | undefined;
  /** Records `ToolDenied` and rejects with the `ToolDeniedError` (a rejection that ends the run). */
  readonly deny: (init: {
    toolName: string;
    callId: string;
    reason: string;
    hook: string;
    interrupt: boolean;
    by: "approval";
  }) => Promise<never>;
  /** Emits an audit signal (best effort). */
  readonly emit: (signal: unknown) => Promise<void>;
}

/** Builds the channel of one call. */
export function actEffects(init: ActEffectsInit): ActEffects {
  const { host, op, call } = init;
  let pending: ApprovalRequiredError | undefined;
  let denied: ToolDeniedError | undefined;
  // An ask's EffectsDecided waits for the question (its change set's hash), so that it can say
  // when a stored answer (a resumed run's) applies and nobody is asked again.
  let held: Record<string, unknown> | undefined;
  const flush = async (answered?: ApprovalAnswer): Promise<void> => {
    const data = held;
    if (data === undefined) return;
    held = undefined;
    if (answered !== undefined) {
      const by = answered.by;
      data.answered = Object.freeze({
        approve: answered.approve,
        ...(by !== undefined ? { by } : {}),
        ...(answered.effectsHash !== undefined ? { effectsHash: answered.effectsHash } : {}),
      });
    }
    await init.emit(new EffectsDecided({ data: Object.freeze(data) }));
  };
  const sessionId = host.session?.id;
  const channel: ActEffects = {
    get pending() {
      return pending;
    },
    get denied() {
      return denied;
    },
    flush: () => (held === undefined ? undefined : flush()),
    ...(typeof sessionId === "string" ? { sessionId } : {}),
    ...(init.runId ? { runId: init.runId } : {}),
    async decide(payload, hooks) {
      const full: ToolEffectsPayload = Object.freeze({
        ...payload,
        ...(payload.branchId === undefined ? { branchId: host.id } : {}),
        ...(payload.source === undefined
          ? { source: host.actions.get(call.toolName)?.source ?? { kind: "local" } }
          : {}),
      });
      // The tool's own hooks first, then the session's handlers, folded by the bus as at
      // tool.pre (their options hold; a shadow handler's verdict is recorded, not applied).
      let verdict = await decideEffects(
        hooks,
        full,
        op.signal === undefined ? undefined : { signal: op.signal },
      );
      if (verdict.decision !== "deny") {
        const session = await decideOnBus(host.hooks, full, op.signal);
        for (const shadow of session.shadow) {
          const data: Record<string, unknown> = {
            callId: payload.callId,
            toolName: payload.toolName,
            shadow: true,
          };
          if (shadow.reason !== undefined) data.reason = shadow.reason;
          if (shadow.hook !== undefined) data.hook = shadow.hook;
          data.point = "tool.effects";
          const frozen = Object.freeze(data);
          await init.emit(
            shadow.decision === "deny"
              ? new WouldDeny({ data: frozen })
              : new WouldAsk({ data: frozen }),
          );
        }
        verdict = foldVerdicts(verdict, session.verdict);
      }
      const data: Record<string, unknown> = {
        ...changeData(payload.callId, payload.toolName, payload.changes),
        decision: verdict.decision,
      };
      if (verdict.reason !== undefined) data.reason = verdict.reason;
      if (verdict.hook !== undefined) data.hook = verdict.hook;
      await flush();
      held = data;
      if (verdict.decision !== "ask") await flush();
      return verdict;
    },
    async approve(request, options): Promise<EffectsAnswer> {
      const payload = request.payload;
      const question: EffectsQuestion = {
        toolName: payload.toolName,
        callId: payload.callId,
        // The arguments the call runs with: a resumed call is matched to them by their hash.
        args: call.args,
        reason: request.reason,
        hook: request.hook,
        effects: Object.freeze({
          changes: Object.freeze(
            payload.changes.slice(0, MAX_APPROVAL_CHANGES).map((c) => Object.freeze({ ...c })),
          ),
          count: payload.changes.length,
          hash: request.hash,
        }),
        ...(request.expiresAt !== undefined ? { expiresAt: request.expiresAt } : {}),
      };
      const wait = options?.wait !== false;
      await flush(init.stored(question));
      let answer: ApprovalAnswer | undefined;
      try {
        answer = await init.ask(question, wait);
      } catch (error) {
        // A stored answer that does not apply (a resumed call) when the change set cannot wait:
        // nobody answers it now.
        if (error instanceof ApprovalRequiredError && !wait) answer = undefined;
        else {
          if (error instanceof ApprovalRequiredError) pending = error;
          throw error;
        }
      }
      if (answer === undefined) {
        return {
          approve: false,
          reason: "a person must approve them and nobody can answer now",
        };
      }
      const by = answer.by;
      if (!answer.approve) {
        const reason = `${by === undefined ? "a person" : by} rejected them${
          answer.reason ? `: ${answer.reason}` : ""
        }`;
        if (answer.interrupt === true) {
          try {
            await init.deny({
              toolName: payload.toolName,
              callId: payload.callId,
              reason,
              hook: by === undefined ? "approval" : `approval by ${by}`,
              interrupt: true,
              by: "approval",
            });
          } catch (error) {
            if (error instanceof ToolDeniedError) denied = error;
            throw error;
          }
        }
        return { approve: false, reason, ...(by !== undefined ? { by } : {}) };
      }
      if (answer.effectsHash !== undefined && answer.effectsHash !== request.hash) {
        return {
          approve: false,
          reason: `the answer approves another change set (hash ${
            answer.effectsHash.slice(0, 12)
          }…, this one is ${request.hash.slice(0, 12)}…)`,
        };
      }
      if (answer.updatedArgs !== undefined) {
        return {
          approve: false,
          reason:
            "the approver gave new arguments, but the command has run already: only its change set can be approved or rejected",
        };
      }
      return { approve: true, ...(by !== undefined ? { by } : {}) };
    },
    async settled(outcome) {
      await flush();
      const data: Record<string, unknown> = {
        ...changeData(outcome.callId, outcome.toolName, outcome.changes),
      };
      if (outcome.workspace !== undefined) data.workspace = outcome.workspace;
      if (outcome.checkpoint !== undefined) data.checkpoint = outcome.checkpoint;
      if (outcome.reason !== undefined) data.reason = outcome.reason;
      const frozen = Object.freeze(data);
      await init.emit(
        outcome.applied
          ? new EffectsCommitted({ data: frozen })
          : new EffectsDiscarded({ data: frozen }),
      );
    },
  };
  return channel;
}
