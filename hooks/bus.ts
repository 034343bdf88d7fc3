/**
 * `HookBus`: ordered, awaited Session hook dispatch with StopHook and a blocking `tool.pre`.
 *
 * @module
 */

import { UnknownHookPointError } from "./errors.ts";
import { logger } from "../core/logger.ts";
import type { SignalSink } from "../core/signal.ts";
import type { SessionStore } from "../store/session_store.ts";
import {
  HOOK_POINTS,
  type HookPayloads,
  type HookPoint,
  isHookPoint,
  toHookPoint,
} from "./hook_point.ts";
import type { HookOptions } from "./hook_options.ts";
import { type AnyHandler, makeEntry } from "./_entry.ts";
import { BLOCKING, DECIDE, Dispatcher, ISOLATED } from "./_dispatch.ts";
import { foldOf, GATE, type ToolErrorFold, type ToolPostFold, type ToolPreFold } from "./_fold.ts";

export { SESSION_HOOK_TIMEOUT_MS } from "./_entry.ts";
export type { ShadowVerdict, ToolErrorFold, ToolPostFold, ToolPreFold } from "./_fold.ts";

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

/** Options of one emission (`emit`, `blockingEmit`, `decide`). */
export interface EmitOptions {
  /**
   * Aborts the emission: a pending handler is abandoned and the emission rejects with the
   * signal's reason. Handlers see it as `context.signal`.
   */
  signal?: AbortSignal;
}

const EMPTY_PAYLOAD: Readonly<Record<string, unknown>> = Object.freeze({});
const NOOP = (): void => {};

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
 *   `emit("tool.pre")` and `emit("tool.effects")` are `blockingEmit()`: a failure rejects and
 *   stops the chain.
 * - `decide()` folds the typed decisions of `tool.pre` / `tool.post` / `tool.error` handlers
 *   (the act path uses it) and of `tool.effects` handlers (staged runs: `tool.pre`'s fold).
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
 *   signal: new AbortController().signal, source: { kind: "local" },
 * });
 * assert.deepEqual(order, [1, 2]);
 * assert.ok(recorded[0] instanceof HookSignal);
 * ```
 */
export class HookBus {
  /** The tables and the loops (see `_dispatch.ts` for the performance contract). */
  readonly #d: Dispatcher;
  /** `#d.special` (the same object for the bus's life): the emission paths read it first. */
  readonly #special: Record<HookPoint, boolean>;

  /** Makes a bus, optionally bound to an observer and carrying a store and session id. */
  constructor(observer?: SignalSink | null, options?: HookBusOptions) {
    const sink = checkSink(observer);
    const context: { bus: HookBus; store?: SessionStore; sessionId?: string } = { bus: this };
    if (options?.store !== undefined) context.store = options.store;
    if (options?.sessionId !== undefined) context.sessionId = options.sessionId;
    if (options?.onError !== undefined && typeof options.onError !== "function") {
      throw new TypeError(`Cannot create hook bus: onError must be a function`);
    }
    this.#d = new Dispatcher(sink, Object.freeze(context), options?.onError ?? defaultOnError);
    this.#special = this.#d.special;
  }

  /** The observer signals are recorded into, or `null`. */
  get observer(): SignalSink | null {
    return this.#d.observer;
  }

  /** The context handed to every handler. */
  get context(): HookContext {
    return this.#d.context;
  }

  /** Binds (or, with `null`, unbinds) the observer; returns the same bus. */
  bind(observer: SignalSink | null): this {
    this.#d.observer = checkSink(observer);
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
   * const payload = {
   *   callId: "c", toolName: "reader", args: {}, result: 1, resultSummary: "1", durationMs: 1,
   *   signal: new AbortController().signal, source: { kind: "local" },
   * } as const;
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
    const d = this.#d;
    d.insert(p, entry);
    let disposed = false;
    const dispose = (): void => {
      if (disposed) return;
      disposed = true;
      signal?.removeEventListener("abort", dispose);
      d.remove(p, entry);
    };
    entry.dispose = dispose;
    signal?.addEventListener("abort", dispose, { once: true });
    return dispose;
  }

  /** Removes the first equal registration; a missing handler is a no-op. */
  off<P extends HookPoint>(point: P, handler: HookHandler<P>): void {
    const p = toHookPoint(point as string, "remove hook");
    const entries = this.#d.entries[p];
    for (let i = 0; i < entries.length; i++) {
      if (entries[i].handler === (handler as AnyHandler)) {
        const entry = entries[i];
        if (entry.dispose !== null) entry.dispose();
        else this.#d.remove(p, entry);
        return;
      }
    }
  }

  /** A copy of a point's handlers, in run order; changing it does not change the bus. */
  handlersFor<P extends HookPoint>(point: P): HookHandler<P>[] {
    return this.#d.chains[toHookPoint(point as string, "list hooks")].slice() as HookHandler<P>[];
  }

  /** How many handlers a point has. */
  count(point: HookPoint): number {
    return this.#d.chains[toHookPoint(point as string, "count hooks")].length;
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
    const d = this.#d;
    if (options === undefined) {
      return this.#special[point]
        ? d.runEntries(point, body, BLOCKING) as Promise<void>
        : d.run(point, body, true);
    }
    return d.start(point, body, BLOCKING, options, 0) as Promise<void>;
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
    const d = this.#d;
    // `null`: blocking as the point says, read by the loop only when a handler fails or waits.
    if (options === undefined) {
      return this.#special[point]
        ? d.runEntries(point, body, null) as Promise<void>
        : d.run(point, body, null);
    }
    const kind = foldOf(point) === GATE ? BLOCKING : ISOLATED;
    return d.start(point, body, kind, options, 0) as Promise<void>;
  }

  /**
   * Runs the `tool.pre`, `tool.post`, `tool.error` or `tool.effects` chain and folds what its
   * handlers return (`tool.effects` as `tool.pre`).
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
   * are collected.
   * `tool.error`: every handler runs (a throw is reported, as by `emit`); the first
   * `updatedResult` recovers the call; `context` strings are collected.
   * A chain in which no handler returns a decision allocates nothing.
   *
   * @example Rewrites compose, deny wins
   * ```ts
   * import { HookBus } from "@hookscope/core";
   * import assert from "node:assert/strict";
   *
   * const bus = new HookBus();
   * bus.on("tool.pre", ({ args }) => ({ decision: "allow", updatedArgs: { ...args, n: Number(args.n) + 1 } }));
   * bus.on("tool.pre", ({ args }) => args.n === 2 ? { decision: "deny", reason: "two" } : undefined);
   * const fold = await bus.decide("tool.pre", {
   *   toolName: "t", callId: "c", args: { n: 1 }, argsSummary: "",
   *   signal: new AbortController().signal, source: { kind: "local" },
   * });
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
  /**
   * Runs the `tool.error` chain and folds its recovery and context.
   *
   * @example Context for a failed call, and a recovery
   * ```ts
   * import { HookBus } from "@hookscope/core";
   * import assert from "node:assert/strict";
   *
   * const bus = new HookBus();
   * bus.on("tool.error", ({ toolName }) => ({ context: `${toolName} failed: check the path` }));
   * bus.on("tool.error", ({ error }) => ({ updatedResult: { missing: String(error) } }));
   * const fold = await bus.decide("tool.error", {
   *   toolName: "reader", callId: "c", args: {}, error: new Error("ENOENT"), durationMs: 1,
   *   signal: new AbortController().signal, source: { kind: "local" },
   * });
   * assert.deepEqual(fold.context, ["reader failed: check the path"]);
   * assert.equal(fold.recovered, true);
   * assert.deepEqual(fold.result, { missing: "Error: ENOENT" });
   * ```
   */
  decide(
    point: "tool.error",
    payload: HookPayloads["tool.error"],
    options?: EmitOptions,
  ): Promise<ToolErrorFold>;
  /**
   * Runs the `tool.effects` chain on a staged run's change set and folds its decisions as
   * `tool.pre`'s are folded (the coding toolkit's staged runs use it): deny > ask > allow >
   * none, a throw or a timeout fails closed (`error`), and a shadow-mode handler's deny or ask
   * is collected in `shadow`, not applied.
   *
   * @example A shadow rule is recorded, not applied
   * ```ts
   * import { HookBus } from "@hookscope/core";
   * import assert from "node:assert/strict";
   *
   * const bus = new HookBus();
   * bus.on("tool.effects", ({ changes }) =>
   *   changes.some((c) => c.kind === "deleted") ? { decision: "deny", reason: "keep files" } : undefined,
   * { mode: "shadow", name: "keep-files" });
   * const fold = await bus.decide("tool.effects", {
   *   toolName: "bash", callId: "c", args: { command: "rm a.txt" },
   *   changes: [{ path: "a.txt", kind: "deleted" }],
   * });
   * assert.equal(fold.verdict, "none");
   * assert.deepEqual(fold.shadow, [{ decision: "deny", reason: "keep files", hook: "keep-files" }]);
   * ```
   */
  decide(
    point: "tool.effects",
    payload: HookPayloads["tool.effects"],
    options?: EmitOptions,
  ): Promise<ToolPreFold>;
  decide(
    point: "tool.pre" | "tool.post" | "tool.error" | "tool.effects",
    payload:
      | HookPayloads["tool.pre"]
      | HookPayloads["tool.post"]
      | HookPayloads["tool.error"]
      | HookPayloads["tool.effects"],
    options?: EmitOptions,
  ): Promise<ToolPreFold | ToolPostFold | ToolErrorFold> {
    const fold = foldOf(point);
    if (fold === undefined) {
      return Promise.reject(
        new TypeError(
          `Cannot decide: only "tool.pre", "tool.post", "tool.error" and "tool.effects" fold decisions; got ${
            String(point)
          }`,
        ),
      );
    }
    const body = payload as unknown as Record<string, unknown>;
    const d = this.#d;
    type Folded = Promise<ToolPreFold | ToolPostFold | ToolErrorFold>;
    if (!this.#special[point] && options?.signal === undefined) {
      return d.decide(point, body, fold) as Folded;
    }
    return d.start(point, body, DECIDE, options, 0) as Folded;
  }
}

function rejectUnknown(point: unknown): Promise<never> {
  return Promise.reject(new UnknownHookPointError(point, HOOK_POINTS, "emit hook"));
}
