// The run state of one service phase hook (private): what a `HookEvent` records about its runs,
// without the entity record around it. A `HookEvent` keeps one; a model call's own pre/post hooks
// run on one alone, and `HookedEvent` makes their `HookEvent` only when someone asks for it (most
// calls never do: the hook logger gets a snapshot of each run instead).

import { EventStatus, type Execution, toJsonSafe } from "../core/mod.ts";
import { anySignal, neverAborted } from "../core/_abort.ts";
import { durationClock, isThenable } from "../core/_util.ts";
import { callPhase } from "./_dispatch.ts";
import { createDeadline, type Deadline } from "./_deadline.ts";
import { DeferredEntry } from "./_hook_run.ts";
import type { HookEventType } from "./hook_event_type.ts";
import type { HookRegistry } from "./hook_registry.ts";
import type { AssociatedEventInfo, HookCallResult } from "./types.ts";
import { className, isCancellation, isErrorLike } from "./_util.ts";

/** What a phase hook runs with (checked by the caller). */
export interface PhaseSpec {
  readonly registry: HookRegistry;
  readonly hookType: HookEventType;
  readonly eventLike: unknown;
  readonly exit: boolean;
  readonly timeoutMs: number;
  readonly params: Record<string, unknown>;
  readonly createdAt: number;
}

/** The hook event a run state belongs to, once there is one (for its id). */
interface IdSource {
  readonly id: string;
}

/**
 * A phase hook's state across runs, and the run itself. See `HookEvent` for the rules; this is
 * their one implementation.
 */
export class PhaseRun {
  readonly registry: HookRegistry;
  readonly hookType: HookEventType;
  readonly eventLike: unknown;
  readonly exit: boolean;
  readonly timeoutMs: number;
  params: Record<string, unknown>;
  readonly createdAt: number;
  /** The status, duration, response and error of the last run (the hook event's own object). */
  execution: Execution;
  shouldExit = false;
  exitCause: unknown = null;
  #info: AssociatedEventInfo | null;
  // Whether `#info` still lacks the stamp of the last run: it is applied when first read, so the
  // event's id (a random UUID drawn on first read) is drawn only if someone asks for it.
  #stampPending = false;
  /** The hook event this state belongs to, once one exists. */
  owner: IdSource | null = null;
  #id: string | undefined = undefined;

  constructor(
    spec: PhaseSpec,
    execution: Execution | null,
    info: AssociatedEventInfo | null,
  ) {
    this.registry = spec.registry;
    this.hookType = spec.hookType;
    this.eventLike = spec.eventLike;
    this.exit = spec.exit;
    this.timeoutMs = spec.timeoutMs;
    this.params = spec.params;
    this.createdAt = spec.createdAt;
    this.execution = execution ??
      { status: EventStatus.PENDING, durationMs: null, response: null, error: null };
    this.#info = info;
  }

  /** The id of the hook event (drawn on first read, kept by the hook event made later). */
  get id(): string {
    const owner = this.owner;
    return owner !== null ? owner.id : this.#id ??= crypto.randomUUID();
  }

  /** The id if one was drawn before any hook event existed. */
  get drawnId(): string | undefined {
    return this.#id;
  }

  get info(): AssociatedEventInfo | null {
    if (this.#stampPending) {
      this.#stampPending = false;
      this.#info = stamp(this.#info, this.eventLike);
    }
    return this.#info;
  }
  set info(info: AssociatedEventInfo | null) {
    this.#stampPending = false;
    this.#info = info;
  }

  /** A snapshot of the last run for the hook logger, rendered when read. */
  entry(): HookRunEntry {
    return new HookRunEntry(this, this.#info, this.#stampPending);
  }

  /** The JSON record of the last run (what `HookEvent.toJSON()` returns). */
  toJSON(): Record<string, unknown> {
    return new HookRunEntry(this, this.info, false).render();
  }

  /**
   * Runs the handler: settles synchronously (returns `undefined`) when the handler returned a
   * plain value or threw, so a synchronous hook costs no promise; otherwise returns the promise
   * of the rest. Throws (or rejects) what `HookEvent.invoke()` rejects with. `now`, when given,
   * is a clock reading the caller just took (one read fewer).
   */
  run(given: AbortSignal | undefined, now?: number): Promise<void> | undefined {
    const execution = this.execution;
    // A signal that can never abort needs no listener (Event.invoke hands one down by default).
    const caller = given === neverAborted() ? undefined : given;
    const started = now ?? durationClock();
    execution.status = EventStatus.PROCESSING;
    execution.response = null;
    execution.error = null;
    this.shouldExit = false;
    this.exitCause = null;
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
    if (info && !sameStamp(this.info, info)) this.info = { ...this.info, ...info };
    if (caller?.aborted) throw caller.reason;
    if (deadline.signal.aborted && outcome.status === EventStatus.CANCELLED) {
      throw deadline.signal.reason;
    }
    const result = outcome.result;
    this.shouldExit = outcome.shouldExit;
    if (
      outcome.status === EventStatus.CANCELLED && result === undefined &&
      outcome.error !== undefined
    ) {
      // A cancellation the handler raised by itself: it propagates.
      execution.status = EventStatus.CANCELLED;
      execution.error = outcome.error;
      this.exitCause = outcome.error;
      throw new CancellationSignal(outcome.error);
    }
    execution.status = outcome.status ?? EventStatus.COMPLETED;
    if (outcome.status !== EventStatus.COMPLETED) {
      // Thrown: whatever was thrown (an Error, a string, …) is the error and the exit cause.
      execution.error = outcome.error;
      this.exitCause = outcome.error;
    } else if (result instanceof Error) {
      // Returned, not thrown: recorded as the error, the status stays COMPLETED. Only a
      // real Error counts; a plain object that has `name` and `message` is a response.
      execution.error = result;
      this.exitCause = result;
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
    this.exitCause = error;
    if (caller && isCancellation(error, caller)) {
      execution.status = EventStatus.CANCELLED;
      this.shouldExit = true;
      throw error;
    }
    execution.status = EventStatus.FAILED;
    // The same effective exit the registry applies: a legacy `params.exit: true` counts too.
    this.shouldExit = this.exit || this.params.exit === true;
  }

  #end(deadline: Deadline, started: number): void {
    deadline.clear();
    this.execution.durationMs = durationClock() - started;
  }
}

/**
 * What a hook run's log record is made of, taken when it ended; rendered (ids drawn, values made
 * JSON-safe) only when read.
 */
export class HookRunEntry extends DeferredEntry {
  readonly #run: PhaseRun;
  readonly #status: string;
  readonly #durationMs: number | null;
  readonly #response: unknown;
  readonly #error: unknown;
  readonly #shouldExit: boolean;
  readonly #info: AssociatedEventInfo | null;
  readonly #stampPending: boolean;

  constructor(run: PhaseRun, info: AssociatedEventInfo | null, stampPending: boolean) {
    super();
    const execution = run.execution;
    this.#run = run;
    this.#status = execution.status;
    this.#durationMs = execution.durationMs;
    this.#response = execution.response;
    this.#error = execution.error;
    this.#shouldExit = run.shouldExit;
    this.#info = info;
    this.#stampPending = stampPending;
  }

  render(): Record<string, unknown> {
    const run = this.#run;
    const error = this.#error;
    return {
      kind: "HookEvent",
      id: run.id,
      createdAt: run.createdAt,
      hookType: run.hookType,
      status: this.#status,
      durationMs: this.#durationMs,
      response: toJsonSafe(this.#response),
      error: error === null
        ? null
        : isErrorLike(error)
        ? { name: error.name, message: error.message }
        : toJsonSafe(error),
      exit: run.exit,
      shouldExit: this.#shouldExit,
      associatedEventInfo: this.#stampPending ? stamp(this.#info, run.eventLike) : this.#info,
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
function stamp(previous: AssociatedEventInfo | null, target: unknown): AssociatedEventInfo {
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
