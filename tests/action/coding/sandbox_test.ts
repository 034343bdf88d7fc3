// The bash tool inside the real bubblewrap sandbox: each escape an attacker tries is refused or
// contained, the host unchanged; and the refusal when bubblewrap is missing. Needs `bwrap`
// (Debian package bubblewrap; .ci/setup/10-bubblewrap.sh installs it).
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { homedir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { ActionManager } from "../../../action/mod.ts";
import {
  CodingToolkit,
  detectSandbox,
  type SandboxOptions,
  SandboxUnavailableError,
} from "../../../action/coding/mod.ts";
import { effectsDirFor, makeSandbox, run, type Sandbox, snapshot } from "./_helpers.ts";

const SECRET = `hookscope-secret-${process.pid}-${Date.now()}`;

function managerWith(options: ConstructorParameters<typeof CodingToolkit>[0]): ActionManager {
  const manager = new ActionManager();
  const ws = options?.workspaceRoot;
  const effectsDir = ws === undefined ? undefined : effectsDirFor(ws);
  new CodingToolkit({ tools: ["bash"], effectsDir, ...options }).bind(manager);
  return manager;
}

/** Whether a process whose command line contains `marker` is alive (polls up to 5 s for none). */
async function survivor(marker: string): Promise<boolean> {
  for (let i = 0; i < 50; i++) {
    const found = spawnSync("pgrep", ["-f", marker], { stdio: "ignore" });
    if (found.status === 1) return false;
    assert.equal(found.status, 0, "pgrep could not tell");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return true;
}

describe("bash in the bubblewrap sandbox", () => {
  let box: Sandbox;
  let manager: ActionManager;
  let home: string;
  const outsideBefore: string[] = [];
  before(async () => {
    process.env.HOOKSCOPE_SANDBOX_TEST_SECRET = SECRET;
    box = makeSandbox();
    home = join(box.base, "home");
    mkdirSync(home);
    writeFileSync(join(home, ".secret-token"), SECRET);
    const info = await detectSandbox();
    assert.equal(info.kind, "bubblewrap", `bubblewrap must be installed: ${info.reason}`);
    manager = managerWith({
      workspaceRoot: box.ws,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, SECRET_IN_ENV: "given" },
      sandbox: { maxProcesses: 64 },
    });
    outsideBefore.push(...snapshot(box.outside), ...snapshot(home));
  });
  after(() => {
    delete process.env.HOOKSCOPE_SANDBOX_TEST_SECRET;
    box.cleanup();
  });

  const script = (name: string, text: string) => {
    writeFileSync(join(box.ws, name), text);
    return name;
  };

  it("detectSandbox() finds bubblewrap with its version and a process cap", async () => {
    const info = await detectSandbox();
    assert.equal(info.kind, "bubblewrap");
    assert.match(String(info.version), /^[0-9]+\.[0-9]+/);
    assert.match(String(info.path), /\/bwrap$/);
    assert.notEqual(info.processLimit, "none", "no process cap: a fork bomb would reach the host");
  });

  it("a sandboxed command runs in the workspace, can write there, and says sandbox: bubblewrap", async () => {
    const result = await run(manager, "bash", { command: "touch made-inside.txt" });
    assert.equal(result.success, true, JSON.stringify(result));
    assert.equal(result.sandbox, "bubblewrap");
    assert.ok(existsSync(join(box.ws, "made-inside.txt")));
    const cwd = await run(manager, "bash", { command: "pwd" });
    assert.equal(String(cwd.stdout).trim(), box.ws);
  });

  it("cat /etc/shadow finds no such file (the host's exists)", async () => {
    assert.ok(existsSync("/etc/shadow"), "the host has /etc/shadow");
    const result = await run(manager, "bash", { command: "cat /etc/shadow /etc/gshadow" });
    assert.equal(result.success, false);
    assert.equal(result.sandbox, "bubblewrap");
    assert.match(String(result.stderr), /\/etc\/shadow: No such file or directory/);
    assert.equal(result.stdout, "");
    const ssl = await run(manager, "bash", { command: "ls /etc/ssl/private /etc/sudoers" });
    assert.equal(ssl.success, false);
    assert.equal(ssl.stdout, "");
  });

  it("writing outside the workspace fails and the host is unchanged", async () => {
    const attempts = [
      `touch ${join(box.outside, "pwned")}`,
      `cp ${join(box.ws, "src", "main.py")} ${join(box.outside, "copied.py")}`,
      `cat ${join(box.outside, "secret.txt")}`,
      `touch /usr/hookscope-pwned /etc/hookscope-pwned`,
      `sh ${script("escape.sh", `echo pwned > ${join(home, "planted")}\necho x > ../outside/x\n`)}`,
    ];
    for (const command of attempts) {
      const result = await run(manager, "bash", { command });
      assert.equal(result.success, false, command);
      assert.doesNotMatch(String(result.stdout), /outside secret/, command);
    }
    // Deleting what the sandbox cannot see "succeeds" (rm -f of a missing path) and harms nothing.
    await run(manager, "bash", { command: `rm -rf ${box.outside} ${home}` });
    assert.ok(!existsSync("/usr/hookscope-pwned") && !existsSync("/etc/hookscope-pwned"));
    assert.deepEqual([...snapshot(box.outside), ...snapshot(home)], outsideBefore);
  });

  it("/proc/1/environ and /proc/$PPID/environ hold no host secret; only sandbox processes are visible", async () => {
    const name = script(
      "environ.sh",
      'cat /proc/1/environ /proc/$PPID/environ /proc/self/environ\necho\nls /proc\nls -A "$HOME"\n',
    );
    const result = await run(manager, "bash", { command: `sh ${name}` });
    assert.equal(result.success, true, JSON.stringify(result));
    const stdout = String(result.stdout);
    assert.ok(stdout.includes("SECRET_IN_ENV=given"), "the command's own environment is shown");
    assert.ok(!stdout.includes(SECRET), "a host secret leaked into the sandbox");
    assert.ok(!stdout.includes("HOOKSCOPE_SANDBOX_TEST_SECRET"));
    const pids = stdout.split("\n").filter((line) => /^[0-9]+$/.test(line));
    assert.ok(pids.length > 0 && pids.length <= 6, `sandbox processes only: ${pids.join(" ")}`);
    assert.ok(!pids.includes(String(process.pid)) || Number(process.pid) <= 6);
    // The home directory is an empty tmpfs inside (the host's holds .secret-token).
    assert.ok(!stdout.includes(".secret-token"));
    const realHome = await run(manager, "bash", { command: `ls -A ${homedir()}` });
    const hostEntries = readdirSync(homedir());
    for (const entry of hostEntries) {
      assert.ok(!String(realHome.stdout).split("\n").includes(entry), `host home entry ${entry}`);
    }
  });

  it("a connection to a server on 127.0.0.1 is refused; network: true reaches it", async () => {
    let connections = 0;
    const server: Server = createServer((socket) => {
      connections++;
      socket.on("error", () => {}); // the client exits as soon as it is connected
      socket.end("hello\n");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as { port: number }).port;
    try {
      const name = script(
        "connect.mjs",
        `import { connect } from "node:net";
const socket = connect(${port}, "127.0.0.1");
socket.setTimeout(5000, () => { console.log("TIMEOUT"); process.exit(4); });
socket.on("connect", () => { console.log("CONNECTED"); process.exit(0); });
socket.on("error", (error) => { console.log(error.code); process.exit(3); });
`,
      );
      const refused = await run(manager, "bash", { command: `node ${name}`, timeoutMs: 20_000 });
      assert.equal(refused.returnCode, 3, JSON.stringify(refused));
      assert.equal(String(refused.stdout).trim(), "ECONNREFUSED");
      assert.equal(connections, 0);
      const online = managerWith({
        workspaceRoot: box.ws,
        sandbox: { network: true },
      });
      const reached = await run(online, "bash", { command: `node ${name}`, timeoutMs: 20_000 });
      assert.equal(String(reached.stdout).trim(), "CONNECTED", JSON.stringify(reached));
      assert.equal(connections, 1);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("processes are capped: 200 background sleeps stop at the cap and die with the sandbox", async () => {
    const marker = `${50 + (process.pid % 1000)}.4321`;
    const name = script(
      "many.sh",
      `n=0\nwhile [ $n -lt 200 ]; do\n  sleep ${marker} &\n  n=$((n+1))\n  echo $n > started.txt\ndone\n`,
    );
    const result = await run(manager, "bash", { command: `sh ${name}`, timeoutMs: 30_000 });
    assert.equal(result.success, false, JSON.stringify(result));
    assert.equal(result.timedOut, false);
    assert.match(String(result.stderr), /fork|Resource temporarily unavailable/i);
    const started = Number(execFileSync("cat", [join(box.ws, "started.txt")]).toString());
    assert.ok(started > 0 && started < 64, `started ${started} of 200 under a cap of 64`);
    assert.equal(await survivor(`sleep ${marker}`), false, "a capped sleeper outlived the sandbox");
  });

  it("a fork bomb is contained by the process cap and killed at the deadline; the host still forks", async () => {
    const marker = `bomb-${process.pid}`;
    // bash retries a failed fork instead of exiting, so this bomb never ends by itself.
    const name = script(`${marker}.sh`, `bomb() {\n  while :; do bomb & done\n}\nbomb\n`);
    const result = await run(manager, "bash", { command: `bash ${name}`, timeoutMs: 3000 });
    assert.equal(result.success, false);
    assert.match(String(result.stderr), /fork/, "the cap was reached");
    assert.equal(result.returnCode, -1);
    assert.equal(result.timedOut, true);
    assert.equal(await survivor(marker), false, "bomb processes outlived the sandbox");
    const host = spawnSync("sh", ["-c", "echo fine"], { encoding: "utf8" });
    assert.equal(host.stdout, "fine\n");
  });

  it("a command past its deadline is killed with its whole namespace, setsid children too", async () => {
    const marker = `${40 + (process.pid % 1000)}.8642`;
    const name = script(
      "linger.sh",
      `setsid sleep ${marker} &\nsleep 1${marker} &\nexec sleep 2${marker}\n`,
    );
    const result = await run(manager, "bash", { command: `sh ${name}`, timeoutMs: 500 });
    assert.equal(result.timedOut, true);
    assert.equal(result.returnCode, -1);
    assert.match(String(result.stderr), /Command timed out after 0\.5s$/);
    assert.equal(await survivor(`sleep ${marker}`), false, "a setsid child outlived the sandbox");
    assert.equal(await survivor(`sleep 1${marker}`), false);
  });

  it("a host TMPDIR the sandbox cannot see becomes its /tmp; one in the workspace stays", async () => {
    const name = script("tmpdir.sh", 'echo "$TMPDIR"\nmktemp\n');
    for (const [given, seen] of [["/nonexistent-host-tmp", "/tmp"], [box.ws, box.ws]]) {
      const tmp = managerWith({
        workspaceRoot: box.ws,
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", TMPDIR: given },
      });
      const result = await run(tmp, "bash", { command: `sh ${name}` });
      assert.equal(result.success, true, JSON.stringify(result));
      const [dir, made] = String(result.stdout).trim().split("\n");
      assert.equal(dir, seen);
      assert.ok(made.startsWith(`${seen}/tmp.`), made);
    }
  });

  it("the bash tool's description says it runs in bubblewrap", () => {
    const tool = new CodingToolkit({ workspaceRoot: box.ws, tools: ["bash"] }).tools()[0];
    assert.match(tool.description ?? "", /bubblewrap sandbox/);
    assert.match(tool.description ?? "", /no network/);
  });
});

describe("bash without a sandbox", () => {
  let box: Sandbox;
  before(() => {
    box = makeSandbox();
  });
  after(() => box.cleanup());
  const missing: SandboxOptions = { bwrapPath: join("/nonexistent", "hookscope", "bwrap") };

  it("detectSandbox() pointed at a missing binary reports none with the reason", async () => {
    const info = await detectSandbox({ bwrapPath: missing.bwrapPath });
    assert.deepEqual(info, {
      kind: "none",
      reason: `bwrap not found: ${missing.bwrapPath}`,
      effects: "direct",
      effectsReason: `no sandbox: bwrap not found: ${missing.bwrapPath}`,
    });
  });

  it("bash refuses with SandboxUnavailableError (auto and bubblewrap), running nothing", async () => {
    for (const kind of ["auto", "bubblewrap"] as const) {
      const manager = managerWith({ workspaceRoot: box.ws, sandbox: { ...missing, kind } });
      const call = await manager.invoke({
        function: "bash",
        arguments: { command: "touch should-not-exist" },
      }, { suppressErrors: true });
      assert.notEqual(call.status, "completed");
      const error = call.execution.error;
      assert.ok(error instanceof SandboxUnavailableError, String(error));
      assert.match(error.message, /^Cannot run bash without a sandbox: bwrap not found: /);
      assert.match(error.message, /apt-get install bubblewrap/);
      assert.match(error.message, /sandbox: \{ kind: "none" \}/);
      assert.equal(existsSync(join(box.ws, "should-not-exist")), false);
    }
  });

  it('kind: "none" runs on the host and says so in the description and the result', async () => {
    const toolkit = new CodingToolkit({
      workspaceRoot: box.ws,
      tools: ["bash"],
      sandbox: { ...missing, kind: "none" },
    });
    assert.match(toolkit.tools()[0].description ?? "", /WARNING: sandbox "none"/);
    assert.deepEqual(await toolkit.sandboxStatus(), { kind: "none" });
    const manager = new ActionManager();
    toolkit.bind(manager);
    const result = await run(manager, "bash", {
      command: `cat ${join(box.outside, "secret.txt")}`,
    });
    assert.equal(result.success, true);
    assert.equal(result.sandbox, "none");
    assert.equal(result.stdout, "outside secret\n");
  });

  it("sandboxStatus() reports unavailable with the reason; bad sandbox options are TypeErrors", async () => {
    const toolkit = new CodingToolkit({ workspaceRoot: box.ws, sandbox: missing });
    assert.deepEqual(await toolkit.sandboxStatus(), {
      kind: "unavailable",
      reason: `bwrap not found: ${missing.bwrapPath}`,
    });
    const bad: unknown[] = [
      null,
      "none",
      { kind: "docker" },
      { network: "yes" },
      { writable: ["relative/path"] },
      { readable: "/usr" },
      { bwrapPath: "" },
      { maxProcesses: 0 },
      { maxProcesses: 1.5 },
    ];
    for (const sandbox of bad) {
      assert.throws(
        () => new CodingToolkit({ sandbox: sandbox as SandboxOptions }),
        TypeError,
        JSON.stringify(sandbox),
      );
    }
  });
});
