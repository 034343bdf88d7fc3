/**
 * Prints the benchmark ratio tables and the target verdicts.
 *
 * Runs `deno bench --json` over `bench/` (with the flags the benches need) and prints one
 * Markdown table per group `<case>/<k>`: `avg` and `p75` per bench and each divided by the
 * group's `floor`. Deno's JSON has no median, so the verdicts use `p75` (each Deno sample is
 * itself the mean of a batch of calls for fast benches) and the tables show `avg` beside it.
 *
 * ```sh
 * deno run --allow-run --allow-read scripts/bench_table.ts            # run the benches
 * deno run --allow-run --allow-read scripts/bench_table.ts bench/emit_bench.ts  # some files
 * deno run --allow-run --allow-read scripts/bench_table.ts --runs 3   # median of 3 runs
 * deno run --allow-read scripts/bench_table.ts --input results.json   # read saved JSON ("-": stdin)
 * deno run --allow-read scripts/bench_table.ts --input a.json --input b.json  # median of runs
 * ```
 *
 * Exits 1 when a bench failed or the JSON cannot be read; missed targets are reported, not
 * fatal (benches are measurements, not tests).
 *
 * @module
 */

import {
  callsPerIteration,
  checkTargets,
  fromDenoJson,
  mergeRuns,
  renderTables,
  renderVerdicts,
} from "../bench/_table.ts";

/**
 * The permissions the benches need; `deno task bench` uses the same. emittery reads
 * `DEBUG`; OpenTelemetry's `BasicTracerProvider` (`bench/adapters_bench.ts`) reads its `OTEL_*`
 * configuration variables when it is constructed, and a denied read throws at module load.
 */
export const BENCH_FLAGS: readonly string[] = [
  "--allow-env=DEBUG,OTEL_*",
  "--allow-read",
  "--allow-net=127.0.0.1",
];

/** The statistic target verdicts use. */
export const VERDICT_STAT = "p75";

/**
 * Renders the whole report for parsed `deno bench --json` output, or for several runs of it (each
 * statistic is then the median over the runs).
 */
export function report(json: unknown | readonly unknown[]): { text: string; failed: number } {
  const runs = Array.isArray(json) ? json : [json];
  if (runs.length === 0) throw new TypeError("Cannot report: no bench results");
  const stats = mergeRuns(runs.map((run) => fromDenoJson(run, callsPerIteration)));
  const meta = runs[0] as { runtime?: unknown; cpu?: unknown };
  const header = [
    `Runtime: ${String(meta.runtime ?? "unknown")}; CPU: ${String(meta.cpu ?? "unknown")}`,
    `Times are per call (bench bodies loop over awaited calls; deno's per-iteration times are`,
    `divided back); ratios divide by the group's floor.`,
    runs.length === 1
      ? `Verdicts use ${VERDICT_STAT} (deno bench reports no median).`
      : `Each statistic is the median of ${runs.length} runs; verdicts use ${VERDICT_STAT} (deno bench reports no median).`,
    "",
  ];
  const text = [
    ...header,
    renderTables(stats, ["avg", VERDICT_STAT]),
    "## Targets",
    "",
    renderVerdicts(checkTargets(stats, VERDICT_STAT)),
  ].join("\n");
  return { text, failed: stats.filter((s) => s.failed !== undefined).length };
}

async function readInput(path: string): Promise<string> {
  if (path !== "-") return await Deno.readTextFile(path);
  const chunks: string[] = [];
  const decoder = new TextDecoder();
  for await (const chunk of Deno.stdin.readable) {
    chunks.push(decoder.decode(chunk, { stream: true }));
  }
  return chunks.join("") + decoder.decode();
}

async function runBenches(targets: readonly string[]): Promise<{ text: string; ok: boolean }> {
  const command = new Deno.Command(Deno.execPath(), {
    args: ["bench", "--json", ...BENCH_FLAGS, ...(targets.length > 0 ? targets : ["bench/"])],
    stdout: "piped",
    stderr: "inherit",
  });
  const output = await command.output();
  const text = new TextDecoder().decode(output.stdout);
  if (!output.success && text.trim() === "") {
    throw new Error(`Cannot run benches: deno bench exited with code ${output.code}`);
  }
  return { text, ok: output.success };
}

/** Splits the command line: `--input <file>` (repeatable), `--runs <n>`, bench targets. */
export function parseArgs(
  args: readonly string[],
): { inputs: string[]; runs: number; targets: string[] } {
  const inputs: string[] = [];
  const targets: string[] = [];
  let runs = 1;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--input") inputs.push(args[++i] ?? "-");
    else if (arg === "--runs") {
      runs = Number(args[++i]);
      if (!Number.isInteger(runs) || runs < 1) {
        throw new RangeError(
          `Cannot run benches: --runs must be a positive integer; got "${args[i]}"`,
        );
      }
    } else targets.push(arg);
  }
  return { inputs, runs, targets };
}

async function main(args: readonly string[]): Promise<number> {
  const { inputs, runs, targets } = parseArgs(args);
  const results: unknown[] = [];
  let ok = true;
  if (inputs.length > 0) {
    for (const input of inputs) results.push(JSON.parse(await readInput(input)));
  } else {
    for (let i = 0; i < runs; i++) {
      if (runs > 1) console.error(`run ${i + 1} of ${runs}`);
      const run = await runBenches(targets);
      ok &&= run.ok;
      results.push(JSON.parse(run.text));
    }
  }
  const { text, failed } = report(results);
  console.log(text);
  if (failed > 0) console.error(`${failed} bench(es) failed`);
  if (!ok) console.error("deno bench failed (a bench module did not load or a bench threw)");
  return failed > 0 || !ok ? 1 : 0;
}

if (import.meta.main) {
  try {
    Deno.exit(await main(Deno.args));
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    Deno.exit(1);
  }
}
