/**
 * `emit-sync/<k>` and `emit-async/<k>`: k handlers on one point, no observer. hookscope's
 * `HookBus.emit` against a hand-written loop (the floor) and the npm peers doing the same work.
 * Every bench returns a promise that settles when the whole chain ran.
 *
 * @module
 */

import { HookBus } from "../hooks/mod.ts";
import { buildChains, PAYLOAD } from "./_peers.ts";

for (const kind of ["sync", "async"] as const) {
  for (const k of [0, 1, 5, 20]) {
    const group = `emit-${kind}/${k}`;
    const chains = buildChains(k, kind);
    Deno.bench({ name: "floor", group, baseline: true, fn: chains.floor });
    Deno.bench({ name: "hookscope", group, fn: chains.hookscope });
    Deno.bench({ name: "hookable", group, fn: chains.hookable });
    Deno.bench({ name: "tapable", group, fn: chains.tapable });
    Deno.bench({ name: "emittery", group, fn: chains.emittery });
  }
}

// emit-sync/0 without awaiting anything: the call itself, against a Map lookup miss.
const bus = new HookBus();
const map = new Map<string, unknown>([["tool.pre", 1]]);
let hits = 0;
Deno.bench({
  name: "floor",
  group: "emit-zero-call/0",
  baseline: true,
  fn: () => {
    if (map.get("tool.post") !== undefined) hits++;
  },
});
Deno.bench({
  name: "hookscope",
  group: "emit-zero-call/0",
  fn: () => {
    bus.emit("tool.post", PAYLOAD);
  },
});
globalThis.addEventListener?.("unload", () => {
  if (hits < 0) console.log(hits);
});
