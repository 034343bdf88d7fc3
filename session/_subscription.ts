// The observer's subscriptions: one record per `observe` call (or the persistence binding), kept
// in a copy-on-write array so an emission iterates a stable snapshot.

import type { AnyClass } from "./_match.ts";

/** A type filter, with the envelope fallback. */
export const TYPE = 0;
/** A role filter alone: the value is the payload. */
export const ROLE = 1;
/** A composite filter on the payload (`where`, or `type` with `role`). */
export const PAYLOAD = 2;
/** The persistence binding: every allowed signal, results omitted. */
export const PERSIST = 3;

/** How a subscription matches. */
export type SubscriptionKind = typeof TYPE | typeof ROLE | typeof PAYLOAD | typeof PERSIST;

/** One subscription; `handler` gets the matched value and the context. */
export interface Subscription {
  readonly kind: SubscriptionKind;
  readonly handler: (value: never, context: unknown) => unknown;
  readonly type: AnyClass | undefined;
  readonly where: ((payload: unknown) => boolean) | undefined;
  readonly role: string | undefined;
}

/** An emission's snapshot of the subscriptions. */
export type Subscriptions = readonly Subscription[];

/** The shared empty list (no allocation for an observer without subscribers). */
export const NO_SUBSCRIPTIONS: Subscriptions = Object.freeze([]) as Subscriptions;

/** The spec `observe` takes, as far as validation cares. */
export interface SpecShape {
  type?: unknown;
  where?: unknown;
  role?: unknown;
}

/** Validates an `observe` call and makes its subscription; throws a `TypeError` when invalid. */
export function subscriptionOf(spec: SpecShape, handler: unknown): Subscription {
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
  return {
    kind,
    handler: handler as Subscription["handler"],
    type: type as AnyClass | undefined,
    where: where as ((payload: unknown) => boolean) | undefined,
    role,
  };
}

/** The persistence subscription calling `persist` for every allowed signal. */
export function persistSubscription(persist: (signal: never) => unknown): Subscription {
  return {
    kind: PERSIST,
    handler: persist as Subscription["handler"],
    type: undefined,
    where: undefined,
    role: undefined,
  };
}

/** `subs` without the subscriptions `drop` selects (the same array when none is dropped). */
export function without(
  subs: Subscriptions,
  drop: (sub: Subscription) => boolean,
): Subscriptions {
  const next = subs.filter((s) => !drop(s));
  if (next.length === subs.length) return subs;
  return next.length === 0 ? NO_SUBSCRIPTIONS : next;
}
