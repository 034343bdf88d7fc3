/**
 * `HookEvent`: one run of a service phase handler with a deadline, a status and an exit decision.
 *
 * @module
 */

import { Operation } from "../core/mod.ts";
import type { EventRunOptions } from "../core/mod.ts";
import type { HookEventType } from "./hook_event_type.ts";
import { isHookEventType, unknownHookType } from "./_phase_keys.ts";
import { HookRegistry } from "./hook_registry.ts";
import { dispatchHook } from "./_dispatch.ts";
import type { AssociatedEventInfo } from "./types.ts";
import { hookRuns } from "./_hook_run.ts";
import { PhaseRun } from "./_phase_run.ts";

/** The default hook deadline, in milliseconds. */
export const DEFAULT_HOOK_TIMEOUT_MS = 30_000;

/** What a {@linkcode HookEvent} is made from. */
export interface HookEventInit {
  /** The registry holding the handler. */
  registry: HookRegistry;
  /** The phase to run. */
  hookType: HookEventType;
  /** The event (pre/post invocation) or event class (pre-create) handed to the handler. */
  eventLike: unknown;
  /** Whether a failure should stop the operation; `null`/absent means `false`. */
  exit?: boolean | null;
  /**
   * The deadline in milliseconds (default 30 000; `Infinity` for none). A value above
   * 2 147 483 647 (about 24.8 days, the largest `setTimeout` delay) also means none, instead of
   * the 1 ms timer the runtimes would silently make of it.
   */
  timeoutMs?: number;
  /**
   * Extra handler params. A legacy `exit: true` here sets the exit for every outcome, as the
   * registry does for a thrown error (including a timeout).
   */
  params?: Record<string, unknown>;
  /** The associated event info, if already known. */
  associatedEventInfo?: AssociatedEventInfo | null;
  /** A fixed id. */
  id?: string;
  /** A fixed creation time. */
  createdAt?: number;
  /** Free-form metadata. */
  metadata?: Record<string, unknown>;
}

/**
 * Runs one service phase handler through its registry, under a deadline combined with the
 * caller's signal.
 *
 * - Success: COMPLETED with the handler's return value. A handler that *returns* an `Error`
 *   instance completes too; the error becomes `execution.error` and `exitCause`, and the response
 *   is `null` (a plain object with `name` and `message` is an ordinary response).
 * - A thrown error: the registry's status (CANCELLED for pre phases, ABORTED for post) and
 *   `shouldExit` = the configured exit; whatever was thrown (an `Error`, a string, …) becomes
 *   `execution.error` and `exitCause`.
 * - The deadline passes: FAILED with a `TimeoutError`, `shouldExit` = the configured exit.
 * - The caller's signal aborts: CANCELLED and the reason is rethrown.
 *
 * Unlike other events it can be invoked again. Associated event info is stamped whatever the
 * outcome.
 *
 * @example A pre-invocation check that times out
 * ```ts
 * import { HookEvent, HookEventType, HookRegistry } from "@hookscope/core/service";
 * import assert from "node:assert/strict";
 *
 * const registry = new HookRegistry();
 * registry.preInvoke((_event, { signal }) =>
 *   new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason)))
 * );
 * const hook = new HookEvent({
 *   registry,
 *   hookType: HookEventType.PreInvocation,
 *   eventLike: { id: "e1", createdAt: 0 },
 *   exit: true,
 *   timeoutMs: 5,
 * });
 * await hook.invoke();
 * assert.equal(hook.status, "failed");
 * assert.equal((hook.execution.error as Error).name, "TimeoutError");
 * assert.equal(hook.shouldExit, true);
 * assert.equal(hook.associatedEventInfo?.eventId, "e1");
 * ```
 */
export class HookEvent extends Operation {
  /** The registry holding the handler. */
  readonly registry: HookRegistry;
  /** The phase this event runs. */
  readonly hookType: HookEventType;
  /** The event or event class handed to the handler. */
  readonly eventLike: unknown;
  /** The configured exit. */
  readonly exit: boolean;
  /** The deadline in milliseconds. */
  readonly timeoutMs: number;
  /** Extra handler params. */
  readonly params: Record<string, unknown>;
  // Everything about the runs (status bookkeeping, exit, associated info) lives in one state
  // object, which a model call's phase hooks use without a HookEvent until one is asked for.
  #state: PhaseRun;

  /** Makes a PENDING hook event; bad input throws a `TypeError`. */
  constructor(init: HookEventInit) {
    if (init === null || typeof init !== "object") {
      throw new TypeError(`Cannot create hook event: init must be an object`);
    }
    if (!(init.registry instanceof HookRegistry)) {
      throw new TypeError(`Cannot create hook event: registry must be a HookRegistry`);
    }
    const hookType = init.hookType;
    if (!isHookEventType(hookType)) throw unknownHookType("Cannot create hook event", hookType);
    const timeoutMs = init.timeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS;
    if (typeof timeoutMs !== "number" || Number.isNaN(timeoutMs) || timeoutMs <= 0) {
      throw new TypeError(
        `Cannot create hook event: timeoutMs must be a positive number; got ${String(timeoutMs)}`,
      );
    }
    if (init.exit !== undefined && init.exit !== null && typeof init.exit !== "boolean") {
      throw new TypeError(`Cannot create hook event: exit must be a boolean or null`);
    }
    if (init.params !== undefined && (init.params === null || typeof init.params !== "object")) {
      throw new TypeError(`Cannot create hook event: params must be an object`);
    }
    // The element reads only its own keys (id, createdAt, metadata).
    super(init);
    this.registry = init.registry;
    this.hookType = hookType;
    this.eventLike = init.eventLike;
    this.exit = init.exit ?? false;
    this.timeoutMs = timeoutMs;
    this.params = { ...init.params };
    this.#state = new PhaseRun(
      this,
      this.execution,
      init.associatedEventInfo ? { ...init.associatedEventInfo } : null,
    );
    this.#state.owner = this;
  }

  /**
   * The event this hook ran for (class, id, creation time), stamped on every run over what was
   * there before. Assigning replaces it.
   */
  get associatedEventInfo(): AssociatedEventInfo | null {
    return this.#state.info;
  }
  set associatedEventInfo(info: AssociatedEventInfo | null) {
    this.#state.info = info;
  }

  /** Whether the operation around this hook should stop. */
  get shouldExit(): boolean {
    return this.#state.shouldExit;
  }

  /** What to raise when stopping: the thrown/returned error, the abort reason or the timeout. */
  get exitCause(): unknown {
    return this.#state.exitCause;
  }

  /** Runs the handler (again, if already run). See the class documentation. */
  override async invoke(options?: EventRunOptions): Promise<void> {
    const pending = this.#state.run(options?.signal);
    if (pending !== undefined) await pending;
  }

  static {
    hookRuns.state = (hook) => hook.#state;
    // The hook event of a phase hook that ran without one: it takes over the run state.
    hookRuns.adopt = (run) => {
      const hook = new HookEvent({
        registry: run.registry,
        hookType: run.hookType,
        eventLike: run.eventLike,
        exit: run.exit,
        timeoutMs: run.timeoutMs,
        params: run.params,
        createdAt: run.createdAt,
        id: run.drawnId,
      });
      Object.assign(hook.execution, run.execution);
      run.execution = hook.execution;
      run.params = hook.params;
      run.owner = hook;
      hook.#state = run;
      return hook;
    };
  }

  /** Runs the handler and returns its raw result (used by the base `stream()`). */
  protected async _invoke(signal: AbortSignal): Promise<unknown> {
    const outcome = await dispatchHook(this.registry, this.eventLike, {
      hookType: this.hookType,
      shouldExit: this.exit,
      signal,
      params: this.params,
    });
    if (outcome.error !== null) throw outcome.error;
    return outcome.result;
  }

  /** A JSON-safe record of this run (no registry, no handler params). */
  override toJSON(): Record<string, unknown> {
    return this.#state.toJSON();
  }
}
