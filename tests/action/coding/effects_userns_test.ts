// Staged runs for a caller that is not root: the overlay is mounted in an unprivileged user
// namespace (unshare --user --map-root-user, overlayfs with userxattr). Run as root, the test
// starts its child as uid 65534 (setpriv); run as another user, the child runs as that user. Both
// children run under Node (node --import tsx) whatever runs this file. A second child detects
// with no `unshare` on its PATH: staged runs are off, and the tool description, every result,
// the signals and sandboxStatus() say so.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, readdirSync, realpathSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import process from "node:process";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const CHILD = fileURLToPath(new URL("./_effects_userns_child.ts", import.meta.url));

function runChild(base: string, mode?: string): Promise<Record<string, unknown>> {
  const asRoot = process.getuid?.() === 0;
  const node = ["node", "--import", "tsx", CHILD, base, ...(mode ? [mode] : [])];
  const argv = asRoot
    ? ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", ...node]
    : node;
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
        HOME: join(base, "home"),
        TMPDIR: base,
        XDG_STATE_HOME: join(base, "xdg"),
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      const line = stdout.trim().split("\n").filter((l) => l.startsWith("{")).at(-1);
      if (code !== 0 || line === undefined) {
        reject(new Error(`child exited ${code}: ${stderr}${stdout}`));
      } else resolve(JSON.parse(line));
    });
  });
}

describe("staged runs for a non-root caller (unprivileged user namespace)", () => {
  let base: string;
  before(() => {
    if (process.getuid?.() === 0) {
      // The child runs as uid 65534 from this checkout: every directory up to it must let others in.
      for (let dir = realpathSync(ROOT); dir !== "/"; dir = dirname(dir)) {
        assert.ok(
          (statSync(dir).mode & 0o005) === 0o005,
          `${dir} must be readable and searchable by other users (o+rx): the test runs a child as uid 65534 from this checkout`,
        );
      }
    }
    base = realpathSync(mkdtempSync(join(tmpdir(), "hookscope-userns-")));
    chmodSync(base, 0o777); // the child (uid 65534) works in here
  });
  after(() => rmSync(base, { recursive: true, force: true }));

  it("mounts the overlay in a user namespace: commits, denies, undoes and keeps a layer for an answer", async () => {
    const out = await runChild(base);
    assert.notEqual(out.uid, 0);
    const info = out.info as { kind: string; effects: string; effectsReason?: string };
    assert.equal(info.kind, "bubblewrap");
    assert.equal(info.effects, "overlay", info.effectsReason);
    assert.equal((out.status as { effects: string }).effects, "overlay");
    const made = out.made as { applied?: boolean; changes?: { path: string; kind: string }[] };
    assert.equal(made.applied, true, JSON.stringify(made));
    assert.deepEqual(made.changes?.map((c) => `${c.kind} ${c.path}`), [
      "created d",
      "created d/e",
      "created d/e/f",
      "deleted gone.txt",
      "mode keep.txt",
      "symlink link",
      "created new.txt",
    ]);
    // Files the command made belong to the caller outside.
    assert.equal(out.owner, out.uid);
    const denied = out.denied as { applied?: boolean; error?: string };
    assert.equal(denied.applied, false);
    assert.match(String(denied.error), /victim stays/);
    assert.equal(out.deniedUnchanged, true);
    assert.equal(out.undone, true);
    assert.equal(out.asked, 3);
    assert.equal(out.askedUnchanged, true);
    assert.equal(
      (out.approved as { applied?: boolean }).applied,
      true,
      JSON.stringify(out.approved),
    );
    assert.equal(out.victimGone, true);
    // Nothing is left behind: overlayfs leaves its work directory with mode 000 and, after a
    // deletion, an entry in it; the caller opens it to remove its stages and the probe's.
    assert.deepEqual(readdirSync(base).filter((name) => name.startsWith("hookscope-overlay")), []);
    const effects = join(base, "state");
    const workspaces = readdirSync(effects);
    assert.notEqual(workspaces.length, 0);
    for (const hash of workspaces) assert.deepEqual(readdirSync(join(effects, hash, "stage")), []);
  });

  it("without unshare staged runs are off, visibly: status, description, results and signals", async () => {
    const out = await runChild(base, "fallback");
    assert.notEqual(out.uid, 0);
    const info = out.info as { kind: string; effects: string; effectsReason?: string };
    assert.equal(info.kind, "bubblewrap");
    assert.equal(info.effects, "direct");
    assert.match(String(info.effectsReason), /unshare not found/);
    const status = out.status as { effects: string; effectsReason?: string };
    assert.equal(status.effects, "direct");
    assert.match(String(status.effectsReason), /unshare not found/);
    assert.match(
      String(out.description),
      /WARNING: changes are written directly into the workspace, not staged \(unshare not found/,
    );
    const echo = out.echo as { stdout?: string; effects?: string; effectsReason?: string };
    assert.equal(echo.stdout, "hi\n");
    assert.equal(echo.effects, "direct");
    assert.match(String(echo.effectsReason), /unshare not found/);
    // The judge blocks instead; the workspace keeps its data.
    assert.match(JSON.stringify(out.removal), /recursive delete|Blocked destructive command/);
    assert.equal(out.unchanged, true);
    assert.match(String(out.signals), /"effects":"direct","effectsReason":"unshare not found/);
  });
});
