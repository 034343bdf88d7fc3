// Typed filter matching for the observer: what a filter sees of an event (its payload, its
// role) and which of the payload's own field values are instances of a type.

import type { Entity } from "../core/entity.ts";
import { Signal } from "../core/signal.ts";

/** A class a type filter matches instances of. */
export type AnyClass = abstract new (...args: never[]) => unknown;

/** What gates, routes and predicates see: `data` when it is not null/undefined, otherwise the envelope itself. */
export function payloadOf(envelope: object): unknown {
  if (envelope instanceof Signal) {
    const data = envelope.data;
    return data === null || data === undefined ? envelope : data;
  }
  return envelope;
}

/** The envelope's `emitterRole` (anything, for a non-signal envelope). */
export function roleOf(envelope: object): unknown {
  return (envelope as { emitterRole?: unknown }).emitterRole;
}

/** The payload's own field values that are instances of `type`; a throwing getter is skipped. */
export function ownInstances(payload: object, type: AnyClass): unknown[] | null {
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

/** Whether a payload is a plain candidate for field matching (an object, not an array). */
export function hasFields(payload: unknown): payload is object {
  return payload !== null && typeof payload === "object" && !Array.isArray(payload);
}

/**
 * Appends to `out` what a type filter for `type` matches in one stored event: the payload when it
 * is an instance, else its own field values that are; then the envelope when it is an instance
 * and distinct from the payload. A hostile payload (a throwing proxy) contributes nothing.
 */
export function collectTypeMatches<T>(envelope: Entity, type: AnyClass, out: T[]): void {
  const payload = payloadOf(envelope);
  try {
    if (payload instanceof type) out.push(payload as T);
    else if (hasFields(payload)) {
      const matches = ownInstances(payload, type);
      if (matches !== null) { for (const value of matches) out.push(value as T); }
    }
  } catch {
    // A hostile payload (a throwing proxy) matches nothing.
  }
  if (envelope !== payload && envelope instanceof type) out.push(envelope as T);
}
