/**
 * `tool-chain/<k>`: one tool call through `ActionManager.invoke` (a `FunctionCalling` event with
 * argument validation by the tool's zod schema). `tool-chain/0` has no hooks; `tool-chain/3`
 * has a security pre hook, a user pre hook and a post hook from an `AgentSpec` (so the security
 * hook runs twice, before and after the user hook). The floor is calling the function directly;
 * `two-clock-reads` is the floor with the two clock readings every call record takes.
 *
 * @module
 */

import { z } from "zod";
import { ActionManager, AgentSpec, Tool } from "../action/mod.ts";
import { sink, warm } from "./_peers.ts";
import { BATCH } from "./_table.ts";

const add = ({ a, b }: { a: number; b: number }): number => a + b;
const args = { a: 1, b: 2 };
const clock = { total: 0 };

const spec = new AgentSpec()
  .securityPre("add", ({ args: input }) => {
    if (typeof input.a !== "number") return { decision: "deny", reason: "a is not a number" };
    sink.total++;
  })
  .pre("add", ({ args: input }) => ({ decision: "allow", updatedArgs: { ...input, b: input.b } }))
  .post("add", ({ result }) => ({ updatedResult: result }));

for (const [k, manager] of [[0, new ActionManager()], [3, new ActionManager({ spec })]] as const) {
  const group = `tool-chain/${k}`;
  manager.register(
    new Tool({
      name: "add",
      execute: add,
      inputSchema: z.object({ a: z.number(), b: z.number() }),
    }),
  );
  const call = await manager.invoke({ function: "add", arguments: args });
  if (call.status !== "completed" || call.response !== 3) {
    throw new Error(`Bench "${group}" is broken: ${call.status} ${String(call.response)}`);
  }
  await warm([() => add(args), () => manager.invoke({ function: "add", arguments: args })]);
  Deno.bench({
    name: "floor",
    group,
    baseline: true,
    fn: async () => {
      for (let i = 0; i < BATCH; i++) await add(args);
    },
  });
  // A reference, not a target: the floor plus the two clock readings a call record takes (its
  // start, which is also its creation time, and its end, for `durationMs`). What a clock reading
  // costs depends on the machine (≈ 20 ns on bare metal, 50–75 ns on the VMs these tables come
  // from), so this row shows how much of a ratio is the clock.
  Deno.bench({
    name: "two-clock-reads",
    group,
    fn: async () => {
      for (let i = 0; i < BATCH; i++) {
        clock.total += Date.now();
        await add(args);
        clock.total -= Date.now();
      }
    },
  });
  Deno.bench({
    name: "hookscope",
    group,
    fn: async () => {
      for (let i = 0; i < BATCH; i++) await manager.invoke({ function: "add", arguments: args });
    },
  });
}
