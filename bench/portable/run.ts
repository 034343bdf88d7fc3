/**
 * The portable harness: the bus cases (`emit-sync/<k>`, `emit-async/<k>`, `blocking/<k>`) with
 * the floor and the npm peers, measured with tinybench so they run on Node and Bun (and Deno).
 *
 * ```sh
 * node --import tsx bench/portable/run.ts [--time 500]
 * node_modules/.bin/bun bench/portable/run.ts [--time 500]
 * deno run --allow-env --allow-read bench/portable/run.ts [--time 500]
 * ```
 *
 * tinybench times every call of a task with `performance.now()`, which is coarser than one emit,
 * so each task runs a batch of {@linkcode BATCH} awaited calls; times are divided back to one
 * call. It prints the same Markdown tables as `scripts/bench_table.ts`, with the tinybench
 * median (`p50`) and mean, and checks the targets on the median.
 *
 * @module
 */

import { Bench } from "tinybench";
import { buildChains, buildGuards, type Chains, checkChains, KS } from "../_peers.ts";
import { type BenchStat, checkTargets, renderTables, renderVerdicts } from "../_table.ts";

/** Awaited calls per timed sample. */
export const BATCH = 100;

const NAMES = ["floor", "hookscope", "hookable", "tapable", "emittery"] as const;

function argValue(name: string): string | undefined {
  const g = globalThis as { process?: { argv: string[] }; Deno?: { args: string[] } };
  const argv = g.process?.argv ?? g.Deno?.args ?? [];
  const i = argv.indexOf(name);
  return i === -1 ? undefined : argv[i + 1];
}

/** Measures one group; returns one stat per library (nanoseconds per call). */
export async function measureGroup(
  group: string,
  chains: Chains,
  k: number,
  timeMs: number,
): Promise<{ stats: BenchStat[]; runtime: string }> {
  await checkChains(chains, k, group);
  const bench = new Bench({ name: group, time: timeMs, warmupTime: Math.min(200, timeMs) });
  for (const name of NAMES) {
    const run = chains[name];
    bench.add(name, async () => {
      for (let i = 0; i < BATCH; i++) await run();
    });
  }
  await bench.run();
  const stats: BenchStat[] = [];
  for (const task of bench.tasks) {
    const result = task.result;
    const stat: BenchStat = { group, name: task.name, baseline: task.name === "floor", stats: {} };
    if (result.state === "completed") {
      stat.stats.median = (result.latency.p50 * 1e6) / BATCH;
      stat.stats.mean = (result.latency.mean * 1e6) / BATCH;
    } else {
      stat.failed = result.state === "errored" ? String(result.error) : result.state;
    }
    stats.push(stat);
  }
  return { stats, runtime: `${bench.runtime} ${bench.runtimeVersion}` };
}

async function main(): Promise<void> {
  const timeMs = Number(argValue("--time") ?? 500);
  const stats: BenchStat[] = [];
  let runtime = "unknown";
  for (const kind of ["sync", "async"] as const) {
    for (const k of KS) {
      const out = await measureGroup(`emit-${kind}/${k}`, buildChains(k, kind), k, timeMs);
      stats.push(...out.stats);
      runtime = out.runtime;
    }
  }
  for (const k of KS) {
    stats.push(...(await measureGroup(`blocking/${k}`, buildGuards(k), k, timeMs)).stats);
  }
  console.log(
    `Runtime: ${runtime}; tinybench, ${BATCH} awaited calls per sample, ${timeMs} ms per task`,
  );
  console.log(`Times are per call; ratios divide by the group's floor; verdicts use the median.\n`);
  console.log(renderTables(stats, ["median", "mean"]));
  console.log("## Targets (bus cases)\n");
  console.log(renderVerdicts(checkTargets(stats, "median")));
}

await main();
