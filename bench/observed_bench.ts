/**
 * `emit-observed/<k>`: k sync handlers on one point with a `SessionObserver` bound, so every
 * emit also records a `HookSignal` (stored in the observer's bounded history). The floor is the
 * same bus emit without an observer, so the difference is the cost of recording.
 *
 * @module
 */

import { HookBus } from "../hooks/mod.ts";
import { SessionObserver } from "../session/mod.ts";
import { KS, makeHandler, PAYLOAD, warm } from "./_peers.ts";
import { BATCH } from "./_table.ts";

for (const k of KS) {
  const group = `emit-observed/${k}`;
  const observer = new SessionObserver({ maxEvents: 1024 });
  const observed = new HookBus(observer);
  const plain = new HookBus();
  for (let i = 0; i < k; i++) {
    const handler = makeHandler("sync");
    observed.on("tool.post", handler as never);
    plain.on("tool.post", handler as never);
  }
  await observed.emit("tool.post", PAYLOAD);
  if (observer.events.length !== 1) {
    throw new Error(`Bench "${group}" is broken: the observer recorded nothing`);
  }
  await warm([() => plain.emit("tool.post", PAYLOAD), () => observed.emit("tool.post", PAYLOAD)]);
  Deno.bench({
    name: "floor",
    group,
    baseline: true,
    fn: async () => {
      for (let i = 0; i < BATCH; i++) await plain.emit("tool.post", PAYLOAD);
    },
  });
  Deno.bench({
    name: "hookscope",
    group,
    fn: async () => {
      for (let i = 0; i < BATCH; i++) await observed.emit("tool.post", PAYLOAD);
    },
  });
}
