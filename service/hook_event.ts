/**
 * `HookEvent`: one run of a service phase handler with a deadline, a status and an exit decision.
 *
 * @module
 */

import { EventStatus, Operation, toJsonSafe } from "../core/mod.ts";
import type { EventRunOptions } from "../core/mod.ts";
import { HOOK_EVENT_TYPES, type HookEventType, toHookEventType } from "./hook_event_type.ts";
import { HookRegistry } from "./hook_registry.ts";
import { callPhase, dispatchHook } from "./_dispatch.ts";
import type { AssociatedEventInfo, HookCallResult } from "./types.ts";
import { anySignal, neverAborted } from "../core/_abort.ts";
import { createDeadline, type Deadline } from "./_deadline.ts";
import { DeferredEntry, hookRuns } from "./_hook_run.ts";
import { className, isCancellation, isErrorLike } from "./_util.ts";
import { durationClock, isThenable } from "../core/_util.ts";

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
  #info: AssociatedEventInfo | null;
  // Whether `#info` still lacks the stamp of the last run: it is applied when first read, so the
  // event's id (a random UUID drawn on first read) is drawn only if someone asks for it.
  #stampPending = false;
  #shouldExit = false;
  #exitCause: unknown = null;

  /** Makes a PENDING hook event; bad input throws a `TypeError`. */
  constructor(init: HookEventInit) {
    if (init === null || typeof init !== "object") {
      throw new TypeError(`Cannot create hook event: init must be an object`);
    }
    if (!(init.registry instanceof HookRegistry)) {
      throw new TypeError(`Cannot create hook event: registry must be a HookRegistry`);
    }
    const hookType = toHookEventType(init.hookType);
    if (hookType === undefined) {
      throw new TypeError(
        `Cannot create hook event: unknown hook type ${
          typeof init.hookType === "string"
            ? JSON.stringify(init.hookType)
            : `(${typeof init.hookType})`
        }; valid types: ${HOOK_EVENT_TYPES.map((t) => `"${t}"`).join(", ")}`,
      );
    }
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
    this.#info = init.associatedEventInfo ? { ...init.associatedEventInfo } : null;
  }

  /**
   * The event this hook ran for (class, id, creation time), stamped on every run over what was
   * there before. Assigning replaces it.
   */
  get associatedEventInfo(): AssociatedEventInfo | null {
    if (this.#stampPending) {
      this.#stampPending = false;
      this.#info = stamp(this.#info, this.eventLike);
    }
    return this.#info;
  }
  set associatedEventInfo(info: AssociatedEventInfo | null) {
    this.#stampPending = false;
    this.#info = info;
  }

  /** Whether the operation around this hook should stop. */
  get shouldExit(): boolean {
    return this.#shouldExit;
  }

  /** What to raise when stopping: the thrown/returned error, the abort reason or the timeout. */
  get exitCause(): unknown {
    return this.#exitCause;
  }

  /** Runs the handler (again, if already run). See the class documentation. */
  override async invoke(options?: EventRunOptions): Promise<void> {
    const pending = this.#run(options?.signal);
    if (pending !== undefined) await pending;
  }

  /**
   * The run itself: settles synchronously (returns `undefined`) when the handler returned a
   * plain value or threw, so a synchronous hook costs no promise; otherwise returns the promise
   * of the rest. Throws (or rejects) what `invoke()` rejects with.
   */
  #run(given: AbortSignal | undefined, now?: number): Promise<void> | undefined {
    const execution = this.execution;
    // A signal that can never abort needs no listener (Event.invoke hands one down by default).
    const caller = given === neverAborted() ? undefined : given;
    // The caller may hand over a clock reading it just took (the event's own start).
    const started = now ?? durationClock();
    execution.status = EventStatus.PROCESSING;
    execution.response = null;
    execution.error = null;
    this.#shouldExit = false;
    this.#exitCause = null;
    this.#stampPending = true;
    const deadline = createDeadline(this.timeoutMs);
    let outcome: HookCallResult | Promise<HookCallResult>;
    try {
      if (caller?.aborted) throw caller.reason;
      let signal = deadline.signal;
      if (caller) {
        if (deadline.follow) deadline.follow(caller);
        else signal = anySignal([caller, deadline.signal]);
      }
      outcome = callPhase(
        this.registry,
        this.hookType,
        this.eventLike,
        this.exit,
        this.params,
        signal,
      );
    } catch (error) {
      this.#end(deadline, started);
      this.#failed(error, caller);
      return undefined;
    }
    if (isThenable(outcome)) {
      deadline.arm();
      return this.#settleLater(outcome, deadline, caller, started);
    }
    try {
      this.#apply(outcome, deadline, caller);
    } catch (error) {
      this.#failed(error, caller);
    } finally {
      this.#end(deadline, started);
    }
    return undefined;
  }

  async #settleLater(
    pending: Promise<HookCallResult>,
    deadline: Deadline,
    caller: AbortSignal | undefined,
    started: number,
  ): Promise<void> {
    try {
      this.#apply(await pending, deadline, caller);
    } catch (error) {
      this.#failed(error, caller);
    } finally {
      this.#end(deadline, started);
    }
  }

  /** Applies the handler's outcome; throws what the run must fail or be cancelled with. */
  #apply(outcome: HookCallResult, deadline: Deadline, caller: AbortSignal | undefined): void {
    const execution = this.execution;
    // The info a phase dispatch reports is the stamp above again: merge it only if it differs.
    const info = outcome.info;
    if (info && !sameStamp(this.associatedEventInfo, info)) {
      this.associatedEventInfo = { ...this.associatedEventInfo, ...info };
    }
    if (caller?.aborted) throw caller.reason;
    if (deadline.signal.aborted && outcome.status === EventStatus.CANCELLED) {
      throw deadline.signal.reason;
    }
    const result = outcome.result;
    this.#shouldExit = outcome.shouldExit;
    if (
      outcome.status === EventStatus.CANCELLED && result === undefined &&
      outcome.error !== undefined
    ) {
      // A cancellation the handler raised by itself: it propagates.
      execution.status = EventStatus.CANCELLED;
      execution.error = outcome.error;
      this.#exitCause = outcome.error;
      throw new CancellationSignal(outcome.error);
    }
    execution.status = outcome.status ?? EventStatus.COMPLETED;
    if (outcome.status !== EventStatus.COMPLETED) {
      // Thrown: whatever was thrown (an Error, a string, …) is the error and the exit cause.
      execution.error = outcome.error;
      this.#exitCause = outcome.error;
    } else if (result instanceof Error) {
      // Returned, not thrown: recorded as the error, the status stays COMPLETED. Only a
      // real Error counts; a plain object that has `name` and `message` is a response.
      execution.error = result;
      this.#exitCause = result;
    } else {
      execution.response = result;
    }
  }

  /** Records a failure (or rethrows a cancellation). */
  #failed(error: unknown, caller: AbortSignal | undefined): void {
    if (error instanceof CancellationSignal) throw error.reason;
    const execution = this.execution;
    execution.response = null;
    execution.error = error;
    this.#exitCause = error;
    if (caller && isCancellation(error, caller)) {
      execution.status = EventStatus.CANCELLED;
      this.#shouldExit = true;
      throw error;
    }
    execution.status = EventStatus.FAILED;
    // The same effective exit the registry applies: a legacy `params.exit: true` counts too.
    this.#shouldExit = this.exit || this.params.exit === true;
  }

  #end(deadline: Deadline, started: number): void {
    deadline.clear();
    this.execution.durationMs = durationClock() - started;
  }

  static {
    hookRuns.run = (hook, signal, now) => hook.#run(signal, now);
    // Hook runs are logged as snapshots rendered on read, unless a subclass renders itself.
    hookRuns.entry = (hook) =>
      hook.toJSON === HookEvent.prototype.toJSON
        ? new HookRunEntry(hook, hook.#shouldExit, hook.#info, hook.#stampPending)
        : null;
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
    return new HookRunEntry(this, this.#shouldExit, this.associatedEventInfo, false).render();
  }
}

/**
 * What a hook run's log record is made of, taken when it ended; rendered (ids drawn, values made
 * JSON-safe) only when read.
 */
class HookRunEntry extends DeferredEntry {
  readonly #hook: HookEvent;
  readonly #status: string;
  readonly #durationMs: number | null;
  readonly #response: unknown;
  readonly #error: unknown;
  readonly #shouldExit: boolean;
  readonly #info: AssociatedEventInfo | null;
  readonly #stampPending: boolean;

  constructor(
    hook: HookEvent,
    shouldExit: boolean,
    info: AssociatedEventInfo | null,
    stampPending: boolean,
  ) {
    super();
    const execution = hook.execution;
    this.#hook = hook;
    this.#status = execution.status;
    this.#durationMs = execution.durationMs;
    this.#response = execution.response;
    this.#error = execution.error;
    this.#shouldExit = shouldExit;
    this.#info = info;
    this.#stampPending = stampPending;
  }

  render(): Record<string, unknown> {
    const hook = this.#hook;
    const error = this.#error;
    return {
      kind: "HookEvent",
      id: hook.id,
      createdAt: hook.createdAt,
      hookType: hook.hookType,
      status: this.#status,
      durationMs: this.#durationMs,
      response: toJsonSafe(this.#response),
      error: error === null
        ? null
        : isErrorLike(error)
        ? { name: error.name, message: error.message }
        : toJsonSafe(error),
      exit: hook.exit,
      shouldExit: this.#shouldExit,
      associatedEventInfo: this.#stampPending ? stamp(this.#info, hook.eventLike) : this.#info,
    };
  }
}

class CancellationSignal {
  readonly reason: unknown;
  constructor(reason: unknown) {
    this.reason = reason;
  }
}

/** `previous` with the class, id and creation time of `target` (a new object each run). */
function stamp(
  previous: AssociatedEventInfo | null,
  target: unknown,
): AssociatedEventInfo {
  const info: AssociatedEventInfo = { ...previous };
  const name = className(target);
  if (name !== undefined) info.eventClass = name;
  if (typeof target === "object" && target !== null) {
    const { id, createdAt } = target as { id?: unknown; createdAt?: unknown };
    if (typeof id === "string") info.eventId = id;
    if (typeof createdAt === "number") info.eventCreatedAt = createdAt;
  }
  return info;
}

function sameStamp(info: AssociatedEventInfo | null, other: AssociatedEventInfo): boolean {
  if (info === null) return false;
  for (const key in other) {
    if (info[key as keyof AssociatedEventInfo] !== other[key as keyof AssociatedEventInfo]) {
      return false;
    }
  }
  return true;
}
