/**
 * Which hook points have a production emit site, kept true as emit sites change.
 *
 * @module
 */

import type { HookPoint } from "./hook_point.ts";

/** Where a point is emitted from. */
export interface HookPointWiring {
  /** Whether production code emits it. */
  readonly wired: boolean;
  /** Whether a throwing handler blocks the operation. */
  readonly blocking: boolean;
  /** The emit site, or why there is none. */
  readonly source: string;
}

/**
 * The emit matrix: which points fire, from where, and which block.
 *
 * @example
 * ```ts
 * import { HOOK_POINT_WIRING } from "@hookscope/core/hooks";
 * import assert from "node:assert/strict";
 *
 * assert.equal(HOOK_POINT_WIRING["tool.pre"].blocking, true);
 * assert.equal(HOOK_POINT_WIRING["artifact.created"].wired, false);
 * ```
 */
export const HOOK_POINT_WIRING: Readonly<Record<HookPoint, HookPointWiring>> = Object.freeze({
  "session.start": { wired: true, blocking: false, source: "Session.start()" },
  "session.end": { wired: true, blocking: false, source: "Session.end()" },
  "branch.create": { wired: true, blocking: false, source: "Session.newBranch()" },
  "api.pre_call": {
    wired: true,
    blocking: false,
    source:
      "bridgeModelToSession() (optional adapter): when a model call starts, before its pre-invoke hook",
  },
  "api.post_call": {
    wired: true,
    blocking: false,
    source: "bridgeModelToSession() (optional adapter): after the model call ended, any status",
  },
  "api.stream_chunk": {
    wired: true,
    blocking: false,
    source:
      "bridgeModelToSession() (optional adapter): per delivered chunk, after the service chunk handler",
  },
  "tool.pre": {
    wired: true,
    blocking: true,
    source: "Branch.act() before ActionManager.invoke()",
  },
  "tool.post": { wired: true, blocking: false, source: "Branch.act() after a successful invoke" },
  "tool.error": {
    wired: true,
    blocking: false,
    source: "Branch.act() on any invocation failure",
  },
  "message.add": {
    wired: true,
    blocking: false,
    source: "Branch.addMessage() when the branch has a session bus",
  },
  "artifact.created": {
    wired: false,
    blocking: false,
    source: "reserved: no emit site until an artifact owner supplies a payload",
  },
  "tool.effects": {
    wired: true,
    blocking: true,
    source:
      "CodingToolkit bash bound to a Branch (staged runs): after the run, before its change set commits",
  },
});
