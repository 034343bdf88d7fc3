// Child process of effects_crash_test.ts: stages a change set the way a staged run leaves it
// (an overlay upper directory with new, changed and replaced entries and whiteouts) and
// commits it; the parent kills it with SIGKILL somewhere in the commit.
// Usage: _effects_commit_child.ts WORKSPACE STATE_BASE
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import process from "node:process";
import { lowerState, readChangeSet } from "../../../action/coding/_changes.ts";
import { commitChanges, effectsStore } from "../../../action/coding/_commit.ts";

const [ws, base] = process.argv.slice(2);
const upper = `${base}/upper-${process.pid}`;
mkdirSync(`${upper}/gen/a/b`, { recursive: true });
mkdirSync(`${upper}/m`, { recursive: true });
mkdirSync(`${upper}/d`, { recursive: true });
for (let i = 0; i < 80; i++) writeFileSync(`${upper}/gen/a/b/n${i}.txt`, `new ${i}\n`.repeat(50));
for (let i = 0; i < 40; i++) writeFileSync(`${upper}/m/f${i}.txt`, `changed ${i}\n`.repeat(80));
for (let i = 0; i < 30; i++) execFileSync("mknod", [`${upper}/d/f${i}.txt`, "c", "0", "0"]);
writeFileSync(`${upper}/r`, "a file where a directory was\n");
const store = effectsStore(base, ws);
const set = await readChangeSet(upper, ws, new Set());
const lower = await lowerState(ws, set.plan);
process.stdout.write("ready\n");
// As the bash tool commits: the workspace entries checked again first.
await commitChanges(store, { callId: `crash-${process.pid}`, toolName: "bash", ...set, lower });
process.stdout.write("done\n");
