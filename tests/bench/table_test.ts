import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  BATCH,
  type BenchStat,
  byGroup,
  callsPerIteration,
  checkTargets,
  formatTime,
  fromDenoJson,
  mergeRuns,
  renderTables,
  renderVerdicts,
} from "../../bench/_table.ts";
import { parseArgs, report } from "../../scripts/bench_table.ts";

function ok(avg: number, p75 = avg): { ok: Record<string, unknown> } {
  return { ok: { n: 10, min: avg / 2, max: avg * 3, avg, p75, p99: avg * 2, p995: avg * 2 } };
}

function denoJson(
  entries: readonly [group: string, name: string, result: unknown][],
): Record<string, unknown> {
  return {
    version: 1,
    runtime: "Deno/2.9.6 x86_64-unknown-linux-gnu",
    cpu: "Test CPU",
    benches: entries.map(([group, name, result]) => ({
      origin: "file:///bench/x_bench.ts",
      group,
      name,
      baseline: name === "floor",
      results: [result],
    })),
  };
}

function stat(group: string, name: string, p75: number): BenchStat {
  return { group, name, baseline: name === "floor", stats: { p75 } };
}

function verdict(stats: BenchStat[], group: string, target: string): boolean | null | undefined {
  return checkTargets(stats, "p75").find((v) => v.group === group && v.target === target)?.ok;
}

describe("fromDenoJson()", () => {
  it("fromDenoJson() keeps avg, p75, min and p99 and marks the floor as baseline", () => {
    const [floor, ours] = fromDenoJson(
      denoJson([["emit-sync/1", "floor", ok(10, 12)], ["emit-sync/1", "hookscope", ok(20, 21)]]),
    );
    assert.deepEqual(floor, {
      group: "emit-sync/1",
      name: "floor",
      baseline: true,
      stats: { avg: 10, p75: 12, min: 5, p99: 20 },
    });
    assert.equal(ours.baseline, false);
    assert.equal(ours.stats.p75, 21);
  });

  it("fromDenoJson() divides by the calls per iteration of each group", () => {
    const stats = fromDenoJson(
      denoJson([["emit-sync/1", "floor", ok(1_000, 2_000)], ["stream-chunks/10", "floor", ok(50)]]),
      callsPerIteration,
    );
    assert.equal(BATCH, 100);
    assert.deepEqual(stats.map((s) => [s.stats.avg, s.stats.p75]), [[10, 20], [50, 50]]);
    assert.equal(callsPerIteration("emit-zero-call/0"), 1);
    assert.equal(callsPerIteration("ai-sdk-chunks/10000"), 1);
    assert.equal(callsPerIteration("tool-chain/3"), BATCH);
  });

  it("fromDenoJson() records a failed bench with its failure text", () => {
    const [text, error] = fromDenoJson(
      denoJson([
        ["g/1", "floor", { failed: "Error: boom" }],
        ["g/1", "hookscope", { failed: { name: "TypeError", message: "bad", stack: "…" } }],
      ]),
    );
    assert.equal(text.failed, "Error: boom");
    assert.equal(error.failed, "TypeError: bad");
    assert.deepEqual(error.stats, {});
  });

  it("fromDenoJson() rejects anything that is not deno bench --json output with a TypeError", () => {
    for (const bad of [null, 3, "x", [], {}, { benches: 1 }, { benches: [{ name: 1 }] }]) {
      assert.throws(() => fromDenoJson(bad), TypeError);
    }
  });

  it("fromDenoJson() either reads or throws a TypeError for arbitrary JSON", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        try {
          assert.ok(Array.isArray(fromDenoJson(value)));
        } catch (error) {
          assert.ok(error instanceof TypeError, String(error));
        }
      }),
    );
  });
});

describe("renderTables()", () => {
  it("renderTables() divides each statistic by the floor's same statistic", () => {
    const text = renderTables(
      fromDenoJson(
        denoJson([["emit-sync/5", "hookscope", ok(30, 60)], ["emit-sync/5", "floor", ok(10, 20)]]),
      ),
      ["avg", "p75"],
    );
    const lines = text.split("\n");
    assert.equal(lines[0], "### emit-sync/5");
    assert.equal(lines[4], "| floor | 10.0 ns | 20.0 ns | 1.00× | 1.00× |");
    assert.equal(lines[5], "| hookscope | 30.0 ns | 60.0 ns | 3.00× | 3.00× |");
  });

  it("renderTables() shows a failed bench and n/a ratios without a floor", () => {
    const text = renderTables(
      fromDenoJson(
        denoJson([["g/1", "hookscope", ok(5)], ["g/1", "floor", { failed: "Error: nope\nat x" }]]),
      ),
      ["p75"],
    );
    assert.match(text, /\| floor \| failed: Error: nope \|/);
    assert.match(text, /\| hookscope \| 5\.0 ns \| n\/a \|/);
  });

  it("byGroup() orders floor, hookscope, then the peers, keeping group order", () => {
    const groups = byGroup([
      stat("b/1", "emittery", 1),
      stat("b/1", "hookscope", 1),
      stat("a/1", "floor", 1),
      stat("b/1", "floor", 1),
      stat("b/1", "tapable", 1),
    ]);
    assert.deepEqual([...groups.keys()], ["b/1", "a/1"]);
    assert.deepEqual(groups.get("b/1")!.map((s) => s.name), [
      "floor",
      "hookscope",
      "tapable",
      "emittery",
    ]);
  });

  it("formatTime() picks ns, µs or ms", () => {
    assert.equal(formatTime(12.34), "12.3 ns");
    assert.equal(formatTime(4_560), "4.56 µs");
    assert.equal(formatTime(7_890_000), "7.89 ms");
    assert.equal(formatTime(NaN), "n/a");
  });
});

describe("mergeRuns()", () => {
  it("mergeRuns() takes each statistic's median over the runs, keeping the first run's order", () => {
    const run = (
      f: number,
      h: number,
    ): BenchStat[] => [stat("g/1", "floor", f), stat("g/1", "hookscope", h)];
    const merged = mergeRuns([run(10, 30), run(12, 100), run(11, 20)]);
    assert.deepEqual(merged.map((s) => [s.name, s.stats.p75]), [["floor", 11], ["hookscope", 30]]);
  });

  it("mergeRuns() takes the lower middle value of an even count and keeps a failure", () => {
    const failed: BenchStat = { ...stat("g/1", "hookscope", 0), stats: {}, failed: "Error: x" };
    const merged = mergeRuns([
      [stat("g/1", "floor", 10), stat("g/1", "hookscope", 5)],
      [stat("g/1", "floor", 20), failed],
    ]);
    assert.equal(merged[0].stats.p75, 10);
    assert.equal(merged[1].failed, "Error: x");
    assert.deepEqual(merged[1].stats, {});
  });

  it("mergeRuns() of one run is that run", () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 1e9, noNaN: true }), { maxLength: 20 }),
        (xs) => {
          const run = xs.map((x, i) => stat(`g/${i}`, "floor", x));
          assert.deepEqual(mergeRuns([run]), run);
        },
      ),
    );
  });
});

describe("checkTargets()", () => {
  it("checkTargets() holds emit-sync/k to 1.5× the floor for k ≥ 1 only", () => {
    const stats = [
      stat("emit-sync/1", "floor", 100),
      stat("emit-sync/1", "hookscope", 149),
      stat("emit-sync/5", "floor", 100),
      stat("emit-sync/5", "hookscope", 151),
      stat("emit-sync/0", "floor", 10),
      stat("emit-sync/0", "hookscope", 100),
    ];
    assert.equal(verdict(stats, "emit-sync/1", "≤ 1.5× the floor"), true);
    assert.equal(verdict(stats, "emit-sync/5", "≤ 1.5× the floor"), false);
    assert.equal(verdict(stats, "emit-sync/0", "≤ 1.5× the floor"), undefined);
  });

  it("checkTargets() holds emit-async to 1.2× and emit-zero-call to 2× the floor", () => {
    const stats = [
      stat("emit-async/5", "floor", 100),
      stat("emit-async/5", "hookscope", 121),
      stat("emit-zero-call/0", "floor", 5),
      stat("emit-zero-call/0", "hookscope", 10),
    ];
    assert.equal(verdict(stats, "emit-async/5", "≤ 1.2× the floor"), false);
    assert.equal(verdict(stats, "emit-zero-call/0", "≤ 2× a Map lookup miss"), true);
  });

  it("checkTargets() requires hookscope to beat every peer in emit-* groups only", () => {
    const stats = [
      stat("emit-sync/1", "floor", 10),
      stat("emit-sync/1", "hookscope", 20),
      stat("emit-sync/1", "hookable", 30),
      stat("emit-sync/1", "tapable", 20),
      stat("blocking/1", "floor", 10),
      stat("blocking/1", "hookscope", 20),
      stat("blocking/1", "tapable", 5),
    ];
    assert.equal(verdict(stats, "emit-sync/1", "faster than hookable"), true);
    assert.equal(verdict(stats, "emit-sync/1", "faster than tapable"), false);
    assert.equal(checkTargets(stats, "p75").filter((v) => v.group === "blocking/1").length, 0);
  });

  it("checkTargets() measures observed, service and stream targets in time above the floor", () => {
    const stats = [
      stat("emit-observed/1", "floor", 200),
      stat("emit-observed/1", "hookscope", 1_199),
      stat("service-call/0", "floor", 200),
      stat("service-call/0", "hookscope", 2_300),
      stat("stream-chunks/10000", "floor", 1_000_000),
      stat("stream-chunks/10000", "hookscope", 2_400_000),
    ];
    const verdicts = checkTargets(stats, "p75");
    assert.deepEqual(verdicts.map((v) => [v.group, v.ok]), [
      ["emit-observed/1", true],
      ["emit-observed/1", false], // 6× the plain emit (target: ≤ 5×)
      ["service-call/0", false],
      ["stream-chunks/10000", true],
    ]);
    assert.equal(verdicts[3].measured, "140.0 ns above the floor per chunk");
  });

  it("checkTargets() holds the tool-chain, service-call/2 and emit-observed ratios", () => {
    const stats = [
      stat("tool-chain/0", "floor", 100),
      stat("tool-chain/0", "hookscope", 800),
      stat("tool-chain/3", "floor", 100),
      stat("tool-chain/3", "hookscope", 1_401),
      stat("service-call/2", "floor", 100),
      stat("service-call/2", "hookscope", 1_150),
      stat("emit-observed/20", "floor", 100),
      stat("emit-observed/20", "hookscope", 501),
    ];
    assert.equal(verdict(stats, "tool-chain/0", "≤ 8× the bare function"), true);
    assert.equal(verdict(stats, "tool-chain/3", "≤ 14× the bare function"), false);
    assert.equal(verdict(stats, "service-call/2", "≤ 11.5× the endpoint"), true);
    assert.equal(verdict(stats, "emit-observed/20", "≤ 5× the plain emit"), false);
  });

  it("checkTargets() reports a target as not measured when hookscope failed", () => {
    const stats: BenchStat[] = [
      stat("emit-async/1", "floor", 10),
      { group: "emit-async/1", name: "hookscope", baseline: false, stats: {}, failed: "boom" },
    ];
    const [v] = checkTargets(stats, "p75");
    assert.equal(v.ok, null);
    assert.match(renderVerdicts([v]), /not measured[\s\S]*0 met, 0 missed, 1 not measured/);
  });

  it("checkTargets() agrees with the ratio for arbitrary timings", () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.5, max: 1e9, noNaN: true }),
        fc.double({ min: 0.5, max: 1e9, noNaN: true }),
        (f, h) => {
          const stats = [stat("emit-sync/5", "floor", f), stat("emit-sync/5", "hookscope", h)];
          assert.equal(verdict(stats, "emit-sync/5", "≤ 1.5× the floor"), h / f <= 1.5);
        },
      ),
    );
  });
});

describe("scripts/bench_table.ts", () => {
  it("report() of several runs says so and uses the median", () => {
    const run = (h: number) =>
      denoJson([["emit-sync/1", "floor", ok(1_000)], ["emit-sync/1", "hookscope", ok(h)]]);
    const { text } = report([run(1_200), run(9_000), run(1_400)]);
    assert.match(text, /median of 3 runs/);
    assert.match(text, /\| hookscope \| 14\.0 ns \| 14\.0 ns \| 1\.40× \| 1\.40× \|/);
    assert.throws(() => report([]), TypeError);
  });

  it("parseArgs() splits inputs, runs and bench targets, and rejects a bad --runs", () => {
    assert.deepEqual(parseArgs(["--input", "a.json", "bench/x_bench.ts", "--input", "b.json"]), {
      inputs: ["a.json", "b.json"],
      runs: 1,
      targets: ["bench/x_bench.ts"],
    });
    assert.equal(parseArgs(["--runs", "3"]).runs, 3);
    assert.throws(() => parseArgs(["--runs", "0"]), RangeError);
    assert.throws(() => parseArgs(["--runs", "x"]), /--runs must be a positive integer; got "x"/);
  });

  it("report() prints per-call times (a batch of BATCH calls per iteration) and the verdicts", () => {
    const { text, failed } = report(
      denoJson([
        ["emit-sync/1", "floor", ok(1_000)],
        ["emit-sync/1", "hookscope", ok(1_200)],
        ["emit-sync/1", "emittery", { failed: "Error: x" }],
      ]),
    );
    assert.equal(failed, 1);
    assert.match(text, /^Runtime: Deno\/2\.9\.6 x86_64-unknown-linux-gnu; CPU: Test CPU/);
    assert.match(text, /### emit-sync\/1/);
    assert.match(
      text,
      /\| ≤ 1\.5× the floor \| emit-sync\/1 \| 1\.20× \(12\.0 ns vs 10\.0 ns\) \| yes \|/,
    );
    assert.match(text, /\| faster than emittery \| emit-sync\/1 \| missing \| not measured \|/);
  });
});
