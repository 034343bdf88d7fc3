/**
 * Builds the same k-handler chain in hookscope, by hand (the floor), and in each npm peer, so the
 * Deno benches and the portable harness compare identical work.
 *
 * Every chain is a function that runs the whole chain once and returns what the caller must
 * await (a promise, or `undefined` for the synchronous floor). Bench bodies are `async` and
 * `await` it: `Deno.bench` only awaits functions that are `async` themselves, so an arrow that
 * merely returns a promise would be timed without its chain.
 *
 * @module
 */

import { Hookable } from "hookable";
import { AsyncSeriesHook } from "tapable";
import Emittery from "emittery";
import { HookBus } from "../hooks/mod.ts";
import type { SignalSink } from "../core/mod.ts";
import type { ToolSource } from "../core/tool_source.ts";

/** The payload every `tool.post` emit carries. */
export const PAYLOAD: {
  callId: string;
  toolName: string;
  args: Readonly<Record<string, unknown>>;
  result: unknown;
  resultSummary: string;
  durationMs: number;
  n: number;
  signal: AbortSignal;
  source: ToolSource;
} = {
  signal: new AbortController().signal,
  source: { kind: "local" },
  callId: "c1",
  toolName: "reader",
  args: Object.freeze({ path: "README.md" }),
  result: "ok",
  resultSummary: "ok",
  durationMs: 1,
  n: 1,
};

/** The payload every `tool.pre` emit carries. */
export const PRE_PAYLOAD: {
  toolName: string;
  callId: string;
  args: Readonly<Record<string, unknown>>;
  argsSummary: string;
  signal: AbortSignal;
  source: ToolSource;
} = {
  signal: new AbortController().signal,
  source: { kind: "local" },
  toolName: "reader",
  callId: "c1",
  args: Object.freeze({ path: "README.md" }),
  argsSummary: '{"path":"README.md"}',
};

/** What each handler does: a tiny amount of real work the engine cannot drop. */
export const sink: { total: number } = { total: 0 };

/**
 * A fresh synchronous or asynchronous handler (an `async` function: its promise is already
 * settled). Each call makes a distinct function: emittery keeps listeners in a `Set`, so the same
 * function registered k times would run once there.
 */
export function makeHandler(
  kind: "sync" | "async",
): (payload: { n: number }) => void | Promise<void> {
  return kind === "sync"
    ? (payload) => {
      sink.total += payload.n;
    }
    // deno-lint-ignore require-await -- an async handler is the point: it returns a promise.
    : async (payload) => {
      sink.total += payload.n;
    };
}

const DENIED = new Set(["rm", "shutdown", "format_disk"]);

/**
 * The `i`-th passing guard: it inspects the payload and throws for a denied tool. Guards differ
 * so the engine cannot merge them.
 */
export function makeGuard(i: number): (payload: typeof PRE_PAYLOAD) => void {
  return (payload) => {
    if (DENIED.has(payload.toolName) || payload.argsSummary.length > 10_000 + i) {
      throw new Error(`Cannot run tool: "${payload.toolName}" is denied`);
    }
    sink.total += 1;
  };
}

/** One emitter per library running the same chain once; see the module doc. */
export interface Chains {
  /** `HookBus.emit` (or the blocking path for `tool.pre`). */
  hookscope: () => Promise<void>;
  /** The hand-written loop. */
  floor: () => Promise<void> | void;
  /** `Hookable.callHook` (v6 returns `undefined` when every handler was synchronous). */
  hookable: () => Promise<unknown> | void;
  /** `AsyncSeriesHook.promise`. */
  tapable: () => Promise<void>;
  /** `Emittery.emitSerial`. */
  emittery: () => Promise<void>;
}

type Handler = (payload: never) => void | Promise<void>;

function build(
  point: "tool.post" | "tool.pre",
  payload: Record<string, unknown>,
  handlers: readonly Handler[],
  async: boolean,
  observer?: SignalSink,
): Chains {
  const bus = new HookBus(observer ?? null);
  const hookable = new Hookable();
  const tapable = new AsyncSeriesHook<[Record<string, unknown>]>(["payload"]);
  const emittery = new Emittery();
  handlers.forEach((handler, i) => {
    bus.on(point, handler as never);
    hookable.hook(point, handler as never);
    if (async) tapable.tapPromise(`h${i}`, handler as never);
    else tapable.tap(`h${i}`, handler as never);
    emittery.on(point, handler as never);
  });
  const list = handlers as readonly ((p: unknown) => unknown)[];
  const floor = async
    ? async (): Promise<void> => {
      for (let i = 0; i < list.length; i++) await list[i](payload);
    }
    : (): void => {
      for (let i = 0; i < list.length; i++) list[i](payload);
    };
  return {
    hookscope: () => bus.emit(point, payload as never),
    floor,
    hookable: () => hookable.callHook(point, payload),
    tapable: () => tapable.promise(payload),
    emittery: () => emittery.emitSerial(point, payload),
  };
}

/** The chains for `k` copies of a sync or async `tool.post` handler (`emit-sync`/`emit-async`). */
export function buildChains(k: number, kind: "sync" | "async", observer?: SignalSink): Chains {
  const handlers = Array.from({ length: k }, () => makeHandler(kind) as Handler);
  return build("tool.post", PAYLOAD, handlers, kind === "async", observer);
}

/** The chains for `k` different passing guards on `tool.pre` (`blocking`). */
export function buildGuards(k: number): Chains {
  return build("tool.pre", PRE_PAYLOAD, Array.from({ length: k }, (_, i) => makeGuard(i)), false);
}

/**
 * Runs every chain once and checks it did the same work (each handler ran exactly once), so a
 * bench can never time a chain that silently skips its handlers; then warms them all up.
 */
export async function checkChains(chains: Chains, k: number, label: string): Promise<void> {
  for (const [name, run] of Object.entries(chains)) {
    const before = sink.total;
    await run();
    const ran = sink.total - before;
    if (ran !== k) {
      throw new Error(`Bench "${label}" is broken: "${name}" ran ${ran} handlers, expected ${k}`);
    }
  }
  await warm(Object.values(chains));
}

/**
 * Runs each function `times` times (awaiting each call) so the first bench of a file is not
 * measured while the engine is still compiling: Deno's own warm-up is short.
 */
export async function warm(fns: readonly (() => unknown)[], times = 2_000): Promise<void> {
  for (const fn of fns) {
    for (let i = 0; i < times; i++) await fn();
  }
}

/** The handler counts every bus case is measured at. */
export const KS: readonly number[] = [0, 1, 5, 20];

/** The bench names, floor (the baseline) first. */
export const BENCH_NAMES: readonly (keyof Chains)[] = [
  "floor",
  "hookscope",
  "hookable",
  "tapable",
  "emittery",
];

/**
 * Registers one `Deno.bench` per chain in `group`, each awaiting `batch` calls per iteration
 * (times are divided back by the table script); the floor is the baseline.
 */
export function benchChains(group: string, chains: Chains, batch: number): void {
  for (const name of BENCH_NAMES) {
    const call = chains[name];
    Deno.bench({
      name,
      group,
      baseline: name === "floor",
      fn: async () => {
        for (let i = 0; i < batch; i++) await call();
      },
    });
  }
}
