/**
 * The per-model service hook registry: one handler per phase, one per stream chunk type.
 *
 * @module
 */

import { logger } from "../core/mod.ts";
import { HookEventType } from "./hook_event_type.ts";
import {
  canonicalPhaseKey,
  isHookEventType,
  isOldSpelling,
  PHASE_OF_KEY,
  type PhaseKey,
  unknownHookType,
  validPhaseKeys,
} from "./_phase_keys.ts";
import type {
  HookCallOptions,
  HookCallResult,
  HookParams,
  PhaseHandler,
  StreamHandler,
  StreamHandlerContext,
} from "./types.ts";
import type { StreamChunk } from "./endpoint.ts";
import type { APICalling, APICallingInit } from "./api_calling.ts";
import type { HookedEvent } from "./hooked_event.ts";
import { dispatchHook, INTERNALS } from "./_dispatch.ts";
import { describe } from "./_util.ts";
import { isThenable } from "../core/_util.ts";

/**
 * The chunk types a stream handler can be registered for: the `type` of every
 * {@linkcode StreamChunk}.
 *
 * @example
 * ```ts
 * import { STREAM_CHUNK_TYPES } from "@hookscope/core/service";
 * import assert from "node:assert/strict";
 *
 * assert.deepEqual([...STREAM_CHUNK_TYPES], ["text", "tool_call", "usage", "done"]);
 * ```
 */
export const STREAM_CHUNK_TYPES: readonly StreamChunkType[] = Object.freeze(
  Object.keys(
    // A record, so adding a StreamChunk type without listing it here fails to compile.
    { text: true, tool_call: true, usage: true, done: true } satisfies Record<
      StreamChunkType,
      true
    >,
  ) as StreamChunkType[],
);

/** One of the {@linkcode STREAM_CHUNK_TYPES}: the `type` of a {@linkcode StreamChunk}. */
export type StreamChunkType = StreamChunk["type"];

/** The chunk of one {@linkcode StreamChunkType} (`ChunkOf<"text">` is a `TextChunk`). */
export type ChunkOf<T extends StreamChunkType> = Extract<StreamChunk, { type: T }>;

/**
 * A stream handler for chunks of type `T`: `handler(chunk, ctx)`, where `ctx.chunkType` is `T`
 * and `ctx` carries `exit` and `signal` (see {@linkcode StreamHandlerContext}). A
 * non-`null`/`undefined`, non-Error return replaces the chunk.
 */
export type ChunkHandler<T extends StreamChunkType = StreamChunkType> = {
  // Method syntax keeps parameters bivariant, so a handler may annotate a narrower chunk.
  handler(chunk: ChunkOf<T>, ctx: StreamHandlerContext<T>): unknown;
}["handler"];

/** Stream handlers keyed by chunk type; only the {@linkcode STREAM_CHUNK_TYPES} are keys. */
export type StreamHandlers = { [T in StreamChunkType]?: ChunkHandler<T> | null };

/** A constructor of events a model can create (the pre-create handler receives it). */
export type HookedEventClass = new (init: APICallingInit) => HookedEvent;

/** The pre-event-create handler: receives the event class, before the event exists. */
export type PreEventCreateHandler = {
  handler(eventClass: HookedEventClass, params: HookParams): unknown;
}["handler"];

/**
 * A pre- or post-invocation handler: receives the event being invoked (an `APICalling` for
 * every event an `IModel` creates; annotate a narrower `HookedEvent` subclass if you create
 * your own).
 */
export type InvokeHandler<E extends HookedEvent = APICalling> = {
  handler(event: E, params: HookParams): unknown;
}["handler"];

/**
 * Phase handlers keyed by phase: `preEventCreate`, `preInvoke`, `postInvoke`. Only these keys
 * are taken; the older spellings a declarative config may carry (`pre_invoke`,
 * `pre_invocation`, …) go through `loadPhaseHandlers` first. `null`/`undefined` values are
 * skipped.
 */
export interface PhaseHandlers {
  /** Runs before an event is created, with the event class. */
  preEventCreate?: PreEventCreateHandler | null;
  /** Runs before the event's provider call. */
  preInvoke?: InvokeHandler | null;
  /** Runs after the event's provider call. */
  postInvoke?: InvokeHandler | null;
}

/**
 * What a {@linkcode HookRegistry} may be constructed from. Keys are checked at compile time; an
 * untyped caller gets a `TypeError` naming the valid keys (and, for an older spelling such as
 * `pre_invoke`, the canonical key it stands for).
 */
export interface HookRegistryInit {
  /** Phase handlers; see {@linkcode PhaseHandlers}. */
  hooks?: PhaseHandlers | null;
  /** Stream handlers keyed by chunk type (`"text"`, `"tool_call"`, `"usage"`, `"done"`). */
  streamHandlers?: StreamHandlers | null;
}

/** What selects the handler {@linkcode HookRegistry.canHandle} asks about. */
export type HookKey = { hookType: HookEventType } | { chunkType: StreamChunkType };

/**
 * One handler per service phase and one per stream chunk type, attached to an `IModel`.
 *
 * `call()` never rejects for a handler failure or an abort: it reports them as a
 * {@linkcode HookCallResult} (see its table). Only bad input (no phase and no chunk type, an
 * unknown phase) rejects, with a `TypeError`.
 *
 * @example Register handlers and call one
 * ```ts
 * import { HookEventType, HookRegistry } from "@hookscope/core/service";
 * import assert from "node:assert/strict";
 *
 * const registry = new HookRegistry({
 *   hooks: { preInvoke: (event, { exit }) => `checked ${event.payload.model} (exit=${exit})` },
 * });
 * registry.onChunk("text", (chunk) => ({ ...chunk, text: chunk.text.toUpperCase() }));
 *
 * const event = { payload: { model: "m" } };
 * const ok = await registry.call(event, { hookType: HookEventType.PreInvocation, shouldExit: true });
 * assert.equal(ok.result, "checked m (exit=true)");
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

  /**
   * Registers the pre-event-create handler (overwriting warns); returns `fn`. The method has the
   * name of its key (`preEventCreate`), as `preInvoke` and `postInvoke` do.
   *
   * @example
   * ```ts
   * import { HookEventType, HookRegistry } from "@hookscope/core/service";
   * import assert from "node:assert/strict";
   *
   * const registry = new HookRegistry();
   * registry.preEventCreate(() => undefined);
   * assert.ok(registry.canHandle({ hookType: HookEventType.PreEventCreate }));
   * ```
   */
  preEventCreate<F extends PreEventCreateHandler>(fn: F): F {
    this.#setPhase(HookEventType.PreEventCreate, fn);
    return fn;
  }

  /** @deprecated Use {@linkcode HookRegistry.preEventCreate} (same behaviour). */
  preEventCreateHook<F extends PreEventCreateHandler>(fn: F): F {
    return this.preEventCreate(fn);
  }

  /** Registers the pre-invocation handler (overwriting warns); returns `fn`. */
  preInvoke<F extends InvokeHandler>(fn: F): F {
    this.#setPhase(HookEventType.PreInvocation, fn);
    return fn;
  }

  /** Registers the post-invocation handler (overwriting warns); returns `fn`. */
  postInvoke<F extends InvokeHandler>(fn: F): F {
    this.#setPhase(HookEventType.PostInvocation, fn);
    return fn;
  }

  /**
   * Registers the handler for one chunk type (overwriting warns); returns `fn`. A chunk type
   * that is not one of {@linkcode STREAM_CHUNK_TYPES} throws a `TypeError` listing them.
   */
  onChunk<T extends StreamChunkType, F extends ChunkHandler<T>>(chunkType: T, fn: F): F {
    if (!isStreamChunkType(chunkType)) {
      throw new TypeError(
        `Cannot register stream handler: unknown chunk type ${
          describe(chunkType)
        }; valid chunk types: ${validChunkTypes()}`,
      );
    }
    assertFunction(fn, `stream handler for ${JSON.stringify(chunkType)}`);
    assertChunkShape(fn, chunkType, "Cannot register stream handler");
    if (this.#stream.has(chunkType)) {
      logger.warn(`Overwriting existing stream handler for "${chunkType}"`);
    }
    this.#stream.set(chunkType, fn as StreamHandler);
    return fn;
  }

  /**
   * Whether a handler exists for a phase (a {@linkcode HookEventType} value) or a chunk type.
   * A `hookType` that is not a `HookEventType` value throws a `TypeError`.
   */
  canHandle(key: HookKey): boolean {
    if (key && "hookType" in key && key.hookType !== undefined) {
      if (!isHookEventType(key.hookType)) {
        throw unknownHookType("Cannot check hook", key.hookType);
      }
      return this.#hooks.has(key.hookType);
    }
    if (key && "chunkType" in key) return this.#stream.has(key.chunkType);
    return false;
  }

  /**
   * The handler registered for a phase, if any. A `hookType` that is not a `HookEventType`
   * value throws a `TypeError`.
   */
  handlerFor(hookType: HookEventType): PhaseHandler | undefined {
    if (!isHookEventType(hookType)) throw unknownHookType("Cannot look up hook", hookType);
    return this.#hooks.get(hookType);
  }

  /** The chunk types that have a handler. */
  get chunkTypes(): StreamChunkType[] {
    return [...this.#stream.keys()] as StreamChunkType[];
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

  #setPhase(type: HookEventType, fn: unknown): void {
    assertFunction(fn, `${type} hook`);
    if (this.#hooks.has(type)) logger.warn(`Overwriting existing ${type} hook`);
    this.#hooks.set(type, fn as PhaseHandler);
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
  for (const [key, handler] of Object.entries(hooks)) {
    if (!Object.hasOwn(PHASE_OF_KEY, key)) {
      throw new TypeError(unknownKeyMessage(key));
    }
    if (handler === undefined || handler === null) continue;
    if (typeof handler !== "function") {
      throw new TypeError(
        `Cannot create hook registry: hook ${JSON.stringify(key)} must be a function; got ${
          describe(handler)
        }`,
      );
    }
    out.push([PHASE_OF_KEY[key as PhaseKey], handler as PhaseHandler]);
  }
  return out;
}

/** Why a `hooks` key is refused: an older spelling names its canonical key. */
function unknownKeyMessage(key: string): string {
  if (isOldSpelling(key)) {
    const canonical = canonicalPhaseKey(key);
    return `Cannot create hook registry: hook key ${JSON.stringify(key)} is an older spelling of ${
      JSON.stringify(canonical)
    }; write ${
      JSON.stringify(canonical)
    } (configs with older spellings go through loadPhaseHandlers())`;
  }
  return `Cannot create hook registry: unknown hook key ${
    JSON.stringify(key)
  }; valid keys: ${validPhaseKeys()}`;
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
    if (!isStreamChunkType(key)) {
      throw new TypeError(
        `Cannot create hook registry: unknown chunk type ${
          JSON.stringify(key)
        } in streamHandlers; valid chunk types: ${validChunkTypes()}`,
      );
    }
    if (typeof handler !== "function") {
      throw new TypeError(
        `Cannot create hook registry: stream handler ${
          JSON.stringify(key)
        } must be a function; got ${describe(handler)}`,
      );
    }
    assertChunkShape(handler, key, "Cannot create hook registry: stream handler");
    out.push([key, handler as StreamHandler]);
  }
  return out;
}

function isStreamChunkType(value: unknown): value is StreamChunkType {
  return typeof value === "string" && (STREAM_CHUNK_TYPES as readonly string[]).includes(value);
}

function validChunkTypes(): string {
  return STREAM_CHUNK_TYPES.map((t) => `"${t}"`).join(", ");
}

/**
 * A stream handler takes `(chunk, ctx)`. One that declares more parameters was written for the
 * positional `(event, chunkType, chunk, params)` shape; called as `(chunk, ctx)` it would fail (or
 * read the wrong value) on every chunk, so it is refused when registered.
 */
function assertChunkShape(fn: { readonly length: number }, chunkType: string, what: string): void {
  if (fn.length <= 2) return;
  throw new TypeError(
    `${what} for ${
      JSON.stringify(chunkType)
    }: it declares ${fn.length} parameters; a stream handler takes (chunk, ctx) and reads the chunk type from ctx.chunkType`,
  );
}

function assertFunction(fn: unknown, what: string): void {
  if (typeof fn !== "function") {
    throw new TypeError(`Cannot register ${what}: handler must be a function; got ${describe(fn)}`);
  }
}
