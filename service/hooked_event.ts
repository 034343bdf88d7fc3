/**
 * `HookedEvent`: the template method that surrounds a provider event with its pre-invocation and
 * post-invocation hooks, for both `invoke()` and `stream()`.
 *
 * @module
 */

import { EventStatus, HookPhaseError, logger, Operation } from "../core/mod.ts";
import type { EntityInit } from "../core/mod.ts";
import { HookEventType } from "./hook_event_type.ts";
import { DEFAULT_HOOK_TIMEOUT_MS, HookEvent } from "./hook_event.ts";
import type { HookRegistry } from "./hook_registry.ts";
import { globalHookLogger } from "./hook_logger.ts";
import { errorText } from "./_util.ts";
import { internals, readerSource, StreamRun } from "./_stream_run.ts";

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
 * const registry = new HookRegistry({ hooks: { pre_invoke: () => { throw new Error("boom"); } } });
 * const event = new Double();
 * event.createPreInvokeHook(registry, { exit: false });
 * await event.invoke();
 * assert.equal(event.status, "failed");
 * assert.equal((event.execution.error as Error).message, "Pre-invoke hook cancelled: boom");
 * assert.equal(event.ran, false);
 * ```
 */
export abstract class HookedEvent extends Operation {
  /** The pre-invocation hook, if attached. */
  preInvokeHook: HookEvent | null = null;
  /** The post-invocation hook, if attached. */
  postInvokeHook: HookEvent | null = null;

  /** Makes a PENDING event. */
  constructor(init?: EntityInit) {
    super(init);
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

  /** The template: pre hook, core, post hook. */
  protected async _invoke(signal: AbortSignal): Promise<unknown> {
    await this.#runPre(signal);
    let response: unknown = null;
    let coreError: unknown = null;
    let failed = false;
    try {
      response = await this._coreInvoke(signal);
    } catch (error) {
      coreError = error;
      failed = true;
    }
    const post = this.postInvokeHook;
    if (post) {
      try {
        await runHook(post, signal);
        if (post.status === EventStatus.FAILED || post.status === EventStatus.CANCELLED) {
          if (!failed) {
            throw new HookPhaseError(
              `Post-invoke hook ${post.status}: ${errorText(post.execution.error)}`,
              { cause: post.execution.error },
            );
          }
        } else if (post.shouldExit) {
          if (!failed) {
            throw post.exitCause ??
              new HookPhaseError("Post-invocation hook requested exit without a cause");
          }
        } else if (post.status === EventStatus.ABORTED) {
          logger.warn("Post-invoke hook aborted; keeping the core result", post.execution.error);
        }
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
    const post = this.postInvokeHook;
    if (!post) return;
    await runHook(post, signal);
    if (post.status !== EventStatus.COMPLETED || post.shouldExit) {
      logger.warn("Post-stream hook failed (data already sent)", post.execution.error);
    }
  }

  async #runPre(signal: AbortSignal): Promise<void> {
    const pre = this.preInvokeHook;
    if (!pre) return;
    try {
      await runHook(pre, signal);
    } catch (error) {
      if (signal.aborted) throw error;
      throw new HookPhaseError(`Pre-invoke hook cancelled: ${errorText(error)}`, { cause: error });
    }
    if (pre.status === EventStatus.FAILED || pre.status === EventStatus.CANCELLED) {
      throw new HookPhaseError(
        `Pre-invoke hook ${pre.status}: ${errorText(pre.execution.error)}`,
        { cause: pre.execution.error },
      );
    }
    if (pre.shouldExit) {
      throw pre.exitCause ??
        new HookPhaseError("Pre-invocation hook requested exit without a cause");
    }
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

/** Invokes a hook event and logs it to the global hook logger, whatever the outcome. */
async function runHook(hook: HookEvent, signal: AbortSignal): Promise<void> {
  try {
    await hook.invoke({ signal });
  } finally {
    try {
      globalHookLogger.log(hook.toJSON());
    } catch (error) {
      logger.warn("Cannot log hook event", error);
    }
  }
}
