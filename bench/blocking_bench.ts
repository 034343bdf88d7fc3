/**
 * `blocking/<k>`: `tool.pre` (the blocking path) with k different guards that all pass, against
 * a hand-written loop calling the same guards and the npm peers' serial emits, which also stop
 * at the first throw.
 *
 * @module
 */

import { benchChains, buildGuards, checkChains, KS } from "./_peers.ts";
import { BATCH } from "./_table.ts";

for (const k of KS) {
  const group = `blocking/${k}`;
  const c = buildGuards(k);
  await checkChains(c, k, group);
  benchChains(group, c, BATCH);
}
