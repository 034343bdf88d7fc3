/**
 * An A/B run of the tool-call hot paths (the runner and its arguments: `_ab.ts`):
 *
 * ```sh
 * deno run -A bench/tool_chain_ab.ts /tmp/before [rounds] [after-checkout] [--only=<regexp>]
 * ```
 *
 * Scenarios:
 * - `tool-chain/0`: `ActionManager.invoke` of a tool with a zod schema, no hooks (no allocation
 *   for hooks may happen here);
 * - `tool-chain/3`: the same through an `AgentSpec` with a security pre hook (no opinion), a pre
 *   hook that rewrites the arguments to equal values and a post hook that replaces the result
 *   with itself (`tool_chain_bench.ts`'s `tool-chain/3`);
 * - `tool-processors`: a tool with its own preprocessor (no opinion) and postprocessor
 *   (replaces the result);
 * - `act/1`: `Branch.act` of a session with one `tool.pre` handler (no opinion) and one
 *   `tool.post` handler, the whole act path (a new session per batch, so the history does not
 *   grow over the run);
 * - `tool-processors/no-decision` and `tool-processors/same-decision`: `tool-processors` with a
 *   postprocessor that returns nothing (after) or the result (before), and one that returns the
 *   same decision object every time (after): what the processors row costs without the
 *   decision, and without the hook allocating it. They run last, so they change nothing in how
 *   the rows above are compiled.
 *
 * Hooks are written in the shape each version takes: before the one hook shape, a pre hook
 * returned the arguments bare and a post hook the result bare, and processors took positional
 * arguments (`(value, options, context)`); after, every hook takes one context object and
 * returns a decision. The work is the same, except the decision object each returning hook
 * allocates. Tools are built with the option names of each version (`func`/`requestOptions` or
 * `execute`/`inputSchema`).
 *
 * @module
 */

import { z } from "zod";
import { abArgs, importFrom, runAB, type Scenario } from "./_ab.ts";

// deno-lint-ignore no-explicit-any
type Any = any;

interface Version {
  action: Any;
  session: Any;
  /** Whether hooks take one context object and return decisions (the one hook shape). */
  decisions: boolean;
  /** Whether `Tool` takes `execute`/`inputSchema` (else `func`/`requestOptions`). */
  execute: boolean;
}

async function load(base: string): Promise<Version> {
  const action: Any = await importFrom(base, "action/mod.ts");
  let execute = true;
  try {
    new action.Tool({ name: "probe", execute: () => 0 });
  } catch {
    execute = false;
  }
  return {
    action,
    session: await importFrom(base, "session/mod.ts"),
    decisions: "ToolHookReturnError" in action,
    execute,
  };
}

let sink = 0;
const add = ({ a, b }: { a: number; b: number }): number => a + b;
const ARGS = { a: 1, b: 2 };
const schema = z.object({ a: z.number(), b: z.number() });

function addTool(v: Version, extra: Record<string, unknown> = {}): unknown {
  return new v.action.Tool(
    v.execute
      ? { name: "add", execute: add, inputSchema: schema, ...extra }
      : { name: "add", func: add, requestOptions: schema, ...extra },
  );
}

/** `n` invocations of `add` through `manager`, checked. */
function invokeBatch(manager: Any, n: number): () => Promise<void> {
  return async () => {
    let last: Any;
    for (let i = 0; i < n; i++) last = await manager.invoke({ function: "add", arguments: ARGS });
    if (last.response !== 3) throw new Error(`A/B is broken: ${last.response}`);
  };
}

const N = 10_000;
const scenarios: Scenario<Version>[] = [
  {
    name: "tool-chain/0",
    ops: N,
    make(v) {
      const manager = new v.action.ActionManager();
      manager.register(addTool(v));
      return invokeBatch(manager, N);
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
      return invokeBatch(manager, N);
    },
  },
  {
    name: "tool-processors",
    ops: N,
    make(v) {
      const preprocessor = (): void => {
        sink++;
      };
      const manager = new v.action.ActionManager();
      manager.register(addTool(v, {
        preprocessor,
        postprocessor: v.decisions
          ? ({ result }: Any) => ({ updatedResult: result })
          : (result: unknown) => result,
      }));
      return invokeBatch(manager, N);
    },
  },
  {
    name: "act/1",
    ops: N / 4,
    make(v) {
      const tool = addTool(v);
      return async () => {
        // A session per batch: the history of one branch would grow by two messages per call
        // for the whole run (`branch.messages` is a copy, it cannot be cleared), and the heap
        // with it. Making one costs a few microseconds against the batch's tens of milliseconds.
        const session = new v.session.Session();
        session.hooks.on("tool.pre", () => {
          sink++;
        });
        session.hooks.on("tool.post", () => undefined);
        const branch = session.newBranch();
        branch.actions.register(tool);
        for (let i = 0; i < N / 4; i++) {
          await branch.act({ function: "add", arguments: ARGS });
        }
      };
    },
  },
  {
    name: "tool-processors/no-decision",
    ops: N,
    make(v) {
      const manager = new v.action.ActionManager();
      manager.register(addTool(v, {
        preprocessor: (): void => {
          sink++;
        },
        postprocessor: v.decisions ? (): undefined => undefined : (result: unknown) => result,
      }));
      return invokeBatch(manager, N);
    },
  },
  {
    name: "tool-processors/same-decision",
    ops: N,
    make(v) {
      // Every call of the batch returns 3: one decision object serves them all.
      const decision = { updatedResult: 3 };
      const manager = new v.action.ActionManager();
      manager.register(addTool(v, {
        preprocessor: (): void => {
          sink++;
        },
        postprocessor: v.decisions ? () => decision : (result: unknown) => result,
      }));
      return invokeBatch(manager, N);
    },
  },
];

const args = abArgs("tool_chain_ab.ts");
await runAB("tool-call", [await load(args.before), await load(args.after)], scenarios, args);
if (sink === 0) throw new Error("A/B is broken: no hook ran");
