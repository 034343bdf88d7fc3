/**
 * The typed envelope that observers record.
 *
 * @module
 */

import { Entity, type EntityInit } from "./entity.ts";

/** What a {@linkcode Signal} may be constructed from. */
export interface SignalInit extends EntityInit {
  /** The signal's payload; `null` when absent. */
  data?: unknown;
  /** Who emitted it (used by role filters); `null` when absent. */
  emitterRole?: string | null;
}

/**
 * An observable record: a payload plus who emitted it.
 *
 * @example Wrap a value in a signal
 * ```ts
 * import { Signal } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const signal = new Signal({ data: { step: 1 }, emitterRole: "planner" });
 * assert.deepEqual(signal.data, { step: 1 });
 * assert.deepEqual(signal.schemaVersion, 1);
 * ```
 */
export class Signal extends Entity {
  /** The payload (`null` by default). */
  data: unknown;
  /** The emitter's role, or `null`. */
  emitterRole: string | null;
  /** The envelope's schema version; always 1. */
  readonly schemaVersion: number = 1;

  /** Makes a signal. */
  constructor(init?: SignalInit) {
    super(init);
    this.data = init?.data === undefined ? null : init.data;
    const role = init?.emitterRole;
    if (role !== undefined && role !== null && typeof role !== "string") {
      throw new TypeError(`Cannot create signal: emitterRole must be a string or null`);
    }
    this.emitterRole = role ?? null;
  }
}

/**
 * Anything a `HookBus` can record signals into (a `SessionObserver` is one).
 *
 * @example A sink that keeps what it is given
 * ```ts
 * import type { SignalSink } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const seen: unknown[] = [];
 * const sink: SignalSink = { emit: (event) => seen.push(event) };
 * sink.emit("x");
 * assert.deepEqual(seen, ["x"]);
 * ```
 */
export interface SignalSink {
  /** Records one event; may return a promise. */
  emit(event: unknown): unknown;
}
