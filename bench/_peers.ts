/**
 * Builds the same k-handler chain in hookscope, by hand, and in each npm peer, so benches and the
 * portable harness compare identical work.
 *
 * @module
 */

import { Hookable } from "hookable";
import { AsyncSeriesHook } from "tapable";
import Emittery from "emittery";
import { HookBus } from "../hooks/mod.ts";

/** The payload every emit carries. */
export const PAYLOAD = {
  callId: "c1",
  toolName: "reader",
  resultSummary: "ok",
  durationMs: 1,
  n: 1,
};

/** What each handler does: a tiny amount of real work the engine cannot drop. */
export const sink = { total: 0 };

/** A synchronous handler. */
export function syncHandler(payload: { n: number }): void {
  sink.total += payload.n;
}

/** An asynchronous handler. */
export async function asyncHandler(payload: { n: number }): Promise<void> {
  sink.total += payload.n;
}

/** One emitter per library, each with `k` copies of `handler` on one point. */
export interface Chains {
  hookscope: () => Promise<void>;
  floor: () => Promise<void>;
  hookable: () => Promise<void>;
  tapable: () => Promise<void>;
  emittery: () => Promise<void>;
}

type Handler = (payload: { n: number }) => void | Promise<void>;

/** Builds the chains for `k` handlers of the given kind. */
export function buildChains(k: number, kind: "sync" | "async"): Chains {
  const handler: Handler = kind === "sync" ? syncHandler : asyncHandler;
  const bus = new HookBus();
  const hookable = new Hookable();
  const tapable = new AsyncSeriesHook<[typeof PAYLOAD]>(["payload"]);
  const emittery = new Emittery();
  const list: ((p: typeof PAYLOAD) => unknown)[] = [];
  for (let i = 0; i < k; i++) {
    bus.on("tool.post", handler as never);
    hookable.hook("tool.post", handler);
    if (kind === "sync") tapable.tap(`h${i}`, syncHandler);
    else tapable.tapPromise(`h${i}`, asyncHandler);
    emittery.on("tool.post", handler);
    list.push(handler);
  }
  const floor = kind === "sync"
    ? async () => {
      for (let i = 0; i < list.length; i++) list[i](PAYLOAD);
    }
    : async () => {
      for (let i = 0; i < list.length; i++) await list[i](PAYLOAD);
    };
  return {
    hookscope: () => bus.emit("tool.post", PAYLOAD),
    floor,
    hookable: () => hookable.callHook("tool.post", PAYLOAD) as Promise<void>,
    tapable: () => tapable.promise(PAYLOAD),
    emittery: () => emittery.emitSerial("tool.post", PAYLOAD),
  };
}
