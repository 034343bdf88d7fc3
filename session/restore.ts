/**
 * `Session.restore`: a session rebuilt from its store (branches and messages), in this process
 * or any other that opens the same store.
 *
 * @module
 */

import type { Tool } from "../action/mod.ts";
import type { AgentHooks } from "../hooks/mod.ts";
import type { IModel } from "../service/mod.ts";
import type { MessageRecord, SessionStore } from "../store/session_store.ts";
import { loadHistory } from "./_history.ts";
import { Branch, type BranchOptions } from "./branch.ts";
import { createMessage, type Message } from "./message.ts";
import type { Session, SessionOptions } from "./session.ts";

/** What {@linkcode restoreSession} (`Session.restore`) takes besides the store and id. */
export interface RestoreOptions {
  /** The model every restored branch talks to (tools and models are code, not stored). */
  model?: IModel;
  /** Tools registered on every restored branch. */
  tools?: readonly Tool[];
  /** Declarative hook overrides, as for `new Session`. */
  hooks?: AgentHooks;
  /** Where isolated failures go, as for `new Session`. */
  onError?: (error: unknown, where: string) => void;
  /** The observer's `maxEvents` bound. */
  maxEvents?: number;
  /**
   * Per-branch options (model, tools, spec, name) given the branch id and its stored row; they
   * replace `model` and `tools` for that branch. `id` and `system` are ignored: the branch keeps
   * its id and its stored messages.
   */
  branch?: (
    branchId: string,
    row: Record<string, unknown> | undefined,
  ) => BranchOptions | undefined;
}

/**
 * No session with the given id in the store.
 *
 * @example
 * ```ts
 * import { MemoryStore } from "@hookscope/core";
 * import { Session, SessionNotFoundError } from "@hookscope/core/session";
 * import assert from "node:assert/strict";
 *
 * await assert.rejects(Session.restore(new MemoryStore(), "nope"), SessionNotFoundError);
 * ```
 */
export class SessionNotFoundError extends Error {
  /** The id that was looked up. */
  readonly sessionId: string;
  /** Makes the error. */
  constructor(sessionId: string) {
    super(`Cannot restore session: no session ${JSON.stringify(sessionId)} in the store`);
    this.name = "SessionNotFoundError";
    this.sessionId = sessionId;
  }
}

/** A constructor of sessions (`Session` or a subclass). */
export type SessionClass = new (options?: SessionOptions) => Session;

function toMessage(record: MessageRecord): Message {
  return createMessage(
    {
      role: record.role,
      content: record.content,
      sender: record.sender,
      recipient: record.recipient,
    },
    record.branchId,
    { id: record.id, createdAt: record.createdAt },
  );
}

/**
 * Rebuilds a session from a store: the session keeps its id and store, each branch that has
 * messages comes back with its id, name and messages (ids, times and order as stored), and
 * nothing is written while restoring (no message, signal or session row is persisted again).
 * New messages and signals are persisted as usual. Tools and models are code, so they are given
 * in `options`. Used by `Session.restore`.
 *
 * @example Restore a session and go on
 * ```ts
 * import { MemoryStore } from "@hookscope/core";
 * import { Session } from "@hookscope/core/session";
 * import assert from "node:assert/strict";
 *
 * const store = new MemoryStore();
 * const first = new Session({ store });
 * await first.start();
 * await first.defaultBranch.addMessage({ role: "user", content: "hi" });
 * await first.drainSignals();
 *
 * const again = await Session.restore(store, first.id);
 * assert.equal(again.defaultBranch.id, first.defaultBranch.id);
 * assert.deepEqual(again.defaultBranch.messages.map((m) => m.content), ["hi"]);
 * ```
 */
export async function restoreSession(
  SessionCtor: SessionClass,
  store: SessionStore,
  sessionId: string,
  options?: RestoreOptions,
): Promise<Session> {
  if (
    store === null || typeof store !== "object" ||
    typeof (store as { listMessages?: unknown }).listMessages !== "function"
  ) {
    throw new TypeError("Cannot restore session: store must be a SessionStore");
  }
  if (typeof sessionId !== "string" || sessionId === "") {
    throw new TypeError("Cannot restore session: sessionId must be a non-empty string");
  }
  if (options !== undefined && (options === null || typeof options !== "object")) {
    throw new TypeError("Cannot restore session: options must be an object");
  }
  if (options?.branch !== undefined && typeof options.branch !== "function") {
    throw new TypeError("Cannot restore session: branch must be a function");
  }
  const row = await store.getSession(sessionId);
  if (row === undefined) throw new SessionNotFoundError(sessionId);
  const records = await store.listMessages({ sessionId });
  const byBranch = new Map<string, Message[]>();
  for (const record of records) {
    if (record.branchId === null) continue;
    let list = byBranch.get(record.branchId);
    if (list === undefined) byBranch.set(record.branchId, list = []);
    list.push(toMessage(record));
  }
  const init: SessionOptions = { id: sessionId, store, defaultBranch: false };
  if (options?.hooks !== undefined) init.hooks = options.hooks;
  if (options?.onError !== undefined) init.onError = options.onError;
  if (options?.maxEvents !== undefined) init.maxEvents = options.maxEvents;
  if (options?.model !== undefined) init.model = options.model;
  const session = new SessionCtor(init);
  const branches: Branch[] = [];
  for (const [branchId, messages] of byBranch) {
    const stored = await store.getBranch(branchId);
    const branchOptions: BranchOptions = {};
    if (options?.model !== undefined) branchOptions.model = options.model;
    if (options?.tools !== undefined) branchOptions.tools = options.tools;
    if (typeof stored?.agentName === "string") branchOptions.name = stored.agentName;
    const custom = options?.branch?.(branchId, stored);
    if (custom !== undefined) {
      const { id: _id, system: _system, ...rest } = custom;
      Object.assign(branchOptions, rest);
    }
    const branch = new Branch({ ...branchOptions, id: branchId });
    loadHistory(branch, messages);
    branches.push(branch);
  }
  session.includeBranches(branches);
  return session;
}
