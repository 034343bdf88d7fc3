/**
 * `emit-sync/<k>` and `emit-async/<k>`: k handlers on one point, no observer. hookscope's
 * `HookBus.emit` against a hand-written loop (the floor: plain calls for sync handlers,
 * `for … await` for async ones) and the npm peers doing the same work. Every bench body is
 * `async` and awaits the whole chain.
 *
 * `emit-zero-call/0`: the synchronous cost of calling `emit` on a point with no handlers and no
 * observer (it returns a shared settled promise), against a `Map` lookup miss.
 *
 * @module
 */

import { HookBus } from "../hooks/mod.ts";
import { benchChains, buildChains, checkChains, KS, PAYLOAD } from "./_peers.ts";
import { BATCH } from "./_table.ts";

for (const kind of ["sync", "async"] as const) {
  for (const k of KS) {
    const group = `emit-${kind}/${k}`;
    const c = buildChains(k, kind);
    await checkChains(c, k, group);
    benchChains(group, c, BATCH);
  }
}

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
    if (bus.emit("tool.post", PAYLOAD) === undefined) hits++;
  },
});
globalThis.addEventListener("unload", () => {
  if (hits !== 0) console.error(`unexpected hits: ${hits}`);
});
