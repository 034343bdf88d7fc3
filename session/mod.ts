/**
 * Session composition, `@hookscope/core/session`: the `SessionObserver` (recording, fan-out,
 * gate, persistence), `Session` and `Branch` ownership, branch messages, the session signals,
 * the persistence handlers and message-persistence routing, the agent loop and the model
 * bridge. This entry exports the `session/` folder only: import `HookBus` from
 * `@hookscope/core/hooks`, models from `@hookscope/core/service`, tools from
 * `@hookscope/core/action`, stores and core types from `@hookscope/core`.
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
 * await session.defaultBranch.addMessage({ role: "user", content: "hi" });
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
export * from "./persist.ts";
export * from "./persist_handlers.ts";
export * from "./act.ts";
export * from "./agent_loop.ts";
export * from "./bridge.ts";
export * from "./restore.ts";
export * from "./resume.ts";
export * from "./policy.ts";
export * from "./replay.ts";
