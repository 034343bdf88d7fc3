/**
 * `SessionObserver`: the session's recording and reactive fan-out transport.
 *
 * @module
 */

import { Entity } from "../core/entity.ts";
import { reportFailure } from "./_loud_failures.ts";
import { Signal } from "../core/signal.ts";
import { RECORD } from "../core/_record.ts";
import type { SessionStore, SignalInsert } from "../store/session_store.ts";
import { sanitizeSignalPayload } from "./sanitize.ts";
import { race, TIMED_OUT } from "../core/_race.ts";
import {
  ApprovalAnswered,
  ApprovalRequested,
  GateDenied,
  HookBlocked,
  ToolDenied,
  WouldAsk,
  WouldDeny,
} from "./signal.ts";
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
   * from every `stream()` and so from `byType()`. Eviction is per emission: an envelope emitted
   * twice leaves the streams only for its older emission. Persisted rows are never affected.
   * Default: unbounded.
   */
  maxEvents?: number;
}

const TYPE = 0;
const ROLE = 1;
const PAYLOAD = 2;
const PERSIST = 3;

interface Subscription {
  readonly kind: typeof TYPE | typeof ROLE | typeof PAYLOAD | typeof PERSIST;
  readonly handler: (value: never, context: Session | SessionObserver) => unknown;
  readonly type: (abstract new (...args: never[]) => unknown) | undefined;
  readonly where: ((payload: unknown) => boolean) | undefined;
  readonly role: string | undefined;
}

interface Route {
  readonly condition: (payload: unknown) => boolean;
  readonly into: string;
}

type Subscriptions = readonly Subscription[];

const NO_SUBSCRIPTIONS: Subscriptions = Object.freeze([]) as Subscriptions;
const NO_ROUTES: readonly Route[] = Object.freeze([]) as readonly Route[];
/** Marks async results that are not part of `emit`'s result (failures, persistence). */
const OMIT: unique symbol = Symbol("omit");
const omit = (): typeof OMIT => OMIT;

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return value != null && typeof (value as { then?: unknown }).then === "function";
}

/** What gates, routes and predicates see: `data` when it is not null/undefined, otherwise the envelope itself. */
function payloadOf(envelope: object): unknown {
  if (envelope instanceof Signal) {
    const data = envelope.data;
    return data === null || data === undefined ? envelope : data;
  }
  return envelope;
}

/** The payload's own field values that are instances of `type`; a throwing getter is skipped. */
function ownInstances(
  payload: object,
  type: abstract new (...args: never[]) => unknown,
): unknown[] | null {
  let out: unknown[] | null = null;
  const record = payload as Record<string, unknown>;
  for (const key in record) {
    if (!Object.hasOwn(record, key)) continue;
    let value: unknown;
    try {
      value = record[key];
    } catch {
      continue;
    }
    if (value instanceof type) (out ??= []).push(value);
  }
  return out;
}

/** How long a governance gate may take before it counts as a denial. */
const GATE_TIMEOUT_MS = 30_000;

function isAudit(envelope: object): boolean {
  return envelope instanceof GateDenied || envelope instanceof HookBlocked ||
    envelope instanceof ToolDenied || envelope instanceof ApprovalRequested ||
    envelope instanceof ApprovalAnswered || envelope instanceof WouldDeny ||
    envelope instanceof WouldAsk;
}

function roleOf(envelope: object): unknown {
  return (envelope as { emitterRole?: unknown }).emitterRole;
}

function defaultOnError(error: unknown, where: string): void {
  reportFailure("Session observer", error, where);
}

/**
 * The session's recording and reactive fan-out transport: one ordered Flow of events, named
 * streams, typed subscriptions, one governance gate and optional database persistence.
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
 * assert.equal(observer.stream("audit").length, 1);
 * observer.gate((p) => p !== "secret");
 * assert.deepEqual(await observer.emit("secret"), []);
 * assert.equal(observer.events.length, 3); // stored even when denied
 * assert.ok(observer.events[0] instanceof Signal);
 * ```
 */
export class SessionObserver {
  #session: Session | null;
  #onError: (error: unknown, where: string) => void;
  #maxEvents: number;
  #subs: Subscriptions = NO_SUBSCRIPTIONS;
  #routes: readonly Route[] = NO_ROUTES;
  /** Per stream, the absolute positions (see `#offset`) of the events appended to it. */
  #streams = new Map<string, number[]>();
  #gate: Gate | null = null;
  #events: unknown[] = [];
  #head = 0;
  /** The absolute position of `#events[0]`: how many slots compaction has dropped. */
  #offset = 0;
  #persist: Subscription | null = null;
  #subscriberFailed: (error: unknown) => typeof OMIT;
  #persistFailed: (error: unknown) => typeof OMIT;

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
    this.#maxEvents = maxEvents;
    this.#subscriberFailed = (error) => {
      this.#report(error, "subscriber");
      return OMIT;
    };
    this.#persistFailed = (error) => {
      this.#report(error, "persist");
      return OMIT;
    };
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
    return this.#events.slice(this.#head);
  }

  /** The `maxEvents` bound (`Infinity` when unbounded). */
  get maxEvents(): number {
    return this.#maxEvents;
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
    if (spec === null || typeof spec !== "object") {
      throw new TypeError("Cannot observe: spec must be an object");
    }
    const { type, where, role } = spec;
    if (type === undefined && where === undefined && role === undefined) {
      throw new TypeError("Cannot observe: spec needs at least one of type, where or role");
    }
    if (type !== undefined && typeof type !== "function") {
      throw new TypeError("Cannot observe: type must be a class");
    }
    if (where !== undefined && typeof where !== "function") {
      throw new TypeError("Cannot observe: where must be a function");
    }
    if (role !== undefined && typeof role !== "string") {
      throw new TypeError("Cannot observe: role must be a string");
    }
    if (typeof handler !== "function") {
      throw new TypeError("Cannot observe: handler must be a function");
    }
    const kind = where === undefined && role === undefined
      ? TYPE
      : type === undefined && where === undefined
      ? ROLE
      : PAYLOAD;
    const sub: Subscription = {
      kind,
      handler: handler as Subscription["handler"],
      type: type as Subscription["type"],
      where,
      role,
    };
    this.#subs = [...this.#subs, sub];
    let disposed = false;
    return () => {
      if (disposed) return 0;
      disposed = true;
      return this.unobserve(handler as ObserverHandler<never>);
    };
  }

  /** Removes every subscription with this exact handler; returns how many were removed. */
  unobserve(handler: ObserverHandler<never>): number {
    const before = this.#subs.length;
    const next = this.#subs.filter((s) => s.kind === PERSIST || s.handler !== handler);
    if (next.length === before) return 0;
    this.#subs = next.length === 0 ? NO_SUBSCRIPTIONS : next;
    return before - next.length;
  }

  /**
   * Appends every allowed event whose payload satisfies `condition` to the stream `into`; a
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
   * assert.equal(observer.stream("ones").length, 1);
   * assert.deepEqual(observer.stream("unknown"), []);
   * ```
   */
  route(condition: (payload: unknown) => boolean, options: { into: string }): this {
    if (typeof condition !== "function") {
      throw new TypeError("Cannot route: condition must be a function");
    }
    const into = options?.into;
    if (typeof into !== "string" || into.length === 0) {
      throw new TypeError("Cannot route: into must be a non-empty stream name");
    }
    this.#routes = [...this.#routes, { condition, into }];
    return this;
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
    const signal = options?.signal;
    let allowed = false;
    try {
      const verdict = gate(action);
      allowed = Boolean(
        isThenable(verdict)
          ? await race(verdict, options?.timeoutMs ?? GATE_TIMEOUT_MS, signal)
          : verdict,
      );
    } catch (error) {
      if (signal?.aborted && error === signal.reason) throw error;
      this.#report(
        error === TIMED_OUT
          ? new Error(
            `Gate did not settle within ${options?.timeoutMs ?? GATE_TIMEOUT_MS} ms; denied`,
          )
          : error,
        "gate",
      );
      allowed = false;
    }
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

  #emit(event: unknown): unknown[] | Promise<unknown[]> {
    const envelope = event instanceof Entity ? event : new Signal({ data: event });
    const payload = payloadOf(envelope);
    const gate = this.#gate;
    if (gate === null || isAudit(envelope)) {
      return this.#deliver(envelope, payload, this.#store(envelope));
    }
    let verdict: unknown;
    try {
      verdict = gate(payload);
    } catch (error) {
      this.#report(error, "gate");
      verdict = false;
    }
    if (isThenable(verdict)) return this.#emitAfterGate(envelope, payload, verdict);
    const position = this.#store(envelope);
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
    const position = this.#store(envelope);
    return allowed ? this.#deliver(envelope, payload, position) : [];
  }

  /** Stores an event; returns its absolute position. */
  #store(envelope: Entity): number {
    const position = this.#offset + this.#events.push(envelope) - 1;
    if (this.#events.length - this.#head > this.#maxEvents) this.#evictOldest();
    return position;
  }

  /**
   * Evicts the oldest stored event and, from every stream, the entries for that stored slot only
   * (streams hold positions, so an envelope emitted twice loses only its oldest emission).
   */
  #evictOldest(): void {
    const evicted = this.#offset + this.#head;
    this.#events[this.#head] = undefined;
    this.#head++;
    if (this.#head >= 1024 && this.#head * 2 >= this.#events.length) {
      this.#events = this.#events.slice(this.#head);
      this.#offset += this.#head;
      this.#head = 0;
    }
    for (const stream of this.#streams.values()) {
      while (stream.length > 0 && stream[0] <= evicted) stream.shift();
    }
  }

  #deliver(
    envelope: Entity,
    payload: unknown,
    position: number,
  ): unknown[] | Promise<unknown[]> {
    const routes = this.#routes;
    for (let i = 0; i < routes.length; i++) {
      const route = routes[i];
      let hit: unknown;
      try {
        hit = route.condition(payload);
      } catch (error) {
        this.#report(error, "route");
        continue;
      }
      if (!hit) continue;
      let stream = this.#streams.get(route.into);
      if (stream === undefined) {
        stream = [];
        this.#streams.set(route.into, stream);
      }
      stream.push(position);
    }
    const subs = this.#subs;
    const results: unknown[] = [];
    if (subs.length === 0) return results;
    const context: Session | SessionObserver = this.#session ?? this;
    let pending: Promise<unknown>[] | null = null;
    for (let i = 0; i < subs.length; i++) {
      try {
        pending = this.#match(subs[i], envelope, payload, context, results, pending);
      } catch (error) {
        // Matching itself failed (a hostile payload, a throwing instanceof): skip this one.
        this.#report(error, "where");
      }
    }
    return pending === null ? results : this.#gather(results, pending);
  }

  /** Matches one subscription and calls its handler for each matched value. */
  #match(
    sub: Subscription,
    envelope: Entity,
    payload: unknown,
    context: Session | SessionObserver,
    results: unknown[],
    pending: Promise<unknown>[] | null,
  ): Promise<unknown>[] | null {
    switch (sub.kind) {
      case ROLE:
        if (roleOf(envelope) !== sub.role) break;
        pending = this.#call(sub, payload, context, results, pending);
        break;
      case PAYLOAD:
        if (sub.role !== undefined && roleOf(envelope) !== sub.role) break;
        if (sub.type !== undefined && !(payload instanceof sub.type)) {
          // type + role: the type filter on the payload only (field values, no envelope);
          // type + where: a composite filter, which needs the payload itself to match.
          if (sub.where === undefined) {
            pending = this.#fieldMatches(sub, payload, context, results, pending);
          }
          break;
        }
        if (sub.where !== undefined && !this.#test(sub.where, payload)) break;
        pending = this.#call(sub, payload, context, results, pending);
        break;
      case TYPE: {
        const type = sub.type!;
        if (payload instanceof type) {
          pending = this.#call(sub, payload, context, results, pending);
        } else {
          pending = this.#fieldMatches(sub, payload, context, results, pending);
        }
        if (envelope !== payload && envelope instanceof type) {
          pending = this.#call(sub, envelope, context, results, pending);
        }
        break;
      }
      case PERSIST:
        if (envelope instanceof Signal) {
          pending = this.#call(sub, envelope, context, results, pending);
        }
        break;
    }
    return pending;
  }

  /** Type matches among the payload's own field values (a type filter without the instance). */
  #fieldMatches(
    sub: Subscription,
    payload: unknown,
    context: Session | SessionObserver,
    results: unknown[],
    pending: Promise<unknown>[] | null,
  ): Promise<unknown>[] | null {
    if (payload === null || typeof payload !== "object" || Array.isArray(payload)) return pending;
    let matches: unknown[] | null;
    try {
      matches = ownInstances(payload, sub.type!);
    } catch (error) {
      this.#report(error, "where"); // a hostile payload (a throwing proxy) matches nothing
      return pending;
    }
    if (matches === null) return pending;
    for (let i = 0; i < matches.length; i++) {
      pending = this.#call(sub, matches[i], context, results, pending);
    }
    return pending;
  }

  #test(where: (payload: unknown) => boolean, payload: unknown): boolean {
    try {
      return Boolean(where(payload));
    } catch (error) {
      this.#report(error, "where");
      return false;
    }
  }

  #call(
    sub: Subscription,
    value: unknown,
    context: Session | SessionObserver,
    results: unknown[],
    pending: Promise<unknown>[] | null,
  ): Promise<unknown>[] | null {
    let result: unknown;
    try {
      result = (sub.handler as (v: unknown, c: Session | SessionObserver) => unknown)(
        value,
        context,
      );
    } catch (error) {
      this.#report(error, sub.kind === PERSIST ? "persist" : "subscriber");
      return pending;
    }
    if (isThenable(result)) {
      const settled = sub.kind === PERSIST
        ? Promise.resolve(result).then(omit, this.#persistFailed)
        : Promise.resolve(result).then(undefined, this.#subscriberFailed);
      if (pending === null) return [settled];
      pending.push(settled);
      return pending;
    }
    if (sub.kind !== PERSIST) results.push(result);
    return pending;
  }

  async #gather(results: unknown[], pending: Promise<unknown>[]): Promise<unknown[]> {
    const values = await Promise.all(pending);
    for (let i = 0; i < values.length; i++) {
      if (values[i] !== OMIT) results.push(values[i]);
    }
    return results;
  }

  #report(error: unknown, where: string): void {
    try {
      this.#onError(error, where);
    } catch {
      // A failing reporter must not turn an isolated failure into a broken emit.
    }
  }

  /**
   * The events appended to a named stream, in order (a copy); an unknown name gives `[]`.
   */
  stream(name: string): readonly unknown[] {
    const positions = this.#streams.get(name);
    if (positions === undefined) return [];
    const out: unknown[] = new Array(positions.length);
    for (let i = 0; i < positions.length; i++) out[i] = this.#events[positions[i] - this.#offset];
    return out;
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
    const events = this.#events;
    for (let i = this.#head; i < events.length; i++) {
      const envelope = events[i] as Entity;
      const payload = payloadOf(envelope);
      try {
        if (payload instanceof type) out.push(payload as T);
        else if (payload !== null && typeof payload === "object" && !Array.isArray(payload)) {
          const matches = ownInstances(payload, type);
          if (matches !== null) { for (const value of matches) out.push(value as T); }
        }
      } catch {
        // A hostile payload (a throwing proxy) matches nothing.
      }
      if (envelope !== payload && envelope instanceof type) out.push(envelope as T);
    }
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
    if (typeof sessionId !== "string" || sessionId.length === 0) {
      throw new TypeError("Cannot bind persistence: sessionId must be a non-empty string");
    }
    const target = store ?? this.#session?.store;
    if (
      target === undefined || target === null ||
      typeof (target as { insertSessionSignal?: unknown }).insertSessionSignal !== "function"
    ) {
      throw new TypeError(
        `Cannot bind persistence for session "${sessionId}": no store given and the session has none`,
      );
    }
    const persist = (signal: Signal): Promise<void> => {
      const opId = (signal as { opId?: unknown }).opId;
      const row: SignalInsert = {
        sessionId,
        kind: signal.constructor.name,
        opId: typeof opId === "string" ? opId : "",
        ts: Date.now(),
        payload: sanitizeSignalPayload(signal),
      };
      return target.insertSessionSignal(row);
    };
    const sub: Subscription = {
      kind: PERSIST,
      handler: persist as Subscription["handler"],
      type: undefined,
      where: undefined,
      role: undefined,
    };
    const previous = this.#persist;
    this.#persist = sub;
    const kept = previous === null ? this.#subs : this.#subs.filter((s) => s !== previous);
    this.#subs = [...kept, sub];
  }

  /** Removes the persistence subscription; a no-op when none is bound. */
  unbindDbPersistence(): void {
    const previous = this.#persist;
    if (previous === null) return;
    this.#persist = null;
    const next = this.#subs.filter((s) => s !== previous);
    this.#subs = next.length === 0 ? NO_SUBSCRIPTIONS : next;
  }

  /** Whether database persistence is bound. */
  get persisting(): boolean {
    return this.#persist !== null;
  }
}
