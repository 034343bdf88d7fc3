/**
 * Message-persistence routing: send a branch's messages to one caller-supplied callback through
 * the session's bus instead of the default `persistMessage` handler.
 *
 * Written against structural types: a `Session` and a `Branch` satisfy
 * {@linkcode RoutableSession} and {@linkcode RoutableBranch}.
 *
 * @module
 */

import { type HookBus, type HookHandler, HookPoint } from "../hooks/mod.ts";
import { persistMessage } from "./persist_handlers.ts";

/** What routing needs from a session: its (lazily made) bus. */
export interface RoutableSession {
  /** The session's bus; reading it makes it. */
  readonly hooks: HookBus;
}

/** What routing needs from a branch. */
export interface RoutableBranch<M = unknown> {
  /** The branch id; forwarded messages are filtered by it. */
  readonly id: string;
  /** The bus the branch emits `message.add` on, or `null`. */
  readonly hooks: HookBus | null;
  /** Sets the bus the branch emits on. */
  bindHooks(bus: HookBus | null): unknown;
  /** The branch callback that emits `message.add` on its bus. */
  readonly persistViaBus: (message: M) => unknown;
  /** The branch's message callbacks, in order. */
  readonly messageCallbacks: readonly ((message: M) => unknown)[];
  /** Adds a message callback. */
  onMessageAdded(callback: (message: M) => unknown): unknown;
  /** Removes every registration of a message callback. */
  offMessageAdded(callback: (message: M) => unknown): number;
}

/** The forwarding handlers made so far, per branch and callback. */
const routes = new WeakMap<object, Map<(message: never) => unknown, HookHandler>>();

/**
 * Routes a branch's message persistence to `onMessage`:
 *
 * 1. makes (or gets) the session's bus;
 * 2. removes the default `persistMessage` handler from that bus's `message.add`;
 * 3. binds the bus to the branch;
 * 4. registers the branch's `persistViaBus` callback once (not again if present);
 * 5. registers a `message.add` handler that calls `onMessage(payload.message)` when the payload's
 *    `branchId` is absent or is this branch's id, and returns it.
 *
 * Idempotent per (branch, callback): routing the same pair again returns the same handler
 * and registers nothing twice, so each message is forwarded once. The forwarded message is the
 * payload's `message` (a `MessageRecord` when a Branch emitted it).
 *
 * @example
 * ```ts
 * import { routeMessagePersistence, Session, unrouteMessagePersistence } from "@hookscope/core/session";
 * import assert from "node:assert/strict";
 *
 * const session = new Session();
 * const branch = session.defaultBranch;
 * const saved: unknown[] = [];
 * const onMessage = (message: unknown) => { saved.push(message); };
 * const handler = routeMessagePersistence(session, branch, onMessage);
 * assert.equal(routeMessagePersistence(session, branch, onMessage), handler);
 * await branch.addMessage({ role: "user", content: "hi" });
 * assert.equal(saved.length, 1);
 * unrouteMessagePersistence(branch, handler);
 * await branch.addMessage({ role: "user", content: "again" });
 * assert.equal(saved.length, 1);
 * ```
 */
export function routeMessagePersistence<M>(
  session: RoutableSession,
  branch: RoutableBranch<M>,
  onMessage: (message: M) => unknown,
): HookHandler {
  if (session === null || typeof session !== "object") {
    throw new TypeError("Cannot route message persistence: session must be a Session");
  }
  if (branch === null || typeof branch !== "object" || typeof branch.id !== "string") {
    throw new TypeError("Cannot route message persistence: branch must be a Branch");
  }
  if (typeof onMessage !== "function") {
    throw new TypeError("Cannot route message persistence: onMessage must be a function");
  }
  const bus = session.hooks;
  while (bus.handlersFor(HookPoint.MESSAGE_ADD).includes(persistMessage as HookHandler)) {
    bus.off(HookPoint.MESSAGE_ADD, persistMessage as HookHandler);
  }
  branch.bindHooks(bus);
  if (!branch.messageCallbacks.includes(branch.persistViaBus)) {
    branch.onMessageAdded(branch.persistViaBus);
  }
  let byCallback = routes.get(branch);
  if (byCallback === undefined) {
    byCallback = new Map();
    routes.set(branch, byCallback);
  }
  const existing = byCallback.get(onMessage as (message: never) => unknown);
  if (existing !== undefined && bus.handlersFor(HookPoint.MESSAGE_ADD).includes(existing)) {
    return existing;
  }
  const branchId = branch.id;
  const handler: HookHandler = async (payload) => {
    const p = payload as { branchId?: unknown; message?: unknown };
    if (p.branchId !== undefined && p.branchId !== null && String(p.branchId) !== branchId) return;
    await onMessage(p.message as M);
  };
  bus.on(HookPoint.MESSAGE_ADD, handler);
  byCallback.set(onMessage as (message: never) => unknown, handler);
  return handler;
}

/**
 * Undoes {@linkcode routeMessagePersistence}: removes the forwarding handler from the holder's
 * bus (if it has one) and the holder's `persistViaBus` message callback. Like the reference, it
 * does not restore `persistMessage` and leaves the holder's bus bound.
 *
 * @example
 * ```ts
 * import { routeMessagePersistence, Session, unrouteMessagePersistence } from "@hookscope/core/session";
 * import assert from "node:assert/strict";
 *
 * const session = new Session();
 * const branch = session.defaultBranch;
 * const handler = routeMessagePersistence(session, branch, () => {});
 * unrouteMessagePersistence(branch, handler);
 * assert.equal(session.hooks.handlersFor("message.add").includes(handler), false);
 * assert.equal(branch.messageCallbacks.includes(branch.persistViaBus), false);
 * ```
 */
export function unrouteMessagePersistence<M>(
  holder: RoutableBranch<M>,
  handler: HookHandler,
): void {
  if (holder === null || typeof holder !== "object") {
    throw new TypeError("Cannot unroute message persistence: holder must be a Branch");
  }
  holder.hooks?.off(HookPoint.MESSAGE_ADD, handler);
  holder.offMessageAdded(holder.persistViaBus);
  const byCallback = routes.get(holder);
  if (byCallback !== undefined) {
    for (const [callback, h] of byCallback) if (h === handler) byCallback.delete(callback);
  }
}
