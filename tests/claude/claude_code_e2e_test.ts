// The real Claude Code binary (from the npm package @anthropic-ai/claude-agent-sdk-linux-x64,
// a test-only install that .ci/setup/40-claude-code.sh caches outside the repository), driven
// offline by a fake Anthropic Messages API on 127.0.0.1 (tests/fixtures/anthropic_server.ts):
// hookscope governs it as a command hook (`hookscope hook`) and as an http hook
// (`hookscope serve`), and `hookscope show` then shows the session with its decisions.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { createServer } from "node:http";
import { CLI, DENO, ROOT, startServe, stopGroup } from "./_cli.ts";
import { blockAnything } from "../../cli/_claude_wire.ts";
import { startAnthropicFake, type ToolStep } from "../fixtures/anthropic_server.ts";

const CLAUDE = process.env.HOOKSCOPE_CLAUDE_BIN ??
  join(
    homedir(),
    ".cache/hookscope/claude-agent-sdk/node_modules/@anthropic-ai/claude-agent-sdk-linux-x64/claude",
  );
const HOOKSCOPE = [DENO, ...CLI].join(" ");
const skip = existsSync(CLAUDE)
  ? false
  : `the Claude Code binary is not installed at ${CLAUDE} (.ci/setup/40-claude-code.sh installs it)`;

interface ClaudeResult {
  code: number | null;
  json: {
    session_id: string;
    result?: string;
    is_error?: boolean;
    permission_denials: {
      tool_name: string;
      tool_use_id: string;
      tool_input: Record<string, unknown>;
    }[];
  };
  stderr: string;
}

function runClaude(
  project: string,
  home: string,
  baseUrl: string,
  prompt: string,
): Promise<ClaudeResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(CLAUDE, [
      "-p",
      prompt,
      "--output-format",
      "json",
      "--permission-mode",
      "bypassPermissions",
    ], {
      cwd: project,
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: home,
        // Claude Code's own temporary files (claude-UID/, cc-socks/) stay in the test's directory.
        TMPDIR: home,
        ANTHROPIC_BASE_URL: baseUrl,
        ANTHROPIC_API_KEY: "sk-ant-test-not-a-key",
        IS_SANDBOX: "1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        DISABLE_AUTOUPDATER: "1",
        DISABLE_TELEMETRY: "1",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 150_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      try {
        resolve({ code, json: JSON.parse(out), stderr: err });
      } catch {
        reject(
          new Error(
            `claude printed no JSON (exit ${code}): ${out.slice(0, 500)} ${err.slice(0, 500)}`,
          ),
        );
      }
    });
  });
}

const POLICY = `
import { destructiveCommandGuard } from ${JSON.stringify(join(ROOT, "action/coding/mod.ts"))};
export const policy = (session) => {
  const undo = [
    session.hooks.on("tool.pre", destructiveCommandGuard(), { name: "destructive-command-guard" }),
    session.hooks.on("tool.pre", ({ toolName, args }) =>
      toolName === "Write" && String(args.file_path).includes("/victim/")
        ? { decision: "deny", reason: "victim is protected" }
        : undefined, { name: "protect-victim" }),
    session.hooks.on("tool.pre", ({ toolName, args }) => {
      if (toolName !== "Bash") return undefined;
      if (String(args.command).startsWith("git push")) return { decision: "ask", reason: "pushing needs a person" };
      if (args.command === "echo original") {
        return { decision: "allow", updatedArgs: { ...args, command: "echo rewritten-by-hookscope" }, context: "hookscope-context-marker" };
      }
      return undefined;
    }, { name: "rewrite-echo" }),
    session.hooks.on("tool.error", ({ toolName, args }) =>
      ({ context: "hookscope-failure-context: " + toolName + " " + args?.command })),
    session.hooks.on("session.start", ({ source }) =>
      ({ context: "hookscope-session-start-context: " + source })),
    session.hooks.on("message.add", ({ message }) => {
      if (message.role !== "user") return undefined;
      if (String(message.content).includes("password")) {
        return { decision: "deny", reason: "hookscope-prompt-block: no secrets in prompts" };
      }
      return { context: "hookscope-prompt-context-marker" };
    }, { name: "prompt-guard" }),
  ];
  return () => undo.forEach((u) => u());
};
`;

/** The same steps for both hook types: deny, rewrite with context, a failing call, an ask. */
const STEPS: ToolStep[] = [
  { name: "Bash", input: { command: "rm -rf victim", description: "clean up" } },
  { name: "Bash", input: { command: "echo original", description: "say something" } },
  { name: "Bash", input: { command: "cat missing-file.txt", description: "read a file" } },
  { name: "Bash", input: { command: "git push origin main", description: "publish" } },
];

/** Every event hookscope maps, sent to one hook (a command or an http hook). */
function allEvents(hook: Record<string, unknown>): Record<string, unknown> {
  const hooks: Record<string, unknown> = {};
  for (const event of ["PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionDenied"]) {
    hooks[event] = [{ matcher: "*", hooks: [hook] }];
  }
  for (const event of ["UserPromptSubmit", "SessionStart", "SessionEnd"]) {
    hooks[event] = [{ hooks: [hook] }];
  }
  return hooks;
}

function cli(args: string[]): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(DENO, [...CLI, ...args], { encoding: "utf8", timeout: 60_000 });
}

describe("Claude Code governed by hookscope (real binary, fake provider)", { skip }, () => {
  let dir: string;
  let policyFile: string;
  before(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), "hookscope-claude-e2e-")));
    policyFile = join(dir, "policy.ts");
    writeFileSync(policyFile, POLICY);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  function project(name: string, hooks: unknown): { project: string; home: string } {
    const project = join(dir, name);
    const home = join(dir, `${name}-home`);
    mkdirSync(join(project, ".claude"), { recursive: true });
    mkdirSync(home, { recursive: true });
    mkdirSync(join(project, "victim"), { recursive: true });
    writeFileSync(join(project, "victim", "data.txt"), "precious");
    writeFileSync(join(project, ".claude", "settings.json"), JSON.stringify({ hooks }));
    return { project, home };
  }

  async function drive(steps: ToolStep[], setup: { project: string; home: string }) {
    const fake = await startAnthropicFake(steps);
    try {
      const result = await runClaude(setup.project, setup.home, fake.url, "do the task");
      return { result, fake };
    } finally {
      await fake.close();
    }
  }

  /** What both hook types must show: Claude's own report, what ran, what the model saw, the store. */
  function check(
    result: ClaudeResult,
    fake: Awaited<ReturnType<typeof drive>>["fake"],
    project: string,
    db: string,
    http = false,
  ): void {
    assert.equal(result.code, 0, result.stderr);
    // The deny: the victim survives, and Claude Code reports the call as denied.
    assert.equal(readFileSync(join(project, "victim", "data.txt"), "utf8"), "precious");
    assert.deepEqual(
      result.json.permission_denials.map((d) => [d.tool_name, d.tool_input.command]),
      [
        ["Bash", "rm -rf victim"],
        ["Bash", "git push origin main"], // headless Claude Code treats an "ask" as a denial
      ],
    );
    assert.equal(fake.toolResults.length, 4);
    assert.match(JSON.stringify(fake.toolResults[0].content), /destructive|recursive|rm/i);
    // The rewritten command is what ran, and the context reached the model.
    assert.match(JSON.stringify(fake.toolResults[1].content), /rewritten-by-hookscope/);
    const seen = JSON.stringify(fake.requests);
    assert.match(seen, /hookscope-context-marker/);
    // PostToolUseFailure: the tool.error context reached the model with the failure.
    assert.equal(fake.toolResults[2].is_error, true);
    assert.match(seen, /hookscope-failure-context: Bash cat missing-file\.txt/);
    assert.match(JSON.stringify(fake.toolResults[3].content), /pushing needs a person/);
    // SessionStart and UserPromptSubmit context reached the model (Claude Code sends
    // SessionStart to command hooks only).
    assert.match(seen, /hookscope-prompt-context-marker/);
    if (!http) assert.match(seen, /hookscope-session-start-context: startup/);

    // The session and its decisions, from the store.
    const shown = cli(["show", db, result.json.session_id, "--json"]);
    assert.equal(shown.status, 0, shown.stderr);
    const timeline = JSON.parse(shown.stdout) as {
      signals: { kind: string; payload: { data?: Record<string, unknown> } }[];
    };
    const decisions = timeline.signals.filter((s) => s.kind === "ClaudeHookDecision").map((s) =>
      s.payload.data ?? {}
    );
    const tools = decisions.filter((d) => d.callId !== undefined);
    assert.deepEqual(
      tools.map((d) => [d.event, d.callId, d.verdict, d.hook ?? null, d.updatedInput ?? null]),
      [
        ["PreToolUse", "toolu_hs_1", "deny", "destructive-command-guard", null],
        ["PreToolUse", "toolu_hs_2", "allow", null, {
          command: "echo rewritten-by-hookscope",
          description: "say something",
        }],
        ["PostToolUse", "toolu_hs_2", "none", null, null],
        ["PreToolUse", "toolu_hs_3", "none", null, null],
        ["PostToolUseFailure", "toolu_hs_3", "allow", null, null],
        ["PreToolUse", "toolu_hs_4", "ask", "rewrite-echo", null],
      ],
    );
    assert.deepEqual(
      decisions.filter((d) => d.callId === undefined).map((d) => d.event),
      // Claude Code sends SessionStart to command hooks only.
      [...(http ? [] : ["SessionStart"]), "UserPromptSubmit", "SessionEnd"],
    );
    // The ask is an approval request (Claude Code asks the person itself; headless, it refuses
    // without sending an event, so no answer is recorded).
    const requested = timeline.signals.filter((s) => s.kind === "ApprovalRequested");
    assert.deepEqual(requested.map((s) => [s.payload.data?.callId, s.payload.data?.policy]), [
      ["toolu_hs_4", "rewrite-echo"],
    ]);
    assert.equal(timeline.signals.filter((s) => s.kind === "ApprovalAnswered").length, 0);
    const table = cli(["show", db, result.json.session_id]);
    assert.match(
      table.stdout,
      /claude PreToolUse DENY Bash call toolu_hs_1 by destructive-command-guard/,
    );
    assert.match(
      table.stdout,
      /claude PreToolUse ASK Bash call toolu_hs_4 by rewrite-echo: pushing needs a person/,
    );
    const sessions = cli(["sessions", db, "--json"]);
    assert.ok(
      (JSON.parse(sessions.stdout) as { id: string }[]).some((s) =>
        s.id === result.json.session_id
      ),
    );
  }

  it("as a command hook: denies rm -rf (the victim survives, Claude reports the denial), rewrites, adds context, asks; hookscope show has it all", async () => {
    const db = join(dir, "command.db");
    const setup = project(
      "command",
      allEvents({
        type: "command",
        command: `${HOOKSCOPE} hook --policy ${policyFile} --db ${db}`,
        timeout: 60,
      }),
    );
    const { result, fake } = await drive(STEPS, setup);
    check(result, fake, setup.project, db);
  });

  it("a prompt a message.add hook denies is blocked: no model request, Claude reports the reason", async () => {
    const db = join(dir, "prompt.db");
    const setup = project(
      "prompt",
      allEvents({
        type: "command",
        command: `${HOOKSCOPE} hook --policy ${policyFile} --db ${db}`,
        timeout: 60,
      }),
    );
    const fake = await startAnthropicFake(STEPS);
    let result: ClaudeResult;
    try {
      result = await runClaude(setup.project, setup.home, fake.url, "my password is hunter2");
    } finally {
      await fake.close();
    }
    assert.equal(result.code, 0, result.stderr);
    assert.equal(fake.requests.length, 0);
    assert.match(
      String(result.json.result),
      /blocked by hook:\s*hookscope-prompt-block: no secrets in prompts/,
    );
    const shown = cli(["show", db, result.json.session_id, "--json"]);
    assert.equal(shown.status, 0, shown.stderr);
    const decisions = (JSON.parse(shown.stdout) as {
      signals: { kind: string; payload: { data?: Record<string, unknown> } }[];
    }).signals.filter((s) => s.kind === "ClaudeHookDecision").map((s) => s.payload.data ?? {});
    assert.deepEqual(
      decisions.filter((d) => d.event === "UserPromptSubmit").map((d) => [
        d.verdict,
        d.reason,
        d.hook,
      ]),
      [["block", "hookscope-prompt-block: no secrets in prompts", "prompt-guard"]],
    );
  });

  it("as an http hook against hookscope serve: the same answers from one warm process", async () => {
    const db = join(dir, "http.db");
    const { child: server, url } = await startServe(["--policy", policyFile, "--db", db]);
    try {
      const setup = project(
        "http",
        allEvents({ type: "http", url: `${url}/claude/hooks`, timeout: 30 }),
      );
      const { result, fake } = await drive(STEPS, setup);
      // serve records right after answering: give the last event's writes a moment.
      await waitFor(() =>
        cli(["show", db, result.json.session_id, "--json"]).stdout.includes(
          '"SessionEnd"',
        )
      );
      check(result, fake, setup.project, db, true);
    } finally {
      stopGroup(server);
    }
  });

  it("as an http hook against serve: an event over 1 MiB (a Write padded past the limit) is denied, not run", async () => {
    const db = join(dir, "oversized.db");
    const { child: server, url } = await startServe(["--policy", policyFile, "--db", db]);
    try {
      const setup = project(
        "oversized",
        allEvents({ type: "http", url: `${url}/claude/hooks`, timeout: 30 }),
      );
      const planted = join(setup.project, "victim", "planted.txt");
      const { result, fake } = await drive([
        { name: "Write", input: { file_path: planted, content: "x".repeat(1536 * 1024) } },
      ], setup);
      assert.equal(result.code, 0, result.stderr);
      // serve could not read the event whole; it told a PreToolUse from its start and denied.
      assert.equal(existsSync(planted), false);
      assert.deepEqual(result.json.permission_denials.map((d) => d.tool_name), ["Write"]);
      assert.match(JSON.stringify(fake.toolResults[0].content), /larger than 1048576 bytes/);
    } finally {
      stopGroup(server);
    }
  });

  it("as a command hook forwarding to serve (hook --server): the same answers", async () => {
    const db = join(dir, "forward.db");
    const { child: server, url } = await startServe(["--policy", policyFile, "--db", db]);
    try {
      const setup = project(
        "forward",
        allEvents({ type: "command", command: `${HOOKSCOPE} hook --server ${url}`, timeout: 60 }),
      );
      const { result, fake } = await drive(STEPS, setup);
      await waitFor(() =>
        cli(["show", db, result.json.session_id, "--json"]).stdout.includes(
          '"SessionEnd"',
        )
      );
      check(result, fake, setup.project, db);
    } finally {
      stopGroup(server);
    }
  });
});

describe("what Claude Code does with an http hook's answer (real binary, a scripted hook server)", {
  skip,
}, () => {
  let dir: string;
  before(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), "hookscope-claude-answers-")));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** Runs `rm -rf victim` under an http hook that answers every event with `status` and `body`. */
  async function underAnswer(
    name: string,
    events: string[],
    answer: (event: { hook_event_name?: string }) => { status: number; body: string },
    settings: { url?: string; onFailure?: string } = {},
  ): Promise<{ result: ClaudeResult; survived: boolean; modelRequests: number }> {
    const hook = createServer((req, res) => {
      let raw = "";
      req.setEncoding("utf8");
      req.on("data", (chunk) => (raw += chunk));
      req.on("end", () => {
        const { status, body } = answer(JSON.parse(raw));
        res.writeHead(status, { "content-type": "application/json" });
        res.end(body);
      });
    });
    await new Promise<void>((resolve) => hook.listen(0, "127.0.0.1", resolve));
    const url = settings.url ??
      `http://127.0.0.1:${(hook.address() as { port: number }).port}/hook`;
    const project = join(dir, name);
    const home = join(dir, `${name}-home`);
    mkdirSync(join(project, ".claude"), { recursive: true });
    mkdirSync(home, { recursive: true });
    mkdirSync(join(project, "victim"), { recursive: true });
    writeFileSync(join(project, "victim", "data.txt"), "precious");
    const hooks: Record<string, unknown> = {};
    for (const event of events) {
      hooks[event] = [{
        matcher: "*",
        hooks: [{
          type: "http",
          url,
          timeout: 30,
          ...(settings.onFailure ? { onFailure: settings.onFailure } : {}),
        }],
      }];
    }
    writeFileSync(join(project, ".claude", "settings.json"), JSON.stringify({ hooks }));
    const fake = await startAnthropicFake([STEPS[0]]);
    try {
      const result = await runClaude(project, home, fake.url, "do the task");
      return {
        result,
        survived: existsSync(join(project, "victim", "data.txt")),
        modelRequests: fake.requests.length,
      };
    } finally {
      await fake.close();
      hook.closeAllConnections?.();
      await new Promise((resolve) => hook.close(resolve));
    }
  }

  it("runs the call on a 400, 401, 413 or 500 answer, even one whose body denies it", async () => {
    const deny = JSON.stringify({
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "deny",
        permissionDecisionReason: "denied",
      },
    });
    for (const status of [400, 401, 413, 500]) {
      const ran = await underAnswer(
        `status-${status}`,
        ["PreToolUse"],
        () => ({ status, body: deny }),
      );
      assert.equal(ran.result.code, 0, ran.result.stderr);
      assert.equal(ran.survived, false, `HTTP ${status}`);
    }
    const denied = await underAnswer(
      "status-200",
      ["PreToolUse"],
      () => ({ status: 200, body: deny }),
    );
    assert.equal(denied.survived, true);
  });

  it('with "onFailure": "block" in the hook\'s settings, a 500 and a server that is down block the call', async () => {
    const error = await underAnswer("block-500", ["PreToolUse"], () => ({
      status: 500,
      body: "{}",
    }), { onFailure: "block" });
    assert.equal(error.survived, true);
    const down = await underAnswer("block-down", ["PreToolUse"], () => ({
      status: 200,
      body: "{}",
    }), { onFailure: "block", url: "http://127.0.0.1:9/hook" });
    assert.equal(down.survived, true);
    assert.deepEqual(down.result.json.permission_denials.map((d) => d.tool_name), ["Bash"]);
  });

  it("serve's answer for an event it cannot tell denies a call, blocks a prompt; continue: false alone does not deny", async () => {
    const block = JSON.stringify(blockAnything("hookscope-cannot-tell"));
    const call = await underAnswer(
      "block-pre",
      ["PreToolUse"],
      () => ({ status: 200, body: block }),
    );
    assert.equal(call.survived, true);
    assert.deepEqual(call.result.json.permission_denials.map((d) => d.tool_input.command), [
      "rm -rf victim",
    ]);
    const prompt = await underAnswer("block-prompt", ["UserPromptSubmit"], () => ({
      status: 200,
      body: block,
    }));
    assert.equal(prompt.modelRequests, 0);
    assert.match(String(prompt.result.json.result), /hookscope-cannot-tell/);
    // Why the answer says both: continue: false alone stops the run after the call ran.
    const stopOnly = await underAnswer("stop-only", ["PreToolUse"], () => ({
      status: 200,
      body: JSON.stringify({ continue: false, stopReason: "stop" }),
    }));
    assert.equal(stopOnly.survived, false);
    // And why not a deny shape for every event: naming another event voids the whole answer.
    const misnamed = await underAnswer("misnamed", ["UserPromptSubmit"], () => ({
      status: 200,
      body: JSON.stringify({
        continue: false,
        stopReason: "stop",
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "deny",
          permissionDecisionReason: "denied",
        },
      }),
    }));
    assert.equal(misnamed.modelRequests > 0, true);
    assert.equal(misnamed.survived, false);
  });
});

describe("Claude Code with the sh + curl forwarder (real binary, fake provider)", { skip }, () => {
  let dir: string;
  before(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), "hookscope-claude-sh-")));
    writeFileSync(join(dir, "policy.ts"), POLICY);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  function setup(name: string, hooks: unknown): { project: string; home: string } {
    const project = join(dir, name);
    const home = join(dir, `${name}-home`);
    mkdirSync(join(project, ".claude"), { recursive: true });
    mkdirSync(home, { recursive: true });
    mkdirSync(join(project, "victim"), { recursive: true });
    writeFileSync(join(project, "victim", "data.txt"), "precious");
    writeFileSync(join(project, ".claude", "settings.json"), JSON.stringify({ hooks }));
    return { project, home };
  }

  function writeForwarder(project: string, server: string): string {
    const written = spawnSync(DENO, [...CLI, "hook-forwarder", "--server", server], {
      cwd: project,
      env: { ...process.env, CLAUDE_PROJECT_DIR: project },
      encoding: "utf8",
      timeout: 60_000,
    });
    assert.equal(written.status, 0, written.stderr);
    // The command it tells you to put in the settings.
    return JSON.parse(/\{ "type": "command".*\}/.exec(written.stdout)![0]).command;
  }

  it("forwards every event to serve: the same decisions, context and blocks", async () => {
    const db = join(dir, "sh.db");
    const { child: server, url } = await startServe([
      "--policy",
      join(dir, "policy.ts"),
      "--db",
      db,
    ]);
    try {
      const where = setup("sh", {});
      const command = writeForwarder(where.project, url);
      assert.equal(command, '"$CLAUDE_PROJECT_DIR"/.claude/hookscope-forward.sh');
      const hooks: Record<string, unknown> = {};
      for (const event of ["PreToolUse", "PostToolUse", "PostToolUseFailure"]) {
        hooks[event] = [{ matcher: "*", hooks: [{ type: "command", command, timeout: 30 }] }];
      }
      for (const event of ["UserPromptSubmit", "SessionStart"]) {
        hooks[event] = [{ hooks: [{ type: "command", command, timeout: 30 }] }];
      }
      writeFileSync(join(where.project, ".claude", "settings.json"), JSON.stringify({ hooks }));
      const fake = await startAnthropicFake(STEPS);
      let result: ClaudeResult;
      try {
        result = await runClaude(where.project, where.home, fake.url, "do the task");
      } finally {
        await fake.close();
      }
      assert.equal(result.code, 0, result.stderr);
      assert.equal(readFileSync(join(where.project, "victim", "data.txt"), "utf8"), "precious");
      assert.deepEqual(
        result.json.permission_denials.map((d) => d.tool_input.command),
        ["rm -rf victim", "git push origin main"],
      );
      assert.match(JSON.stringify(fake.toolResults[1].content), /rewritten-by-hookscope/);
      const seen = JSON.stringify(fake.requests);
      assert.match(seen, /hookscope-context-marker/);
      assert.match(seen, /hookscope-failure-context: Bash cat missing-file\.txt/);
      assert.match(seen, /hookscope-prompt-context-marker/);
      assert.match(seen, /hookscope-session-start-context: startup/);
    } finally {
      stopGroup(server);
    }
  });

  it("fails closed when serve is down: the call is denied, the victim survives", async () => {
    const where = setup("sh-down", {});
    const command = writeForwarder(where.project, "http://127.0.0.1:9");
    writeFileSync(
      join(where.project, ".claude", "settings.json"),
      JSON.stringify({
        hooks: { PreToolUse: [{ matcher: "*", hooks: [{ type: "command", command }] }] },
      }),
    );
    const fake = await startAnthropicFake([STEPS[0]]);
    let result: ClaudeResult;
    try {
      result = await runClaude(where.project, where.home, fake.url, "do the task");
    } finally {
      await fake.close();
    }
    assert.equal(result.code, 0, result.stderr);
    assert.equal(readFileSync(join(where.project, "victim", "data.txt"), "utf8"), "precious");
    assert.deepEqual(result.json.permission_denials.map((d) => d.tool_input.command), [
      "rm -rf victim",
    ]);
    assert.match(JSON.stringify(fake.toolResults[0].content), /hookscope forwarder: cannot reach/);
  });
});

async function waitFor(ready: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !ready(); i++) await new Promise((r) => setTimeout(r, 100));
}
