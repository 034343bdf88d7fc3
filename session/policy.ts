/**
 * The `Policy` type: hooks registered on a session as one unit (a policy file exports one).
 *
 * @module
 */

import type { Session } from "./session.ts";

/**
 * A policy registers hooks on a session and may return what undoes it. A module used as a
 * policy file (`hookscope hook`, `serve`, `replay`) exports one under the name `policy`. A policy
 * file's `policy` may also be `async` (awaiting its setup before it registers hooks; type it
 * `(session: Session) => Promise<void>`, as `Policy` itself is synchronous): `hookscope hook`,
 * `serve` and `replayDecisions` await it within the decision deadline, and a setup that rejects
 * or does not finish in time fails closed (a `PreToolUse` is denied; a replayed call is `deny`
 * with `error`).
 *
 * @example A policy that denies one tool
 * ```ts
 * import { type Policy, Session } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const policy: Policy = (session) =>
 *   session.hooks.on("tool.pre", ({ toolName }) =>
 *     toolName === "bash" ? { decision: "deny", reason: "no shell here" } : undefined
 *   );
 * const session = new Session();
 * const undo = policy(session);
 * assert.equal(session.hooks.count("tool.pre"), 1);
 * undo?.();
 * assert.equal(session.hooks.count("tool.pre"), 0);
 * ```
 */
export type Policy = (session: Session) => void | (() => void);
