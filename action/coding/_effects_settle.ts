/**
 * Private: what happens to a staged run's change set once it is read. The `tool.effects` hooks
 * decide through the call's {@linkcode ToolEffectsChannel} (a session's act path, or the
 * toolkit's own hooks outside one); an ask goes to a person through the same channel; only an
 * allow, no opinion or an approval commits it (with a checkpoint), everything else discards it.
 * An ask that must wait for a later answer keeps the staged layer (see `_pending.ts`) and rejects
 * with the channel's `ApprovalRequiredError`.
 *
 * @module
 */

import { ApprovalRequiredError } from "../../core/errors.ts";
import { type ChangeSet, changeSetHash } from "./_changes.ts";
import { commitChanges, EffectsCommitError, type EffectsStore } from "./_commit.ts";
import { layerBytes } from "./_pending.ts";
import type {
  FileChange,
  ToolEffectsChannel,
  ToolEffectsHook,
  ToolEffectsPayload,
} from "./file_change.ts";

/** The change-set entries shown in a refusal (at most this many). */
const SHOWN_CHANGES = 20;

/** The entries of a change set as lines (`kind path`), the first 20 and a count of the rest. */
export function describeChanges(changes: readonly FileChange[]): string {
  const lines = changes.slice(0, SHOWN_CHANGES).map((c) =>
    `${c.kind} ${c.path}${c.kind === "symlink" && c.target !== undefined ? ` -> ${c.target}` : ""}`
  );
  if (changes.length > SHOWN_CHANGES) lines.push(`… ${changes.length - SHOWN_CHANGES} more`);
  return lines.join("\n");
}

/** What the settle step needs. */
export interface SettleRequest {
  /** The workspace's effects store. */
  readonly store: EffectsStore;
  /** The change set, read from `upper` against the workspace. */
  readonly set: ChangeSet;
  /** The workspace state the set was read against (`lowerState`). */
  readonly lower: readonly string[];
  /** What the hooks are given. */
  readonly payload: ToolEffectsPayload;
  /** Where they decide. */
  readonly channel: ToolEffectsChannel;
  /** The tool's own `tool.effects` hooks (from its specs). */
  readonly hooks: readonly ToolEffectsHook[];
  /** The upper layer the set was read from. */
  readonly upper: string;
  /**
   * Keeps the layer for a later answer (moves it away; `undefined`: it cannot be kept, an ask is
   * then answered inline or not at all).
   */
  readonly keep?: (expiresAt: number, effectsHash: string) => Promise<void>;
  /** How long a kept layer waits for an answer, in ms. */
  readonly pendingTtlMs: number;
  /** The cap on all kept layers, in bytes (a larger layer is not kept). */
  readonly maxPendingBytes: number;
  /** The expiry of a layer kept earlier for this call (a resumed ask keeps it). */
  readonly expiresAt?: number;
}

/** What became of the change set. */
export type Settled =
  | { readonly applied: true; readonly checkpoint?: string }
  | { readonly applied: false; readonly reason: string; readonly decision?: string };

/**
 * Decides on a read change set and commits or discards it. Rejects with the channel's
 * `ApprovalRequiredError` after keeping the layer, or with its `ToolDeniedError` when a person's
 * rejection ends the run; resolves otherwise.
 */
export async function settleChanges(request: SettleRequest): Promise<Settled> {
  const { store, set, payload, channel } = request;
  const outcome = async (applied: boolean, extra: { reason?: string; checkpoint?: string }) => {
    await channel.settled({
      toolName: payload.toolName,
      callId: payload.callId,
      applied,
      workspace: store.workspace,
      changes: set.changes,
      ...extra,
    }).catch(() => {});
  };
  if (set.plan.length === 0) return { applied: true };
  const verdict = await channel.decide(payload, request.hooks);
  if (verdict.decision === "deny") {
    const reason = verdict.reason ?? "a tool.effects hook denied them";
    await outcome(false, { reason });
    return { applied: false, reason, decision: "deny" };
  }
  if (verdict.decision === "ask") {
    const hash = await changeSetHash(set, request.lower);
    let keepable = request.keep !== undefined;
    let tooLarge = "";
    if (keepable && request.expiresAt === undefined) {
      const bytes = await layerBytes(request.upper);
      if (bytes > request.maxPendingBytes) {
        keepable = false;
        tooLarge =
          ` (its staged layer of ${bytes} bytes is more than maxPendingBytes, ${request.maxPendingBytes}, so it cannot wait for a later answer)`;
      }
    }
    const expiresAt = keepable ? request.expiresAt ?? Date.now() + request.pendingTtlMs : undefined;
    let answer;
    try {
      answer = await channel.approve({
        payload,
        hash,
        ...(verdict.reason !== undefined ? { reason: verdict.reason } : {}),
        ...(verdict.hook !== undefined ? { hook: verdict.hook } : {}),
        ...(expiresAt !== undefined ? { expiresAt } : {}),
      }, { wait: keepable });
    } catch (error) {
      if (error instanceof ApprovalRequiredError && keepable && expiresAt !== undefined) {
        await request.keep!(expiresAt, hash);
      } else {
        await outcome(false, { reason: (error as Error)?.message ?? String(error) });
      }
      throw error;
    }
    if (!answer.approve) {
      const reason = `${answer.reason ?? "a person rejected them"}${
        verdict.reason ? ` (asked because: ${verdict.reason})` : ""
      }${tooLarge}`;
      await outcome(false, { reason });
      return { applied: false, reason, decision: "ask" };
    }
  }
  try {
    const checkpoint = await commitChanges(store, {
      callId: payload.callId,
      toolName: payload.toolName,
      changes: set.changes,
      plan: set.plan,
      lower: request.lower,
      ...(channel.sessionId !== undefined ? { sessionId: channel.sessionId } : {}),
    });
    await outcome(true, { checkpoint });
    return { applied: true, checkpoint };
  } catch (error) {
    if (!(error instanceof EffectsCommitError)) throw error;
    await outcome(false, { reason: error.message });
    return { applied: false, reason: error.message };
  }
}
