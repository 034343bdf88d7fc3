/**
 * The errors of the Session hook scope: an unknown point, a malformed declarative config, an
 * unknown handler name, the `StopHook` control-flow signal and a handler that missed its
 * deadline. (The denial and approval errors are shared with the other scopes and stay in
 * `core/errors.ts`.)
 *
 * @module
 */

import type { HookPoint } from "./hook_point.ts";

/**
 * A string is not one of the hook point values.
 *
 * @example
 * ```ts
 * import { UnknownHookPointError } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const error = new UnknownHookPointError("SESSION_START", ["session.start"]);
 * assert.ok(error instanceof RangeError);
 * assert.equal(error.point, "SESSION_START");
 * ```
 */
export class UnknownHookPointError extends RangeError {
  /** The rejected value. */
  readonly point: unknown;
  /** The accepted values. */
  readonly valid: readonly string[];
  /** Makes the error; `action` names what was attempted ("register hook", "emit", …). */
  constructor(point: unknown, valid: readonly string[], action = "use hook point") {
    super(
      `Cannot ${action}: unknown point ${describeValue(point)}; valid points: ${
        valid.map((v) => `"${v}"`).join(", ")
      }`,
    );
    this.name = "UnknownHookPointError";
    this.point = point;
    this.valid = valid;
  }
}

/**
 * A declarative hook configuration is malformed.
 *
 * @example
 * ```ts
 * import { HookConfigError } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const error = new HookConfigError("hooks.session.start must be an array of handler names; got string");
 * assert.ok(error instanceof TypeError);
 * ```
 */
export class HookConfigError extends TypeError {
  /** Makes the error. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "HookConfigError";
  }
}

/**
 * `resolveHandler` found no handler under a name.
 *
 * @example
 * ```ts
 * import { UnknownHandlerError } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const error = new UnknownHandlerError("nope", ["persistMessage"]);
 * assert.deepEqual(error.registered, ["persistMessage"]);
 * ```
 */
export class UnknownHandlerError extends Error {
  /** The name that missed. */
  readonly handlerName: string;
  /** The registered names, sorted. */
  readonly registered: readonly string[];
  /** Makes the error. */
  constructor(handlerName: string, registered: readonly string[]) {
    const sorted = [...registered].sort();
    super(
      `Unknown hook handler ${describeValue(handlerName)}; registered: ${
        sorted.map((n) => `"${n}"`).join(", ")
      }`,
    );
    this.name = "UnknownHandlerError";
    this.handlerName = handlerName;
    this.registered = sorted;
  }
}

/**
 * Thrown by a Session hook handler to stop the handlers after it. It never surfaces to the emitter.
 *
 * @example
 * ```ts
 * import { HookBus, StopHook } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const bus = new HookBus();
 * const ran: string[] = [];
 * bus.on("session.start", () => { ran.push("a"); throw new StopHook(); });
 * bus.on("session.start", () => { ran.push("b"); });
 * await bus.emit("session.start", { sessionId: "s1" });
 * assert.deepEqual(ran, ["a"]);
 * ```
 */
export class StopHook extends Error {
  /** Makes the control-flow signal. */
  constructor(message = "Hook chain stopped") {
    super(message);
    this.name = "StopHook";
  }
}

/**
 * A Session hook handler did not settle within its deadline.
 *
 * @example
 * ```ts
 * import { HookTimeoutError } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const error = new HookTimeoutError("tool.pre", 30_000, "slowGuard");
 * assert.equal(error.message, 'Hook "slowGuard" at tool.pre did not settle within 30000 ms');
 * ```
 */
export class HookTimeoutError extends Error {
  /** The hook point. */
  readonly point: HookPoint;
  /** The handler's name, when known. */
  readonly hook?: string;
  /** The deadline that passed. */
  readonly timeoutMs: number;
  /** Makes the error. */
  constructor(point: HookPoint, timeoutMs: number, hook?: string, options?: ErrorOptions) {
    super(
      `Hook ${
        hook ? `${describeValue(hook)} ` : ""
      }at ${point} did not settle within ${timeoutMs} ms`,
      options,
    );
    this.name = "HookTimeoutError";
    this.point = point;
    if (hook !== undefined && hook !== "") this.hook = hook;
    this.timeoutMs = timeoutMs;
  }
}

/** Quotes strings and names other values' types, for error messages. */
function describeValue(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (value === null) return "null";
  return `(${typeof value})`;
}
