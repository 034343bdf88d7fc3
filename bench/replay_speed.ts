// How fast replayDecisions re-evaluates a recorded session: 10 000 tool calls recorded through
// the real act path into a MemoryStore (and a SQLite file under Deno), then replayed under a
// stricter two-hook policy. Prints calls re-evaluated per second.
// Run: node_modules/.bin/deno run -A bench/replay_speed.ts [--calls 10000]
import process from "node:process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import {
  MemoryStore,
  type Policy,
  replayDecisions,
  Session,
  type SessionStore,
  Tool,
} from "../mod.ts";
import { SqliteStore } from "../store/sqlite/mod.ts";

const at = process.argv.indexOf("--calls");
const CALLS = at > 0 ? Number(process.argv[at + 1]) : 10_000;
const COMMANDS = ["ls", "rm -rf build", "curl https://example.test", "git status", "echo hi"];

const noRm: Policy = (s) =>
  s.hooks.on(
    "tool.pre",
    ({ args }) =>
      String(args.command).startsWith("rm ") ? { decision: "deny", reason: "no rm" } : undefined,
    { name: "no-rm" },
  );
const stricter: Policy = (s) => {
  const a = noRm(s);
  const b = s.hooks.on(
    "tool.pre",
    ({ args }) =>
      String(args.command).startsWith("curl ")
        ? { decision: "deny", reason: "no network" }
        : undefined,
    { name: "no-curl" },
  );
  return () => {
    if (typeof a === "function") a();
    b();
  };
};

async function record(store: SessionStore): Promise<string> {
  const session = new Session({ store });
  await session.start();
  session.defaultBranch.actions.register(
    new Tool({
      name: "bash",
      description: "run",
      inputSchema: z.object({ command: z.string() }),
      execute: ({ command }: { command: string }) => `ran ${command}`,
    }),
  );
  noRm(session);
  for (let i = 0; i < CALLS; i++) {
    await session.defaultBranch.act({
      function: "bash",
      arguments: { command: COMMANDS[i % COMMANDS.length] },
    }).catch(() => {});
  }
  await session.drainSignals();
  return session.id;
}

async function measure(label: string, store: SessionStore): Promise<void> {
  const sessionId = await record(store);
  const started = performance.now();
  let replayed = 0;
  let changed = 0;
  for await (
    const change of replayDecisions(store, sessionId, stricter, { includeUnchanged: true })
  ) {
    replayed++;
    if (change.changed) changed++;
  }
  const seconds = (performance.now() - started) / 1000;
  console.log(
    `| ${label} | ${replayed} | ${changed} | ${seconds.toFixed(2)} s | ${
      Math.round(replayed / seconds)
    } calls/s |`,
  );
}

console.log("| store | calls replayed | changed | time | rate |\n|---|---:|---:|---:|---:|");
await measure("MemoryStore", new MemoryStore());
const dir = mkdtempSync(join(tmpdir(), "hookscope-replay-bench-"));
try {
  const store = await SqliteStore.open(join(dir, "replay.db"));
  await measure("SQLite file", store);
  await store.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
