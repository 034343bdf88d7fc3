/**
 * `HookBus`: ordered, awaited Session hook dispatch with StopHook and a blocking `tool.pre`.
 *
 * @module
 */

import { HookTimeoutError, StopHook, UnknownHookPointError } from "../core/errors.ts";
import { deepFrozenCopy, isPlainObject, plainDataCopy, samePlainData } from "../core/_freeze.ts";
import { RECORD, RECORD_HOOK } from "../core/_record.ts";
import { isThenable } from "../core/_util.ts";
import { race, TIMED_OUT } from "../core/_race.ts";
import { globMatcher } from "../core/_glob.ts";
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
import { TOOL_PRE_PASSES, UnsettledArgumentsError } from "./decision.ts";

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
  /** Aborts when the emission is abandoned (the act path's abort or deadline). */
  readonly signal?: AbortSignal;
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

/** One registration, resolved at `on()`. */
interface Entry {
  readonly handler: AnyHandler;
  readonly priority: number;
  readonly match: ((payload: Record<string, unknown>) => boolean) | null;
  readonly once: boolean;
  readonly timeoutMs: number;
  readonly onFailure: "continue" | "block" | null;
  readonly shadow: boolean;
  readonly name: string | undefined;
  /** Whether this entry needs the general (option-aware) emission path. */
  readonly special: boolean;
  dispose: (() => void) | null;
}
type Entries = readonly Entry[];

/** Registration bookkeeping of one point. */
interface PointState {
  /** The epoch the point's arrays were copied in (see `HookBus#writable`). */
  owned: number;
  /** How many entries have a non-zero priority. */
  ranked: number;
  /** How many entries need the option-aware path. */
  specials: number;
  /** How many handlers are not `async` functions. */
  syncs: number;
}

const EMPTY_CHAIN: Chain = Object.freeze([]) as Chain;
const EMPTY_ENTRIES: Entries = Object.freeze([]) as Entries;
const EMPTY_PAYLOAD: Readonly<Record<string, unknown>> = Object.freeze({});
const RESOLVED: Promise<void> = Promise.resolve();
const NOOP = (): void => {};

/** The default deadline of one Session hook handler, in milliseconds. */
export const SESSION_HOOK_TIMEOUT_MS = 30_000;

/** Options of one emission (`emit`, `blockingEmit`, `decide`). */
export interface EmitOptions {
  /**
   * Aborts the emission: a pending handler is abandoned and the emission rejects with the
   * signal's reason. Handlers see it as `context.signal`.
   */
  signal?: AbortSignal;
}

/** One shadow-mode verdict that was recorded, not applied. */
export interface ShadowVerdict {
  /** `"deny"` or `"ask"` (a shadow throw or timeout counts as a deny). */
  readonly decision: "deny" | "ask";
  /** Why. */
  readonly reason?: string;
  /** The handler's name, when known. */
  readonly hook?: string;
}

/** The folded outcome of one `tool.pre` chain (see {@linkcode HookBus.decide}). */
export interface ToolPreFold {
  /** deny > ask > allow > none (no handler had an opinion). */
  readonly verdict: "none" | "allow" | "ask" | "deny";
  /** The arguments after every applied rewrite (deep-frozen), or `undefined` when none. */
  readonly updatedArgs: Readonly<Record<string, unknown>> | undefined;
  /** The deny or ask reason. */
  readonly reason?: string;
  /** The handler that denied or asked, when named. */
  readonly hook?: string;
  /** A deny asked to end the agent run. */
  readonly interrupt: boolean;
  /** `context` strings of the allow decisions, in chain order. */
  readonly context: readonly string[];
  /** Shadow-mode verdicts, in chain order. */
  readonly shadow: readonly ShadowVerdict[];
  /**
   * What a blocking handler threw (or the `HookTimeoutError` of one that did not settle): the
   * act path rejects with it. `undefined` when nothing failed.
   */
  readonly error?: unknown;
  /** The name of the handler that failed, when `error` is set. */
  readonly errorHook?: string;
}

/** The folded outcome of one `tool.post` chain (see {@linkcode HookBus.decide}). */
export interface ToolPostFold {
  /** Whether a handler replaced the result. */
  readonly replaced: boolean;
  /** The result after every replacement (the original when none). */
  readonly result: unknown;
  /** `context` strings, in chain order. */
  readonly context: readonly string[];
}

const NO_STRINGS: readonly string[] = Object.freeze([]);
const NO_SHADOW: readonly ShadowVerdict[] = Object.freeze([]);
// Created on first use, not at module load.
let NO_PRE_PROMISE: Promise<ToolPreFold> | null = null;
const NO_PRE_DECISION: ToolPreFold = Object.freeze({
  verdict: "none",
  updatedArgs: undefined,
  interrupt: false,
  context: NO_STRINGS,
  shadow: NO_SHADOW,
});

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
 * Ordered Session hook dispatch.
 *
 * - `on()` inserts by `priority` (higher first; ties and handlers without options keep
 *   registration order; duplicates run twice) and returns a disposer; `off()` removes the first
 *   equal registration; unknown points throw {@linkcode UnknownHookPointError} before anything
 *   changes. {@linkcode HookOptions} are resolved at registration.
 * - `emit()` runs handlers one after another, awaiting only what is thenable.
 *   {@linkcode StopHook} stops the rest; any other failure is reported and the next handler runs.
 *   `emit("tool.pre")` is `blockingEmit()`: a failure rejects and stops the chain.
 * - `decide()` folds the typed decisions of `tool.pre` / `tool.post` handlers (the act path
 *   uses it).
 * - Each emission uses the handler list as it was when the emission began.
 * - After the chain (completed or stopped), a bound observer records a {@linkcode HookSignal};
 *   recording failures are reported, never thrown. `message.add` is never recorded: the
 *   branch emits its own `MessageAdded`.
 * - Deadlines: a handler registered with options, and every handler of an emission given
 *   {@linkcode EmitOptions} (the act path always gives them) or of `decide()`, has
 *   `timeoutMs` (default 30 000) to settle; then it fails with {@linkcode HookTimeoutError}.
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
 * await bus.emit("tool.post", {
 *   callId: "c", toolName: "t", args: {}, result: 1, resultSummary: "1", durationMs: 1,
 * });
 * assert.deepEqual(order, [1, 2]);
 * assert.ok(recorded[0] instanceof HookSignal);
 * ```
 */
export class HookBus {
  #chains: Record<HookPoint, Chain>;
  #entries: Record<HookPoint, Entries>;
  #special: Record<HookPoint, boolean>;
  /** Whether every handler of a point is an `async` function (see `#awaitEach`). */
  #allAsync: Record<HookPoint, boolean>;
  /** Registration bookkeeping per point (made at the first `on`). */
  #points: Partial<Record<HookPoint, PointState>> = {};
  /** Set by every emission that takes a point's arrays; see `#writable`. */
  #taken = false;
  /** Bumped at the first change after an emission; arrays copied in this epoch are ours alone. */
  #epoch = 0;
  #observer: SignalSink | null;
  #context: HookContext;
  #onError: NonNullable<HookBusOptions["onError"]>;

  /** Makes a bus, optionally bound to an observer and carrying a store and session id. */
  constructor(observer?: SignalSink | null, options?: HookBusOptions) {
    this.#observer = checkSink(observer);
    const chains = {} as Record<HookPoint, Chain>;
    const entries = {} as Record<HookPoint, Entries>;
    const special = {} as Record<HookPoint, boolean>;
    const allAsync = {} as Record<HookPoint, boolean>;
    for (const point of HOOK_POINTS) {
      chains[point] = EMPTY_CHAIN;
      entries[point] = EMPTY_ENTRIES;
      special[point] = false;
      allAsync[point] = false;
    }
    this.#chains = chains;
    this.#entries = entries;
    this.#special = special;
    this.#allAsync = allAsync;
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

  /**
   * Adds a handler to a point (by `options.priority`, after equal priorities) and returns a
   * disposer that removes this registration. Bad options throw a `TypeError` before anything
   * changes; an already aborted `options.signal` registers nothing.
   *
   * @example Priority, match and once
   * ```ts
   * import { HookBus } from "@hookscope/core";
   * import assert from "node:assert/strict";
   *
   * const bus = new HookBus();
   * const seen: string[] = [];
   * bus.on("tool.post", () => { seen.push("plain"); });
   * bus.on("tool.post", () => { seen.push("first"); }, { priority: 10, once: true });
   * bus.on("tool.post", () => { seen.push("bash only"); }, { match: "ba*" });
   * const payload = { callId: "c", toolName: "reader", args: {}, result: 1, resultSummary: "1", durationMs: 1 };
   * await bus.emit("tool.post", payload);
   * await bus.emit("tool.post", payload);
   * assert.deepEqual(seen, ["first", "plain", "plain"]);
   * ```
   */
  on<P extends HookPoint>(
    point: P,
    handler: HookHandler<P>,
    options?: HookOptions,
  ): () => void {
    const p = toHookPoint(point as string, "register hook");
    if (typeof handler !== "function") {
      throw new TypeError(
        `Cannot register hook: handler must be a function; got ${
          handler === null ? "null" : typeof handler
        }`,
      );
    }
    const entry = makeEntry(p, handler as AnyHandler, options);
    const signal = options?.signal;
    if (signal?.aborted) return NOOP;
    this.#insert(p, entry);
    let disposed = false;
    const dispose = (): void => {
      if (disposed) return;
      disposed = true;
      signal?.removeEventListener("abort", dispose);
      this.#remove(p, entry);
    };
    entry.dispose = dispose;
    signal?.addEventListener("abort", dispose, { once: true });
    return dispose;
  }

  /** Removes the first equal registration; a missing handler is a no-op. */
  off<P extends HookPoint>(point: P, handler: HookHandler<P>): void {
    const p = toHookPoint(point as string, "remove hook");
    const entries = this.#entries[p];
    for (let i = 0; i < entries.length; i++) {
      if (entries[i].handler === (handler as AnyHandler)) {
        const entry = entries[i];
        if (entry.dispose !== null) entry.dispose();
        else this.#remove(p, entry);
        return;
      }
    }
  }

  /** A copy of a point's handlers, in run order; changing it does not change the bus. */
  handlersFor<P extends HookPoint>(point: P): HookHandler<P>[] {
    return this.#chains[toHookPoint(point as string, "list hooks")].slice() as HookHandler<P>[];
  }

  /** How many handlers a point has. */
  count(point: HookPoint): number {
    return this.#chains[toHookPoint(point as string, "count hooks")].length;
  }

  /**
   * Runs a point's chain; any failure other than {@linkcode StopHook} rejects at once and the
   * rest of the chain does not run, and nothing is recorded (a handler registered with
   * `onFailure: "continue"` is reported and skipped instead).
   */
  blockingEmit<P extends HookPoint>(
    point: P,
    payload: HookPayloads[P],
    options?: EmitOptions,
  ): Promise<void> {
    if (!isHookPoint(point)) return rejectUnknown(point);
    const body = (payload ?? EMPTY_PAYLOAD) as Record<string, unknown>;
    if (options === undefined && !this.#special[point]) return this.#run(point, body, true);
    return this.#start(point, body, BLOCKING, options, 0) as Promise<void>;
  }

  /**
   * Runs a point's chain with failures isolated (reported, next handler runs). `tool.pre`
   * delegates to {@linkcode HookBus.blockingEmit}. With `options`, every pending handler has a
   * deadline and the emission honours `options.signal`.
   */
  emit<P extends HookPoint>(
    point: P,
    payload: HookPayloads[P],
    options?: EmitOptions,
  ): Promise<void> {
    if (!isHookPoint(point)) return rejectUnknown(point);
    const body = (payload ?? EMPTY_PAYLOAD) as Record<string, unknown>;
    const blocking = point === HookPoint.TOOL_PRE;
    if (options === undefined && !this.#special[point]) return this.#run(point, body, blocking);
    return this.#start(point, body, blocking ? BLOCKING : ISOLATED, options, 0) as Promise<void>;
  }

  /**
   * Runs the `tool.pre` or `tool.post` chain and folds what its handlers return.
   *
   * `tool.pre`: each handler sees `args` as rewritten by the handlers before it; the verdict is
   * deny > ask > allow > none whatever the order; a deny ends the chain; a throw (or a timeout)
   * of a blocking handler ends it with `error` set (fail closed); {@linkcode StopHook} ends it
   * keeping the verdict so far; shadow-mode verdicts are collected, not applied. Each returned
   * decision is read once into a private copy, its `updatedArgs` copied to plain data. When a
   * pass rewrote the arguments (`updatedArgs` that differ from what the handler received), the
   * whole chain runs again on the result until a pass rewrites nothing; the verdict is the
   * strictest of all passes; a chain still rewriting at pass {@linkcode TOOL_PRE_PASSES} ends
   * with `error` set to an {@linkcode UnsettledArgumentsError}.
   * `tool.post`: `updatedResult` replaces the result for the next handlers; `context` strings
   * are collected. A chain in which no handler returns a decision allocates nothing.
   *
   * @example Rewrites compose, deny wins
   * ```ts
   * import { HookBus } from "@hookscope/core";
   * import assert from "node:assert/strict";
   *
   * const bus = new HookBus();
   * bus.on("tool.pre", ({ args }) => ({ decision: "allow", updatedArgs: { ...args, n: Number(args.n) + 1 } }));
   * bus.on("tool.pre", ({ args }) => args.n === 2 ? { decision: "deny", reason: "two" } : undefined);
   * const fold = await bus.decide("tool.pre", { toolName: "t", callId: "c", args: { n: 1 }, argsSummary: "" });
   * assert.equal(fold.verdict, "deny");
   * assert.equal(fold.reason, "two");
   * ```
   */
  decide(
    point: "tool.pre",
    payload: HookPayloads["tool.pre"],
    options?: EmitOptions,
  ): Promise<ToolPreFold>;
  /** Runs the `tool.post` chain and folds its result replacements and context. */
  decide(
    point: "tool.post",
    payload: HookPayloads["tool.post"],
    options?: EmitOptions,
  ): Promise<ToolPostFold>;
  decide(
    point: "tool.pre" | "tool.post",
    payload: HookPayloads["tool.pre"] | HookPayloads["tool.post"],
    options?: EmitOptions,
  ): Promise<ToolPreFold | ToolPostFold> {
    if (point !== HookPoint.TOOL_PRE && point !== HookPoint.TOOL_POST) {
      return Promise.reject(
        new TypeError(
          `Cannot decide: only "tool.pre" and "tool.post" fold decisions; got ${String(point)}`,
        ),
      );
    }
    const body = payload as unknown as Record<string, unknown>;
    if (!this.#special[point] && options?.signal === undefined) {
      // Sync prefix: handlers that return nothing cost a call each and allocate nothing.
      const entries = this.#entries[point];
      this.#taken = true;
      const context = this.#context;
      for (let i = 0; i < entries.length; i++) {
        let result: unknown;
        try {
          result = (entries[i].handler as Call)(body, context);
        } catch (error) {
          if (error instanceof StopHook) break;
          const run = new Run(point, body, DECIDE, undefined, context);
          return this.#resume(run, entries, i, true, error) as Promise<ToolPreFold | ToolPostFold>;
        }
        if (result !== undefined && (typeof result === "object" || typeof result === "function")) {
          const run = new Run(point, body, DECIDE, undefined, context);
          return this.#resume(run, entries, i, false, result) as Promise<
            ToolPreFold | ToolPostFold
          >;
        }
      }
      const recorded = this.#record(point, body);
      if (point === HookPoint.TOOL_PRE) {
        return recorded === RESOLVED
          ? (NO_PRE_PROMISE ??= Promise.resolve(NO_PRE_DECISION))
          : recorded.then(() => NO_PRE_DECISION);
      }
      const fold = postFold(body.result);
      return recorded === RESOLVED ? Promise.resolve(fold) : recorded.then(() => fold);
    }
    return this.#start(point, body, DECIDE, options, 0) as Promise<ToolPreFold | ToolPostFold>;
  }

  /**
   * The point's bookkeeping, with its arrays ready to change in place. Emissions keep the arrays
   * they started with (copy-on-write snapshots), so the arrays are copied once after any
   * emission took them; changes with no emission in between reuse the copy. Registering n
   * handlers costs O(n) overall, not O(n²).
   */
  #writable(point: HookPoint): PointState {
    if (this.#taken) {
      this.#taken = false;
      this.#epoch++;
    }
    let state = this.#points[point];
    if (state === undefined) {
      state = { owned: -1, ranked: 0, specials: 0, syncs: 0 };
      this.#points[point] = state;
    }
    if (state.owned !== this.#epoch) {
      this.#entries[point] = this.#entries[point].slice();
      this.#chains[point] = this.#chains[point].slice();
      state.owned = this.#epoch;
    }
    return state;
  }

  #insert(point: HookPoint, entry: Entry): void {
    const state = this.#writable(point);
    const entries = this.#entries[point] as Entry[];
    const chain = this.#chains[point] as AnyHandler[];
    // By priority, higher first, after equal ones: entries stay sorted, so a binary search.
    let at = entries.length;
    if (entry.priority !== 0 || state.ranked !== 0) {
      let low = 0;
      while (low < at) {
        const mid = (low + at) >>> 1;
        if (entries[mid].priority >= entry.priority) low = mid + 1;
        else at = mid;
      }
    }
    if (at === entries.length) {
      entries.push(entry);
      chain.push(entry.handler);
    } else {
      entries.splice(at, 0, entry);
      chain.splice(at, 0, entry.handler);
    }
    this.#count(point, state, entry, 1);
  }

  #remove(point: HookPoint, entry: Entry): void {
    const index = this.#entries[point].indexOf(entry);
    if (index === -1) return;
    const state = this.#writable(point);
    const entries = this.#entries[point] as Entry[];
    const chain = this.#chains[point] as AnyHandler[];
    if (index === 0) {
      // Engines trim the front of an array in place: removing in registration order stays O(1).
      entries.shift();
      chain.shift();
    } else if (index === entries.length - 1) {
      entries.pop();
      chain.pop();
    } else {
      entries.splice(index, 1);
      chain.splice(index, 1);
    }
    this.#count(point, state, entry, -1);
    if (entries.length === 0) {
      this.#entries[point] = EMPTY_ENTRIES;
      this.#chains[point] = EMPTY_CHAIN;
      state.owned = -1;
    }
  }

  /** Keeps the point's counts and the flags the emission paths read (`delta` is ±1). */
  #count(point: HookPoint, state: PointState, entry: Entry, delta: 1 | -1): void {
    if (entry.priority !== 0) state.ranked += delta;
    if (entry.special) state.specials += delta;
    if (!(entry.handler instanceof AsyncFunction)) state.syncs += delta;
    this.#special[point] = state.specials !== 0;
    this.#allAsync[point] = state.syncs === 0 && this.#entries[point].length !== 0;
  }

  /** Runs the chain synchronously until a handler returns a thenable, then `#runAsync`. */
  #run(point: HookPoint, payload: Record<string, unknown>, blocking: boolean): Promise<void> {
    const chain = this.#chains[point];
    if (chain.length === 0) return this.#record(point, payload);
    this.#taken = true;
    if (this.#allAsync[point]) return this.#awaitEach(point, payload, blocking, chain);
    const context = this.#context;
    for (let i = 0; i < chain.length; i++) {
      let result: unknown;
      try {
        result = (chain[i] as Call)(payload, context);
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

  /**
   * A chain of `async` functions only: each returns a promise, so each is awaited as it comes,
   * with no thenable check, in the shape of a hand-written `for … await` loop (on V8 an `await`
   * inside a branch costs about 10–20 ns more per handler than an unconditional one, most of
   * what a settled promise costs). Other chains take the sync prefix and `#runAsync`, which
   * await only thenables.
   */
  async #awaitEach(
    point: HookPoint,
    payload: Record<string, unknown>,
    blocking: boolean,
    chain: Chain,
  ): Promise<void> {
    const context = this.#context;
    for (let i = 0; i < chain.length; i++) {
      try {
        await (chain[i] as Call)(payload, context);
      } catch (error) {
        if (error instanceof StopHook) break;
        if (blocking) throw error;
        this.#report(error, point, "handler");
      }
    }
    const recorded = this.#record(point, payload);
    if (recorded !== RESOLVED) await recorded;
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
        const result = (chain[i] as Call)(payload, context);
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

  /** The option-aware path from `start`: match, once, deadlines, onFailure, shadow, signal. */
  #start(
    point: HookPoint,
    payload: Record<string, unknown>,
    kind: Kind,
    options: EmitOptions | undefined,
    start: number,
  ): Promise<ToolPreFold | ToolPostFold | void> {
    const signal = options?.signal;
    if (signal?.aborted) return Promise.reject(signal.reason);
    const context: HookContext = signal === undefined
      ? this.#context
      : Object.freeze({ ...this.#context, signal });
    const run = new Run(point, payload, kind, signal, context);
    this.#taken = true;
    return this.#drive(run, this.#entries[point], start);
  }

  /** Applies an outcome already known for `entries[index]`, then drives on from `index + 1`. */
  #resume(
    run: Run,
    entries: Entries,
    index: number,
    failed: boolean,
    outcome: unknown,
  ): Promise<ToolPreFold | ToolPostFold | void> {
    run.entries = entries;
    if (!failed && isThenable(outcome)) return this.#driveAsync(run, entries, index, outcome);
    try {
      if (this.#handle(run, entries[index], failed, outcome)) return this.#finish(run);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#drive(run, entries, index + 1);
  }

  /** Runs entries synchronously until one returns a thenable. */
  #drive(run: Run, entries: Entries, start: number): Promise<ToolPreFold | ToolPostFold | void> {
    run.entries = entries;
    const context = run.context;
    try {
      for (let i = start; i < entries.length; i++) {
        const entry = entries[i];
        const match = entry.match;
        if (match !== null) {
          let hit: boolean;
          try {
            hit = match(run.current);
          } catch (error) {
            this.#report(error, run.point, "handler");
            hit = false;
          }
          if (!hit) continue;
        }
        if (entry.once) entry.dispose?.();
        let value: unknown;
        try {
          value = (entry.handler as Call)(run.current, context);
        } catch (error) {
          if (this.#handle(run, entry, true, error)) break;
          continue;
        }
        if (isThenable(value)) return this.#driveAsync(run, entries, i, value);
        if (this.#handle(run, entry, false, value)) break;
      }
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#finish(run);
  }

  /** Waits for `entries[index]`'s pending result, then for the rest of the chain. */
  async #driveAsync(
    run: Run,
    entries: Entries,
    index: number,
    pending: PromiseLike<unknown>,
  ): Promise<ToolPreFold | ToolPostFold | void> {
    const context = run.context;
    const signal = run.signal;
    let current: PromiseLike<unknown> | null = pending;
    for (let i = index; i < entries.length; i++) {
      const entry = entries[i];
      let value: unknown;
      let failed = false;
      try {
        if (current !== null) {
          value = current;
          current = null;
        } else {
          if (entry.match !== null && !this.#matches(entry, run.current, run.point)) continue;
          if (entry.once) entry.dispose?.();
          value = (entry.handler as Call)(run.current, context);
        }
        if (isThenable(value)) value = await race(value, entry.timeoutMs, signal);
      } catch (error) {
        failed = true;
        value = error;
      }
      if (this.#handle(run, entry, failed, value)) break;
    }
    return await this.#finish(run);
  }

  /**
   * Applies one handler's outcome to the run; returns `true` when the chain ends here. Throws
   * what the emission must reject with.
   */
  #handle(run: Run, entry: Entry, failed: boolean, outcome: unknown): boolean {
    const fold = run.fold;
    const pre = run.point === HookPoint.TOOL_PRE;
    if (failed) {
      let error = outcome;
      const signal = run.signal;
      if (signal?.aborted && error === signal.reason) throw abandoned(error, run.point, entry);
      if (error instanceof StopHook) return true;
      if (error === TIMED_OUT) {
        error = new HookTimeoutError(run.point, entry.timeoutMs, entry.name);
      }
      if (fold !== null && entry.shadow && pre) {
        fold.shadowed("deny", errorMessage(error), entry.name);
        return false;
      }
      const policy = entry.onFailure ??
        (pre && run.kind !== ISOLATED ? "block" : "continue");
      if (policy === "block" && !entry.shadow) {
        if (fold !== null && pre) {
          fold.fail(error, entry.name);
          return true;
        }
        throw error;
      }
      this.#report(error, run.point, "handler");
      return false;
    }
    if (fold === null) return false;
    if (pre) {
      const next = fold.pre(outcome, entry);
      if (next === STOP) return true;
      if (next !== null) run.current = next;
    } else {
      const next = fold.post(outcome, entry);
      if (next !== null) run.current = next;
    }
    return false;
  }

  /** Records the HookSignal (unless a blocking failure ended the fold) and returns the result. */
  #finish(run: Run): Promise<ToolPreFold | ToolPostFold | void> {
    const fold = run.fold;
    if (fold !== null && fold.rewrote && fold.error === undefined && fold.verdict !== 3) {
      // Something rewrote the arguments: every hook judges the arguments that will run, so the
      // chain runs again on them until a pass rewrites nothing (at most TOOL_PRE_PASSES passes).
      if (fold.pass >= TOOL_PRE_PASSES) {
        fold.fail(
          new UnsettledArgumentsError(String(fold.payload.toolName), fold.pass, fold.rewriter),
          fold.rewriter,
        );
      } else {
        run.current = fold.nextPass();
        return this.#drive(run, run.entries, 0);
      }
    }
    let recorded = RESOLVED;
    if (fold === null || fold.error === undefined) {
      recorded = this.#record(run.point, run.current);
      if (recorded !== RESOLVED && run.signal !== undefined) {
        recorded = race(recorded, Infinity, run.signal);
      }
    }
    if (fold === null) return recorded;
    const result = run.point === HookPoint.TOOL_PRE ? fold.toPre() : fold.toPost();
    return recorded === RESOLVED ? Promise.resolve(result) : recorded.then(() => result);
  }

  #matches(entry: Entry, payload: Record<string, unknown>, point: HookPoint): boolean {
    try {
      return entry.match!(payload);
    } catch (error) {
      this.#report(error, point, "handler");
      return false;
    }
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
      const sink = observer as {
        [RECORD_HOOK]?: (point: HookPoint, payload: Record<string, unknown>) => unknown;
        [RECORD]?: (event: unknown) => unknown;
      };
      const recordHook = sink[RECORD_HOOK];
      if (typeof recordHook === "function") result = recordHook.call(observer, point, payload);
      else {
        const signal = new HookSignal({ point, payload });
        const record = sink[RECORD];
        result = typeof record === "function"
          ? record.call(observer, signal)
          : observer.emit(signal);
      }
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

/** The constructor of `async` functions (read from a literal; nothing runs at module load). */
const AsyncFunction = (async () => {}).constructor;

type Call = (payload: unknown, context: HookContext) => unknown;

const ISOLATED = 0;
const BLOCKING = 1;
const DECIDE = 2;
type Kind = typeof ISOLATED | typeof BLOCKING | typeof DECIDE;
const STOP: unique symbol = Symbol("stop");

/**
 * The error an emission rejects with when its signal aborted while a handler was pending: a
 * deadline (an abort reason named "TimeoutError" carrying `timeoutMs`) becomes a
 * HookTimeoutError naming the handler; another abort an "AbortError" naming it.
 */
function abandoned(reason: unknown, point: HookPoint, entry: Entry): Error {
  const hook = entry.name;
  if (reason instanceof Error && reason.name === "TimeoutError") {
    const ms = (reason as { timeoutMs?: unknown }).timeoutMs;
    return new HookTimeoutError(point, typeof ms === "number" ? ms : entry.timeoutMs, hook, {
      cause: reason,
    });
  }
  const error = new DOMException(
    `Hook ${hook ? `"${hook}" ` : ""}at ${point} was abandoned: aborted (${errorMessage(reason)})`,
    "AbortError",
  );
  Object.defineProperty(error, "cause", { value: reason });
  return error;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function postFold(result: unknown): ToolPostFold {
  return { replaced: false, result, context: NO_STRINGS };
}

/** The state of one option-aware emission. */
class Run {
  readonly point: HookPoint;
  readonly kind: Kind;
  readonly signal: AbortSignal | undefined;
  readonly context: HookContext;
  readonly fold: Fold | null;
  current: Record<string, unknown>;
  /** The chain snapshot the emission runs (every pass of a fold runs the same one). */
  entries: Entries = EMPTY_ENTRIES;

  constructor(
    point: HookPoint,
    payload: Record<string, unknown>,
    kind: Kind,
    signal: AbortSignal | undefined,
    context: HookContext,
  ) {
    this.point = point;
    this.kind = kind;
    this.signal = signal;
    this.context = context;
    this.current = payload;
    this.fold = kind === DECIDE ? new Fold(payload) : null;
  }
}

/** The state of one decision fold. */
class Fold {
  verdict = 0; // 0 none, 1 allow, 2 ask, 3 deny
  args: Readonly<Record<string, unknown>> | undefined = undefined;
  reason: string | undefined = undefined;
  hook: string | undefined = undefined;
  interrupt = false;
  context: string[] | null = null;
  shadow: ShadowVerdict[] | null = null;
  error: unknown = undefined;
  errorHook: string | undefined = undefined;
  result: unknown;
  replaced = false;
  readonly payload: Record<string, unknown>;
  /** Which pass of the chain runs (1 first; see TOOL_PRE_PASSES). */
  pass = 1;
  /** Whether a hook of this pass changed the arguments it received. */
  rewrote = false;
  /** The last hook that changed them, when named. */
  rewriter: string | undefined = undefined;
  /** The arguments the next hook receives. */
  seen: unknown;

  constructor(payload: Record<string, unknown>) {
    this.payload = payload;
    this.result = payload.result;
    this.seen = payload.args;
  }

  /** Starts the next pass on the rewritten arguments; returns its payload. */
  nextPass(): Record<string, unknown> {
    this.pass++;
    this.rewrote = false;
    this.seen = this.args;
    return { ...this.payload, args: this.args };
  }

  fail(error: unknown, hook: string | undefined): void {
    this.error = error === undefined ? new Error("tool.pre hook threw undefined") : error;
    this.errorHook = hook;
  }

  shadowed(decision: "deny" | "ask", reason: string | undefined, hook: string | undefined): void {
    if (
      this.pass > 1 && this.shadow !== null &&
      this.shadow.some((v) => v.decision === decision && v.reason === reason && v.hook === hook)
    ) return; // the same verdict of a later pass is recorded once
    const verdict: { decision: "deny" | "ask"; reason?: string; hook?: string } = { decision };
    if (reason !== undefined) verdict.reason = reason;
    if (hook !== undefined) verdict.hook = hook;
    (this.shadow ??= []).push(Object.freeze(verdict));
  }

  addContext(text: string): void {
    const list = this.context ??= [];
    if (this.pass > 1 && list.includes(text)) return; // said again on a later pass
    list.push(text);
  }

  /** Applies one tool.pre result; returns the next payload, `null` (unchanged) or STOP. */
  pre(value: unknown, entry: Entry): Record<string, unknown> | null | typeof STOP {
    if (value === null || typeof value !== "object" || !("decision" in value)) return null;
    const action = `Cannot apply tool.pre decision${entry.name ? ` of "${entry.name}"` : ""}`;
    // Read once into a private copy: what is validated is what is applied (a getter or a proxy
    // cannot say "deny" to the check and "allow" to the fold).
    let d: PreDecisionCopy;
    let problem: string | null;
    try {
      d = readPreDecision(value);
      problem = checkPreDecision(d);
    } catch (error) {
      d = NO_DECISION;
      problem = `reading it threw (${errorMessage(error)})`;
    }
    if (problem !== null) {
      const error = new TypeError(`${action}: ${problem}`);
      if (entry.shadow) {
        this.shadowed("deny", error.message, entry.name);
        return null;
      }
      this.fail(error, entry.name);
      return STOP;
    }
    const reason = typeof d.reason === "string" ? d.reason : undefined;
    if (entry.shadow) {
      if (d.decision === "deny" || d.decision === "ask") {
        this.shadowed(d.decision, reason, entry.name);
      }
      return null;
    }
    if (d.decision === "deny") {
      this.verdict = 3;
      this.reason = reason;
      this.hook = entry.name;
      this.interrupt = d.interrupt === true;
      return STOP;
    }
    if (d.decision === "ask") {
      if (this.verdict < 2) {
        this.verdict = 2;
        this.reason = reason;
        this.hook = entry.name;
      }
    } else {
      if (this.verdict < 1) this.verdict = 1;
      if (typeof d.context === "string") this.addContext(d.context);
    }
    if (d.updatedArgs === undefined) return null;
    let args: Readonly<Record<string, unknown>>;
    try {
      args = plainDataCopy(d.updatedArgs, action, "updatedArgs", true) as Record<string, unknown>;
    } catch (error) {
      this.fail(error, entry.name);
      return STOP;
    }
    if (!samePlainData(args, this.seen)) {
      this.rewrote = true;
      this.rewriter = entry.name;
    }
    this.args = args;
    this.seen = args;
    return { ...this.payload, args };
  }

  post(value: unknown, entry: Entry): Record<string, unknown> | null {
    if (value === null || typeof value !== "object" || entry.shadow) return null;
    // Each property is read once.
    const v = value as { updatedResult?: unknown; context?: unknown };
    const context = v.context;
    if (typeof context === "string") (this.context ??= []).push(context);
    if (!("updatedResult" in v)) return null;
    this.result = deepFrozenCopy(v.updatedResult);
    this.replaced = true;
    return { ...this.payload, result: this.result };
  }

  toPre(): ToolPreFold {
    const fold: {
      -readonly [K in keyof ToolPreFold]: ToolPreFold[K];
    } = {
      verdict: VERDICTS[this.verdict],
      updatedArgs: this.args,
      interrupt: this.interrupt,
      context: this.context ?? NO_STRINGS,
      shadow: this.shadow ?? NO_SHADOW,
    };
    if (this.reason !== undefined) fold.reason = this.reason;
    if (this.hook !== undefined) fold.hook = this.hook;
    if (this.error !== undefined) {
      fold.error = this.error;
      if (this.errorHook !== undefined) fold.errorHook = this.errorHook;
    }
    return fold;
  }

  toPost(): ToolPostFold {
    return { replaced: this.replaced, result: this.result, context: this.context ?? NO_STRINGS };
  }
}

const VERDICTS = ["none", "allow", "ask", "deny"] as const;

/**
 * A returned `tool.pre` decision, each property read exactly once. The copy never leaves
 * `Fold.pre` (nothing else holds it), so it is immutable by type, not by `Object.freeze`, which
 * measured 3–4× the cost of a 20-hook allow chain (`decision-verdicts/20`).
 */
interface PreDecisionCopy {
  readonly decision: unknown;
  readonly reason: unknown;
  readonly updatedArgs: unknown;
  readonly context: unknown;
  readonly interrupt: unknown;
}

const NO_DECISION: PreDecisionCopy = Object.freeze({
  decision: undefined,
  reason: undefined,
  updatedArgs: undefined,
  context: undefined,
  interrupt: undefined,
});

function readPreDecision(value: object): PreDecisionCopy {
  const v = value as Record<string, unknown>;
  return {
    decision: v.decision,
    reason: v.reason,
    updatedArgs: v.updatedArgs,
    context: v.context,
    interrupt: v.interrupt,
  };
}

function checkPreDecision(d: PreDecisionCopy): string | null {
  if (d.decision !== "allow" && d.decision !== "ask" && d.decision !== "deny") {
    return `decision must be "allow", "ask" or "deny"; got ${
      typeof d.decision === "string" ? JSON.stringify(d.decision) : typeof d.decision
    }`;
  }
  if (d.decision === "deny" && (typeof d.reason !== "string" || d.reason === "")) {
    return `a deny needs a non-empty string reason`;
  }
  if (d.reason !== undefined && typeof d.reason !== "string") return `reason must be a string`;
  if (d.context !== undefined && typeof d.context !== "string") return `context must be a string`;
  if (d.updatedArgs !== undefined && !isPlainObject(d.updatedArgs)) {
    return `updatedArgs must be a plain object`;
  }
  return null;
}

const TOOL_POINTS: Readonly<Record<string, true>> = Object.freeze({
  "tool.pre": true,
  "tool.post": true,
  "tool.error": true,
});

function makeEntry(point: HookPoint, handler: AnyHandler, options: HookOptions | undefined): Entry {
  const fnName = handler.name || undefined;
  if (options === undefined) {
    return {
      handler,
      priority: 0,
      match: null,
      once: false,
      timeoutMs: SESSION_HOOK_TIMEOUT_MS,
      onFailure: null,
      shadow: false,
      name: fnName,
      special: false,
      dispose: null,
    };
  }
  if (options === null || typeof options !== "object") {
    throw new TypeError(`Cannot register hook: options must be an object`);
  }
  const fail = (what: string): never => {
    throw new TypeError(`Cannot register hook at ${point}: ${what}`);
  };
  for (const key of Object.keys(options)) {
    if (!OPTION_KEYS.has(key)) {
      fail(`unknown option ${JSON.stringify(key)}; valid options: ${[...OPTION_KEYS].join(", ")}`);
    }
  }
  const { priority = 0, match, once = false, signal, timeoutMs, onFailure, mode, name } = options;
  if (typeof priority !== "number" || !Number.isFinite(priority)) {
    fail(`priority must be a finite number`);
  }
  if (typeof once !== "boolean") fail(`once must be a boolean`);
  if (
    signal !== undefined &&
    (signal === null || typeof (signal as { addEventListener?: unknown }).addEventListener !==
        "function")
  ) fail(`signal must be an AbortSignal`);
  if (
    timeoutMs !== undefined &&
    (typeof timeoutMs !== "number" || !(timeoutMs > 0) || Number.isNaN(timeoutMs))
  ) fail(`timeoutMs must be a positive number`);
  if (onFailure !== undefined && onFailure !== "continue" && onFailure !== "block") {
    fail(`onFailure must be "continue" or "block"`);
  }
  if (mode !== undefined && mode !== "enforce" && mode !== "shadow") {
    fail(`mode must be "enforce" or "shadow"`);
  }
  if (name !== undefined && (typeof name !== "string" || name === "")) {
    fail(`name must be a non-empty string`);
  }
  let test: Entry["match"] = null;
  if (match !== undefined) {
    if (typeof match === "function") {
      test = (payload) => Boolean((match as (p: unknown) => unknown)(payload));
    } else if (typeof match === "string" || match instanceof RegExp) {
      if (TOOL_POINTS[point] !== true) {
        fail(`a string or RegExp match needs a tool.* point; use a predicate`);
      }
      test = toolNameMatcher(match);
    } else fail(`match must be a glob string, a RegExp or a function`);
  }
  const shadow = mode === "shadow";
  return {
    handler,
    priority,
    match: test,
    once,
    timeoutMs: timeoutMs ?? SESSION_HOOK_TIMEOUT_MS,
    onFailure: onFailure ?? null,
    shadow,
    name: name ?? fnName,
    special: test !== null || once || timeoutMs !== undefined || onFailure !== undefined || shadow,
    dispose: null,
  };
}

/**
 * A test of `payload.toolName` (chosen by the model) against a glob, in O(glob × name) time with
 * no backtracking (see `core/_glob.ts`), or against the caller's own RegExp.
 */
function toolNameMatcher(match: string | RegExp): (payload: Record<string, unknown>) => boolean {
  if (typeof match === "string") {
    const test = globMatcher(match);
    return (payload) => {
      const name = payload.toolName;
      return typeof name === "string" && test(name);
    };
  }
  const re = match;
  return (payload) => {
    const name = payload.toolName;
    re.lastIndex = 0;
    return typeof name === "string" && re.test(name);
  };
}

const OPTION_KEYS: ReadonlySet<string> = new Set([
  "priority",
  "match",
  "once",
  "signal",
  "timeoutMs",
  "onFailure",
  "mode",
  "name",
]);

function rejectUnknown(point: unknown): Promise<never> {
  return Promise.reject(new UnknownHookPointError(point, HOOK_POINTS, "emit hook"));
}
