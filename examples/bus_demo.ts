/**
 * A small runnable tour of the Session hook bus: ordered handlers, StopHook, a blocking
 * `tool.pre` guard, and HookSignals recorded into an observer. Run with `npm run demo`.
 *
 * @module
 */

import { HookBus, type HookSignal, StopHook } from "../mod.ts";

const recorded: HookSignal[] = [];
const bus = new HookBus({ emit: (signal) => void recorded.push(signal as HookSignal) });

bus.on("session.start", ({ sessionId }) => console.log(`1. persist start of ${sessionId}`));
bus.on("session.start", async () => {
  await new Promise((r) => setTimeout(r, 10));
  console.log("2. an async handler, awaited in order");
});
bus.on("tool.pre", ({ toolName, args, argsSummary }) => {
  // Decide on the real arguments; the summary is for the log line only.
  if (String(args.command ?? "").includes("rm -rf")) {
    throw new Error(`blocked ${toolName}: ${argsSummary}`);
  }
  console.log(`   guard allowed ${toolName} ${argsSummary}`);
});
bus.on("tool.post", () => {
  console.log("   first tool.post handler stops the chain");
  throw new StopHook();
});
bus.on("tool.post", () => console.log("   never printed"));

await bus.emit("session.start", { sessionId: "demo" });
// What every tool.* payload carries besides the call: its signal and where the tool comes from.
const call = { signal: new AbortController().signal, source: { kind: "local" } } as const;
await bus.emit("tool.pre", {
  ...call,
  toolName: "bash",
  callId: "c1",
  args: { command: "ls" },
  argsSummary: '{"command":"ls"}',
});
await bus.emit("tool.post", {
  ...call,
  callId: "c1",
  toolName: "bash",
  args: { command: "ls" },
  result: "ok",
  resultSummary: "ok",
  durationMs: 3,
});
try {
  await bus.emit("tool.pre", {
    ...call,
    toolName: "bash",
    callId: "c2",
    args: { command: "rm -rf /" },
    argsSummary: '{"command":"rm -rf /"}',
  });
} catch (error) {
  console.log(`3. tool.pre is blocking: ${(error as Error).message}`);
}
console.log(`4. recorded signals: ${recorded.map((s) => s.point).join(", ")}`);
console.log("   (the blocked tool.pre left no HookSignal, as ADR-0047 D2 says)");
