// The dispatch loops of `HookBus`: how one emission runs a point's chain, folds its decisions
// and records its HookSignal. Private to the hooks folder.
//
// Performance contract (measured by bench/emit_bench.ts, blocking_bench.ts,
// decision_fold_bench.ts and observed_bench.ts; numbers in bench/README.md). Every change here
// must keep it:
//
// 1. Nothing is copied per emission. An emission runs the arrays of `Chains` as they are
//    (copy-on-write: registration copies them once after an emission took them).
// 2. A point with no handlers and no observer costs one shared settled promise: no allocation,
//    no microtask beyond it.
// 3. A chain registered without options, emitted without `EmitOptions` (`run`), calls sync
//    handlers in a plain loop and awaits only what is thenable (`runAsync` from the first
//    thenable on); a chain of `async` functions only is awaited unconditionally (`awaitEach`),
//    the shape of a hand-written `for … await` loop. No timer, no signal listener, no closure.
// 4. Options cost nothing unused: the option-aware loop (`start` / `drive` / `driveAsync`) runs
//    only when a point holds a registration that needs it (match, once, timeoutMs, onFailure,
//    shadow) or the emission carries `EmitOptions`. There, a timer exists only while a
//    handler's promise is still pending a microtask after it returned (a sync result, or an
//    `async` handler that returned without waiting, arms none). An emission without
//    `EmitOptions` that does not fold (`runEntries`) runs its sync prefix with no run state at
//    all: the state (`Run`) is made only when a handler fails or returns a thenable.
// 5. `decide()` with no handler returning a decision allocates nothing (a sync prefix returns a
//    shared fold); the fold state is made at the first decision.
// 6. No `Object.freeze` on per-call values in the loops (it measured 3–4× a 20-hook chain).

import { HookTimeoutError, StopHook } from "./errors.ts";
import { RECORD, RECORD_HOOK } from "../core/_record.ts";
import { isThenable, messageOf } from "../core/_util.ts";
import { abortable, deadline, TIMED_OUT } from "../core/_async.ts";
import type { SignalSink } from "../core/signal.ts";
import { HookPoint } from "./hook_point.ts";
import { HookSignal } from "./hook_signal.ts";
import { TOOL_PRE_PASSES, UnsettledArgumentsError } from "./decision.ts";
import type { EmitOptions, HookBusOptions, HookContext } from "./bus.ts";
import type { Chain, Entries, Entry } from "./_entry.ts";
import { Chains } from "./_chains.ts";
import { EMIT_RESULTS, type ResultSink, type WithResultSink } from "./_emit_results.ts";
import {
  Fold,
  type FoldKind,
  foldOf,
  GATE,
  NO_ERROR_DECISION,
  NO_PRE_DECISION,
  postFold,
  RECOVER,
  STOP,
  type ToolErrorFold,
  type ToolPostFold,
  type ToolPreFold,
} from "./_fold.ts";

/** The one settled promise emissions return when nothing was pending. */
export const RESOLVED: Promise<void> = Promise.resolve();
const NOOP = (): void => {};
const NO_ENTRIES: Entries = Object.freeze([]) as Entries;
// Created on first use, not at module load.
let NO_PRE_PROMISE: Promise<ToolPreFold> | null = null;

type Call = (payload: unknown, context: HookContext) => unknown;
type Outcome = Promise<ToolPreFold | ToolPostFold | ToolErrorFold | void>;

/** Failures are reported, the chain goes on. */
export const ISOLATED = 0;
/** A failure rejects the emission and ends the chain. */
export const BLOCKING = 1;
/** The chain's decisions are folded (`decide`). */
export const DECIDE = 2;
/** How an emission treats failures and results. */
export type Kind = typeof ISOLATED | typeof BLOCKING | typeof DECIDE;

/** Where isolated failures go. */
export type OnError = NonNullable<HookBusOptions["onError"]>;

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
    `Hook ${hook ? `"${hook}" ` : ""}at ${point} was abandoned: aborted (${messageOf(reason)})`,
    "AbortError",
  );
  Object.defineProperty(error, "cause", { value: reason });
  return error;
}

/** The state of one option-aware emission. */
class Run {
  readonly point: HookPoint;
  readonly kind: Kind;
  /** Whether the point is a gate (`tool.pre`'s fold and failure policy). */
  readonly gate: boolean;
  readonly signal: AbortSignal | undefined;
  readonly context: HookContext;
  readonly fold: Fold | null;
  current: Record<string, unknown>;
  /** The chain snapshot the emission runs (every pass of a fold runs the same one). */
  entries: Entries = NO_ENTRIES;
  /** Sees each handler's outcome of an emission that does not fold (`_emit_results.ts`). */
  sink: ResultSink | undefined = undefined;

  constructor(
    point: HookPoint,
    payload: Record<string, unknown>,
    kind: Kind,
    signal: AbortSignal | undefined,
    context: HookContext,
    gate: boolean,
    fold?: Fold,
  ) {
    this.point = point;
    this.kind = kind;
    this.gate = gate;
    this.signal = signal;
    this.context = context;
    this.current = payload;
    this.fold = fold ?? (kind === DECIDE ? new Fold(payload, point) : null);
  }
}

/** The tables of one bus and the loops that run them. */
export class Dispatcher extends Chains {
  /** The observer HookSignals are recorded into, or `null`. */
  observer: SignalSink | null;
  /** The context handed to every handler (frozen). */
  readonly context: HookContext;
  readonly #onError: OnError;

  constructor(observer: SignalSink | null, context: HookContext, onError: OnError) {
    super();
    this.observer = observer;
    this.context = context;
    this.#onError = onError;
  }

  /**
   * Runs the chain synchronously until a handler returns a thenable, then `runAsync`. `blocking`
   * `null` means as the point says (`emit`: a gate point blocks), read only when it matters (a
   * failure, or the chain going async): a chain that neither fails nor waits never asks.
   */
  run(point: HookPoint, payload: Record<string, unknown>, blocking: boolean | null): Promise<void> {
    const chain = this.chains[point];
    if (chain.length === 0) return this.record(point, payload);
    this.taken = true;
    if (this.allAsync[point]) {
      return this.awaitEach(point, payload, blocking ?? foldOf(point) === GATE, chain);
    }
    const context = this.context;
    for (let i = 0; i < chain.length; i++) {
      let result: unknown;
      try {
        result = (chain[i] as Call)(payload, context);
      } catch (error) {
        if (error instanceof StopHook) break;
        if (blocking ?? foldOf(point) === GATE) return Promise.reject(error);
        this.report(error, point, "handler");
        continue;
      }
      if (isThenable(result)) {
        const blocks = blocking ?? foldOf(point) === GATE;
        return this.runAsync(point, payload, blocks, chain, i, result);
      }
    }
    return this.record(point, payload);
  }

  /**
   * A chain of `async` functions only: each returns a promise, so each is awaited as it comes,
   * with no thenable check, in the shape of a hand-written `for … await` loop (on V8 an `await`
   * inside a branch costs about 10–20 ns more per handler than an unconditional one, most of
   * what a settled promise costs). Other chains take the sync prefix and `runAsync`, which
   * await only thenables.
   */
  async awaitEach(
    point: HookPoint,
    payload: Record<string, unknown>,
    blocking: boolean,
    chain: Chain,
  ): Promise<void> {
    const context = this.context;
    for (let i = 0; i < chain.length; i++) {
      try {
        await (chain[i] as Call)(payload, context);
      } catch (error) {
        if (error instanceof StopHook) break;
        if (blocking) throw error;
        this.report(error, point, "handler");
      }
    }
    const recorded = this.record(point, payload);
    if (recorded !== RESOLVED) await recorded;
  }

  async runAsync(
    point: HookPoint,
    payload: Record<string, unknown>,
    blocking: boolean,
    chain: Chain,
    index: number,
    pending: PromiseLike<unknown>,
  ): Promise<void> {
    const context = this.context;
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
        this.report(error, point, "handler");
      }
    }
    const recorded = this.record(point, payload);
    if (recorded !== RESOLVED) await recorded;
  }

  /**
   * `decide()` without options on a point with no option-aware registration: a sync loop in
   * which handlers that return nothing cost a call each and allocate nothing; the fold state is
   * made at the first decision and applied in the same loop. A thenable, a throw or a rewrite
   * that needs another pass hands the fold to the general loop (`#resume` / `#finish`).
   */
  decide(point: HookPoint, body: Record<string, unknown>, kind: FoldKind): Outcome {
    const gate = kind === GATE;
    const entries = this.entries[point];
    this.taken = true;
    const context = this.context;
    let fold: Fold | null = null;
    let current = body;
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i];
      let result: unknown;
      try {
        result = (entry.handler as Call)(current, context);
      } catch (error) {
        if (error instanceof StopHook) break;
        const run = new Run(point, current, DECIDE, undefined, context, gate, fold ?? undefined);
        return this.#resume(run, entries, i, true, error);
      }
      if (result === undefined || (typeof result !== "object" && typeof result !== "function")) {
        continue;
      }
      if (isThenable(result)) {
        const run = new Run(point, current, DECIDE, undefined, context, gate, fold ?? undefined);
        return this.#resume(run, entries, i, false, result);
      }
      fold ??= new Fold(body, point);
      let next: Record<string, unknown> | null | typeof STOP;
      try {
        next = gate ? fold.pre(result, entry) : fold.post(result, entry);
      } catch (error) {
        return Promise.reject(error);
      }
      if (next === STOP) break;
      if (next !== null) current = next;
    }
    if (fold !== null && fold.rewrote && fold.error === undefined && fold.verdict !== 3) {
      // Another pass on the rewritten arguments: the general loop's `#finish` runs it.
      const run = new Run(point, current, DECIDE, undefined, context, gate, fold);
      run.entries = entries;
      return this.#finish(run);
    }
    const recorded = fold === null || fold.error === undefined
      ? this.record(point, current)
      : RESOLVED;
    let result: ToolPreFold | ToolPostFold | ToolErrorFold;
    if (fold === null) {
      if (gate) {
        return recorded === RESOLVED
          ? (NO_PRE_PROMISE ??= Promise.resolve(NO_PRE_DECISION))
          : recorded.then(() => NO_PRE_DECISION);
      }
      result = kind === RECOVER ? NO_ERROR_DECISION : postFold(body.result);
    } else result = gate ? fold.toPre() : fold.recover ? fold.toError() : fold.toPost();
    return recorded === RESOLVED ? Promise.resolve(result) : recorded.then(() => result);
  }

  /**
   * `emit` / `blockingEmit` without `EmitOptions` on a point with an option-aware registration:
   * match and once in a sync loop that allocates nothing while handlers return synchronously and
   * succeed (no signal, no result sink, no fold: a returned value means nothing here). A failure
   * or a thenable hands the emission to the general loop at that handler (`#resume`). `kind`
   * `null` means as the point says (a gate point blocks), read only then.
   */
  runEntries(point: HookPoint, payload: Record<string, unknown>, kind: Kind | null): Outcome {
    const entries = this.entries[point];
    this.taken = true;
    const context = this.context;
    try {
      for (let i = 0; i < entries.length; i++) {
        const entry = entries[i];
        if (entry.match !== null && !this.#matches(entry, payload, point)) continue;
        if (entry.once) entry.dispose?.();
        let value: unknown;
        try {
          value = (entry.handler as Call)(payload, context);
        } catch (error) {
          if (error instanceof StopHook) break;
          return this.#resume(this.#runOf(point, payload, kind), entries, i, true, error);
        }
        if (isThenable(value)) {
          return this.#resume(this.#runOf(point, payload, kind), entries, i, false, value);
        }
      }
    } catch (error) {
      // A `then` getter that throws (as in `#drive`): the emission rejects, it never throws.
      return Promise.reject(error);
    }
    return this.record(point, payload);
  }

  /** The run state of a `runEntries` emission that needs the general loop from here on. */
  #runOf(point: HookPoint, payload: Record<string, unknown>, kind: Kind | null): Run {
    const gate = foldOf(point) === GATE;
    return new Run(
      point,
      payload,
      kind ?? (gate ? BLOCKING : ISOLATED),
      undefined,
      this.context,
      gate,
    );
  }

  /** The option-aware path from `start`: match, once, deadlines, onFailure, shadow, signal. */
  start(
    point: HookPoint,
    payload: Record<string, unknown>,
    kind: Kind,
    options: EmitOptions | undefined,
    start: number,
  ): Outcome {
    const signal = options?.signal;
    if (signal?.aborted) return Promise.reject(signal.reason);
    const context: HookContext = signal === undefined
      ? this.context
      : Object.freeze({ ...this.context, signal });
    const run = new Run(point, payload, kind, signal, context, foldOf(point) === GATE);
    run.sink = (options as WithResultSink | undefined)?.[EMIT_RESULTS];
    this.taken = true;
    return this.#drive(run, this.entries[point], start);
  }

  /** Applies an outcome already known for `entries[index]`, then drives on from `index + 1`. */
  #resume(
    run: Run,
    entries: Entries,
    index: number,
    failed: boolean,
    outcome: unknown,
  ): Outcome {
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
  #drive(run: Run, entries: Entries, start: number): Outcome {
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
            this.report(error, run.point, "handler");
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
  ): Outcome {
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
        if (isThenable(value)) value = await deadline(value, entry.timeoutMs, signal);
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
    const gate = run.gate;
    if (failed) {
      let error = outcome;
      const signal = run.signal;
      if (signal?.aborted && error === signal.reason) throw abandoned(error, run.point, entry);
      if (error instanceof StopHook) return true;
      if (error === TIMED_OUT) {
        error = new HookTimeoutError(run.point, entry.timeoutMs, entry.name);
      }
      if (fold !== null && entry.shadow && gate) {
        fold.shadowed("deny", messageOf(error), entry.name);
        return false;
      }
      if (
        run.sink !== undefined && fold === null && !entry.shadow && entry.onFailure !== "continue"
      ) {
        run.sink(error, true, entry.name);
      }
      const policy = entry.onFailure ??
        (gate && run.kind !== ISOLATED ? "block" : "continue");
      if (policy === "block" && !entry.shadow) {
        if (fold !== null && gate) {
          fold.fail(error, entry.name);
          return true;
        }
        throw error;
      }
      this.report(error, run.point, "handler");
      return false;
    }
    if (fold === null) {
      if (run.sink !== undefined && !entry.shadow) run.sink(outcome, false, entry.name);
      return false;
    }
    if (gate) {
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
  #finish(run: Run): Outcome {
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
      recorded = this.record(run.point, run.current);
      if (recorded !== RESOLVED && run.signal !== undefined) {
        recorded = abortable(recorded, run.signal);
      }
    }
    if (fold === null) return recorded;
    const result = run.gate ? fold.toPre() : fold.recover ? fold.toError() : fold.toPost();
    return recorded === RESOLVED ? Promise.resolve(result) : recorded.then(() => result);
  }

  #matches(entry: Entry, payload: Record<string, unknown>, point: HookPoint): boolean {
    try {
      return entry.match!(payload);
    } catch (error) {
      this.report(error, point, "handler");
      return false;
    }
  }

  /** Hands an isolated failure to `onError`; a failing reporter is ignored. */
  report(error: unknown, point: HookPoint, stage: "handler" | "record"): void {
    try {
      this.#onError(error, { point, stage });
    } catch {
      // A failing error reporter must not turn an isolated failure into a broken emit.
    }
  }

  /** Records the emission's HookSignal in the observer (never for `message.add`). */
  record(point: HookPoint, payload: Record<string, unknown>): Promise<void> {
    const observer = this.observer;
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
      this.report(error, point, "record");
      return RESOLVED;
    }
    if (!isThenable(result)) return RESOLVED;
    return Promise.resolve(result).then(NOOP, (error) => {
      this.report(error, point, "record");
    });
  }
}
