// `hookscope hook` and `hookscope serve` as real subprocesses, fed bad input the way a broken or
// hostile caller would: every answer is in the protocol's own terms, fails closed where the
// protocol blocks, and nothing hangs.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ClientRequest, request } from "node:http";
import process from "node:process";
import { CLI, DENO, startServe, stopGroup } from "./_cli.ts";

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function hook(
  args: string[],
  stdin: string | null,
  env: Record<string, string> = {},
  guardMs = 90_000,
): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(DENO, [...CLI, "hook", ...args], {
      env: { ...process.env, ...env } as Record<string, string>,
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
    }, guardMs);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(guard);
      resolve({ code, stdout, stderr });
    });
    child.stdin.on("error", () => {});
    if (stdin !== null) child.stdin.end(stdin);
  });
}

const pre = (command: string) =>
  JSON.stringify({
    session_id: "cli-session",
    hook_event_name: "PreToolUse",
    tool_name: "Bash",
    tool_input: { command },
    tool_use_id: "toolu_1",
  });

/**
 * POSTs to serve's `/claude/hooks` at `base` through node:http with the token and `headers`,
 * `send` writing the body (in parts, or never all of it); resolves with the answer.
 */
function rawPost(
  base: string,
  headers: Record<string, string>,
  send: (req: ClientRequest) => void,
): Promise<{ status: number; text: string }> {
  const target = new URL(`${base}/claude/hooks`);
  return new Promise((resolve, reject) => {
    const req = request({
      host: target.hostname,
      port: target.port,
      path: target.pathname,
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer s3cret", ...headers },
    }, (res) => {
      let text = "";
      res.on("data", (d) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on("error", reject);
    send(req);
  });
}

function permission(
  stdout: string,
): { permissionDecision?: string; permissionDecisionReason?: string } {
  return JSON.parse(stdout).hookSpecificOutput ?? {};
}

describe("hookscope hook and serve with bad input", () => {
  let dir: string;
  let policy: string;
  let db: string;
  before(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), "hookscope-claude-cli-")));
    policy = join(dir, "policy.ts");
    writeFileSync(
      policy,
      `export const policy = (session) => session.hooks.on("tool.pre", ({ args }) =>
        args.command === "hang" ? new Promise(() => {}) :
        String(args.command).startsWith("rm") ? { decision: "deny", reason: "no rm" } : undefined);`,
    );
    db = join(dir, "sessions.db");
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("answers a PreToolUse with the protocol's JSON and records nothing else on stdout", async () => {
    const denied = await hook(["--policy", policy, "--db", db], pre("rm -rf x"));
    assert.equal(denied.code, 0, denied.stderr);
    assert.deepEqual(JSON.parse(denied.stdout), {
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "deny",
        permissionDecisionReason: "no rm",
      },
    });
    const fine = await hook(["--policy", policy, "--db", db], pre("ls"));
    assert.deepEqual(JSON.parse(fine.stdout), {});
    const other = await hook(
      ["--policy", policy, "--db", db],
      JSON.stringify({ session_id: "cli-session", hook_event_name: "Notification", message: "hi" }),
    );
    assert.equal(other.code, 0);
    assert.deepEqual(JSON.parse(other.stdout), {});
    // An event this version does not know is recorded and answered {}: no opinion, no block.
    const unknown = await hook(
      ["--policy", policy, "--db", db],
      JSON.stringify({ session_id: "cli-session", hook_event_name: "SomeFutureEvent", x: 1 }),
    );
    assert.equal(unknown.code, 0, unknown.stderr);
    assert.deepEqual(JSON.parse(unknown.stdout), {});
  });

  it("without --db it records in .hookscope/sessions.db of a fresh project, making the folder (git-ignored)", async () => {
    const project = join(dir, "fresh-project");
    mkdirSync(project);
    const denied = await hook(["--policy", policy], pre("rm -rf x"), {
      CLAUDE_PROJECT_DIR: project,
    });
    assert.equal(denied.code, 0, denied.stderr);
    assert.equal(permission(denied.stdout).permissionDecision, "deny");
    assert.equal(permission(denied.stdout).permissionDecisionReason, "no rm");
    assert.ok(existsSync(join(project, ".hookscope", "sessions.db")));
    assert.match(readFileSync(join(project, ".hookscope", ".gitignore"), "utf8"), /^\*$/m);
  });

  it("malformed JSON, an oversized event and a missing session_id block (exit 2, reason on stderr) or deny", async () => {
    const malformed = await hook(["--policy", policy, "--db", db], "{ not json");
    assert.equal(malformed.code, 2);
    assert.match(malformed.stderr, /cannot read the event/);
    const huge = await hook(["--policy", policy, "--db", db], pre("x".repeat(2 * 1024 * 1024)));
    assert.equal(huge.code, 2);
    assert.match(huge.stderr, /larger than 1048576 bytes/);
    const noSession = await hook(
      ["--policy", policy, "--db", db],
      JSON.stringify({ hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: {} }),
    );
    assert.equal(noSession.code, 0);
    assert.equal(permission(noSession.stdout).permissionDecision, "deny");
    assert.match(permission(noSession.stdout).permissionDecisionReason ?? "", /session_id/);
  });

  it("a session_id that is a path is refused over hook and serve: the call is denied, no file outside is touched", async () => {
    // The transcript folder is TMPDIR/hookscope-claude-UID; the id climbs out of it to the victim.
    const tmp = join(dir, "tmp-hostile");
    mkdirSync(tmp);
    const victim = join(dir, "victim", "important.jsonl");
    mkdirSync(join(dir, "victim"));
    writeFileSync(victim, "x\n");
    const settings = join(dir, "hostile-settings.json");
    writeFileSync(
      settings,
      JSON.stringify({
        hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "true" }] }] },
      }),
    );
    const hostile = (session_id: string) =>
      JSON.stringify({
        session_id,
        hook_event_name: "PreToolUse",
        tool_name: "Bash",
        tool_input: { command: "ls" },
        tool_use_id: "t1",
      });
    const ids = ["../../victim/important", `../../../../../../..${dir}/victim/important`, ".."];
    const db2 = join(dir, "hostile.db");
    for (const id of ids) {
      const ran = await hook(["--policy", settings, "--db", db2], hostile(id), { TMPDIR: tmp });
      assert.equal(ran.code, 0, ran.stderr);
      assert.equal(permission(ran.stdout).permissionDecision, "deny", ran.stdout);
      assert.match(
        permission(ran.stdout).permissionDecisionReason ?? "",
        /session_id must hold only/,
      );
    }
    const { child, url } = await startServe(["--policy", settings, "--db", db2], { TMPDIR: tmp });
    try {
      for (const id of [...ids, "a\u0000b"]) {
        const response = await fetch(`${url}/claude/hooks`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: hostile(id),
          signal: AbortSignal.timeout(30_000),
        });
        assert.equal(response.status, 200);
        const output = (await response.json()).hookSpecificOutput;
        assert.equal(output.permissionDecision, "deny");
        assert.match(output.permissionDecisionReason, /session_id must hold only/);
      }
    } finally {
      stopGroup(child);
    }
    assert.equal(readFileSync(victim, "utf8"), "x\n");
    // A plain id still runs the hook (its transcript lands in the folder).
    const fine = await hook(["--policy", settings, "--db", db2], hostile("plain-id"), {
      TMPDIR: tmp,
    });
    assert.deepEqual(JSON.parse(fine.stdout), {}, fine.stderr);
    const own = `hookscope-claude${
      typeof process.getuid === "function" ? `-${process.getuid()}` : ""
    }`;
    assert.ok(existsSync(join(tmp, own, "plain-id.jsonl")));
    // A default folder someone else could have made first (others may write to it, or it is a
    // link to elsewhere) is not used: the call is denied and nothing is written there.
    for (const plant of ["writable", "link"] as const) {
      const tmp2 = join(dir, `tmp-planted-${plant}`);
      const elsewhere = join(dir, `elsewhere-${plant}`);
      mkdirSync(tmp2);
      mkdirSync(elsewhere);
      if (plant === "writable") {
        mkdirSync(join(tmp2, own));
        chmodSync(join(tmp2, own), 0o777);
      } else symlinkSync(elsewhere, join(tmp2, own));
      const planted = await hook(["--policy", settings, "--db", db2], hostile("plain-id"), {
        TMPDIR: tmp2,
      });
      assert.equal(permission(planted.stdout).permissionDecision, "deny", planted.stdout);
      assert.match(
        permission(planted.stdout).permissionDecisionReason ?? "",
        plant === "writable" ? /others may write to it; pass transcriptDir/ : /is not a folder/,
      );
      assert.deepEqual(readdirSync(plant === "writable" ? join(tmp2, own) : elsewhere), []);
    }
  });

  it("an async policy is awaited over hook and serve; a setup that rejects or hangs denies the call", async () => {
    const write = (name: string, text: string) => {
      writeFileSync(join(dir, name), text);
      return join(dir, name);
    };
    const asyncDeny = write(
      "async-deny.ts",
      `export const policy = async (session) => { await Promise.resolve(); session.hooks.on("tool.pre", () => ({ decision: "deny", reason: "no" })); };`,
    );
    const rejecting = write(
      "async-reject.ts",
      `export const policy = async () => { await Promise.resolve(); throw new Error("setup broke"); };`,
    );
    const hanging = write("async-hang.ts", `export const policy = () => new Promise(() => {});`);
    const denied = await hook(["--policy", asyncDeny, "--db", db], pre("ls"));
    assert.equal(denied.code, 0, denied.stderr);
    assert.equal(permission(denied.stdout).permissionDecision, "deny", denied.stdout);
    assert.equal(permission(denied.stdout).permissionDecisionReason, "no");
    const broke = await hook(["--policy", rejecting, "--db", db], pre("ls"));
    assert.equal(permission(broke.stdout).permissionDecision, "deny", broke.stdout);
    assert.match(
      permission(broke.stdout).permissionDecisionReason ?? "",
      /Cannot apply the policy: its setup rejected: setup broke/,
    );
    const hung = await hook(
      ["--policy", hanging, "--db", db, "--timeout-ms", "1500"],
      pre("ls"),
    );
    assert.equal(permission(hung.stdout).permissionDecision, "deny", hung.stdout);
    assert.match(
      permission(hung.stdout).permissionDecisionReason ?? "",
      /its setup did not finish: the policy did not answer within 1500 ms/,
    );
    for (
      const [file, reason] of [[asyncDeny, /^no$/], [
        rejecting,
        /setup rejected: setup broke/,
      ]] as const
    ) {
      const { child, url } = await startServe(["--policy", file, "--db", join(dir, "async.db")]);
      try {
        const response = await fetch(`${url}/claude/hooks`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: pre("ls"),
          signal: AbortSignal.timeout(30_000),
        });
        const output = (await response.json()).hookSpecificOutput;
        assert.equal(output?.permissionDecision, "deny", file);
        assert.match(output.permissionDecisionReason, reason);
      } finally {
        stopGroup(child);
      }
    }
  });

  it("a policy that throws at load, a missing policy file and a hanging policy deny the call; nothing hangs", async () => {
    const throwing = join(dir, "throws.ts");
    writeFileSync(throwing, `throw new Error("broken policy module");`);
    const broken = await hook(["--policy", throwing, "--db", db], pre("ls"));
    assert.equal(permission(broken.stdout).permissionDecision, "deny");
    assert.match(permission(broken.stdout).permissionDecisionReason ?? "", /broken policy module/);
    const missing = await hook(["--policy", join(dir, "nope.ts"), "--db", db], pre("ls"));
    assert.equal(permission(missing.stdout).permissionDecision, "deny");
    const started = Date.now();
    const hung = await hook(["--policy", policy, "--db", db, "--timeout-ms", "1500"], pre("hang"));
    assert.equal(permission(hung.stdout).permissionDecision, "deny");
    assert.match(
      permission(hung.stdout).permissionDecisionReason ?? "",
      /did not answer within 1500 ms|timed out/,
    );
    assert.ok(Date.now() - started < 60_000);
  });

  it("a policy module whose top-level await never settles, or a store that never opens, denies at the deadline", async () => {
    const stuck = join(dir, "stuck-module.ts");
    // A timer keeps the process alive, as a module waiting on a network call would.
    writeFileSync(
      stuck,
      `await new Promise((resolve) => setTimeout(resolve, 600_000));
       export const policy = () => {};`,
    );
    // Killed after 40 s: a hook still running then never answered (the call would wait on it).
    const hung = await hook(
      ["--policy", stuck, "--db", db, "--timeout-ms", "2000"],
      pre("ls"),
      {},
      40_000,
    );
    assert.equal(hung.code, 0, `exit ${hung.code}: ${hung.stderr}`);
    assert.equal(permission(hung.stdout).permissionDecision, "deny", hung.stdout);
    assert.match(
      permission(hung.stdout).permissionDecisionReason ?? "",
      /loading the policy .*stuck-module\.ts" did not finish within 2000 ms/,
    );
    // A PostgreSQL address that accepts the connection and never answers.
    const { createServer } = await import("node:net");
    const sockets = new Set<import("node:net").Socket>();
    const silent = createServer((socket) => void sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    try {
      const port = (silent.address() as { port: number }).port;
      const noStore = await hook(
        ["--policy", policy, "--db", `postgres://u@127.0.0.1:${port}/db`, "--timeout-ms", "2000"],
        pre("ls"),
        {},
        40_000,
      );
      assert.equal(noStore.code, 0, `exit ${noStore.code}: ${noStore.stderr}`);
      assert.equal(permission(noStore.stdout).permissionDecision, "deny", noStore.stdout);
      assert.match(
        permission(noStore.stdout).permissionDecisionReason ?? "",
        /opening the database did not finish within 2000 ms/,
      );
    } finally {
      for (const socket of sockets) socket.destroy();
      silent.close();
    }
  });

  it("stdin that never closes ends at the deadline with a block", async () => {
    const child = hook(["--policy", policy, "--db", db, "--timeout-ms", "1500"], null);
    const ran = await child;
    assert.equal(ran.code, 2);
    assert.match(ran.stderr, /no complete event on stdin within 1500 ms/);
  });

  it("usage errors exit 2", async () => {
    const none = await hook([], "{}");
    assert.equal(none.code, 2);
    assert.match(none.stderr, /exactly one of --policy FILE and --server URL/);
  });

  describe("serve", () => {
    let server: ChildProcess;
    let url: string;
    before(async () => {
      ({ child: server, url } = await startServe(
        [
          "--policy",
          policy,
          "--db",
          join(dir, "serve.db"),
          "--timeout-ms",
          "1500",
          "--token-env",
          "HOOK_TOKEN",
        ],
        { HOOK_TOKEN: "s3cret" },
      ));
    });
    after(() => stopGroup(server));
    const post = (body: string, headers: Record<string, string> = {}) =>
      fetch(`${url}/claude/hooks`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer s3cret", ...headers },
        body,
        signal: AbortSignal.timeout(30_000),
      });

    it("answers with a token, refuses without one, and reports health", async () => {
      const health = await fetch(`${url}/healthz`);
      assert.equal(await health.text(), "ok");
      const denied = await post(pre("rm -rf x"));
      assert.equal(denied.status, 200);
      assert.equal((await denied.json()).hookSpecificOutput.permissionDecision, "deny");
      // Without the right token nothing is judged, and the answer blocks (Claude Code would run
      // the call on a 401).
      const anonymous = await post(pre("ls"), { authorization: "" });
      assert.equal(anonymous.status, 200);
      assert.equal((await anonymous.json()).decision, "block");
    });

    it("serves the web console at / (its API needs the same token)", async () => {
      const page = await fetch(`${url}/`, { signal: AbortSignal.timeout(30_000) });
      assert.equal(page.status, 200);
      assert.match(await page.text(), /<title>hookscope console<\/title>/);
      const anonymous = await fetch(`${url}/api/pending`, { signal: AbortSignal.timeout(30_000) });
      assert.equal(anonymous.status, 401);
      await anonymous.body?.cancel();
      const pending = await fetch(`${url}/api/pending`, {
        headers: { authorization: "Bearer s3cret" },
        signal: AbortSignal.timeout(30_000),
      });
      assert.equal(pending.status, 200);
      assert.ok(Array.isArray(await pending.json()));
    });

    it("hook --server forwards the event to serve (with the token from --token-env)", async () => {
      const forwarded = await hook(
        ["--server", url, "--token-env", "HOOK_TOKEN"],
        pre("rm -rf x"),
        { HOOK_TOKEN: "s3cret" },
      );
      assert.equal(forwarded.code, 0, forwarded.stderr);
      assert.equal(permission(forwarded.stdout).permissionDecision, "deny");
      assert.equal(permission(forwarded.stdout).permissionDecisionReason, "no rm");
      // Without the token the server's answer blocks, and the forwarding hook passes it on.
      const refused = await hook(["--server", url], pre("ls"));
      assert.equal(refused.code, 0, refused.stderr);
      assert.equal(JSON.parse(refused.stdout).decision, "block");
      assert.equal(JSON.parse(refused.stdout).continue, false);
      assert.match(JSON.parse(refused.stdout).reason, /missing or wrong bearer token/);
    });

    it("reads a chunked body (no content-length) as well as a declared one", async () => {
      const body = pre("rm -rf x");
      const answer = await rawPost(url, { "transfer-encoding": "chunked" }, (req) => {
        req.write(body.slice(0, 20));
        setTimeout(() => req.end(body.slice(20)), 50);
      });
      assert.equal(JSON.parse(answer.text).hookSpecificOutput.permissionDecision, "deny");
    });

    it("hook --server fails closed: a server that is down, malformed stdin, bad flags", async () => {
      const down = await hook(["--server=http://127.0.0.1:9"], pre("ls"));
      assert.equal(down.code, 0, down.stderr);
      assert.equal(permission(down.stdout).permissionDecision, "deny");
      assert.match(permission(down.stdout).permissionDecisionReason ?? "", /cannot reach/);
      const prompt = await hook(
        ["--server=http://127.0.0.1:9"],
        JSON.stringify({ session_id: "s", hook_event_name: "UserPromptSubmit", prompt: "hi" }),
      );
      assert.equal(JSON.parse(prompt.stdout).decision, "block");
      const other = await hook(
        ["--server=http://127.0.0.1:9"],
        JSON.stringify({ session_id: "s", hook_event_name: "Notification", message: "hi" }),
      );
      assert.equal(other.code, 1); // a non-blocking error: nothing to deny
      assert.equal(other.stdout, "");
      const malformed = await hook(["--server", url, "--token-env", "HOOK_TOKEN"], "{ nope", {
        HOOK_TOKEN: "s3cret",
      });
      assert.equal(malformed.code, 2);
      assert.match(malformed.stderr, /cannot read the event/);
      const notUrl = await hook(["--server", "not a url"], pre("ls"));
      assert.equal(notUrl.code, 2);
      assert.match(notUrl.stderr, /--server must be a URL/);
      // Anything the forwarder does not parse goes to the full parser and its usage errors.
      const both = await hook(["--server", url, "--policy", policy], pre("ls"));
      assert.equal(both.code, 2);
      assert.match(both.stderr, /exactly one of --policy FILE and --server URL/);
      const unknown = await hook(["--server", url, "--verbose"], pre("ls"));
      assert.equal(unknown.code, 2);
    });

    /** An answer of serve: HTTP 200 with its mark (Claude Code runs the call on any other status). */
    async function answered(response: Response): Promise<Record<string, unknown>> {
      assert.equal(response.status, 200);
      assert.equal(response.headers.get("x-hookscope-answer"), "claude-hook");
      return await response.json();
    }
    const denies = (answer: Record<string, unknown>, reason: RegExp) => {
      const output = answer.hookSpecificOutput as Record<string, unknown>;
      assert.equal(output.hookEventName, "PreToolUse");
      assert.equal(output.permissionDecision, "deny");
      assert.match(String(output.permissionDecisionReason), reason);
    };
    /** The answer that blocks any event: denies a call, blocks a prompt, stops the run. */
    const blocksAny = (answer: Record<string, unknown>, reason: RegExp) => {
      assert.equal(answer.continue, false);
      assert.equal(answer.decision, "block");
      assert.match(String(answer.reason), reason);
      assert.equal(answer.stopReason, answer.reason);
      assert.equal(answer.hookSpecificOutput, undefined);
    };
    const bytes = (...parts: (string | number[])[]) => {
      const chunks = parts.map((p) =>
        typeof p === "string" ? new TextEncoder().encode(p) : new Uint8Array(p)
      );
      const all = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
      let at = 0;
      for (const c of chunks) {
        all.set(c, at);
        at += c.length;
      }
      return all;
    };
    const postBytes = (body: Uint8Array | ReadableStream<Uint8Array>) =>
      fetch(`${url}/claude/hooks`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer s3cret" },
        body,
        signal: AbortSignal.timeout(30_000),
        duplex: "half",
      } as RequestInit);

    it("fails closed with HTTP 200 on every refusal: a PreToolUse is denied, an event it cannot tell blocked and stopped", async () => {
      // Malformed JSON: the event's name is read from its start.
      denies(
        await answered(
          await post('{"session_id":"s","hook_event_name":"PreToolUse","tool_input":{'),
        ),
        /cannot read the event/,
      );
      blocksAny(await answered(await post("{ nope")), /cannot read the event/);
      // Not UTF-8.
      const garbled = bytes(
        '{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf victim ',
        [0xff, 0xfe],
        '"}}',
      );
      denies(await answered(await postBytes(garbled)), /cannot read the event/);
      blocksAny(
        await answered(await postBytes(bytes([0xff, 0xfe, 0x7b]))),
        /cannot read the event/,
      );
      const prompt = bytes(
        '{"session_id":"s","hook_event_name":"UserPromptSubmit","prompt":"',
        [0xc3],
        '"}',
      );
      const blocked = await answered(await postBytes(prompt));
      assert.equal(blocked.decision, "block");
      assert.equal(blocked.continue, undefined);
      // A name inside the tool's input does not count; the one at the top does.
      denies(
        await answered(
          await post(
            '{"tool_input":{"hook_event_name":"PostToolUse"},"hook_event_name":"PreToolUse",',
          ),
        ),
        /cannot read the event/,
      );
      // Not an event: an array, no name, an empty body, another content type.
      blocksAny(
        await answered(await post(JSON.stringify([1, 2]))),
        /not a JSON object/,
      );
      blocksAny(
        await answered(await post(JSON.stringify({ session_id: "s", tool_name: "Bash" }))),
        /hook_event_name/,
      );
      blocksAny(await answered(await post("")), /the body is empty/);
      blocksAny(
        await answered(await post("a=b", { "content-type": "application/x-www-form-urlencoded" })),
        /application\/json/,
      );
      // Missing fields of a named event: a PreToolUse is denied, another event answered {}.
      denies(
        await answered(
          await post(JSON.stringify({ hook_event_name: "PreToolUse", tool_name: "Bash" })),
        ),
        /session_id/,
      );
      assert.deepEqual(
        await answered(await post(JSON.stringify({ hook_event_name: "PostToolUse" }))),
        {},
      );
      // An event it does not map is recorded and answered {} (nothing to deny).
      assert.deepEqual(
        await answered(
          await post(
            JSON.stringify({ session_id: "cli-session", hook_event_name: "SomeFutureEvent" }),
          ),
        ),
        {},
      );
      // Over 1 MiB, declared and chunked: the call is denied, the rest of the body read.
      const huge = pre("rm -rf victim # " + "x".repeat(2 * 1024 * 1024));
      denies(await answered(await post(huge)), /larger than 1048576 bytes/);
      const chunked = new Blob([huge]).stream();
      denies(await answered(await postBytes(chunked)), /larger than 1048576 bytes/);
      assert.deepEqual(
        await answered(
          await post(
            JSON.stringify({
              session_id: "s",
              hook_event_name: "PostToolUse",
              tool_response: "x".repeat(2 * 1024 * 1024),
            }),
          ),
        ),
        {},
      );
      // A wrong or missing token: serve's answer blocks whatever the event is.
      blocksAny(await answered(await post(pre("ls"), { authorization: "" })), /bearer token/);
      blocksAny(
        await answered(await post(pre("ls"), { authorization: "Bearer s3creT" })),
        /bearer token/,
      );
      // A body that never completes: refused at the deadline.
      const slow = await rawPost(url, { "content-length": "500" }, (req) => {
        req.write(pre("rm -rf victim").slice(0, 40));
      });
      assert.equal(slow.status, 200);
      blocksAny(JSON.parse(slow.text), /within 1500 ms/);
    });

    it("a hanging policy denies at the deadline; answers carry serve's mark", async () => {
      const hung = await post(pre("hang"));
      assert.equal(hung.status, 200);
      const answer = await hung.json();
      assert.equal(answer.hookSpecificOutput.permissionDecision, "deny");
      assert.match(answer.hookSpecificOutput.permissionDecisionReason, /within 1500 ms/);
      // serve's answers carry its mark; a query string does not change the path.
      const marked = await fetch(`${url}/claude/hooks?x=1`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer s3cret" },
        body: pre("rm -rf x"),
        signal: AbortSignal.timeout(30_000),
      });
      assert.equal(marked.headers.get("x-hookscope-answer"), "claude-hook");
      assert.equal((await marked.json()).hookSpecificOutput.permissionDecision, "deny");
    });
  });

  it("serve refuses to start on a policy that throws at load or is missing (exit 1, the reason)", async () => {
    const throwing = join(dir, "throws-serve.ts");
    writeFileSync(throwing, `throw new Error("broken policy module");`);
    for (
      const [file, pattern] of [
        [throwing, /broken policy module/],
        [join(dir, "nope.ts"), /Cannot load policy/],
      ] as const
    ) {
      const ran = await new Promise<Ran>((resolve) => {
        const child = spawn(DENO, [...CLI, "serve", "--policy", file, "--port", "0"], {
          stdio: ["ignore", "pipe", "pipe"],
        });
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (d) => (stdout += d));
        child.stderr.on("data", (d) => (stderr += d));
        const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
        child.on("close", (code) => {
          clearTimeout(timer);
          resolve({ code, stdout, stderr });
        });
      });
      assert.equal(ran.code, 1, ran.stderr);
      assert.match(ran.stderr, pattern);
      assert.doesNotMatch(ran.stdout, /listening/);
    }
  });

  it("serve refuses a non-loopback address without a token", async () => {
    const ran = await new Promise<Ran>((resolve) => {
      const child = spawn(DENO, [
        ...CLI,
        "serve",
        "--policy",
        policy,
        "--host",
        "0.0.0.0",
        "--port",
        "0",
      ], { stdio: ["ignore", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d) => (stdout += d));
      child.stderr.on("data", (d) => (stderr += d));
      const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
      child.on("close", (code) => {
        clearTimeout(timer);
        resolve({ code, stdout, stderr });
      });
    });
    assert.equal(ran.code, 2);
    assert.match(ran.stderr, /not a loopback address: give --token-env NAME/);
  });
});
