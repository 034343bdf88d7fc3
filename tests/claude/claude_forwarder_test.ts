// The two forwarding command hooks, as real subprocesses: the sh + curl script that
// `hookscope hook-forwarder` writes (run by every POSIX shell found here) and `hookscope hook
// --server`. Both forward to a real `hookscope serve`, and both fail closed the same way when
// the server is down, too slow, answers an HTTP error, or answers anything but serve's own
// answer: a PreToolUse is denied, a UserPromptSubmit blocked, another event exits 1, and input
// that is not an event exits 2.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { createServer, type Server } from "node:http";
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { writeFileSync } from "node:fs";
import { CLI, DENO, startServe, stopGroup } from "./_cli.ts";

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(
  command: string,
  args: readonly string[],
  stdin: string,
  env: Record<string, string> = {},
): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...args], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/", ...env },
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const guard = setTimeout(() => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch { /* gone */ }
    }, 90_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(guard);
      resolve({ code, stdout, stderr });
    });
    child.stdin.on("error", () => {});
    child.stdin.end(stdin);
  });
}

const event = (name: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ session_id: "forward-session", hook_event_name: name, ...extra });
const pre = (command: string) =>
  event("PreToolUse", {
    tool_name: "Bash",
    tool_input: { command },
    tool_use_id: "toolu_1",
  });

function decision(stdout: string): { permissionDecision?: string; reason?: string } {
  const out = JSON.parse(stdout);
  return {
    permissionDecision: out.hookSpecificOutput?.permissionDecision,
    reason: out.hookSpecificOutput?.permissionDecisionReason ?? out.reason,
  };
}

/** The POSIX shells here: the script must run under each (dash as /bin/sh, bash, busybox …). */
const SHELLS = ["sh", "dash", "bash", "busybox"].filter((shell) =>
  spawnSync(shell, shell === "busybox" ? ["sh", "-c", "exit 0"] : ["-c", "exit 0"]).status === 0
);

describe("forwarding command hooks (sh + curl, and hook --server)", () => {
  let dir: string;
  let server: Awaited<ReturnType<typeof startServe>>["child"] | undefined;
  let url: string;
  let fake: Server;
  let fakeUrl: string;
  let mode = "garbage";
  before(async () => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), "hookscope-forwarder-")));
    const policy = join(dir, "policy.ts");
    writeFileSync(
      policy,
      `export const policy = (session) => session.hooks.on("tool.pre", ({ args }) =>
        String(args.command).startsWith("rm") ? { decision: "deny", reason: "no rm" } : undefined);`,
    );
    ({ child: server, url } = await startServe(
      ["--policy", policy, "--db", join(dir, "serve.db"), "--token-env", "HOOK_TOKEN"],
      { HOOK_TOKEN: "s3cret" },
    ));
    // A server at the address that is not (or no longer) serve: each mode a way to go wrong.
    fake = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        if (mode === "slow") return; // never answers
        if (mode === "error") {
          res.writeHead(500, { "content-type": "application/json" });
          return res.end('{"error":"boom"}');
        }
        if (mode === "garbage") {
          res.writeHead(200, { "content-type": "text/html" });
          return res.end("<html>welcome</html>");
        }
        if (mode === "unmarked") {
          // Valid JSON that would allow the call, without serve's mark.
          res.writeHead(200, { "content-type": "application/json" });
          return res.end('{"hookSpecificOutput":{"permissionDecision":"allow"}}');
        }
        if (mode === "array") {
          res.writeHead(200, {
            "content-type": "application/json",
            "x-hookscope-answer": "claude-hook",
          });
          return res.end("[1]");
        }
        res.writeHead(200, {
          "content-type": "application/json",
          "x-hookscope-answer": "claude-hook",
        });
        res.end('{"marked":true}');
      });
    });
    await new Promise<void>((resolve) => fake.listen(0, "127.0.0.1", resolve));
    fakeUrl = `http://127.0.0.1:${(fake.address() as { port: number }).port}`;
  });
  after(async () => {
    stopGroup(server);
    fake.closeAllConnections();
    await new Promise((resolve) => fake.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  /** Writes a forwarder script for `target` and returns how to run it under `shell`. */
  function script(target: string, extra: string[] = []): string {
    const file = join(dir, `forward-${Math.random().toString(36).slice(2)}.sh`);
    const written = spawnSync(
      DENO,
      [...CLI, "hook-forwarder", "--server", target, "--out", file, ...extra],
      { encoding: "utf8", timeout: 60_000 },
    );
    assert.equal(written.status, 0, written.stderr);
    assert.match(written.stdout, new RegExp(`wrote ${file}`));
    assert.match(written.stdout, /"type": "command"/);
    return file;
  }

  type Forwarder = (
    target: string,
    stdin: string,
    env?: Record<string, string>,
    extra?: string[],
  ) => Promise<Ran>;
  const forwarders: [string, Forwarder][] = [
    ...SHELLS.map((shell): [string, Forwarder] => [
      `the sh + curl script under ${shell}`,
      (target, stdin, env, extra = []) =>
        run(shell, [...(shell === "busybox" ? ["sh"] : []), script(target, extra)], stdin, env),
    ]),
    [
      "hook --server",
      (target, stdin, env, extra = []) =>
        run(DENO, [...CLI, "hook", "--server", target, ...extra], stdin, env),
    ],
  ];

  it("finds the shells it runs the script under", () => {
    assert.ok(SHELLS.includes("sh"), SHELLS.join(","));
  });

  for (const [name, forward] of forwarders) {
    describe(name, () => {
      it("forwards to serve with the token read when it runs, and prints serve's answer", async () => {
        const token = ["--token-env", "HOOK_TOKEN"];
        const denied = await forward(url, pre("rm -rf x"), { HOOK_TOKEN: "s3cret" }, token);
        assert.equal(denied.code, 0, denied.stderr);
        assert.deepEqual(decision(denied.stdout), { permissionDecision: "deny", reason: "no rm" });
        const fine = await forward(url, pre("ls"), { HOOK_TOKEN: "s3cret" }, token);
        assert.equal(fine.code, 0, fine.stderr);
        assert.deepEqual(JSON.parse(fine.stdout), {});
        // A wrong token: serve's answer blocks whatever the event is (and stops the run); the
        // hook passes it on. A missing one: the hook fails closed itself.
        const wrong = await forward(url, pre("ls"), { HOOK_TOKEN: "wrong" }, token);
        assert.equal(wrong.code, 0, wrong.stderr);
        assert.equal(JSON.parse(wrong.stdout).decision, "block");
        assert.equal(JSON.parse(wrong.stdout).continue, false);
        assert.match(decision(wrong.stdout).reason ?? "", /missing or wrong bearer token/);
        const missing = await forward(url, pre("ls"), {}, token);
        assert.equal(decision(missing.stdout).permissionDecision, "deny");
        assert.match(missing.stderr, /HOOK_TOKEN is empty/);
      });

      it("fails closed when the server is down: deny, block, a non-blocking error, exit 2 for a non-event", async () => {
        const down = "http://127.0.0.1:9";
        const denied = await forward(down, pre("ls"));
        assert.equal(denied.code, 0, denied.stderr);
        assert.equal(decision(denied.stdout).permissionDecision, "deny");
        assert.match(decision(denied.stdout).reason ?? "", /cannot reach/);
        const prompt = await forward(down, event("UserPromptSubmit", { prompt: "hi" }));
        assert.equal(prompt.code, 0, prompt.stderr);
        assert.equal(JSON.parse(prompt.stdout).decision, "block");
        const other = await forward(down, event("PostToolUse", { tool_name: "Bash" }));
        assert.equal(other.code, 1);
        assert.equal(other.stdout, "");
        const notEvent = await forward(down, "{ nope");
        assert.equal(notEvent.code, 2);
        assert.equal(notEvent.stdout, "");
        assert.match(notEvent.stderr, /cannot read the event/);
      });

      it("fails closed on a slow server, an HTTP error, garbage, an unmarked answer, a non-object", async () => {
        for (const each of ["slow", "error", "garbage", "unmarked", "array"]) {
          mode = each;
          const started = Date.now();
          const answered = await forward(fakeUrl, pre("ls"), {}, ["--timeout-ms", "500"]);
          assert.equal(answered.code, 0, `${each}: ${answered.stderr}`);
          assert.equal(decision(answered.stdout).permissionDecision, "deny", each);
          assert.ok(Date.now() - started < 30_000, each);
        }
        // serve's mark on one JSON object is what counts.
        mode = "marked";
        const marked = await forward(fakeUrl, pre("ls"));
        assert.equal(marked.code, 0, marked.stderr);
        assert.deepEqual(JSON.parse(marked.stdout), { marked: true });
      });

      it("an oversized event is refused without reaching the server (a deny, or exit 2)", async () => {
        mode = "marked";
        const huge = await forward(fakeUrl, pre("x".repeat(1024 * 1024 + 10)));
        // Both block the call in Claude Code: the script still tells the event by its start;
        // hook --server, which parses it, cannot.
        if (huge.code === 2) assert.equal(huge.stdout, "");
        else {
          assert.equal(huge.code, 0, huge.stderr);
          assert.equal(decision(huge.stdout).permissionDecision, "deny");
        }
        assert.match(huge.stderr, /larger than 1048576 bytes/);
        assert.doesNotMatch(huge.stdout, /marked/);
      });
    });
  }

  it("hook-forwarder writes an executable script, prints it with --out -, refuses URLs it cannot embed and foreign files", () => {
    const file = script(url);
    assert.equal(statSync(file).mode & 0o777, 0o755);
    assert.match(readFileSync(file, "utf8"), /^#!\/bin\/sh\n/);
    // It runs as a command, by its shebang.
    const direct = spawnSync(file, { input: pre("rm -rf x"), encoding: "utf8", timeout: 60_000 });
    assert.equal(direct.status, 0, direct.stderr);
    assert.equal(JSON.parse(direct.stdout).decision, "block"); // no token: serve blocks
    const printed = spawnSync(DENO, [...CLI, "hook-forwarder", "--server", url, "--out", "-"], {
      encoding: "utf8",
      timeout: 60_000,
    });
    assert.equal(printed.status, 0, printed.stderr);
    assert.match(printed.stdout, new RegExp(`url='${url}/claude/hooks'`));
    for (const bad of ["not a url", "ftp://h/x", "http://h/it's", "http://user:pw@h/"]) {
      const refused = spawnSync(DENO, [...CLI, "hook-forwarder", "--server", bad, "--out", "-"], {
        encoding: "utf8",
        timeout: 60_000,
      });
      assert.equal(refused.status, 2, bad);
      assert.match(refused.stderr, /--server/, bad);
    }
    const foreign = join(dir, "mine.sh");
    writeFileSync(foreign, "#!/bin/sh\necho mine\n");
    const kept = spawnSync(
      DENO,
      [...CLI, "hook-forwarder", "--server", url, "--out", foreign],
      { encoding: "utf8", timeout: 60_000 },
    );
    assert.equal(kept.status, 1);
    assert.equal(readFileSync(foreign, "utf8"), "#!/bin/sh\necho mine\n");
    assert.ok(existsSync(file));
  });
});
