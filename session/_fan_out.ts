// The observer's fan-out: match every subscription against one delivered event, call the
// handlers in registration order, isolate their failures, and gather the async ones with one
// `Promise.all` (sync results first, then async, each in registration order).

import type { Entity } from "../core/entity.ts";
import { Signal } from "../core/signal.ts";
import { isThenable } from "../core/_util.ts";
import { hasFields, ownInstances, roleOf } from "./_match.ts";
import {
  PAYLOAD,
  PERSIST,
  ROLE,
  type Subscription,
  type Subscriptions,
  TYPE,
} from "./_subscription.ts";

/** Where an isolated failure goes (`where` names the part that failed). */
export type Report = (error: unknown, where: string) => void;

/** Marks async results that are not part of `emit`'s result (failures, persistence). */
const OMIT: unique symbol = Symbol("omit");
const omit = (): typeof OMIT => OMIT;

type Pending = Promise<unknown>[] | null;

/** Delivers events to subscriptions; one per observer (it holds the failure reporters). */
export class FanOut {
  #report: Report;
  #subscriberFailed: (error: unknown) => typeof OMIT;
  #persistFailed: (error: unknown) => typeof OMIT;

  constructor(report: Report) {
    this.#report = report;
    this.#subscriberFailed = (error) => {
      report(error, "subscriber");
      return OMIT;
    };
    this.#persistFailed = (error) => {
      report(error, "persist");
      return OMIT;
    };
  }

  /**
   * Calls every matching subscription; the results synchronously when no handler is pending,
   * else a promise of them (which never rejects).
   */
  deliver(
    subs: Subscriptions,
    envelope: Entity,
    payload: unknown,
    context: unknown,
  ): unknown[] | Promise<unknown[]> {
    const results: unknown[] = [];
    if (subs.length === 0) return results;
    let pending: Pending = null;
    for (let i = 0; i < subs.length; i++) {
      try {
        pending = this.#match(subs[i], envelope, payload, context, results, pending);
      } catch (error) {
        // Matching itself failed (a hostile payload, a throwing instanceof): skip this one.
        this.#report(error, "where");
      }
    }
    return pending === null ? results : gather(results, pending);
  }

  /** Matches one subscription and calls its handler for each matched value. */
  #match(
    sub: Subscription,
    envelope: Entity,
    payload: unknown,
    context: unknown,
    results: unknown[],
    pending: Pending,
  ): Pending {
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
    context: unknown,
    results: unknown[],
    pending: Pending,
  ): Pending {
    if (!hasFields(payload)) return pending;
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
    context: unknown,
    results: unknown[],
    pending: Pending,
  ): Pending {
    let result: unknown;
    try {
      result = (sub.handler as (v: unknown, c: unknown) => unknown)(value, context);
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
}

async function gather(results: unknown[], pending: Promise<unknown>[]): Promise<unknown[]> {
  const values = await Promise.all(pending);
  for (let i = 0; i < values.length; i++) {
    if (values[i] !== OMIT) results.push(values[i]);
  }
  return results;
}
