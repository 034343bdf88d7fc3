// The symlink-swap race: a child process keeps replacing workspace files (and a directory on
// the way) with symlinks to files outside, while the reader, the editor and search run 1 000
// times. Not one outside byte may be read, and nothing outside may change.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import type { ActionManager } from "../../../action/mod.ts";
import { makeSandbox, managerFor, type Result, run, type Sandbox, snapshot } from "./_helpers.ts";

const SECRET = "OUTSIDE-SECRET-BYTES";
const ROUNDS = 1000;

/** The swapper: renames a symlink to the outside file over the workspace file and back. */
const SWAPPER = `
cd "$1"
i=0
while :; do
  ln -sf ../outside/secret.txt target.link
  mv -f target.link target.txt
  printf 'inside %s\\n' "$i" > target.new
  mv -f target.new target.txt
  rm -rf d
  ln -s ../outside d
  rm -f d
  mkdir -p d
  printf 'inside d\\n' > d/f.txt
  i=$((i+1))
done
`;

function startSwapper(ws: string): ChildProcess {
  // Its own process group, so stopping it also stops the ln/mv/mkdir it is running.
  return spawn("sh", ["-c", SWAPPER, "swapper", ws], { stdio: "ignore", detached: true });
}

/** Kills the swapper's process group and waits (bounded) until the shell has exited. */
async function stopSwapper(child: ChildProcess | null): Promise<void> {
  if (!child || child.pid === undefined) return;
  const exited = child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise<void>((resolve) => child.once("exit", () => resolve()));
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    // already gone
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    exited,
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, 10_000);
    }),
  ]);
  clearTimeout(timer);
  // Commands the group was running when it was killed die with it; give the kernel a moment.
  await new Promise((resolve) => setTimeout(resolve, 50));
}

async function untilSwapping(ws: string): Promise<void> {
  // The swapper has run once when d/f.txt exists; wait for it (bounded).
  const { existsSync } = await import("node:fs");
  const deadline = Date.now() + 30_000;
  while (!existsSync(join(ws, "d", "f.txt"))) {
    if (Date.now() > deadline) throw new Error("the swapper never started");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("symlink swap race", () => {
  let box: Sandbox;
  let manager: ActionManager;
  let swapper: ChildProcess | null = null;

  before(() => {
    box = makeSandbox();
    writeFileSync(join(box.outside, "secret.txt"), `${SECRET}\n`);
    writeFileSync(join(box.outside, "f.txt"), `${SECRET} f\n`);
    mkdirSync(join(box.outside, "sub"));
    writeFileSync(join(box.ws, "target.txt"), "inside\n");
    manager = managerFor(box.ws);
  });

  after(async () => {
    await stopSwapper(swapper);
    box.cleanup();
  });

  it("reader, editor and search never read or write outside bytes while files are swapped", async () => {
    const outsideBefore = snapshot(box.outside);
    swapper = startSwapper(box.ws);
    await untilSwapping(box.ws);
    const counts = { readOk: 0, readRefused: 0, writeOk: 0, writeRefused: 0, created: 0 };
    const leaks: string[] = [];
    const look = (what: string, result: Result) => {
      const text = JSON.stringify(result);
      if (text.includes(SECRET)) leaks.push(`${what}: ${text.slice(0, 200)}`);
    };
    for (let i = 0; i < ROUNDS; i++) {
      const read = await run(manager, "reader", { action: "read", path: "target.txt" });
      look("read target.txt", read);
      if (read.success) counts.readOk++;
      else counts.readRefused++;
      const inner = await run(manager, "reader", { action: "read", path: "d/f.txt" });
      look("read d/f.txt", inner);
      const list = await run(manager, "reader", { action: "list_dir", path: "d" });
      look("list d", list);
      if (list.success && (list.entries as string[]).includes("secret.txt")) {
        leaks.push(`list d showed outside names: ${JSON.stringify(list.entries)}`);
      }
      const write = await run(manager, "editor", {
        action: "write",
        filePath: "target.txt",
        content: `edited ${i}\n`,
      });
      if (write.success) counts.writeOk++;
      else counts.writeRefused++;
      const created = await run(manager, "editor", {
        action: "write",
        filePath: `d/new-${i}.txt`,
        content: `created ${i}\n`,
      });
      if (created.success) counts.created++;
      if (i % 50 === 0) {
        const grep = await run(manager, "search", { action: "grep", pattern: "SECRET|inside" });
        look("grep", grep);
        const find = await run(manager, "search", { action: "find", pattern: "secret" });
        look("find", find);
        if (String(find.content ?? "").includes("secret.txt")) leaks.push("find listed outside");
      }
    }
    await stopSwapper(swapper);
    assert.deepEqual(leaks, []);
    assert.deepEqual(snapshot(box.outside), outsideBefore);
    // The race was real: both outcomes happened.
    assert.ok(counts.readOk > 0, JSON.stringify(counts));
    assert.ok(counts.readRefused > 0, JSON.stringify(counts));
  });
});
