// The console's undo: the checkpoints kept for a session's tool calls (a staged bash run's
// committed change set) and undoing one, as `hookscope undo` does. The coding modules are loaded
// on first use, so a console that never undoes never loads them.

import type { MessageRecord, SessionStore, SignalInsert } from "../store/session_store.ts";
import type { EffectsCommitError } from "../action/coding/effects_error.ts";

/** What an undo restored, for its `ChangesUndone` row. */
export interface UndoRecord {
  readonly sessionId: string;
  readonly callId: string;
  readonly toolName: string;
  /** Who undid it. */
  readonly by: string;
  readonly workspace: string;
  /** Whether the undo was forced past later changes. */
  readonly force: boolean;
  readonly changes: readonly { readonly path: string; readonly kind: string }[];
}

/** The `ChangesUndone` row an undo records in its call's session (the console, `hookscope undo`). */
export function changesUndoneRow(undo: UndoRecord): SignalInsert {
  return {
    sessionId: undo.sessionId,
    kind: "ChangesUndone",
    opId: undo.callId,
    ts: Date.now(),
    payload: {
      callId: undo.callId,
      toolName: undo.toolName,
      by: undo.by,
      workspace: undo.workspace,
      force: undo.force,
      changes: undo.changes.map((c) => ({ path: c.path, kind: c.kind })),
    },
  };
}

/** A checkpoint of one of a session's calls, as the console shows it. */
export interface ConsoleCheckpoint {
  /** The call whose committed change set it undoes. */
  readonly callId: string;
  /** The tool. */
  readonly toolName: string;
  /** The workspace it restores. */
  readonly workspace: string;
  /** When the change set was committed. */
  readonly createdAt: number;
  /** `committed` (can be undone), `undone`, or `preparing` (a commit a killed process left). */
  readonly state: string;
  /** Bytes the checkpoint keeps. */
  readonly bytes: number;
  /** What the change set did. */
  readonly changes: readonly { readonly path: string; readonly kind: string }[];
}

/** Why an undo was refused, or what it did. */
export type UndoOutcome =
  | { readonly ok: true; readonly workspace: string; readonly changes: readonly unknown[] }
  | {
    readonly ok: false;
    readonly status: number;
    readonly why: string;
    readonly error: string;
    /** A `conflict`: the later calls that changed the same paths, newest first. */
    readonly later?: EffectsCommitError["later"];
    /** A `conflict` or `changed`: the paths in question. */
    readonly paths?: readonly string[];
  };

/** The call ids of a session's tool calls, read from its messages. */
export async function sessionCallIds(store: SessionStore, session: string): Promise<Set<string>> {
  const ids = new Set<string>();
  for (const message of await store.listMessages({ sessionId: session })) {
    const id = callIdOf(message);
    if (id !== undefined) ids.add(id);
  }
  return ids;
}

function callIdOf(message: MessageRecord): string | undefined {
  const content = message.content as { callId?: unknown } | null;
  return content !== null && typeof content === "object" && typeof content.callId === "string"
    ? content.callId
    : undefined;
}

/** The checkpoints under `bases` of the session's calls, oldest first. */
export async function sessionCheckpoints(
  store: SessionStore,
  session: string,
  bases: readonly string[] | undefined,
): Promise<ConsoleCheckpoint[]> {
  const { effectsBases, findCheckpoints } = await import(
    "../action/coding/_find_checkpoints.ts"
  );
  const calls = await sessionCallIds(store, session);
  if (calls.size === 0) return [];
  const found = await findCheckpoints(bases ?? effectsBases(), calls);
  return found.map(({ manifest }) => ({
    callId: manifest.callId,
    toolName: manifest.toolName,
    workspace: manifest.workspace,
    createdAt: manifest.createdAt,
    state: manifest.state,
    bytes: manifest.bytes,
    changes: manifest.changes.map((c) => ({ path: c.path, kind: c.kind })),
  }));
}

/**
 * Undoes the committed change set of `callId`, a call of `session`, and records a `ChangesUndone`
 * signal in the session (who, the workspace, what was restored, whether it was forced). Refused
 * (409, `why` from `EffectsCommitError`) when a later call changed the same paths or the
 * committed files changed since, unless `force`; 404 when the call is not the session's or has
 * no checkpoint.
 */
export async function undoCall(
  store: SessionStore,
  session: string,
  callId: string,
  force: boolean,
  by: string,
  bases: readonly string[] | undefined,
): Promise<UndoOutcome> {
  const [{ effectsBases, findCheckpoints }, { undoChanges, EffectsCommitError }] = await Promise
    .all([
      import("../action/coding/_find_checkpoints.ts"),
      import("../action/coding/_commit.ts"),
    ]);
  if (!(await sessionCallIds(store, session)).has(callId)) {
    return {
      ok: false,
      status: 404,
      why: "unknown_call",
      error: `Session ${JSON.stringify(session)} has no call ${JSON.stringify(callId)}`,
    };
  }
  const candidates = await findCheckpoints(bases ?? effectsBases(), new Set([callId]));
  const found = candidates.filter((c) => c.manifest.state === "committed").at(-1) ??
    candidates.at(-1);
  if (found === undefined) {
    return {
      ok: false,
      status: 404,
      why: "unknown_call",
      error: `No checkpoint for call ${JSON.stringify(callId)} (nothing committed, or pruned)`,
    };
  }
  try {
    const changes = await undoChanges(found.store, callId, { force });
    await store.insertSessionSignal(changesUndoneRow({
      sessionId: session,
      callId,
      toolName: found.manifest.toolName,
      by,
      workspace: found.store.workspace,
      force,
      changes,
    })).catch(() => {});
    return { ok: true, workspace: found.store.workspace, changes };
  } catch (error) {
    if (error instanceof EffectsCommitError) {
      return {
        ok: false,
        status: 409,
        why: error.why,
        error: error.message,
        ...(error.later !== undefined ? { later: error.later } : {}),
        ...(error.paths !== undefined ? { paths: error.paths } : {}),
      };
    }
    throw error;
  }
}
