/**
 * `HookBus`: ordered, awaited Session hook dispatch with StopHook and a blocking `tool.pre`.
 *
 * @module
 */

import { StopHook, UnknownHookPointError } from "../core/errors.ts";
import { logger } from "../core/logger.ts";
import type { SignalSink } from "../core/signal.ts";
import type { SessionStore } from "../store/session_store.ts";
import {
  HOOK_POINTS,
  type HookPayloads,
  HookPoint,
  isHookPoint,
  toHookPoint,
} from "./hook_point.ts";
import { HookSignal } from "./hook_signal.ts";
import type { HookOptions } from "./hook_options.ts";

/**
 * What every Session hook handler receives besides its payload.
 *
 * @example
 * ```ts
 * import { HookBus, type HookContext } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * let seen: HookContext | undefined;
 * const bus = new HookBus(null, { sessionId: "s1" });
 * bus.on("session.end", (_payload, context) => { seen = context; });
 * await bus.emit("session.end", { sessionId: "s1" });
 * assert.equal(seen?.sessionId, "s1");
 * assert.equal(seen?.bus, bus);
 * ```
 */
export interface HookContext {
  /** The bus running the chain. */
  readonly bus: HookBus;
  /** The store persistence handlers write to, when the bus was given one. */
  readonly store?: SessionStore;
  /** The owning session's id, when known. */
  readonly sessionId?: string;
}

/**
 * A Session hook handler: sync or async, called with the payload and the context. Throwing
 * {@linkcode StopHook} stops the handlers after it.
 */
export type HookHandler<P extends HookPoint = HookPoint> = (
  payload: HookPayloads[P],
  context: HookContext,
) => unknown;

/** Options for {@linkcode HookBus}. */
export interface HookBusOptions {
  /** The store handed to handlers through their context. */
  store?: SessionStore;
  /** The session id handed to handlers through their context. */
  sessionId?: string;
  /**
   * Where isolated failures go: a non-blocking handler that threw, or an observer that failed
   * to record. Defaults to the library logger at `warn` level.
   */
  onError?: (error: unknown, where: { point: HookPoint; stage: "handler" | "record" }) => void;
}

type AnyHandler = (payload: never, context: HookContext) => unknown;
type Chain = readonly AnyHandler[];

const EMPTY_CHAIN: Chain = Object.freeze([]) as Chain;
const EMPTY_PAYLOAD: Readonly<Record<string, unknown>> = Object.freeze({});
const RESOLVED: Promise<void> = Promise.resolve();
const NOOP = (): void => {};

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return value != null && typeof (value as { then?: unknown }).then === "function";
}

function defaultOnError(
  error: unknown,
  where: { point: HookPoint; stage: "handler" | "record" },
): void {
  logger.warn(
    where.stage === "handler"
      ? `Hook failed: ${where.point}`
      : `HookSignal record failed: ${where.point}`,
    error,
  );
}

function checkSink(observer: unknown): SignalSink | null {
  if (observer === undefined || observer === null) return null;
  if (typeof (observer as { emit?: unknown }).emit !== "function") {
    throw new TypeError(`Cannot bind observer: it must have an emit(event) method`);
  }
  return observer as SignalSink;
}

/**
 * Ordered Session hook dispatch (ADR-0047 D2).
 *
 * - `on()` appends (duplicates run twice) and returns a disposer; `off()` removes the first equal
 *   registration; unknown points throw {@linkcode UnknownHookPointError} before anything changes.
 * - `emit()` runs handlers one after another in registration order, awaiting only what is
 *   thenable. {@linkcode StopHook} stops the rest; any other failure is reported and the next
 *   handler runs. `emit("tool.pre")` is `blockingEmit()`: a failure rejects and stops the chain.
 * - Each emission uses the handler list as it was when the emission began.
 * - After the chain (completed or stopped), a bound observer records a {@linkcode HookSignal};
 *   recording failures are reported, never thrown. `message.add` is never recorded (X9): the
 *   branch emits its own `MessageAdded`.
 *
 * @example Ordered handlers, StopHook and recording
 * ```ts
 * import { HookBus, HookSignal, StopHook } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const recorded: unknown[] = [];
 * const bus = new HookBus({ emit: (signal) => recorded.push(signal) });
 * const order: number[] = [];
 * bus.on("tool.post", () => { order.push(1); });
 * bus.on("tool.post", async () => { order.push(2); throw new StopHook(); });
 * bus.on("tool.post", () => { order.push(3); });
 * await bus.emit("tool.post", { callId: "c", toolName: "t", resultSummary: "", durationMs: 1 });
 * assert.deepEqual(order, [1, 2]);
 * assert.ok(recorded[0] instanceof HookSignal);
 * ```
 */
export class HookBus {
  #chains: Record<HookPoint, Chain>;
  #observer: SignalSink | null;
  #context: HookContext;
  #onError: NonNullable<HookBusOptions["onError"]>;

  /** Makes a bus, optionally bound to an observer and carrying a store and session id. */
  constructor(observer?: SignalSink | null, options?: HookBusOptions) {
    this.#observer = checkSink(observer);
    const chains = {} as Record<HookPoint, Chain>;
    for (const point of HOOK_POINTS) chains[point] = EMPTY_CHAIN;
    this.#chains = chains;
    const context: { bus: HookBus; store?: SessionStore; sessionId?: string } = { bus: this };
    if (options?.store !== undefined) context.store = options.store;
    if (options?.sessionId !== undefined) context.sessionId = options.sessionId;
    this.#context = Object.freeze(context);
    if (options?.onError !== undefined && typeof options.onError !== "function") {
      throw new TypeError(`Cannot create hook bus: onError must be a function`);
    }
    this.#onError = options?.onError ?? defaultOnError;
  }

  /** The observer signals are recorded into, or `null`. */
  get observer(): SignalSink | null {
    return this.#observer;
  }

  /** The context handed to every handler. */
  get context(): HookContext {
    return this.#context;
  }

  /** Binds (or, with `null`, unbinds) the observer; returns the same bus. */
  bind(observer: SignalSink | null): this {
    this.#observer = checkSink(observer);
    return this;
  }

  /** Appends a handler to a point and returns a disposer that removes this registration. */
  on<P extends HookPoint>(
    point: P | string,
    handler: HookHandler<P>,
    _options?: HookOptions,
  ): () => void {
    const p = toHookPoint(point as string, "register hook");
    if (typeof handler !== "function") {
      throw new TypeError(
        `Cannot register hook: handler must be a function; got ${
          handler === null ? "null" : typeof handler
        }`,
      );
    }
    this.#chains[p] = [...this.#chains[p], handler as AnyHandler];
    let disposed = false;
    return () => {
      if (disposed) return;
      disposed = true;
      this.off(p, handler);
    };
  }

  /** Removes the first equal registration; a missing handler is a no-op. */
  off<P extends HookPoint>(point: P | string, handler: HookHandler<P>): void {
    const p = toHookPoint(point as string, "remove hook");
    const chain = this.#chains[p];
    const index = chain.indexOf(handler as AnyHandler);
    if (index === -1) return;
    const next = chain.slice();
    next.splice(index, 1);
    this.#chains[p] = next.length === 0 ? EMPTY_CHAIN : next;
  }

  /** A copy of a point's handlers; changing it does not change the bus. */
  handlersFor<P extends HookPoint>(point: P | string): HookHandler<P>[] {
    return this.#chains[toHookPoint(point as string, "list hooks")].slice() as HookHandler<P>[];
  }

  /** How many handlers a point has. */
  count(point: HookPoint | string): number {
    return this.#chains[toHookPoint(point as string, "count hooks")].length;
  }

  /**
   * Runs a point's chain; any failure other than {@linkcode StopHook} rejects at once and the
   * rest of the chain does not run, and nothing is recorded.
   */
  blockingEmit<P extends HookPoint>(
    point: P | string,
    payload?: HookPayloads[P] | Record<string, unknown>,
  ): Promise<void> {
    if (!isHookPoint(point)) return rejectUnknown(point);
    return this.#run(point, (payload ?? EMPTY_PAYLOAD) as Record<string, unknown>, true);
  }

  /**
   * Runs a point's chain with failures isolated (reported, next handler runs). `tool.pre`
   * delegates to {@linkcode HookBus.blockingEmit}.
   */
  emit<P extends HookPoint>(
    point: P | string,
    payload?: HookPayloads[P] | Record<string, unknown>,
  ): Promise<void> {
    if (!isHookPoint(point)) return rejectUnknown(point);
    return this.#run(
      point,
      (payload ?? EMPTY_PAYLOAD) as Record<string, unknown>,
      point === HookPoint.TOOL_PRE,
    );
  }

  #run(point: HookPoint, payload: Record<string, unknown>, blocking: boolean): Promise<void> {
    const chain = this.#chains[point];
    const context = this.#context;
    for (let i = 0; i < chain.length; i++) {
      let result: unknown;
      try {
        result = (chain[i] as (p: unknown, c: HookContext) => unknown)(payload, context);
      } catch (error) {
        if (error instanceof StopHook) break;
        if (blocking) return Promise.reject(error);
        this.#report(error, point, "handler");
        continue;
      }
      if (isThenable(result)) return this.#runAsync(point, payload, blocking, chain, i, result);
    }
    return this.#record(point, payload);
  }

  async #runAsync(
    point: HookPoint,
    payload: Record<string, unknown>,
    blocking: boolean,
    chain: Chain,
    index: number,
    pending: PromiseLike<unknown>,
  ): Promise<void> {
    const context = this.#context;
    let i = index;
    let current: PromiseLike<unknown> | null = pending;
    for (;;) {
      try {
        if (current !== null) {
          await current;
          current = null;
        }
        i++;
        if (i >= chain.length) break;
        const result = (chain[i] as (p: unknown, c: HookContext) => unknown)(payload, context);
        if (isThenable(result)) current = result;
      } catch (error) {
        current = null;
        if (error instanceof StopHook) break;
        if (blocking) throw error;
        this.#report(error, point, "handler");
      }
    }
    const recorded = this.#record(point, payload);
    if (recorded !== RESOLVED) await recorded;
  }

  #report(error: unknown, point: HookPoint, stage: "handler" | "record"): void {
    try {
      this.#onError(error, { point, stage });
    } catch {
      // A failing error reporter must not turn an isolated failure into a broken emit.
    }
  }

  #record(point: HookPoint, payload: Record<string, unknown>): Promise<void> {
    const observer = this.#observer;
    if (observer === null || point === HookPoint.MESSAGE_ADD) return RESOLVED;
    let result: unknown;
    try {
      result = observer.emit(new HookSignal({ point, payload }));
    } catch (error) {
      this.#report(error, point, "record");
      return RESOLVED;
    }
    if (!isThenable(result)) return RESOLVED;
    return Promise.resolve(result).then(NOOP, (error) => {
      this.#report(error, point, "record");
    });
  }
}

function rejectUnknown(point: unknown): Promise<never> {
  return Promise.reject(new UnknownHookPointError(point, HOOK_POINTS, "emit hook"));
}
