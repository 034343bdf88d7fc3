/**
 * `SessionObserver`: the session's recording and reactive fan-out transport.
 *
 * @module
 */

import { Entity } from "../core/entity.ts";
import { Signal } from "../core/signal.ts";
import { RECORD, RECORD_HOOK } from "../core/_record.ts";
import { isThenable } from "../core/_util.ts";
import type { SessionStore } from "../store/session_store.ts";
import { reportFailure } from "./_loud_failures.ts";
import { collectTypeMatches, payloadOf } from "./_match.ts";
import {
  NO_SUBSCRIPTIONS,
  PERSIST,
  persistSubscription,
  type Subscription,
  subscriptionOf,
  type Subscriptions,
  without,
} from "./_subscription.ts";
import { FanOut } from "./_fan_out.ts";
import { EventLog } from "./_event_log.ts";
import { applyRoutes, NO_ROUTES, type Route, routeOf } from "./_routes.ts";
import { askGate, isAudit } from "./_gate.ts";
import { signalWriter } from "./_persist_binding.ts";
import { GateDenied } from "./signal.ts";
import { DeferredHookSignal } from "./_deferred_signal.ts";
import { HookSignal } from "../hooks/hook_signal.ts";
import type { HookPoint } from "../hooks/hook_point.ts";
import type { Session } from "./session.ts";

/** A reactive subscriber: called with each matched value and the Session (or the observer). */
export type ObserverHandler<T> = (value: T, context: Session | SessionObserver) => unknown;

/**
 * What a subscription matches; the given conditions are AND-composed, at least one is required.
 *
 * - `type` alone: the payload when it is an instance; otherwise every own field value of the
 *   payload that is an instance (one call each); plus the envelope itself when it is an instance
 *   and distinct from the payload. So `{ type: MessageAdded }` receives the envelope and
 *   `{ type: MyData }` the unwrapped data.
 * - `role`: the envelope's `emitterRole` must equal it. With `role` alone the value is the payload.
 * - `type` with `role`: the type filter on the payload only (instance or field values, no
 *   envelope fallback).
 * - `where` (alone or with `type`/`role`): a composite filter on the payload only: the payload
 *   must be an instance of `type` (when given) and satisfy `where`; the value is the payload.
 *
 * The payload is the signal's `data` when that is not `null`/`undefined`, otherwise the signal
 * itself.
 */
export interface ObserveSpec<T> {
  /** A class the value must be an instance of. */
  type?: abstract new (...args: never[]) => T;
  /** A predicate on the payload; a throwing predicate counts as no match and is reported. */
  where?: (payload: unknown) => boolean;
  /** The envelope's `emitterRole`. */
  role?: string;
}

/** A governance gate: sync or async; falsy or throwing denies. */
export type Gate = (payload: unknown) => boolean | Promise<boolean>;

/** Options for {@linkcode SessionObserver}. */
export interface SessionObserverOptions {
  /** The session handlers get as their context. */
  session?: Session;
  /**
   * Where isolated failures go (`where` is `"subscriber"`, `"route"`, `"where"`, `"gate"` or
   * `"persist"`). Defaults to the library logger at `warn` level.
   */
  onError?: (error: unknown, where: string) => void;
  /**
   * Keep at most this many events: when one more is stored the oldest is evicted from `events`,
   * from every `routed()` list and so from `byType()`. Eviction is per emission: an envelope emitted
   * twice leaves the routed lists only for its older emission. Persisted rows are never affected.
   * Default: unbounded.
   */
  maxEvents?: number;
}

function defaultOnError(error: unknown, where: string): void {
  reportFailure("Session observer", error, where);
}

/**
 * The session's recording and reactive fan-out transport: one ordered Flow of events, named
 * routed lists, typed subscriptions, one governance gate and optional database persistence.
 *
 * `emit(event)` runs in this order: coerce a non-element value to
 * `Signal({ data: value })` → ask the gate about the payload (audit signals `GateDenied` and
 * `HookBlocked` bypass it) → store the event in the Flow even when denied → if allowed,
 * append it to matching routes → call matching subscribers in registration order → gather the
 * async ones with one `Promise.all` → resolve to the sync results (registration order) followed
 * by the async results (registration order). Denied events resolve to `[]`.
 *
 * Subscriber, route and predicate failures are isolated: the event stays stored, the other
 * subscribers run, the failure goes to `onError`, and a failed subscriber contributes no result.
 *
 * @example Observe, route and gate
 * ```ts
 * import { SessionObserver } from "@hookscope/core/session";
 * import { Signal } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const observer = new SessionObserver();
 * observer.observe({ where: (p) => typeof p === "number" }, (n) => (n as number) * 2);
 * observer.route((p) => p === "audit", { into: "audit" });
 * assert.deepEqual(await observer.emit(21), [42]);
 * await observer.emit("audit");
 * assert.equal(observer.routed("audit").length, 1);
 * observer.gate((p) => p !== "secret");
 * assert.deepEqual(await observer.emit("secret"), []);
 * assert.equal(observer.events.length, 3); // stored even when denied
 * assert.ok(observer.events[0] instanceof Signal);
 * ```
 */
export class SessionObserver {
  #session: Session | null;
  #onError: (error: unknown, where: string) => void;
  #subs: Subscriptions = NO_SUBSCRIPTIONS;
  #routes: readonly Route[] = NO_ROUTES;
  /**
   * Copy-on-write without a copy per registration: a delivery iterates the arrays it was given
   * and sets `#taken`; `observe` and `route` copy an array once after that and then append to
   * the copy in place until the next delivery (n registrations: O(n) overall).
   */
  #taken = false;
  #subsOwned = false;
  #routesOwned = false;
  #gate: Gate | null = null;
  #log: EventLog;
  #fanOut: FanOut;
  #persist: Subscription | null = null;
  /** Reports an isolated failure; a failing reporter must not turn it into a broken emit. */
  #report = (error: unknown, where: string): void => {
    try {
      this.#onError(error, where);
    } catch {
      // Nothing left to tell.
    }
  };

  /** Makes an observer, optionally for a session. */
  constructor(options?: SessionObserverOptions) {
    if (options !== undefined && (options === null || typeof options !== "object")) {
      throw new TypeError("Cannot create session observer: options must be an object");
    }
    const onError = options?.onError;
    if (onError !== undefined && typeof onError !== "function") {
      throw new TypeError("Cannot create session observer: onError must be a function");
    }
    const maxEvents = options?.maxEvents ?? Infinity;
    if (
      typeof maxEvents !== "number" || Number.isNaN(maxEvents) || maxEvents < 1 ||
      (Number.isFinite(maxEvents) && !Number.isInteger(maxEvents))
    ) {
      throw new RangeError(
        `Cannot create session observer: maxEvents must be a positive integer; got ${
          String(maxEvents)
        }`,
      );
    }
    this.#session = options?.session ?? null;
    this.#onError = onError ?? defaultOnError;
    this.#log = new EventLog(maxEvents);
    this.#fanOut = new FanOut(this.#report);
  }

  /** The session handlers get as context, or `null`. */
  get session(): Session | null {
    return this.#session;
  }

  /**
   * Every stored event (allowed or gated) in emission order; a copy. With `maxEvents`, only the
   * newest `maxEvents`.
   */
  get events(): readonly unknown[] {
    return this.#log.events();
  }

  /** The `maxEvents` bound (`Infinity` when unbounded). */
  get maxEvents(): number {
    return this.#log.maxEvents;
  }

  /**
   * Subscribes a handler; returns a disposer that calls `unobserve(handler)`.
   *
   * @example Type filters: envelope or unwrapped data
   * ```ts
   * import { SessionObserver } from "@hookscope/core/session";
   * import { Signal } from "@hookscope/core";
   * import assert from "node:assert/strict";
   *
   * class Plan {
   *   steps: number;
   *   constructor(steps: number) { this.steps = steps; }
   * }
   * const observer = new SessionObserver();
   * const plans: Plan[] = [];
   * const signals: Signal[] = [];
   * observer.observe({ type: Plan }, (plan) => { plans.push(plan); });
   * const dispose = observer.observe({ type: Signal }, (signal) => { signals.push(signal); });
   * await observer.emit(new Signal({ data: new Plan(2) }));
   * assert.equal(plans[0].steps, 2);
   * assert.equal(signals.length, 1);
   * assert.equal(dispose(), 1);
   * ```
   */
  observe<T>(spec: ObserveSpec<T>, handler: ObserverHandler<T>): () => number {
    const sub = subscriptionOf(spec, handler);
    this.#writable();
    if (!this.#subsOwned) {
      this.#subs = this.#subs.slice();
      this.#subsOwned = true;
    }
    (this.#subs as Subscription[]).push(sub);
    let disposed = false;
    return () => {
      if (disposed) return 0;
      disposed = true;
      return this.unobserve(handler as ObserverHandler<never>);
    };
  }

  /** Removes every subscription with this exact handler; returns how many were removed. */
  unobserve(handler: ObserverHandler<never>): number {
    const before = this.#subs;
    const next = without(before, (s) => s.kind !== PERSIST && s.handler === handler);
    this.#subs = next;
    this.#subsOwned = false;
    return before.length - next.length;
  }

  /**
   * Appends every allowed event whose payload satisfies `condition` to the list `into` (read it
   * with `routed(into)`); a
   * throwing condition is reported and skipped. Chainable.
   *
   * @example
   * ```ts
   * import { SessionObserver } from "@hookscope/core/session";
   * import assert from "node:assert/strict";
   *
   * const observer = new SessionObserver().route((p) => p === 1, { into: "ones" });
   * await observer.emit(1);
   * await observer.emit(2);
   * assert.equal(observer.routed("ones").length, 1);
   * assert.deepEqual(observer.routed("unknown"), []);
   * ```
   */
  route(condition: (payload: unknown) => boolean, options: { into: string }): this {
    const route = routeOf(condition, options);
    this.#writable();
    if (!this.#routesOwned) {
      this.#routes = this.#routes.slice();
      this.#routesOwned = true;
    }
    (this.#routes as Route[]).push(route);
    return this;
  }

  /** After a delivery, neither array may change in place (the delivery may still hold it). */
  #writable(): void {
    if (!this.#taken) return;
    this.#taken = false;
    this.#subsOwned = false;
    this.#routesOwned = false;
  }

  /** Sets (or with `null` clears) the one governance gate; replaces any previous gate. Chainable. */
  gate(check: Gate | null): this {
    if (check !== null && typeof check !== "function") {
      throw new TypeError("Cannot set gate: check must be a function or null");
    }
    this.#gate = check;
    return this;
  }

  /**
   * Asks the gate about an action. No gate → `true`, nothing recorded. A falsy or throwing gate
   * denies: a {@linkcode GateDenied} with the action as data is emitted (stored, delivered to
   * subscribers, persisted; the gate does not see it) and the result is `false`. A gate
   * that does not settle within `options.timeoutMs` (default 30 000) denies too; an abort of
   * `options.signal` rejects with its reason.
   *
   * @example
   * ```ts
   * import { GateDenied, SessionObserver } from "@hookscope/core/session";
   * import assert from "node:assert/strict";
   *
   * const observer = new SessionObserver();
   * assert.equal(await observer.authorize("anything"), true);
   * observer.gate(async () => { throw new Error("policy store down"); });
   * assert.equal(await observer.authorize("rm"), false);
   * assert.equal(observer.byType(GateDenied).length, 1);
   * ```
   */
  async authorize(
    action: unknown,
    options?: { signal?: AbortSignal; timeoutMs?: number },
  ): Promise<boolean> {
    const gate = this.#gate;
    if (gate === null) return true;
    const allowed = await askGate(gate, action, this.#report, options);
    if (!allowed) await this.emit(new GateDenied({ data: action }));
    return allowed;
  }

  /** Emits an event in the order the class description gives. */
  emit(event: unknown): Promise<unknown[]> {
    const out = this.#emit(event);
    return Array.isArray(out) ? Promise.resolve(out) : out;
  }

  /**
   * `emit(event)` for a bus (private protocol, see `core/_record.ts`): `undefined` when every
   * subscriber finished synchronously, else a promise (which never rejects: failures are isolated
   * and reported like `emit`'s).
   */
  [RECORD](event: unknown): Promise<unknown> | undefined {
    const out = this.#emit(event);
    return Array.isArray(out) ? undefined : out;
  }

  /**
   * `[RECORD](new HookSignal({ point, payload }))` for a bus (private protocol, see
   * `core/_record.ts`). With no subscription, route or gate nothing can see the envelope now, so
   * only its time and a shallow payload copy are taken; the log builds the `HookSignal` when the
   * event is first read (or never, when it is evicted unread).
   */
  [RECORD_HOOK](point: string, payload: Record<string, unknown>): Promise<unknown> | undefined {
    if (this.#subs.length === 0 && this.#routes.length === 0 && this.#gate === null) {
      this.#log.store(new DeferredHookSignal(point, payload));
      return undefined;
    }
    return this[RECORD](new HookSignal({ point: point as HookPoint, payload }));
  }

  #emit(event: unknown): unknown[] | Promise<unknown[]> {
    const envelope = event instanceof Entity ? event : new Signal({ data: event });
    const payload = payloadOf(envelope);
    const gate = this.#gate;
    if (gate === null || isAudit(envelope)) {
      return this.#deliver(envelope, payload, this.#log.store(envelope));
    }
    let verdict: unknown;
    try {
      verdict = gate(payload);
    } catch (error) {
      this.#report(error, "gate");
      verdict = false;
    }
    if (isThenable(verdict)) return this.#emitAfterGate(envelope, payload, verdict);
    const position = this.#log.store(envelope);
    return verdict ? this.#deliver(envelope, payload, position) : [];
  }

  async #emitAfterGate(
    envelope: Entity,
    payload: unknown,
    verdict: PromiseLike<unknown>,
  ): Promise<unknown[]> {
    let allowed: unknown;
    try {
      allowed = await verdict;
    } catch (error) {
      this.#report(error, "gate");
      allowed = false;
    }
    const position = this.#log.store(envelope);
    return allowed ? this.#deliver(envelope, payload, position) : [];
  }

  #deliver(
    envelope: Entity,
    payload: unknown,
    position: number,
  ): unknown[] | Promise<unknown[]> {
    const routes = this.#routes;
    this.#taken = true;
    if (routes.length !== 0) applyRoutes(routes, payload, position, this.#log, this.#report);
    return this.#fanOut.deliver(this.#subs, envelope, payload, this.#session ?? this);
  }

  /**
   * The events `route()` appended under `name`, in order (a copy); an unknown name gives `[]`.
   * (Was `stream(name)`: it returned an array, not a stream.)
   */
  routed(name: string): readonly unknown[] {
    return this.#log.stream(name);
  }

  /**
   * Every stored event (allowed or gated) matching a type filter for `type` (envelope fallback
   * included), in storage order.
   *
   * @example
   * ```ts
   * import { SessionObserver } from "@hookscope/core/session";
   * import { Signal } from "@hookscope/core";
   * import assert from "node:assert/strict";
   *
   * const observer = new SessionObserver();
   * await observer.emit("a");
   * await observer.emit(new Signal({ data: "b" }));
   * assert.equal(observer.byType(Signal).length, 2);
   * assert.deepEqual(observer.byType(String), []);
   * ```
   */
  byType<T>(type: abstract new (...args: never[]) => T): T[] {
    if (typeof type !== "function") {
      throw new TypeError("Cannot list by type: type must be a class");
    }
    const out: T[] = [];
    this.#log.forEach((event) => collectTypeMatches(event as Entity, type, out));
    return out;
  }

  /**
   * Persists every allowed {@linkcode Signal} (including audit signals) as one row through
   * `store.insertSessionSignal`: `kind` is the class name, `opId` the signal's `opId` or `""`,
   * `ts` now, `payload` {@linkcode sanitizeSignalPayload}. The write runs as a subscriber in
   * registration order and `emit` waits for it; a failing write is reported to `onError`
   * (`"persist"`) and never rejects `emit`. Without `store`, the session's store is used; with
   * neither it throws. Binding again replaces the previous binding.
   *
   * @example
   * ```ts
   * import { SessionObserver } from "@hookscope/core/session";
   * import { MemoryStore } from "@hookscope/core";
   * import assert from "node:assert/strict";
   *
   * const store = new MemoryStore();
   * const observer = new SessionObserver();
   * observer.bindDbPersistence("s1", store);
   * await observer.emit({ step: 1 });
   * const [row] = await store.listSessionSignals("s1");
   * assert.equal(row.kind, "Signal");
   * assert.deepEqual(row.payload.data, { step: 1 });
   * ```
   */
  bindDbPersistence(sessionId: string, store?: SessionStore): void {
    const sub = persistSubscription(signalWriter(sessionId, store, this.#session?.store));
    const previous = this.#persist;
    this.#persist = sub;
    const kept = previous === null ? this.#subs : without(this.#subs, (s) => s === previous);
    this.#subs = [...kept, sub];
    this.#subsOwned = false;
  }

  /** Removes the persistence subscription; a no-op when none is bound. */
  unbindDbPersistence(): void {
    const previous = this.#persist;
    if (previous === null) return;
    this.#persist = null;
    this.#subs = without(this.#subs, (s) => s === previous);
    this.#subsOwned = false;
  }

  /** Whether database persistence is bound. */
  get persisting(): boolean {
    return this.#persist !== null;
  }
}
