/**
 * Store calls per tool call: counts every `SessionStore` method call (a wrapping store) for one
 * `Branch.act` that runs, one a `tool.pre` hook denies and one a throwing `tool.pre` hook blocks,
 * then the same three from `Branch.operate`. The numbers are in docs/maintainers.md ("The walk of
 * one tool call").
 *
 * Usage: `deno run -A scripts/act_store_calls.ts`
 *
 * @module
 */
import { MemoryStore } from "../store/memory_store.ts";
import { Session } from "../session/mod.ts";
import { Tool } from "../action/mod.ts";
import { FunctionEndpoint, IModel } from "../service/mod.ts";
import { countingStore } from "../tests/session/_counting_store.ts";

const counting = countingStore;
const c = counting(new MemoryStore());
const session = new Session({ store: c.store });
await session.start();
session.hooks.on("tool.pre", ({ args }) => {
  const x = (args as { x?: number }).x;
  if (x === 2) return { decision: "deny", reason: "two" };
  if (x === 3) throw new Error("three");
  return undefined;
});
const branch = session.newBranch();
branch.actions.register(
  new Tool({ name: "add", execute: (a: Record<string, unknown>) => Number(a.x) + 1 }),
);
for (const [label, x] of [["ran", 1], ["denied", 2], ["blocked", 3]] as const) {
  await branch.act({ function: "add", arguments: { x: 1 } }); // warm
  await session.drainSignals();
  await branch.drainSignals();
  c.calls.clear();
  await branch.act({ function: "add", arguments: { x } }).catch(() => {});
  await session.drainSignals();
  await branch.drainSignals();
  const total = [...c.calls.values()].reduce((a, b) => a + b, 0);
  console.log(`${label}: ${total} ${JSON.stringify(Object.fromEntries(c.calls))}`);
}

// The same calls from the agent loop: store calls of one operate() with one tool call, minus
// those of one operate() that answers without a tool call.
async function operateCalls(x: number | null): Promise<number> {
  let turn = 0;
  const model = new IModel({
    model: "m",
    endpoint: new FunctionEndpoint({
      call: () =>
        x !== null && turn++ === 0
          ? {
            choices: [{
              message: {
                content: "",
                tool_calls: [{
                  id: `c${x}`,
                  function: { name: "add", arguments: JSON.stringify({ x }) },
                }],
              },
            }],
          }
          : { choices: [{ message: { content: "done" } }] },
    }),
  });
  const b = session.newBranch({ model });
  b.actions.register(
    new Tool({ name: "add", execute: (a: Record<string, unknown>) => Number(a.x) + 1 }),
  );
  await session.drainSignals();
  await b.drainSignals();
  c.calls.clear();
  await b.operate("go", { maxTurns: 1 });
  await session.drainSignals();
  await b.drainSignals();
  return [...c.calls.values()].reduce((a, b) => a + b, 0);
}
const base = await operateCalls(null);
for (const [label, x] of [["ran", 1], ["denied", 2], ["blocked", 3]] as const) {
  console.log(`loop ${label}: ${(await operateCalls(x)) - base} store calls for the tool call`);
}
