// Decision latency of the Claude Code hook protocol, end to end on this machine:
//   - `hookscope serve` (one warm process, SQLite store on) at a steady rate: p50/p99 per POST;
//   - `hookscope hook` (a process per event, as a Claude `command` hook): per call, answering
//     itself and forwarding to the running `serve` (`--server`);
//   - a plain `node` and a plain `python3` hook script doing the same check, for comparison;
//   - `answerClaudeEvent` in-process (what claudeAgentHooks runs), for the floor.
// Run: node_modules/.bin/deno run -A bench/claude_hooks.ts [--rate 100] [--requests 500] [--spawns 20]
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { Session } from "../mod.ts";
import { answerClaudeEvent } from "../claude/mod.ts";
import { destructiveCommandGuard } from "../action/coding/mod.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const RATE = arg("rate", 100);
const REQUESTS = arg("requests", 500);
const SPAWNS = arg("spawns", 20);
const DENO = existsSync(join(ROOT, "node_modules/deno/deno"))
  ? join(ROOT, "node_modules/deno/deno")
  : "deno";
const dir = mkdtempSync(join(tmpdir(), "hookscope-claude-bench-"));
const policy = join(dir, "policy.ts");
writeFileSync(
  policy,
  `import { destructiveCommandGuard } from ${JSON.stringify(join(ROOT, "action/coding/mod.ts"))};
export const policy = (session) => session.hooks.on("tool.pre", destructiveCommandGuard(), { name: "guard" });`,
);
const event = (i: number, command: string) =>
  JSON.stringify({
    session_id: `bench-${Math.floor(i / 50)}`,
    hook_event_name: "PreToolUse",
    tool_name: "Bash",
    tool_input: { command },
    tool_use_id: `toolu_${i}`,
  });

function stats(ms: number[]): { p50: number; p99: number } {
  const sorted = [...ms].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { p50: at(0.5), p99: at(0.99) };
}

function runOnce(cmd: string, args: string[], input: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(cmd, args, { stdio: ["pipe", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0 || !out.includes("deny")) reject(new Error(`${cmd} exited ${code}: ${out}`));
      else resolve(performance.now() - started);
    });
    child.stdin.end(input);
  });
}

async function spawned(
  label: string,
  cmd: string,
  args: string[],
): Promise<[string, { p50: number; p99: number }]> {
  await runOnce(cmd, args, event(0, "rm -rf victim")); // warm the caches
  const times: number[] = [];
  for (let i = 0; i < SPAWNS; i++) times.push(await runOnce(cmd, args, event(i, "rm -rf victim")));
  return [label, stats(times)];
}

const rows: [string, { p50: number; p99: number }][] = [];

// In-process: the floor.
{
  const session = new Session();
  session.hooks.on("tool.pre", destructiveCommandGuard(), { name: "guard" });
  const times: number[] = [];
  for (let i = 0; i < 2000; i++) {
    const started = performance.now();
    await answerClaudeEvent(session, JSON.parse(event(i, i % 2 ? "ls -la" : "rm -rf victim")));
    if (i >= 200) times.push(performance.now() - started);
  }
  rows.push(["answerClaudeEvent in-process (no store)", stats(times)]);
}

// serve, at a steady rate, SQLite store on.
{
  const server = spawn(DENO, [
    "run",
    "-A",
    join(ROOT, "cli/main.ts"),
    "serve",
    "--policy",
    policy,
    "--db",
    join(dir, "serve.db"),
    "--port",
    "0",
  ], {
    stdio: ["ignore", "pipe", "inherit"],
    detached: true,
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    server.stdout!.on("data", (d) => {
      out += d;
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match) resolve(match[1]);
    });
    server.on("exit", (code) => reject(new Error(`serve exited ${code}`)));
  });
  const post = async (i: number) => {
    const started = performance.now();
    const response = await fetch(`${url}/claude/hooks`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: event(i, i % 2 ? "ls -la" : "rm -rf victim"),
    });
    await response.text();
    return performance.now() - started;
  };
  for (let i = 0; i < 100; i++) await post(i); // warm up
  const times: number[] = [];
  const gap = 1000 / RATE;
  const begun = performance.now();
  for (let i = 0; i < REQUESTS; i++) {
    const due = begun + i * gap;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    times.push(await post(i));
  }
  rows.push([`hookscope serve, ${RATE}/s, SQLite store`, stats(times)]);
  rows.push(
    await spawned("hookscope hook --server (a process per event, forwarding)", DENO, [
      "run",
      "-A",
      join(ROOT, "cli/main.ts"),
      "hook",
      "--server",
      url,
    ]),
  );
  process.kill(-server.pid!, "SIGTERM");
}

writeFileSync(
  join(dir, "check.mjs"),
  `import { readFileSync } from "node:fs";
const e = JSON.parse(readFileSync(0, "utf8"));
if (/\\brm\\s+-[a-z]*r/.test(e.tool_input.command ?? "")) process.stdout.write(JSON.stringify({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "rm -r" } }));`,
);
writeFileSync(
  join(dir, "check.py"),
  `import json, re, sys
e = json.load(sys.stdin)
if re.search(r"\\brm\\s+-[a-z]*r", e["tool_input"].get("command", "")):
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "rm -r"}}))`,
);
rows.push(
  await spawned("hookscope hook (a process per event)", DENO, [
    "run",
    "-A",
    join(ROOT, "cli/main.ts"),
    "hook",
    "--policy",
    policy,
    "--db",
    join(dir, "hook.db"),
  ]),
);
rows.push(await spawned("plain node script (regex check)", "node", [join(dir, "check.mjs")]));
rows.push(await spawned("plain python3 script (regex check)", "python3", [join(dir, "check.py")]));

console.log("| path | p50 | p99 |\n|---|---:|---:|");
for (const [label, { p50, p99 }] of rows) {
  console.log(`| ${label} | ${p50.toFixed(2)} ms | ${p99.toFixed(2)} ms |`);
}
rmSync(dir, { recursive: true, force: true });
