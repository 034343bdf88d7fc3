/**
 * An A/B run of the tool-call hot paths: two checkouts of hookscope loaded in one Deno process,
 * each scenario timed in rounds that alternate which version goes first, so both see the same
 * machine load. Use it to compare a change against the code before it when the machine is shared.
 *
 * ```sh
 * git worktree add /tmp/before <commit>   # or: git archive <commit> | tar -x -C /tmp/before
 * deno run -A bench/tool_chain_ab.ts /tmp/before [rounds] [after-checkout]
 * ```
 *
 * With a third argument the "after" version is that checkout instead of this one (an A/A run of a
 * checkout against a copy of itself shows the noise of the machine).
 *
 * Scenarios:
 * - `tool-chain/0`: `ActionManager.invoke` of a tool with a zod schema, no hooks (no allocation
 *   for hooks may happen here);
 * - `tool-chain/3`: the same through an `AgentSpec` with a security pre hook (no opinion), a pre
 *   hook that rewrites the arguments to equal values and a post hook that replaces the result
 *   with itself (`tool_chain_bench.ts`'s `tool-chain/3`);
 * - `tool-processors`: a tool with its own preprocessor (no opinion) and postprocessor
 *   (replaces the result);
 * - `decision-fold/5` / `decision-verdicts/5`: `HookBus.decide("tool.pre")` with five handlers
 *   that rewrite (idempotently) / allow (`decision_fold_bench.ts`);
 * - `act/1`: `Branch.act` of a session with one `tool.pre` handler (no opinion) and one
 *   `tool.post` handler, the whole act path.
 *
 * Hooks are written in the shape each version takes: before the one hook shape, a pre hook
 * returned the arguments bare and a post hook the result bare (with the processors' positional
 * arguments); after, they return decisions. The work is the same. Prints, per scenario, the min
 * and median time per operation of each version over the rounds, the ratio of the mins and the
 * median of the paired (same-round) ratios.
 *
 * @module
 */

import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { z } from "zod";

// deno-lint-ignore no-explicit-any
type Any = any;

interface Version {
  name: string;
  action: Any;
  hooks: Any;
  session: Any;
  /** Whether the hooks return decisions (the one hook shape). */
  decisions: boolean;
}

const here = new URL("..", import.meta.url);
const beforeDir = Deno.args[0];
if (!beforeDir) {
  console.error("usage: deno run -A bench/tool_chain_ab.ts <before-checkout> [rounds]");
  Deno.exit(2);
}
const ROUNDS = Number(Deno.args[1] ?? 31);

async function load(name: string, base: string): Promise<Version> {
  const url = (path: string) => pathToFileURL(join(base, path)).href;
  const action = await import(url("action/mod.ts"));
  return {
    name,
    action,
    hooks: await import(url("hooks/mod.ts")),
    session: await import(url("session/mod.ts")),
    decisions: "ToolHookReturnError" in action,
  };
}

const versions: Version[] = [
  await load("before", resolve(beforeDir)),
  await load("after", Deno.args[2] ? resolve(Deno.args[2]) : new URL(".", here).pathname),
];

let sink = 0;
const add = ({ a, b }: { a: number; b: number }): number => a + b;
const ARGS = { a: 1, b: 2 };
const schema = z.object({ a: z.number(), b: z.number() });
const call = { signal: new AbortController().signal, source: { kind: "local" } };

function addTool(v: Version, extra: Record<string, unknown> = {}): unknown {
  return new v.action.Tool({ name: "add", execute: add, inputSchema: schema, ...extra });
}

interface Scenario {
  name: string;
  /** Operations per timed batch. */
  ops: number;
  /** Builds the batch for one version. */
  make(v: Version): Promise<() => Promise<void>>;
}

const N = 2_000;
const scenarios: Scenario[] = [
  {
    name: "tool-chain/0",
    ops: N,
    make(v) {
      const manager = new v.action.ActionManager();
      manager.register(addTool(v));
      return Promise.resolve(async () => {
        let last: Any;
        for (let i = 0; i < N; i++) {
          last = await manager.invoke({ function: "add", arguments: ARGS });
        }
        if (last.response !== 3) throw new Error(`A/B is broken: ${last.response}`);
        sink++;
      });
    },
  },
  {
    name: "tool-chain/3",
    ops: N,
    make(v) {
      const spec = new v.action.AgentSpec()
        .securityPre("add", ({ args }: Any) => {
          if (typeof args.a !== "number") throw new Error("a is not a number");
          sink++;
        })
        .pre(
          "add",
          v.decisions
            ? ({ args }: Any) => ({ decision: "allow", updatedArgs: { ...args, b: args.b } })
            : ({ args }: Any) => ({ ...args, b: args.b }),
        )
        .post(
          "add",
          v.decisions
            ? ({ result }: Any) => ({ updatedResult: result })
            : ({ result }: Any) => result,
        );
      const manager = new v.action.ActionManager({ spec });
      manager.register(addTool(v));
      return Promise.resolve(async () => {
        let last: Any;
        for (let i = 0; i < N; i++) {
          last = await manager.invoke({ function: "add", arguments: ARGS });
        }
        if (last.response !== 3) throw new Error(`A/B is broken: ${last.response}`);
      });
    },
  },
  {
    name: "tool-processors",
    ops: N,
    make(v) {
      const manager = new v.action.ActionManager();
      manager.register(
        addTool(
          v,
          v.decisions
            ? {
              preprocessor: () => {
                sink++;
              },
              postprocessor: ({ result }: Any) => ({ updatedResult: result }),
            }
            : {
              preprocessor: () => {
                sink++;
              },
              postprocessor: (result: unknown) => result,
            },
        ),
      );
      return Promise.resolve(async () => {
        let last: Any;
        for (let i = 0; i < N; i++) {
          last = await manager.invoke({ function: "add", arguments: ARGS });
        }
        if (last.response !== 3) throw new Error(`A/B is broken: ${last.response}`);
      });
    },
  },
  {
    name: "decision-fold/5",
    ops: N,
    make(v) {
      const bus = new v.hooks.HookBus();
      for (let k = 0; k < 5; k++) {
        const key = `f${k}`;
        bus.on("tool.pre", ({ args }: Any) => ({
          decision: "allow",
          updatedArgs: { ...args, [key]: k + 1 },
        }));
      }
      const payload = Object.freeze({
        ...call,
        toolName: "bash",
        callId: "c1",
        args: Object.freeze({ command: "ls", n: 0 }),
        argsSummary: "",
      });
      return Promise.resolve(async () => {
        for (let i = 0; i < N; i++) sink += (await bus.decide("tool.pre", payload)).verdict.length;
      });
    },
  },
  {
    name: "decision-verdicts/5",
    ops: N,
    make(v) {
      const bus = new v.hooks.HookBus();
      for (let k = 0; k < 5; k++) bus.on("tool.pre", () => ({ decision: "allow" }));
      const payload = Object.freeze({
        ...call,
        toolName: "bash",
        callId: "c1",
        args: Object.freeze({ command: "ls" }),
        argsSummary: "",
      });
      return Promise.resolve(async () => {
        for (let i = 0; i < N; i++) sink += (await bus.decide("tool.pre", payload)).verdict.length;
      });
    },
  },
  {
    name: "act/1",
    ops: N / 4,
    make(v) {
      const session = new v.session.Session();
      session.hooks.on("tool.pre", () => {
        sink++;
      });
      session.hooks.on("tool.post", () => undefined);
      const branch = session.newBranch();
      branch.actions.register(addTool(v));
      return Promise.resolve(async () => {
        for (let i = 0; i < N / 4; i++) {
          await branch.act({ function: "add", arguments: ARGS });
        }
        // Keep the branch's history from growing without bound between batches.
        branch.messages.length = 0;
      });
    },
  },
];

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function show(ns: number): string {
  return ns >= 1000 ? `${(ns / 1000).toFixed(2)} µs` : `${ns.toFixed(1)} ns`;
}

const loadBefore = Deno.loadavg().map((n) => n.toFixed(2)).join(", ");
console.log(`tool-call A/B, ${ROUNDS} rounds, load average before: ${loadBefore}`);
console.log("| scenario | before (min) | after (min) | after ÷ before, min | paired median |");
console.log("| --- | ---: | ---: | ---: | ---: |");
for (const scenario of scenarios) {
  const runs = await Promise.all(versions.map((v) => scenario.make(v)));
  // Check and warm both: the same work must happen in each version.
  for (const run of runs) for (let i = 0; i < 5; i++) await run();
  const times: number[][] = versions.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? [0, 1] : [1, 0];
    for (const v of order) {
      const start = performance.now();
      await runs[v]();
      times[v].push(((performance.now() - start) * 1e6) / scenario.ops);
    }
  }
  const [a, b] = times;
  const paired = median(a.map((t, i) => b[i] / t));
  const minA = Math.min(...a);
  const minB = Math.min(...b);
  console.log(
    `| \`${scenario.name}\` | ${show(minA)} | ${show(minB)} | ${(minB / minA).toFixed(2)}× | ${
      paired.toFixed(2)
    }× |`,
  );
}
const loadAfter = Deno.loadavg().map((n) => n.toFixed(2)).join(", ");
console.log(`load average after: ${loadAfter}  (sink ${sink > 0 ? "ok" : "empty"})`);
