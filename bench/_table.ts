/**
 * Turns bench results into ratio tables and target verdicts. Runtime-neutral: used by
 * `scripts/bench_table.ts` (reading `deno bench --json`) and by the portable tinybench harness.
 *
 * Times are nanoseconds per call of the bench body. Groups are `<case>/<k>`; in each group the
 * bench named `floor` (or flagged `baseline`) is the reference every ratio divides by.
 *
 * @module
 */

/** One bench's summary statistics, in nanoseconds. */
export interface BenchStat {
  /** `<case>/<k>`. */
  group: string;
  /** `floor`, `hookscope`, or a peer's name. */
  name: string;
  /** Whether this bench is the group's floor. */
  baseline: boolean;
  /** Statistic name → nanoseconds (e.g. `avg`, `p75` from Deno, `median` from tinybench). */
  stats: Record<string, number>;
  /** Why the bench failed, when it did. */
  failed?: string;
}

/** A bus target, checked against one group. */
export interface Verdict {
  /** The target, in words. */
  target: string;
  /** The group it was checked on. */
  group: string;
  /** What was measured, in words. */
  measured: string;
  /** Whether the target is met; `null` when a bench it needs is missing or failed. */
  ok: boolean | null;
}

const ORDER = ["floor", "hookscope", "hookable", "tapable", "emittery"];

/**
 * Awaited calls per bench iteration. `deno bench` adds its own per-iteration cost (creating and
 * awaiting the body's promise) that would dilute every ratio toward 1, so bench bodies loop over
 * `BATCH` awaited calls; {@linkcode callsPerIteration} divides the times back to one call.
 */
export const BATCH = 100;

/**
 * How many calls one iteration of a group's bench body makes: {@linkcode BATCH}, except
 * `emit-zero-call` (one synchronous call; deno batches those itself), and `stream-chunks` and
 * `ai-sdk-chunks` (one whole stream).
 */
export function callsPerIteration(group: string): number {
  return group.startsWith("emit-zero-call/") || group.startsWith("stream-chunks/") ||
      group.startsWith("ai-sdk-chunks/")
    ? 1
    : BATCH;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * Reads the output of `deno bench --json` (version 1). Every bench keeps `avg`, `p75`, `min`,
 * `p99` (nanoseconds), divided by `perIteration(group)` (default 1) to give one call's time; a
 * failed bench keeps its failure text. Anything that is not that shape throws a `TypeError`.
 */
export function fromDenoJson(
  json: unknown,
  perIteration: (group: string) => number = () => 1,
): BenchStat[] {
  if (!isRecord(json) || !Array.isArray(json.benches)) {
    throw new TypeError(`Cannot read bench results: expected deno bench --json output`);
  }
  const out: BenchStat[] = [];
  for (const bench of json.benches) {
    if (!isRecord(bench) || typeof bench.name !== "string" || !Array.isArray(bench.results)) {
      throw new TypeError(`Cannot read bench results: a bench entry has no name or results`);
    }
    const group = typeof bench.group === "string" ? bench.group : "(ungrouped)";
    const result = bench.results[0];
    const stat: BenchStat = {
      group,
      name: bench.name,
      baseline: bench.baseline === true || bench.name === "floor",
      stats: {},
    };
    if (isRecord(result) && isRecord(result.ok)) {
      const calls = perIteration(group);
      for (const key of ["avg", "p75", "min", "p99"]) {
        const value = result.ok[key];
        if (typeof value === "number" && Number.isFinite(value)) stat.stats[key] = value / calls;
      }
    } else {
      stat.failed = isRecord(result) && "failed" in result
        ? failureText(result.failed)
        : "no result";
    }
    out.push(stat);
  }
  return out;
}

/**
 * Merges repeated runs of the same benches: each statistic becomes its median over the runs that
 * measured it (the lower middle value for an even count), so one noisy run cannot flip a verdict.
 * A bench that failed in any run stays failed. Bench order is the first run's.
 */
export function mergeRuns(runs: readonly (readonly BenchStat[])[]): BenchStat[] {
  const merged = new Map<string, { first: BenchStat; all: BenchStat[] }>();
  for (const run of runs) {
    for (const stat of run) {
      const key = `${stat.group}\u0000${stat.name}`;
      const entry = merged.get(key);
      if (entry === undefined) merged.set(key, { first: stat, all: [stat] });
      else entry.all.push(stat);
    }
  }
  const out: BenchStat[] = [];
  for (const { first, all } of merged.values()) {
    const failed = all.find((s) => s.failed !== undefined)?.failed;
    const stats: Record<string, number> = {};
    if (failed === undefined) {
      for (const key of Object.keys(first.stats)) {
        const values = all.map((s) => s.stats[key]).filter((v): v is number => v !== undefined);
        values.sort((a, b) => a - b);
        stats[key] = values[Math.floor((values.length - 1) / 2)];
      }
    }
    const stat: BenchStat = {
      group: first.group,
      name: first.name,
      baseline: first.baseline,
      stats,
    };
    if (failed !== undefined) stat.failed = failed;
    out.push(stat);
  }
  return out;
}

/** Deno reports a failure as an error object (`name`, `message`, `stack`, …) or a string. */
function failureText(failed: unknown): string {
  if (isRecord(failed)) {
    const name = typeof failed.name === "string" ? failed.name : "Error";
    return typeof failed.message === "string" ? `${name}: ${failed.message}` : name;
  }
  return String(failed);
}

/** Groups results by group name, keeping first-seen group order and a stable bench order. */
export function byGroup(stats: readonly BenchStat[]): Map<string, BenchStat[]> {
  const groups = new Map<string, BenchStat[]>();
  for (const stat of stats) {
    let list = groups.get(stat.group);
    if (list === undefined) groups.set(stat.group, list = []);
    list.push(stat);
  }
  const rank = (name: string): number => {
    const i = ORDER.indexOf(name);
    return i === -1 ? ORDER.length : i;
  };
  for (const list of groups.values()) list.sort((a, b) => rank(a.name) - rank(b.name));
  return groups;
}

/** Formats nanoseconds with a unit: `12.3 ns`, `4.56 µs`, `7.89 ms`. */
export function formatTime(ns: number): string {
  if (!Number.isFinite(ns)) return "n/a";
  if (Math.abs(ns) < 1_000) return `${ns.toFixed(1)} ns`;
  if (Math.abs(ns) < 1_000_000) return `${(ns / 1_000).toFixed(2)} µs`;
  return `${(ns / 1_000_000).toFixed(2)} ms`;
}

/** Formats a ratio: `1.23×`. */
export function formatRatio(ratio: number): string {
  return Number.isFinite(ratio) ? `${ratio.toFixed(2)}×` : "n/a";
}

/**
 * One Markdown table per group: for each bench the chosen statistics and their ratio to the
 * group's floor (`value / floor value` for the same statistic).
 */
export function renderTables(stats: readonly BenchStat[], columns: readonly string[]): string {
  const lines: string[] = [];
  for (const [group, list] of byGroup(stats)) {
    const floor = list.find((s) => s.baseline && s.failed === undefined);
    lines.push(`### ${group}`, "");
    const head = ["bench", ...columns.map((c) => `${c}`), ...columns.map((c) => `${c} ÷ floor`)];
    lines.push(`| ${head.join(" | ")} |`);
    lines.push(`| ${head.map((_, i) => (i === 0 ? "---" : "---:")).join(" | ")} |`);
    for (const stat of list) {
      if (stat.failed !== undefined) {
        lines.push(`| ${stat.name} | failed: ${stat.failed.split("\n")[0].slice(0, 80)} |`);
        continue;
      }
      const values = columns.map((c) => formatTime(stat.stats[c] ?? NaN));
      const ratios = columns.map((c) =>
        formatRatio(floor ? (stat.stats[c] ?? NaN) / (floor.stats[c] ?? NaN) : NaN)
      );
      lines.push(`| ${stat.name} | ${[...values, ...ratios].join(" | ")} |`);
    }
    lines.push("");
  }
  return lines.join("\n");
}

function find(list: readonly BenchStat[] | undefined, name: string): BenchStat | undefined {
  return list?.find((s) => s.name === name && s.failed === undefined);
}

/**
 * Checks the bus targets on statistic `stat`: `emit-sync/k` ≤ 1.5× the floor for k ≥ 1,
 * `emit-zero-call/0` within 2× of a Map lookup miss, `emit-async/k` ≤ 1.2× the floor, hookscope
 * faster than every peer in every `emit-*` group, `emit-observed` at most 1 µs above its floor,
 * `service-call/0` at most 2 µs above the floor, `stream-chunks/<n>` at most 150 ns per chunk
 * above the floor; and the chain and call targets: `tool-chain/0` ≤ 8× and `tool-chain/3` ≤ 14×
 * the bare function, `service-call/2` ≤ 11.5× the endpoint, `emit-observed/k` ≤ 5× the plain emit.
 * Groups that were not run produce no verdict.
 */
export function checkTargets(stats: readonly BenchStat[], stat: string): Verdict[] {
  const groups = byGroup(stats);
  const out: Verdict[] = [];
  for (const [group, list] of groups) {
    const [kase, kText] = group.split("/");
    const k = Number(kText);
    const floor = list.find((s) => s.baseline && s.failed === undefined);
    const ours = find(list, "hookscope");
    const f = floor?.stats[stat];
    const h = ours?.stats[stat];
    const known = f !== undefined && h !== undefined;
    const ratio = known ? h / f : NaN;
    const ratioTarget = (target: string, limit: number): void => {
      out.push({
        target,
        group,
        measured: known
          ? `${formatRatio(ratio)} (${formatTime(h)} vs ${formatTime(f)})`
          : "missing",
        ok: known ? ratio <= limit : null,
      });
    };
    const aboveTarget = (target: string, limitNs: number, per: number): void => {
      const above = known ? (h - f) / per : NaN;
      out.push({
        target,
        group,
        measured: known
          ? `${formatTime(above)} above the floor${per === 1 ? "" : " per chunk"}`
          : "missing",
        ok: known ? above <= limitNs : null,
      });
    };
    if (kase === "emit-sync" && k >= 1) ratioTarget("≤ 1.5× the floor", 1.5);
    if (kase === "emit-zero-call") ratioTarget("≤ 2× a Map lookup miss", 2);
    if (kase === "emit-async") ratioTarget("≤ 1.2× the floor", 1.2);
    if (kase === "emit-observed") {
      aboveTarget("recording adds ≤ 1 µs per emit", 1_000, 1);
      ratioTarget("≤ 5× the plain emit", 5);
    }
    if (kase === "tool-chain" && k === 0) ratioTarget("≤ 8× the bare function", 8);
    if (kase === "tool-chain" && k === 3) ratioTarget("≤ 14× the bare function", 14);
    if (kase === "service-call" && k === 2) ratioTarget("≤ 11.5× the endpoint", 11.5);
    if (kase === "service-call" && k === 0) aboveTarget("≤ 2 µs above the floor", 2_000, 1);
    if (kase === "stream-chunks" && k > 0) {
      aboveTarget("≤ 150 ns per chunk above the floor", 150, k);
    }
    if (kase.startsWith("emit-")) {
      for (const peer of list) {
        if (peer.name === "floor" || peer.name === "hookscope" || peer.baseline) continue;
        const p = peer.failed === undefined ? peer.stats[stat] : undefined;
        out.push({
          target: `faster than ${peer.name}`,
          group,
          measured: h !== undefined && p !== undefined
            ? `${formatTime(h)} vs ${formatTime(p)} (hookscope ÷ ${peer.name} = ${
              formatRatio(h / p)
            })`
            : "missing",
          ok: h !== undefined && p !== undefined ? h < p : null,
        });
      }
    }
  }
  return out;
}

/** The verdicts as a Markdown table, with a count line: `N met, N missed, N not measured`. */
export function renderVerdicts(verdicts: readonly Verdict[]): string {
  const lines = ["| target | group | measured | met |", "| --- | --- | --- | --- |"];
  for (const v of verdicts) {
    lines.push(
      `| ${v.target} | ${v.group} | ${v.measured} | ${
        v.ok === null ? "not measured" : v.ok ? "yes" : "**no**"
      } |`,
    );
  }
  const met = verdicts.filter((v) => v.ok === true).length;
  const missed = verdicts.filter((v) => v.ok === false).length;
  const unknown = verdicts.filter((v) => v.ok === null).length;
  lines.push("", `${met} met, ${missed} missed, ${unknown} not measured`);
  return lines.join("\n");
}
