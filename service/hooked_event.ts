/**
 * `HookedEvent`: the template method that surrounds a provider event with its pre-invocation and
 * post-invocation hooks, for both `invoke()` and `stream()`.
 *
 * @module
 */

import {
  EventStatus,
  HookPhaseError,
  isAbortError,
  logger,
  Operation,
  toJsonSafe,
} from "../core/mod.ts";
import type { EntityInit, EventRunOptions } from "../core/mod.ts";
import { neverAborted } from "../core/_abort.ts";
import { durationClock } from "../core/_util.ts";
import { HookEventType } from "./hook_event_type.ts";
import { DEFAULT_HOOK_TIMEOUT_MS, HookEvent } from "./hook_event.ts";
import type { HookRegistry } from "./hook_registry.ts";
import { globalHookLogger } from "./hook_logger.ts";
import { errorText } from "./_util.ts";
import { internals, readerSource, StreamRun } from "./_stream_run.ts";
import { hookRuns } from "./_hook_run.ts";
import { PhaseRun } from "./_phase_run.ts";

/** Options of {@linkcode HookedEvent.createPreInvokeHook} and `createPostInvokeHook`. */
export interface PhaseHookOptions {
  /** Whether a failure of the hook stops the event; `null`/absent means `false`. */
  exit?: boolean | null;
  /** The hook's deadline in milliseconds (default 30 000). */
  timeoutMs?: number;
  /** Extra handler params. */
  params?: Record<string, unknown>;
}

/**
 * An event whose core work runs between a pre-invocation and a post-invocation hook.
 *
 * `invoke()`:
 * 1. The pre hook runs; if it FAILED or was CANCELLED the core never runs (even with
 *    `exit: false`) and the event fails with a `HookPhaseError` ("Pre-invoke hook cancelled:
 *    boom"); if it asks to exit, its cause is thrown.
 * 2. The core runs; its error is held.
 * 3. The post hook runs, also after a core error. FAILED/CANCELLED, or ABORTED with `exit: true`,
 *    fail the event, unless the core already failed: a core error always wins. ABORTED with
 *    `exit: false` keeps the core result.
 *
 * `stream()`: the pre hook runs before the first chunk (a failure errors the consumer's stream
 * before any chunk), chunks pass through with backpressure, and the post hook runs only after the
 * consumer drained the stream normally; a core-stream error or a cancel skips it. A post-stream
 * failure cannot retract delivered chunks and is logged instead.
 *
 * Every hook event that ran is logged to {@linkcode globalHookLogger}.
 *
 * @example A pre hook that blocks the core
 * ```ts
 * import { HookedEvent, HookRegistry } from "@hookscope/core/service";
 * import assert from "node:assert/strict";
 *
 * class Double extends HookedEvent {
 *   ran = false;
 *   protected _coreInvoke(): Promise<unknown> { this.ran = true; return Promise.resolve(42); }
 *   protected _coreStream(): ReadableStream<unknown> { return ReadableStream.from([1, 2]); }
 * }
 * const registry = new HookRegistry({ hooks: { preInvoke: () => { throw new Error("boom"); } } });
 * const event = new Double();
 * event.createPreInvokeHook(registry, { exit: false });
 * await event.invoke();
 * assert.equal(event.status, "failed");
 * assert.equal((event.execution.error as Error).message, "Pre-invoke hook cancelled: boom");
 * assert.equal(event.ran, false);
 * ```
 */
export abstract class HookedEvent extends Operation {
  // A hook attached by `IModel` runs on its run state alone; its HookEvent is made when first
  // read (most calls never read it).
  #pre: Slot | null = null;
  #post: Slot | null = null;

  /** Makes a PENDING event. */
  constructor(init?: EntityInit) {
    super(init);
  }

  /** The pre-invocation hook, if attached. */
  get preInvokeHook(): HookEvent | null {
    const slot = this.#pre;
    return slot instanceof PhaseRun ? this.#pre = hookRuns.adopt!(slot) : slot;
  }
  set preInvokeHook(hook: HookEvent | null) {
    this.#pre = hook;
  }

  /** The post-invocation hook, if attached. */
  get postInvokeHook(): HookEvent | null {
    const slot = this.#post;
    return slot instanceof PhaseRun ? this.#post = hookRuns.adopt!(slot) : slot;
  }
  set postInvokeHook(hook: HookEvent | null) {
    this.#post = hook;
  }

  static {
    hookRuns.attach = (event, pre, post) => {
      event.#pre = pre;
      event.#post = post;
    };
  }

  /**
   * A JSON-safe record: the entity's fields with the two hooks right after `execution`, as when
   * they were plain fields.
   */
  override toJSON(): Record<string, unknown> {
    const base = super.toJSON();
    const out: Record<string, unknown> = {};
    for (const key in base) {
      out[key] = base[key];
      if (key === "execution") {
        out.preInvokeHook = toJsonSafe(this.#pre);
        out.postInvokeHook = toJsonSafe(this.#post);
      }
    }
    return out;
  }

  /** Attaches (replacing) the pre-invocation hook over `registry`'s handler. */
  createPreInvokeHook(registry: HookRegistry, options?: PhaseHookOptions): HookEvent {
    return this.preInvokeHook = phaseHook(this, registry, HookEventType.PreInvocation, options);
  }

  /** Attaches (replacing) the post-invocation hook over `registry`'s handler. */
  createPostInvokeHook(registry: HookRegistry, options?: PhaseHookOptions): HookEvent {
    return this.postInvokeHook = phaseHook(this, registry, HookEventType.PostInvocation, options);
  }

  /** The core work of a request/response run. */
  protected abstract _coreInvoke(signal: AbortSignal): Promise<unknown>;

  /** The core work of a streamed run. */
  protected abstract _coreStream(signal: AbortSignal): ReadableStream<unknown>;

  /**
   * Runs the event once (see `Operation.invoke` for the status rules) through the template below,
   * in one frame: synchronous hooks cost no promise, and the hooks share the event's clock
   * readings. A subclass that replaces `_invoke` gets the base run of its own template.
   */
  override async invoke(options?: EventRunOptions): Promise<void> {
    if (this._invoke !== HookedEvent.prototype._invoke) return await super.invoke(options);
    await this.#invokeTemplate(options?.signal ?? neverAborted(), -1, null);
  }

  static {
    hookRuns.invokeEvent = (event, signal, now, ended) =>
      event.invoke === HookedEvent.prototype.invoke &&
        event._invoke === HookedEvent.prototype._invoke
        ? event.#invokeTemplate(signal ?? neverAborted(), now, ended) as Promise<typeof event>
        : null;
  }

  async #invokeTemplate(
    signal: AbortSignal,
    now: number,
    ended: ((event: this) => void) | null,
  ): Promise<this> {
    const execution = this.execution;
    if (execution.status !== EventStatus.PENDING) {
      ended?.(this);
      return this;
    }
    execution.status = EventStatus.PROCESSING;
    const started = now === -1 ? durationClock() : now;
    // The end of a post hook that settled synchronously is the end of the run too.
    let end = -1;
    try {
      if (signal !== neverAborted() && signal.aborted) throw signal.reason;
      const pre = this.#pre;
      if (pre) {
        const pending = runPre(pre, signal, started);
        if (pending !== undefined) await pending;
      }
      let response: unknown = null;
      let coreError: unknown = null;
      let failed = false;
      try {
        response = await this._coreInvoke(signal);
      } catch (error) {
        coreError = error;
        failed = true;
      }
      const post = this.#post;
      if (post) {
        try {
          const postStarted = durationClock();
          const pending = runHook(post, signal, postStarted);
          if (pending !== undefined) await pending;
          else end = postStarted + (post.execution.durationMs ?? 0);
          checkPost(post, failed);
        } catch (error) {
          if (!failed) throw error;
        }
      }
      if (failed) throw coreError;
      execution.response = response;
      execution.error = null;
      execution.status = EventStatus.COMPLETED;
    } catch (error) {
      execution.response = null;
      execution.error = error;
      if (isAbortError(error, signal)) {
        execution.status = EventStatus.CANCELLED;
        throw error;
      }
      execution.status = EventStatus.FAILED;
    } finally {
      execution.durationMs = (end === -1 ? durationClock() : end) - started;
      ended?.(this);
    }
    return this;
  }

  /** The template: pre hook, core, post hook. Synchronous hooks cost no promise. */
  protected async _invoke(signal: AbortSignal): Promise<unknown> {
    const pre = this.#pre;
    if (pre) {
      const pending = runPre(pre, signal);
      if (pending !== undefined) await pending;
    }
    let response: unknown = null;
    let coreError: unknown = null;
    let failed = false;
    try {
      response = await this._coreInvoke(signal);
    } catch (error) {
      coreError = error;
      failed = true;
    }
    const post = this.#post;
    if (post) {
      try {
        const pending = runHook(post, signal);
        if (pending !== undefined) await pending;
        checkPost(post, failed);
      } catch (error) {
        if (!failed) throw error;
      }
    }
    if (failed) throw coreError;
    return response;
  }

  /** The streamed template: pre hook before the first chunk, post hook after normal exhaustion. */
  protected override _stream(signal: AbortSignal): AsyncIterable<unknown> {
    return this.#streamWithHooks(signal);
  }

  async *#streamWithHooks(signal: AbortSignal): AsyncGenerator<unknown> {
    await this.#runPre(signal);
    const reader = this._coreStream(signal).getReader();
    let exhausted = false;
    try {
      while (true) {
        const next = await reader.read();
        if (next.done) break;
        yield next.value;
      }
      exhausted = true;
    } finally {
      if (exhausted) reader.releaseLock();
      else await reader.cancel().catch(() => {});
    }
    await this.#runPostStream(signal);
  }

  static {
    // IModel.stream's pull source: same lifecycle as `stream()`, without its stream layers.
    internals.streamRun = (event, callerSignal) => (event as HookedEvent).#streamRun(callerSignal);
  }

  #streamRun(callerSignal: AbortSignal | undefined): StreamRun {
    return new StreamRun(this.execution, callerSignal, {
      open: async (signal) => {
        await this.#runPre(signal);
        return internals.coreSource?.(this, signal) ??
          readerSource(this._coreStream(signal).getReader());
      },
      close: (signal) => this.#runPostStream(signal),
    });
  }

  async #runPostStream(signal: AbortSignal): Promise<void> {
    const post = this.#post;
    if (!post) return;
    await runHook(post, signal);
    if (post.execution.status !== EventStatus.COMPLETED || post.shouldExit) {
      logger.warn("Post-stream hook failed (data already sent)", post.execution.error);
    }
  }

  #runPre(signal: AbortSignal): Promise<void> | undefined {
    const pre = this.#pre;
    return pre ? runPre(pre, signal) : undefined;
  }
}

/**
 * Runs the pre hook; `undefined` when it settled synchronously. Throws (or rejects) when the core
 * must not run.
 */
function runPre(pre: Slot, signal: AbortSignal, now?: number): Promise<void> | undefined {
  let pending: Promise<void> | undefined;
  try {
    pending = runHook(pre, signal, now);
  } catch (error) {
    throw preCancelled(error, signal);
  }
  if (pending === undefined) {
    checkPre(pre);
    return undefined;
  }
  return pending.then(() => checkPre(pre), (error) => {
    throw preCancelled(error, signal);
  });
}

/** Throws when a finished post hook fails the event (a core error always wins). */
function checkPost(post: Slot, failed: boolean): void {
  const status = post.execution.status;
  if (status === EventStatus.FAILED || status === EventStatus.CANCELLED) {
    if (!failed) {
      throw new HookPhaseError(
        `Post-invoke hook ${status}: ${errorText(post.execution.error)}`,
        { cause: post.execution.error },
      );
    }
  } else if (post.shouldExit) {
    if (!failed) {
      throw post.exitCause ??
        new HookPhaseError("Post-invocation hook requested exit without a cause");
    }
  } else if (status === EventStatus.ABORTED) {
    logger.warn("Post-invoke hook aborted; keeping the core result", post.execution.error);
  }
}

function preCancelled(error: unknown, signal: AbortSignal): unknown {
  if (signal.aborted) return error;
  return new HookPhaseError(`Pre-invoke hook cancelled: ${errorText(error)}`, { cause: error });
}

function checkPre(pre: Slot): void {
  const status = pre.execution.status;
  if (status === EventStatus.FAILED || status === EventStatus.CANCELLED) {
    throw new HookPhaseError(
      `Pre-invoke hook ${status}: ${errorText(pre.execution.error)}`,
      { cause: pre.execution.error },
    );
  }
  if (pre.shouldExit) {
    throw pre.exitCause ??
      new HookPhaseError("Pre-invocation hook requested exit without a cause");
  }
}

function phaseHook(
  event: HookedEvent,
  registry: HookRegistry,
  hookType: HookEventType,
  options: PhaseHookOptions | undefined,
): HookEvent {
  return new HookEvent({
    registry,
    hookType,
    eventLike: event,
    exit: options?.exit ?? null,
    timeoutMs: options?.timeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS,
    params: options?.params ?? {},
  });
}

/** A phase hook: a HookEvent, or the run state of one not made yet. */
type Slot = HookEvent | PhaseRun;

/**
 * Runs a phase hook and logs it to the global hook logger, whatever the outcome. Returns
 * `undefined` when the hook settled synchronously; throws (or rejects) what `invoke()` would.
 * A HookEvent whose class replaces `invoke` is run through it.
 */
function runHook(slot: Slot, signal: AbortSignal, now?: number): Promise<void> | undefined {
  let pending: Promise<void> | undefined;
  try {
    if (slot instanceof PhaseRun) pending = slot.run(signal, now);
    else if (slot.invoke === HookEvent.prototype.invoke) {
      pending = hookRuns.state!(slot).run(signal, now);
    } else pending = slot.invoke({ signal });
  } catch (error) {
    logHook(slot);
    throw error;
  }
  if (pending === undefined) {
    logHook(slot);
    return undefined;
  }
  return pending.then(() => logHook(slot), (error) => {
    logHook(slot);
    throw error;
  });
}

/** Logs a hook run: as a snapshot rendered when read, unless the hook renders itself. */
function logHook(slot: Slot): void {
  try {
    // A deferred entry is rendered by the logger when read (see `_hook_run.ts`).
    const entry = slot instanceof PhaseRun
      ? slot.entry()
      : slot.toJSON === HookEvent.prototype.toJSON
      ? hookRuns.state!(slot).entry()
      : slot.toJSON();
    globalHookLogger.log(entry as unknown as Record<string, unknown>);
  } catch (error) {
    logger.warn("Cannot log hook event", error);
  }
}
