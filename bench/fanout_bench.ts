/**
 * `observer-fanout/<n>`: `SessionObserver.emit` of one signal with n subscribers of mixed filters
 * (type on the data, type on the envelope, role, where, and combinations; some match, some do
 * not), into a bounded history. The floor is a hand-written dispatch doing the same matching,
 * calls and result collection over a plain array, storing into a fixed ring.
 *
 * @module
 */

import { Signal } from "../core/mod.ts";
import { SessionObserver } from "../session/mod.ts";
import { sink, warm } from "./_peers.ts";
import { BATCH } from "./_table.ts";

class ToolRan {
  readonly name: string;
  readonly ok: boolean;
  readonly ms: number;
  constructor(name: string, ok: boolean, ms: number) {
    this.name = name;
    this.ok = ok;
    this.ms = ms;
  }
}
class Other {}

type Spec = {
  type?: abstract new (...args: never[]) => unknown;
  role?: string;
  where?: (p: unknown) => boolean;
};
type Match = (envelope: Signal, payload: unknown) => unknown;

const NO = Symbol("no");
const handler = (value: unknown): unknown => {
  sink.total++;
  return value;
};

/** Each subscriber as the observer sees it, and as the hand-written floor tests it. */
const SUBSCRIBERS: readonly [Spec, Match][] = [
  [{ type: ToolRan }, (_e, p) => (p instanceof ToolRan ? p : NO)],
  [{ role: "agent" }, (e, p) => (e.emitterRole === "agent" ? p : NO)],
  [
    { where: (p) => p instanceof ToolRan && p.ok },
    (_e, p) => (p instanceof ToolRan && p.ok ? p : NO),
  ],
  [{ type: Signal }, (e) => (e instanceof Signal ? e : NO)],
  [{ role: "user" }, (e, p) => (e.emitterRole === "user" ? p : NO)],
  [{ type: Other }, (_e, p) => (p instanceof Other ? p : NO)],
  [
    { type: ToolRan, where: (p) => (p as ToolRan).ms > 100 },
    (_e, p) => (p instanceof ToolRan && p.ms > 100 ? p : NO),
  ],
  [{ where: (p) => typeof p === "string" }, (_e, p) => (typeof p === "string" ? p : NO)],
  [
    { type: ToolRan, role: "agent" },
    (e, p) => (p instanceof ToolRan && e.emitterRole === "agent" ? p : NO),
  ],
  [
    { where: (p) => (p as { name?: unknown }).name === "reader" },
    (_e, p) => ((p as { name?: unknown }).name === "reader" ? p : NO),
  ],
];

const signal = new Signal({ data: new ToolRan("reader", true, 3), emitterRole: "agent" });

for (const n of [1, 10]) {
  const group = `observer-fanout/${n}`;
  const observer = new SessionObserver({ maxEvents: 1024 });
  const matches: Match[] = [];
  for (let i = 0; i < n; i++) {
    const [spec, match] = SUBSCRIBERS[i];
    observer.observe(spec, handler);
    matches.push(match);
  }
  const ring: unknown[] = new Array(1024);
  let at = 0;
  const floor = (): unknown[] => {
    ring[at] = signal;
    at = (at + 1) & 1023;
    const payload = signal.data;
    const results: unknown[] = [];
    for (let i = 0; i < matches.length; i++) {
      const value = matches[i](signal, payload);
      if (value !== NO) results.push(handler(value));
    }
    return results;
  };
  const expected = floor().length;
  const got = (await observer.emit(signal)).length;
  if (got !== expected || expected === 0) {
    throw new Error(`Bench "${group}" is broken: observer gave ${got} results, floor ${expected}`);
  }
  await warm([floor, () => observer.emit(signal)]);
  Deno.bench({
    name: "floor",
    group,
    baseline: true,
    fn: async () => {
      for (let i = 0; i < BATCH; i++) await floor();
    },
  });
  Deno.bench({
    name: "hookscope",
    group,
    fn: async () => {
      for (let i = 0; i < BATCH; i++) await observer.emit(signal);
    },
  });
}
