/**
 * The runner the A/B benches share (`bus_ab.ts`, `tool_chain_ab.ts`, `service_ab.ts`): two
 * checkouts of hookscope loaded in one Deno process, each scenario timed in rounds that alternate
 * which version goes first, so both see the same machine load. Use it to compare a change against
 * the code before it when the machine is shared.
 *
 * Every A/B script takes the same arguments:
 *
 * ```sh
 * git worktree add /tmp/before <commit>   # or: git archive <commit> | tar -x -C /tmp/before
 * deno run -A bench/<name>_ab.ts /tmp/before [rounds] [after-checkout] [--only=<regexp>] [--cpu]
 * ```
 *
 * With a third argument the "after" version is that checkout instead of this one: an A/A run of a
 * checkout against a copy of itself shows the noise of the machine. `--only` keeps the scenarios
 * whose name matches; `--cpu` times with the process's CPU time instead of the wall clock (time
 * the process waited for a core does not count, which helps on a loaded machine). (A checkout made with `git archive` needs a `node_modules` link to this
 * one's.)
 *
 * Prints, per scenario, the min time per operation of each version over the rounds, the ratio of
 * the mins, the median of the paired (same-round) ratios after ÷ before and their interquartile
 * range, with the load average before and after.
 *
 * @module
 */

import { join, resolve } from "node:path";
import process from "node:process";
import { pathToFileURL } from "node:url";

/** One timed case: `make` builds the batch one version runs per round. */
export interface Scenario<V> {
  /** The row's name. */
  readonly name: string;
  /** Operations per timed batch. */
  readonly ops: number;
  /** Builds the batch for one version (it should throw when the version did not do the work). */
  make(version: V): (() => Promise<void>) | Promise<() => Promise<void>>;
}

/** The command line of an A/B script. */
export interface AbArgs {
  /** The "before" checkout (absolute). */
  readonly before: string;
  /** The "after" checkout (absolute): this one unless a third argument names another. */
  readonly after: string;
  /** Rounds per scenario. */
  readonly rounds: number;
  /** Only scenarios whose name matches, or `null` for all. */
  readonly only: RegExp | null;
  /** Time with the process's CPU time (user + system) instead of the wall clock. */
  readonly cpu: boolean;
}

const HERE = new URL("..", import.meta.url).pathname;

/** Reads `<before-checkout> [rounds] [after-checkout] [--only=<regexp>]`; exits on a bad line. */
export function abArgs(script: string): AbArgs {
  const only = Deno.args.find((arg) => arg.startsWith("--only="));
  const cpu = Deno.args.includes("--cpu");
  const [before, rounds, after] = Deno.args.filter((arg) => !arg.startsWith("--"));
  if (!before) {
    console.error(
      `usage: deno run -A bench/${script} <before-checkout> [rounds] [after-checkout] [--only=<regexp>] [--cpu]`,
    );
    Deno.exit(2);
  }
  return {
    before: resolve(before),
    after: after ? resolve(after) : HERE,
    rounds: Number(rounds ?? 31),
    only: only ? new RegExp(only.slice("--only=".length)) : null,
    cpu,
  };
}

/** Imports `path` (e.g. `"hooks/mod.ts"`) of the checkout at `base`. */
export function importFrom<T = Record<string, unknown>>(base: string, path: string): Promise<T> {
  return import(pathToFileURL(join(base, path)).href);
}

/** The value at fraction `q` (0–1) of sorted `values`, interpolated. */
function quantile(sorted: readonly number[], q: number): number {
  const at = (sorted.length - 1) * q;
  const low = Math.floor(at);
  const high = Math.ceil(at);
  return sorted[low] + (sorted[high] - sorted[low]) * (at - low);
}

function show(ns: number): string {
  return ns >= 1000 ? `${(ns / 1000).toFixed(2)} µs` : `${ns.toFixed(1)} ns`;
}

/** Milliseconds of the process's CPU time (user + system). */
function cpuNow(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

function loadAverage(): string {
  return Deno.loadavg().map((n) => n.toFixed(2)).join(", ");
}

/**
 * Times every scenario (the ones `args.only` keeps) on `[before, after]` and prints the table.
 */
export async function runAB<V>(
  title: string,
  versions: readonly [V, V],
  scenarios: readonly Scenario<V>[],
  args: AbArgs,
): Promise<void> {
  const rounds = args.rounds;
  const now = args.cpu ? cpuNow : () => performance.now();
  console.log(
    `${title} A/B, ${rounds} rounds, ${
      args.cpu ? "process CPU time" : "wall clock"
    }, load average before: ${loadAverage()}`,
  );
  console.log(`before: ${args.before}\nafter: ${args.after}`);
  console.log(
    "| scenario | before (min) | after (min) | after ÷ before, min | paired median | paired IQR |",
  );
  console.log("| --- | ---: | ---: | ---: | ---: | ---: |");
  for (const scenario of scenarios) {
    if (args.only !== null && !args.only.test(scenario.name)) continue;
    const runs = [await scenario.make(versions[0]), await scenario.make(versions[1])];
    // Check and warm both: the same work must happen in each version.
    for (const run of runs) for (let i = 0; i < 5; i++) await run();
    const times: [number[], number[]] = [[], []];
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? [0, 1] : [1, 0];
      for (const v of order) {
        const start = now();
        await runs[v]();
        times[v].push(((now() - start) * 1e6) / scenario.ops);
      }
    }
    const [a, b] = times;
    const paired = a.map((t, i) => b[i] / t).sort((x, y) => x - y);
    const minA = Math.min(...a);
    const minB = Math.min(...b);
    console.log(
      `| \`${scenario.name}\` | ${show(minA)} | ${show(minB)} | ${(minB / minA).toFixed(2)}× | ${
        quantile(paired, 0.5).toFixed(2)
      }× | ${quantile(paired, 0.25).toFixed(2)}–${quantile(paired, 0.75).toFixed(2)}× |`,
    );
  }
  console.log(`load average after: ${loadAverage()}`);
}
