/**
 * Per-registration options of a Session hook handler.
 *
 * @module
 */

/**
 * How one handler is registered with `HookBus.on(point, handler, options)`. Options are resolved
 * once, at registration; a chain registered without options costs what it always did.
 *
 * @example A guard that runs first, only for bash, with a short deadline
 * ```ts
 * import { HookBus, type HookOptions } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const bus = new HookBus();
 * const options: HookOptions = { priority: 10, match: "bash", timeoutMs: 2_000, name: "no-rm" };
 * bus.on("tool.pre", () => undefined, options);
 * assert.equal(bus.count("tool.pre"), 1);
 * ```
 */
export interface HookOptions {
  /** Higher runs first; ties keep registration order. Default `0`. */
  priority?: number;
  /**
   * `tool.*` points only: a glob on `toolName` (`*` any run of characters, `?` one), a RegExp
   * tested on `toolName`, or a predicate on the payload. A handler that does not match is skipped.
   */
  match?: string | RegExp | ((payload: unknown) => boolean);
  /** Remove the handler after its first run. */
  once?: boolean;
  /** Remove the handler when this signal aborts. */
  signal?: AbortSignal;
  /**
   * Longest wait for this handler, in milliseconds (default 30 000). A timed-out `tool.pre`
   * handler is a deny unless `onFailure` is `"continue"`.
   */
  timeoutMs?: number;
  /**
   * What a throw or timeout of this handler means: `"block"` (default at `tool.pre`) denies the
   * call; `"continue"` (default elsewhere) reports it and runs the next handler.
   */
  onFailure?: "continue" | "block";
  /**
   * `"shadow"`: the handler runs and its verdict is recorded as a `WouldDeny` / `WouldAsk` signal,
   * but never applied (no rewrite, no deny, no ask). Default `"enforce"`.
   */
  mode?: "enforce" | "shadow";
  /** Shown in signals, errors and the CLI (default: the function's name). */
  name?: string;
}
