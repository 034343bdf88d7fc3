/**
 * `blocking/<k>`: `tool.pre` (the blocking path) with k different guards that all pass, against
 * a hand-written loop calling the same guards and the npm peers' serial emits, which also stop
 * at the first throw.
 *
 * @module
 */

import { buildGuards, checkChains, KS } from "./_peers.ts";
import { BATCH } from "./_table.ts";

for (const k of KS) {
  const group = `blocking/${k}`;
  const c = buildGuards(k);
  await checkChains(c, k, group);
  Deno.bench({
    name: "floor",
    group,
    baseline: true,
    fn: async () => {
      for (let i = 0; i < BATCH; i++) await c.floor();
    },
  });
  Deno.bench({
    name: "hookscope",
    group,
    fn: async () => {
      for (let i = 0; i < BATCH; i++) await c.hookscope();
    },
  });
  Deno.bench({
    name: "hookable",
    group,
    fn: async () => {
      for (let i = 0; i < BATCH; i++) await c.hookable();
    },
  });
  Deno.bench({
    name: "tapable",
    group,
    fn: async () => {
      for (let i = 0; i < BATCH; i++) await c.tapable();
    },
  });
  Deno.bench({
    name: "emittery",
    group,
    fn: async () => {
      for (let i = 0; i < BATCH; i++) await c.emittery();
    },
  });
}
