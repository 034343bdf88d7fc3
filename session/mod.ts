/**
 * Session composition, `@hookscope/core/session`: the `SessionObserver` (recording, fan-out,
 * gate, persistence), `Session` and `Branch` ownership, branch messages, the session signals,
 * the persistence handlers and message-persistence routing, the agent loop and the model
 * bridge, with the approval types and the limits of the act path. `HookBus` and signals' base
 * class are in `@hookscope/core/hooks`, models in `@hookscope/core/service`, tools in
 * `@hookscope/core/action`, stores in `@hookscope/core/store`.
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

export { BranchOwnershipError } from "../core/errors.ts";
export * from "../core/approval.ts";
export * from "../core/plain_data.ts";
export { MAX_PAYLOAD_DEPTH, PayloadTooDeepError } from "../core/_depth.ts";
export * from "./signal.ts";
export * from "./effects_signal.ts";
export * from "./sanitize.ts";
export * from "./observer.ts";
export * from "./message.ts";
export * from "./branch.ts";
export * from "./session.ts";
export * from "./persist.ts";
export * from "./persist_handlers.ts";
export * from "./act.ts";
export * from "./agent_loop.ts";
export {
  bridgeModelToSession,
  type BridgeOptions,
  type BusOwner,
  type ModelBridge,
} from "./bridge.ts";
export * from "./restore.ts";
export * from "./resume.ts";
export * from "./policy.ts";
export * from "./replay.ts";
