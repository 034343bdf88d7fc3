/**
 * Session composition, `@hookscope/core/session`: the `SessionObserver` (recording, fan-out,
 * gate, persistence), `Session` and `Branch` ownership, branch messages, the session signals and
 * message-persistence routing (ADR-0047 D3).
 *
 * @example A session, a gate and a subscriber
 * ```ts
 * import { MessageAdded, Session } from "@hookscope/core/session";
 * import assert from "node:assert/strict";
 *
 * const session = new Session();
 * const roles: string[] = [];
 * session.observe({ type: MessageAdded }, (signal) => {
 *   roles.push((signal.data as { role: string }).role);
 * });
 * await session.defaultBranch!.addMessage({ role: "user", content: "hi" });
 * await session.drainSignals();
 * assert.deepEqual(roles, ["user"]);
 * ```
 *
 * @module
 */

export * from "./signal.ts";
export * from "./sanitize.ts";
export * from "./observer.ts";
export * from "./message.ts";
export * from "./branch.ts";
export * from "./session.ts";
export * from "../hooks/persist.ts";

// The types this entry's API mentions, so `@hookscope/core/session` documents them too.
export { Element, Signal } from "../core/mod.ts";
export type * from "../core/mod.ts";
export type * from "../hooks/mod.ts";
export type * from "../store/mod.ts";
export type * from "../service/mod.ts";
export type * from "../action/mod.ts";
export * from "./act.ts";
export * from "./agent_loop.ts";
export * from "./bridge.ts";
export * from "./create_agent.ts";
export * from "./restore.ts";
export * from "./resume.ts";
