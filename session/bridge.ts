/**
 * `bridgeModelToSession`: the optional, observation-only adapter that gives the dormant
 * `api.*` hook points an emit site. The model keeps working without it.
 *
 * @module
 */

import { cutText, summarize } from "../core/json_safe.ts";
import { logger } from "../core/logger.ts";
import { redactSecrets } from "../core/redact.ts";

export { redactSecrets };
import type { HookBus } from "../hooks/bus.ts";
import { HookPoint } from "../hooks/hook_point.ts";
import type { APICalling } from "../service/api_calling.ts";
import type { StreamChunk } from "../service/endpoint.ts";
import type { IModel, ModelNotice } from "../service/imodel.ts";

/** Options for {@linkcode bridgeModelToSession}. */
export interface BridgeOptions {
  /** Rewrites each payload before it is emitted (after the built-in redaction). */
  redact?: (payload: Record<string, unknown>) => Record<string, unknown>;
  /** Emit `api.stream_chunk` for every delivered chunk (default `true`). */
  chunks?: boolean;
}

/** The disposer returned by {@linkcode bridgeModelToSession}, with a way to wait for emissions. */
export interface ModelBridge {
  /** Removes the bridge: the model is exactly as before and emits nothing more. */
  (): void;
  /** Resolves when every emission started so far has finished. */
  drain(): Promise<void>;
}

/** Something that owns a session bus (a `Session`). */
export interface BusOwner {
  /** The session's hook bus. */
  readonly hooks: HookBus;
}

function tokensFrom(
  response: unknown,
): { prompt?: number; completion?: number; total?: number } | null {
  // A model's typed answer (`ModelAnswer.usage`); a raw body's `usage` for a non-model event.
  const usage = (response as { usage?: Record<string, unknown> } | null)?.usage;
  if (!usage || typeof usage !== "object") return null;
  const n = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : undefined);
  const out: { prompt?: number; completion?: number; total?: number } = {};
  const prompt = n(usage.promptTokens) ?? n(usage.prompt_tokens);
  const completion = n(usage.completionTokens) ?? n(usage.completion_tokens);
  const total = n(usage.totalTokens) ?? n(usage.total_tokens);
  if (prompt !== undefined) out.prompt = prompt;
  if (completion !== undefined) out.completion = completion;
  if (total !== undefined) out.total = total;
  return Object.keys(out).length ? out : null;
}

function errorText(error: unknown): string | null {
  if (error === null || error === undefined) return null;
  return cutText(error instanceof Error ? `${error.name}: ${error.message}` : String(error), 200);
}

/**
 * Emits a model's calls into a session bus as the three `api.*` hook points, without changing
 * what the model does:
 *
 * - `api.pre_call` `{ model, provider, eventId, streaming, requestSummary }` when a call starts,
 *   before the model's pre-invocation hook runs. It observes; it cannot block the call (the
 *   service pre-invoke hook is the place for that).
 * - `api.post_call` `{ model, provider, eventId, streaming, status, latencyMs, tokens, error }`
 *   once the call has ended, whatever its status.
 * - `api.stream_chunk` `{ model, provider, eventId, chunkType, chunkSummary }` for each chunk
 *   delivered to the consumer, observed after the service chunk handler ran.
 *
 * Redaction: payloads never contain request headers or the API key; request and chunk summaries
 * are rendered from a copy whose secret-looking keys are replaced (see {@linkcode redactSecrets}),
 * cut to 200 characters; `options.redact` may rewrite each payload further. Emissions keep their
 * order (each waits for the previous one) and their failures are logged, never thrown into the
 * model call. The returned function removes the bridge; `drain()` waits for pending emissions.
 *
 * @example
 * ```ts
 * import { bridgeModelToSession } from "@hookscope/core/session";
 * import { HookBus } from "@hookscope/core/hooks";
 * import { FunctionEndpoint, IModel } from "@hookscope/core/service";
 * import assert from "node:assert/strict";
 *
 * const model = new IModel({ model: "m", endpoint: new FunctionEndpoint({ call: () => ({ ok: 1 }) }) });
 * const bus = new HookBus();
 * const points: string[] = [];
 * bus.on("api.pre_call", () => { points.push("pre"); });
 * bus.on("api.post_call", ({ status }) => { points.push(`post ${status}`); });
 * const bridge = bridgeModelToSession(model, bus);
 * await model.invoke({ messages: [] });
 * await bridge.drain();
 * bridge();
 * await model.invoke({ messages: [] });
 * assert.deepEqual(points, ["pre", "post completed"]);
 * ```
 */
export function bridgeModelToSession(
  model: IModel,
  target: BusOwner | HookBus,
  options?: BridgeOptions,
): ModelBridge {
  if (model === null || typeof model !== "object" || typeof model.observe !== "function") {
    throw new TypeError(`Cannot bridge model: model must be an IModel`);
  }
  if (target === null || typeof target !== "object") {
    throw new TypeError(`Cannot bridge model: target must be a Session or a HookBus`);
  }
  const bus: HookBus = "hooks" in target && target.hooks ? target.hooks : target as HookBus;
  if (!bus || typeof (bus as HookBus).emit !== "function") {
    throw new TypeError(`Cannot bridge model: target must be a Session or a HookBus`);
  }
  const redact = options?.redact;
  if (redact !== undefined && typeof redact !== "function") {
    throw new TypeError(`Cannot bridge model: redact must be a function`);
  }
  const withChunks = options?.chunks ?? true;
  const provider = model.endpoint.name;
  const streamUsage = new WeakMap<
    APICalling,
    { prompt?: number; completion?: number; total?: number }
  >();
  let tail: Promise<void> = Promise.resolve();
  let active = true;

  const send = (point: HookPoint, payload: Record<string, unknown>) => {
    let finalPayload = payload;
    if (redact) {
      try {
        finalPayload = redact(payload);
      } catch (error) {
        logger.warn(`Model bridge redact failed: ${point}`, error);
        return;
      }
    }
    tail = tail.then(() => bus.emit(point, finalPayload)).catch((error) => {
      logger.warn(`Model bridge emit failed: ${point}`, error);
    });
  };

  const base = (event: APICalling) => ({ model: model.model, provider, eventId: event.id });

  const observer = (notice: ModelNotice) => {
    if (!active) return;
    const event = notice.event;
    if (notice.type === "pre_call") {
      send(HookPoint.API_PRE_CALL, {
        ...base(event),
        streaming: notice.streaming,
        requestSummary: summarize(redactSecrets(event.payload)),
      });
    } else if (notice.type === "stream_chunk") {
      const chunk = notice.chunk as StreamChunk;
      if (chunk && chunk.type === "usage") {
        streamUsage.set(event, {
          prompt: chunk.promptTokens,
          completion: chunk.completionTokens,
          total: chunk.totalTokens,
        });
      }
      if (!withChunks) return;
      send(HookPoint.API_STREAM_CHUNK, {
        ...base(event),
        chunkType: chunk && typeof chunk.type === "string" ? chunk.type : typeof chunk,
        chunkSummary: summarize(redactSecrets(chunk)),
      });
    } else {
      send(HookPoint.API_POST_CALL, {
        ...base(event),
        streaming: notice.streaming,
        status: event.status,
        latencyMs: event.execution.durationMs ?? 0,
        tokens: streamUsage.get(event) ?? tokensFrom(event.response),
        error: errorText(event.execution.error),
      });
    }
  };

  const stop = model.observe(observer);
  const bridge = (() => {
    active = false;
    stop();
  }) as ModelBridge;
  bridge.drain = async () => {
    let seen: Promise<void>;
    do {
      seen = tail;
      await seen;
    } while (seen !== tail);
  };
  return bridge;
}
