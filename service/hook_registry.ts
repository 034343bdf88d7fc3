/**
 * The per-model service hook registry: one handler per phase, one per stream chunk type.
 *
 * @module
 */

import { logger } from "../core/mod.ts";
import { HOOK_EVENT_TYPE_KEYS, HookEventType, toHookEventType } from "./hook_event_type.ts";
import type { HookCallOptions, HookCallResult, PhaseHandler, StreamHandler } from "./types.ts";
import { dispatchHook, INTERNALS } from "./_dispatch.ts";
import { describe, isThenable } from "./_util.ts";

/** What a {@linkcode HookRegistry} may be constructed from. */
export interface HookRegistryInit {
  /**
   * Phase handlers keyed by phase value or alias (`pre_invoke`, `post_invoke`,
   * `pre_event_create_hook`, and the camelCase method names). `null`/`undefined` values are skipped.
   */
  hooks?: Record<string, PhaseHandler | null | undefined> | null;
  /** Stream handlers keyed by chunk type (`"text"`, `"tool_call"`, …). */
  streamHandlers?: Record<string, StreamHandler | null | undefined> | null;
}

/** What selects the handler {@linkcode HookRegistry.canHandle} asks about. */
export type HookKey = { hookType: HookEventType } | { chunkType: string };

/**
 * One handler per service phase and one per stream chunk type, attached to an `IModel`.
 *
 * `call()` never rejects for a handler failure or an abort: it reports them as a
 * {@linkcode HookCallResult} per the ADR's matrix. Only bad input (no phase and no chunk type, an
 * unknown phase) rejects, with a `TypeError`.
 *
 * @example Register handlers and call one
 * ```ts
 * import { HookEventType, HookRegistry } from "@hookscope/core/service";
 * import assert from "node:assert/strict";
 *
 * const registry = new HookRegistry({
 *   hooks: { pre_invoke: (_event, { exit }) => `checked (exit=${exit})` },
 * });
 * registry.onChunk("text", (_e, _type, chunk: { text: string }) => ({ ...chunk, text: chunk.text.toUpperCase() }));
 *
 * const ok = await registry.call({}, { hookType: HookEventType.PreInvocation, shouldExit: true });
 * assert.equal(ok.result, "checked (exit=true)");
 * assert.equal(ok.status, "completed");
 * assert.equal(ok.shouldExit, false);
 *
 * const chunk = await registry.call(null, { chunkType: "text", chunk: { type: "text", text: "hi" } });
 * assert.deepEqual(chunk.result, { type: "text", text: "HI" });
 * assert.equal(chunk.status, null);
 * ```
 */
export class HookRegistry {
  #hooks = new Map<HookEventType, PhaseHandler>();
  #stream = new Map<string, StreamHandler>();

  /** Makes a registry; invalid keys or non-function handlers throw a `TypeError`. */
  constructor(options?: HookRegistryInit | null) {
    if (options !== undefined && options !== null && typeof options !== "object") {
      throw new TypeError(
        `Cannot create hook registry: options must be an object; got ${typeof options}`,
      );
    }
    const hooks = validateHooks(options?.hooks);
    const stream = validateStreamHandlers(options?.streamHandlers);
    for (const [type, handler] of hooks) this.#hooks.set(type, handler);
    for (const [key, handler] of stream) this.#stream.set(key, handler);
    INTERNALS.set(this, { hooks: this.#hooks, stream: this.#stream });
  }

  /** Registers the pre-event-create handler (overwriting warns); returns `fn`. */
  preEventCreateHook<F extends PhaseHandler>(fn: F): F {
    return this.#setPhase(HookEventType.PreEventCreate, fn);
  }

  /** Registers the pre-invocation handler (overwriting warns); returns `fn`. */
  preInvoke<F extends PhaseHandler>(fn: F): F {
    return this.#setPhase(HookEventType.PreInvocation, fn);
  }

  /** Registers the post-invocation handler (overwriting warns); returns `fn`. */
  postInvoke<F extends PhaseHandler>(fn: F): F {
    return this.#setPhase(HookEventType.PostInvocation, fn);
  }

  /** Registers the handler for one chunk type (overwriting warns); returns `fn`. */
  onChunk<F extends StreamHandler>(chunkType: string, fn: F): F {
    if (typeof chunkType !== "string" || chunkType.length === 0) {
      throw new TypeError(
        `Cannot register stream handler: chunk type must be a non-empty string; got ${
          describe(chunkType)
        }`,
      );
    }
    assertFunction(fn, `stream handler for ${JSON.stringify(chunkType)}`);
    if (this.#stream.has(chunkType)) {
      logger.warn(`Overwriting existing stream handler for "${chunkType}"`);
    }
    this.#stream.set(chunkType, fn as StreamHandler);
    return fn;
  }

  /** Whether a handler exists for a phase or a chunk type. */
  canHandle(key: HookKey): boolean {
    if (key && "hookType" in key && key.hookType !== undefined) {
      const type = toHookEventType(key.hookType);
      return type !== undefined && this.#hooks.has(type);
    }
    if (key && "chunkType" in key) return this.#stream.has(key.chunkType);
    return false;
  }

  /** The handler registered for a phase, if any. */
  handlerFor(hookType: HookEventType): PhaseHandler | undefined {
    const type = toHookEventType(hookType);
    return type === undefined ? undefined : this.#hooks.get(type);
  }

  /** The chunk types that have a handler. */
  get chunkTypes(): string[] {
    return [...this.#stream.keys()];
  }

  /**
   * Runs the handler for a phase or a chunk type and reports the outcome; see
   * {@linkcode HookCallResult}.
   */
  call(eventLike: unknown, options: HookCallOptions): Promise<HookCallResult> {
    try {
      const outcome = dispatchHook(this, eventLike, options);
      return isThenable(outcome) ? outcome as Promise<HookCallResult> : Promise.resolve(outcome);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  #setPhase<F extends PhaseHandler>(type: HookEventType, fn: F): F {
    assertFunction(fn, `${type} hook`);
    if (this.#hooks.has(type)) logger.warn(`Overwriting existing ${type} hook`);
    this.#hooks.set(type, fn);
    return fn;
  }
}

function validateHooks(hooks: unknown): Array<[HookEventType, PhaseHandler]> {
  if (hooks === undefined || hooks === null) return [];
  if (typeof hooks !== "object" || Array.isArray(hooks)) {
    throw new TypeError(
      `Cannot create hook registry: hooks must be an object of handlers; got ${describe(hooks)}`,
    );
  }
  const out: Array<[HookEventType, PhaseHandler]> = [];
  const seen = new Set<HookEventType>();
  for (const [key, handler] of Object.entries(hooks)) {
    const type = toHookEventType(key);
    if (type === undefined) {
      throw new TypeError(
        `Cannot create hook registry: unknown hook key ${JSON.stringify(key)}; valid keys: ${
          HOOK_EVENT_TYPE_KEYS.map((k) => `"${k}"`).join(", ")
        }`,
      );
    }
    if (handler === undefined || handler === null) continue;
    if (typeof handler !== "function") {
      throw new TypeError(
        `Cannot create hook registry: hook ${JSON.stringify(key)} must be a function; got ${
          describe(handler)
        }`,
      );
    }
    if (seen.has(type)) {
      throw new TypeError(
        `Cannot create hook registry: hook ${JSON.stringify(key)} duplicates phase "${type}"`,
      );
    }
    seen.add(type);
    out.push([type, handler as PhaseHandler]);
  }
  return out;
}

function validateStreamHandlers(handlers: unknown): Array<[string, StreamHandler]> {
  if (handlers === undefined || handlers === null) return [];
  if (typeof handlers !== "object" || Array.isArray(handlers)) {
    throw new TypeError(
      `Cannot create hook registry: streamHandlers must be an object of handlers; got ${
        describe(handlers)
      }`,
    );
  }
  const out: Array<[string, StreamHandler]> = [];
  for (const [key, handler] of Object.entries(handlers)) {
    if (handler === undefined || handler === null) continue;
    if (key.length === 0) {
      throw new TypeError("Cannot create hook registry: a stream handler key is empty");
    }
    if (typeof handler !== "function") {
      throw new TypeError(
        `Cannot create hook registry: stream handler ${
          JSON.stringify(key)
        } must be a function; got ${describe(handler)}`,
      );
    }
    out.push([key, handler as StreamHandler]);
  }
  return out;
}

function assertFunction(fn: unknown, what: string): void {
  if (typeof fn !== "function") {
    throw new TypeError(`Cannot register ${what}: handler must be a function; got ${describe(fn)}`);
  }
}
