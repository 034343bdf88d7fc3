/**
 * The identity base shared by signals, events and tools.
 *
 * @module
 */

import { toJsonSafe } from "./json_safe.ts";

/** What an {@linkcode Entity} may be constructed from. */
export interface EntityInit {
  /** A fixed id; a random UUID when absent. */
  id?: string;
  /** Creation time in milliseconds since the epoch; now when absent. */
  createdAt?: number;
  /** Free-form metadata; copied shallowly. */
  metadata?: Record<string, unknown>;
}

/**
 * Something with a stable identity: a random UUID, a creation time and metadata.
 *
 * @example Create an element and render it as JSON
 * ```ts
 * import { Entity } from "@hookscope/core/action";
 * import assert from "node:assert/strict";
 *
 * const element = new Entity({ metadata: { owner: "docs" } });
 * assert.deepEqual(element.toJSON().kind, "Entity");
 * assert.deepEqual(element.id.length, 36);
 * ```
 */
export class Entity {
  // The id is drawn on first read: a random UUID costs 0.1–0.4 µs, and most short-lived
  // records (tool calls, hook runs, signals) are never asked for theirs.
  #id: string | undefined;
  /** Milliseconds since the epoch when the element was made. */
  readonly createdAt: number;
  /** Free-form metadata. */
  metadata: Record<string, unknown>;

  /** Makes an element, optionally with a fixed id, time or metadata. */
  constructor(init?: EntityInit) {
    const id = init?.id;
    if (id !== undefined && (typeof id !== "string" || id.length === 0)) {
      throw new TypeError(`Cannot create element: id must be a non-empty string`);
    }
    const createdAt = init?.createdAt;
    if (createdAt !== undefined && (typeof createdAt !== "number" || !Number.isFinite(createdAt))) {
      throw new TypeError(`Cannot create element: createdAt must be a finite number`);
    }
    this.#id = id;
    this.createdAt = createdAt ?? Date.now();
    this.metadata = init?.metadata ? { ...init.metadata } : {};
  }

  /** A UUID that never changes (drawn when first read, unless one was given). */
  get id(): string {
    return this.#id ??= crypto.randomUUID();
  }

  /** A JSON-safe plain object of `kind` (the class name), `id` and the element's own fields. */
  toJSON(): Record<string, unknown> {
    const out: Record<string, unknown> = { kind: this.constructor.name, id: this.id };
    for (const key of Object.keys(this)) {
      out[key] = toJsonSafe((this as Record<string, unknown>)[key]);
    }
    return out;
  }
}
