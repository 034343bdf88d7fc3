// The sandbox holds for root as for other users: a user namespace mapped to an unprivileged uid
// with no capabilities, host kernel interfaces (/proc/sys, /sys, SysRq) read-only or absent,
// memory, processes and tmpfs sizes capped by default, and a deadline or abort that kills the
// whole process tree. The suite runs as root; as root the last test runs this file again as
// `nobody` (setpriv, Node), so every check is seen for both. Needs `bwrap` (Debian package
// bubblewrap; .ci/setup/10-bubblewrap.sh installs it): without it the tests skip.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import process from "node:process";
import { ActionManager } from "../../../action/mod.ts";
import { CodingToolkit, detectSandbox, type SandboxOptions } from "../../../action/coding/mod.ts";
import { effectsDirFor, makeSandbox, run, type Sandbox } from "./_helpers.ts";

const CHILD = process.env.HOOKSCOPE_SANDBOX_TEST_CHILD === "1";
const uid = typeof process.getuid === "function" ? process.getuid() : -1;
const gid = typeof process.getgid === "function" ? process.getgid() : -1;
const who = uid === 0 ? "root" : `uid ${uid}`;
const info = await detectSandbox();
const noBwrap = info.kind === "bubblewrap" ? false : `no bubblewrap sandbox here: ${info.reason}`;

function managerWith(ws: string, sandbox: SandboxOptions = {}): ActionManager {
  const manager = new ActionManager();
  new CodingToolkit({
    workspaceRoot: ws,
    effectsDir: effectsDirFor(ws),
    tools: ["bash"],
    env: { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: join(ws, "..", "home") },
    sandbox,
  }).bind(manager);
  return manager;
}

/** Whether a process whose command line contains `marker` is alive on the host right now. */
function alive(marker: string): boolean {
  const found = spawnSync("pgrep", ["-f", marker], { stdio: "ignore" });
  assert.ok(found.status === 0 || found.status === 1, "pgrep could not tell");
  return found.status === 0;
}

/** Whether this process can make a memory cgroup (v1 hierarchy or a v2 root delegating it). */
function memoryCgroupPossible(): boolean {
  const tries: [string, string][] = [
    ["/sys/fs/cgroup/memory", "memory.limit_in_bytes"],
    ["/sys/fs/cgroup", "memory.max"],
  ];
  for (const [base, file] of tries) {
    const dir = join(base, `hookscope-test-${process.pid}`);
    try {
      mkdirSync(dir);
    } catch {
      continue;
    }
    try {
      writeFileSync(join(dir, file), String(64 * 1024 ** 2));
      return true;
    } catch {
      // not this controller here
    } finally {
      rmdirSync(dir);
    }
  }
  return false;
}

// Sandboxed runs are slow on a loaded machine: more than bun's 5 s default per test.
const SLOW = { timeout: 120_000 };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe(`sandbox hardening as ${who}`, { skip: noBwrap }, () => {
  let box: Sandbox;
  let manager: ActionManager;
  before(() => {
    box = makeSandbox();
    manager = managerWith(box.ws, { maxProcesses: 64 });
  });
  after(() => box.cleanup());

  const script = (name: string, text: string) => {
    writeFileSync(join(box.ws, name), text);
    return `sh ${name}`;
  };

  it(
    "runs in its own user namespace as an unprivileged uid with no capabilities",
    SLOW,
    async () => {
      const result = await run(manager, "bash", {
        command: script(
          "identity.sh",
          "id -u\nid -g\ncat /proc/self/uid_map\ngrep -E '^Cap(Eff|Prm|Bnd|Amb):' /proc/self/status\n" +
            "unshare -U true && echo NESTED_USERNS || echo nested refused\n",
        ),
      });
      assert.equal(result.success, true, JSON.stringify(result));
      const lines = String(result.stdout).trim().split("\n");
      const [inUid, inGid, map] = lines;
      assert.equal(inUid, String(uid === 0 ? 65534 : uid), "the uid inside");
      assert.equal(inGid, String(gid === 0 ? 65534 : gid), "the gid inside");
      // One uid mapped, not the host's whole range. (The outside id is shown relative to the
      // parent namespace, which bubblewrap may nest; the ownership test checks the host side.)
      const [inside, , count] = map.trim().split(/\s+/);
      assert.deepEqual([inside, count], [inUid, "1"], map);
      for (const line of lines.filter((l) => l.startsWith("Cap"))) {
        assert.match(line, /:\s+0+$/, `a capability is left: ${line}`);
      }
      assert.ok(!lines.includes("NESTED_USERNS"), "a nested user namespace could be created");
    },
  );

  it(
    "files it creates in the workspace belong to the caller; the workspace stays writable",
    SLOW,
    async () => {
      writeFileSync(join(box.ws, "existing.txt"), "before\n");
      const result = await run(manager, "bash", {
        command: script(
          "write.sh",
          "mkdir -p made/deep\necho new > made/deep/file.txt\necho after >> existing.txt\n" +
            "rm write.sh\n",
        ),
      });
      assert.equal(result.success, true, JSON.stringify(result));
      const made = statSync(join(box.ws, "made", "deep", "file.txt"));
      assert.equal(made.uid, uid, "the owner outside is the caller");
      assert.equal(made.gid, gid);
      assert.equal(readFileSync(join(box.ws, "existing.txt"), "utf8"), "before\nafter\n");
      assert.equal(existsSync(join(box.ws, "write.sh")), false);
    },
  );

  it(
    "/proc/sys, SysRq and the other host interfaces are read-only, /sys absent, / read-only",
    SLOW,
    async () => {
      const paths = [
        "/proc/sys/fs/lease-break-time",
        "/proc/sys/kernel/core_pattern",
        "/proc/sys/vm/drop_caches",
        "/proc/sysrq-trigger",
        "/sys/kernel/uevent_helper",
        "/sys/fs/cgroup/pids/cgroup.procs",
        "/etc/passwd",
        "/hookscope-planted",
        "/dev/hookscope-planted",
      ];
      const before = readFileSync("/proc/sys/fs/lease-break-time", "utf8");
      // Opening for writing (no byte written): EROFS, EACCES or ENOENT, never a writable file.
      writeFileSync(
        join(box.ws, "open.mjs"),
        `import { openSync, closeSync } from "node:fs";
for (const path of ${JSON.stringify(paths)}) {
  try { closeSync(openSync(path, "a")); console.log(path, "WRITABLE"); }
  catch (error) { console.log(path, error.code); }
}
`,
      );
      const result = await run(manager, "bash", { command: "node open.mjs" });
      assert.equal(result.success, true, JSON.stringify(result));
      const seen = new Map(
        String(result.stdout).trim().split("\n").map((line) => line.split(" ") as [string, string]),
      );
      for (const path of paths) {
        assert.match(
          String(seen.get(path)),
          /^(EROFS|EACCES|EPERM|ENOENT)$/,
          `${path}: ${seen.get(path)}`,
        );
      }
      if (uid === 0) {
        // Root's file permissions would allow the write: the read-only mount refuses it.
        assert.equal(seen.get("/proc/sys/kernel/core_pattern"), "EROFS");
        assert.equal(seen.get("/proc/sys/fs/lease-break-time"), "EROFS");
      }
      assert.equal(existsSync("/hookscope-planted"), false);
      const listing = await run(manager, "bash", { command: "ls /sys" });
      assert.equal(listing.success, false);
      assert.match(String(listing.stderr), /No such file or directory/);
      assert.equal(readFileSync("/proc/sys/fs/lease-break-time", "utf8"), before);
    },
  );

  it("memory is capped by default (node still runs); maxMemoryBytes lowers the cap", {
    timeout: 120_000,
  }, async () => {
    const limits = await run(manager, "bash", {
      command: script("limits.sh", "ulimit -d\nnode -e 'console.log(\"node runs\")'\n"),
    });
    assert.equal(limits.success, true, JSON.stringify(limits));
    assert.deepEqual(String(limits.stdout).trim().split("\n"), [
      String(2 * 1024 * 1024),
      "node runs",
    ]);
    const small = managerWith(box.ws, { maxMemoryBytes: 96 * 1024 ** 2 });
    writeFileSync(
      join(box.ws, "alloc.mjs"),
      `const kept = [];
try { for (let i = 0; i < 8; i++) kept.push(Buffer.alloc(32 << 20, 1)); console.log("ALLOCATED", kept.length * 32); }
catch (error) { console.log("REFUSED", kept.length * 32, error.message); }
`,
    );
    const result = await run(small, "bash", { command: "node alloc.mjs", timeoutMs: 60_000 });
    assert.match(String(result.stdout), /^REFUSED [0-9]+ /, JSON.stringify(result));
    assert.ok(Number(String(result.stdout).split(" ")[1]) < 96, String(result.stdout));
  });

  it(
    "with a memory cgroup the whole run is capped: tmpfs pages count, the writer is killed",
    {
      skip: memoryCgroupPossible() ? false : "no memory cgroup can be made here",
      timeout: 120_000,
    },
    async () => {
      assert.equal(info.memoryLimit, "cgroup", "detectSandbox() reports the memory cgroup");
      const small = managerWith(box.ws, { maxMemoryBytes: 16 * 1024 ** 2 });
      const cgroup = await run(small, "bash", { command: "cat /proc/self/cgroup" });
      assert.match(String(cgroup.stdout), /^[0-9]+:(memory)?:\/hookscope-[0-9]+-[0-9]+$/m);
      // head's own data is tiny (RLIMIT_DATA does not see tmpfs pages); the cgroup does.
      const result = await run(small, "bash", {
        command: script("fill-tmp.sh", "head -c 40000000 /dev/zero > /tmp/fill\n"),
        timeoutMs: 100_000,
      });
      assert.equal(result.timedOut, false, JSON.stringify(result));
      assert.equal(result.returnCode, 137, JSON.stringify(result)); // SIGKILL by the OOM killer
    },
  );

  it(
    "/tmp, /var/tmp, /dev/shm and $HOME are tmpfs of tmpSizeBytes (default 512 MiB)",
    SLOW,
    async () => {
      const sizes = await run(manager, "bash", {
        command: script("df.sh", 'df -B1 --output=size /tmp /var/tmp /dev/shm "$HOME"\n'),
      });
      assert.equal(sizes.success, true, JSON.stringify(sizes));
      assert.deepEqual(
        String(sizes.stdout).trim().split("\n").slice(1).map((line) => line.trim()),
        Array(4).fill(String(512 * 1024 ** 2)),
      );
      const tiny = managerWith(box.ws, { tmpSizeBytes: 1024 ** 2 });
      const full = await run(tiny, "bash", {
        command: script(
          "fill.sh",
          'for dir in /tmp /var/tmp /dev/shm "$HOME"; do\n' +
            '  head -c 3000000 /dev/zero > "$dir/fill" 2> /dev/null && echo "$dir WROTE" || echo "$dir FULL"\n' +
            "done\n",
        ),
      });
      assert.deepEqual(String(full.stdout).trim().split("\n").map((line) => line.split(" ")[1]), [
        "FULL",
        "FULL",
        "FULL",
        "FULL",
      ]);
    },
  );

  it("processes are capped (maxProcesses)", SLOW, async () => {
    const capped = managerWith(box.ws, { maxProcesses: 16 });
    const marker = `${30 + (process.pid % 1000)}.${uid === 0 ? 1357 : 2468}`;
    const result = await run(capped, "bash", {
      command: script(
        "many.sh",
        `n=0\nwhile [ $n -lt 40 ]; do\n  sleep ${marker} &\n  n=$((n+1))\n  echo $n > started.txt\ndone\n`,
      ),
      timeoutMs: 30_000,
    });
    assert.equal(result.success, false, JSON.stringify(result));
    const started = Number(readFileSync(join(box.ws, "started.txt"), "utf8"));
    assert.ok(started > 0 && started < 16, `started ${started} of 40 under a cap of 16`);
    await sleep(300);
    assert.equal(alive(`sleep ${marker}`), false, "a capped sleeper outlived the sandbox");
  });

  for (const how of ["deadline", "abort"] as const) {
    it(
      `${
        how === "abort" ? "an" : "a"
      } ${how} kills the whole tree: sleep 60 & sleep 60 and a double-forked daemon`,
      {
        timeout: 60_000,
      },
      async () => {
        const tag = `${60 + (process.pid % 1000)}.${how === "deadline" ? 11 : 22}${
          uid === 0 ? 1 : 2
        }`;
        const orphan = join(box.ws, `orphan-${how}`);
        const command = script(
          `tree-${how}.sh`,
          `sleep ${tag} &\n` +
            // A daemon: forked twice, in its own session, stdio closed; it writes the marker later.
            `sh -c 'setsid sh -c "sleep 3; touch ${orphan}; exec sleep 1${tag}" < /dev/null > /dev/null 2>&1 &'\n` +
            `sleep 2${tag}\n`,
        );
        const started = Date.now();
        if (how === "deadline") {
          const result = await run(manager, "bash", { command, timeoutMs: 2000 });
          assert.equal(result.timedOut, true, JSON.stringify(result));
          assert.match(String(result.stderr), /Command timed out after 2s/);
        } else {
          const controller = new AbortController();
          const pending = manager.invoke({ function: "bash", arguments: { command } }, {
            signal: controller.signal,
          });
          setTimeout(() => controller.abort(new DOMException("stop", "AbortError")), 2000);
          await assert.rejects(pending, { name: "AbortError" });
        }
        assert.ok(Date.now() - started < 10_000, "the call came back soon after the deadline");
        // Right after the call: nothing of the tree is left (a moment for the kernel's reaping).
        await sleep(300);
        for (const marker of [`sleep ${tag}`, `sleep 2${tag}`, `sleep 3; touch ${orphan}`]) {
          assert.equal(alive(marker), false, `${marker} outlived the ${how}`);
        }
        // The daemon would have written its marker 3 s after it started.
        await sleep(Math.max(0, started + 4500 - Date.now()));
        assert.equal(existsSync(orphan), false, "the double-forked daemon ran on");
        assert.equal(alive(`sleep 1${tag}`), false);
      },
    );
  }
});

// The whole file again as an unprivileged user, from the root run (the suite runs as root).
const unprivileged = CHILD
  ? "this is the unprivileged run"
  : uid !== 0
  ? "not root: this run already is unprivileged"
  : noBwrap || (existsSync("/usr/bin/setpriv") ? false : "setpriv (util-linux) is missing");

describe("sandbox hardening as nobody (a child test run)", { skip: unprivileged }, () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "hookscope-nobody-"));
    chmodSync(dir, 0o755);
    chownSync(dir, 65534, 65534);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("every check above passes as uid 65534", { timeout: 180_000 }, () => {
    const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
    const isNode = !("Deno" in globalThis) && !process.versions.bun;
    const node = isNode ? process.execPath : "node";
    const child = spawnSync(
      "/usr/bin/setpriv",
      [
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
        "--",
        node,
        "--import",
        "tsx",
        "--test",
        "--test-reporter=tap",
        fileURLToPath(import.meta.url),
      ],
      {
        cwd: root,
        encoding: "utf8",
        timeout: 170_000,
        env: {
          PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
          HOME: dir,
          TMPDIR: dir,
          HOOKSCOPE_SANDBOX_TEST_CHILD: "1",
        },
      },
    );
    const output = `${child.stdout}\n${child.stderr}`;
    assert.equal(child.status, 0, output);
    assert.match(output, /^# fail 0$/m, output);
    const passed = Number(/^# pass ([0-9]+)$/m.exec(output)?.[1]);
    assert.ok(passed >= 8, `${passed} checks passed as nobody:\n${output}`);
  });
});

describe("sandbox limit options", () => {
  it("maxMemoryBytes and tmpSizeBytes must be integers of at least 1 MiB and 4096", () => {
    const bad: SandboxOptions[] = [
      { maxMemoryBytes: 0 },
      { maxMemoryBytes: 1024 ** 2 - 1 },
      { maxMemoryBytes: 1024 ** 2 + 0.5 },
      { tmpSizeBytes: 4095 },
      { tmpSizeBytes: Number.NaN },
      { tmpSizeBytes: "1g" as unknown as number },
    ];
    for (const sandbox of bad) {
      assert.throws(
        () => new CodingToolkit({ sandbox }),
        { name: "TypeError", message: /sandbox\.(maxMemoryBytes|tmpSizeBytes) must be an integer/ },
        JSON.stringify(sandbox),
      );
    }
    new CodingToolkit({ sandbox: { maxMemoryBytes: 1024 ** 2, tmpSizeBytes: 4096 } });
  });
});
