// claudeCodeHooks runs real Claude Code hook scripts (bash, Python, JavaScript, an http hook on
// 127.0.0.1) inside a hookscope session, through the real act path and the coding toolkit.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { Session, Tool, ToolDeniedError } from "../../mod.ts";
import { CodingToolkit } from "../../action/coding/mod.ts";
import {
  claudeCodeHooks,
  type ClaudeHook,
  ClaudeHookConfigError,
  type ClaudeHookError,
  type ClaudeHookSettings,
  ClaudePromptBlockedError,
} from "../../claude/mod.ts";
import { CALL } from "../_call_fields.ts";

const fixtures = fileURLToPath(new URL("../fixtures/claude_hooks/", import.meta.url));
const script = (name: string) => join(fixtures, name);

function pre(matcher: string, ...hooks: ClaudeHook[]): ClaudeHookSettings {
  return { hooks: { PreToolUse: [{ matcher, hooks }] } };
}

/** The session's `tool.pre` decision on one call. */
function decidePre(
  session: Session,
  toolName: string,
  callId: string,
  args: Record<string, unknown>,
) {
  return session.hooks.decide("tool.pre", { ...CALL, toolName, callId, args, argsSummary: "" });
}

/** A session with a fake `bash` tool that records what it ran (the hooks are what is tested). */
function sessionWithEcho(): { session: Session; ran: string[] } {
  const session = new Session();
  const ran: string[] = [];
  session.defaultBranch.actions.register(
    new Tool({
      name: "bash",
      description: "Run a command",
      inputSchema: z.object({ command: z.string() }),
      execute: ({ command }: { command: string }) => {
        ran.push(command);
        return `ran ${command}`;
      },
    }),
  );
  return { session, ran };
}

describe("claudeCodeHooks", () => {
  let dir: string;
  before(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), "hookscope-claude-")));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));
  // Where the hooks run, and where the transcripts they are given are written: the test's
  // directory (the default transcript directory is under the system's temporary directory).
  const here = () => ({ projectDir: dir, transcriptDir: join(dir, "transcripts") });

  it("a bash hook that exits 2 denies with its stderr, and the tool does not run", async () => {
    const { session, ran } = sessionWithEcho();
    claudeCodeHooks(pre("Bash", { type: "command", command: script("deny_rm.sh") }), here())(
      session,
    );
    await assert.rejects(
      session.defaultBranch.act({ function: "bash", arguments: { command: "rm -rf victim" } }),
      (error: unknown) => {
        assert.ok(error instanceof ToolDeniedError);
        assert.match(error.message, /recursive rm is not allowed here/);
        return true;
      },
    );
    const ok = await session.defaultBranch.act({ function: "bash", arguments: { command: "ls" } });
    assert.equal(ok.output, "ran ls");
    assert.deepEqual(ran, ["ls"]);
  });

  it("a Python hook's JSON decides deny, ask and allow, rewrites with updatedInput and adds context", async () => {
    const { session, ran } = sessionWithEcho();
    const asked: unknown[] = [];
    claudeCodeHooks(pre("Bash", { type: "command", command: script("decide.py") }), here())(
      session,
    );
    const fold = (command: string) => decidePre(session, "bash", "call-7", { command });
    const denied = await fold("curl http://example.test");
    assert.equal(denied.verdict, "deny");
    assert.equal(denied.reason, "no network from PreToolUse");
    const ask = await fold("git push origin main");
    assert.equal(ask.verdict, "ask");
    assert.equal(ask.reason, "pushing needs a person");
    const allowed = await fold("ls");
    assert.equal(allowed.verdict, "allow");
    assert.deepEqual(allowed.updatedArgs, { command: "ls -la" });
    assert.deepEqual(allowed.context, ["listing rewritten to ls -la by call-7"]);
    const none = await fold("pwd");
    assert.equal(none.verdict, "none");
    // Through the act path, the rewritten command is what runs.
    await session.defaultBranch.act({ function: "bash", arguments: { command: "ls" } });
    assert.deepEqual(ran, ["ls -la"]);
    void asked;
  });

  it("several matching hooks run in configuration order and fold deny > ask > allow", async () => {
    const order = join(dir, "order.log");
    const settings: ClaudeHookSettings = {
      hooks: {
        PreToolUse: [
          {
            matcher: "*",
            hooks: [{
              type: "command",
              command:
                `echo first >> ${order}; echo '{"hookSpecificOutput":{"permissionDecision":"allow","updatedInput":{"command":"rm -rf victim"}}}'`,
            }],
          },
          {
            matcher: "Bash",
            hooks: [{
              type: "command",
              command: `echo second >> ${order}; ${script("deny_rm.sh")}`,
            }],
          },
          { matcher: "Read", hooks: [{ type: "command", command: `echo never >> ${order}` }] },
        ],
      },
    };
    const { session, ran } = sessionWithEcho();
    claudeCodeHooks(settings, here())(session);
    await assert.rejects(
      session.defaultBranch.act({ function: "bash", arguments: { command: "ls" } }),
      ToolDeniedError,
    );
    assert.deepEqual(ran, []);
    assert.equal(readFileSync(order, "utf8"), "first\nsecond\n");
  });

  it("a JavaScript hook reads transcript_path in Claude Code's JSONL shape", async () => {
    const { session } = sessionWithEcho();
    claudeCodeHooks(pre("Bash", { type: "command", command: `node ${script("transcript.mjs")}` }), {
      projectDir: dir,
      transcriptDir: join(dir, "transcripts"),
    })(session);
    await session.defaultBranch.addMessage({ role: "user", content: "list the files please" });
    const fold = await decidePre(session, "bash", "c1", { command: "ls" });
    assert.deepEqual(fold.context, [
      "transcript has 1 lines; last prompt: list the files please; session true",
    ]);
    assert.ok(existsSync(join(dir, "transcripts", `${session.id}.jsonl`)));
  });

  it("a crash, a missing script and malformed JSON deny at PreToolUse (fail closed); onFailure continue lets the call run", async () => {
    for (const command of ["exit 1", join(dir, "no-such-script.sh"), "echo '{not json'"]) {
      const { session, ran } = sessionWithEcho();
      claudeCodeHooks(pre("Bash", { type: "command", command }), here())(session);
      await assert.rejects(
        session.defaultBranch.act({ function: "bash", arguments: { command: "ls" } }),
        (error: unknown) => {
          assert.ok(error instanceof ToolDeniedError, String(error));
          assert.match(error.message, /Claude hook .* failed/);
          return true;
        },
      );
      assert.deepEqual(ran, [], command);
    }
    const reported: ClaudeHookError[] = [];
    const { session, ran } = sessionWithEcho();
    claudeCodeHooks(pre("Bash", { type: "command", command: "exit 1", onFailure: "continue" }), {
      ...here(),
      onError: (error) => reported.push(error),
    })(session);
    await session.defaultBranch.act({ function: "bash", arguments: { command: "ls" } });
    assert.deepEqual(ran, ["ls"]);
    assert.equal(reported.length, 1);
    assert.equal(reported[0].why, "exit");
  });

  it("a hook past its timeout is killed with its children and the call is denied", async () => {
    const marker = join(dir, "late-marker");
    const { session, ran } = sessionWithEcho();
    claudeCodeHooks(
      pre("Bash", {
        type: "command",
        command: `(sleep 3; touch ${marker}) & sleep 30`,
        timeout: 1,
      }),
      here(),
    )(session);
    const started = Date.now();
    await assert.rejects(
      session.defaultBranch.act({ function: "bash", arguments: { command: "ls" } }),
      (error: unknown) => {
        assert.ok(error instanceof ToolDeniedError);
        assert.match(error.message, /timed out after 1000 ms/);
        return true;
      },
    );
    assert.ok(Date.now() - started < 20_000, "the deadline fired");
    assert.deepEqual(ran, []);
    await new Promise((resolve) => setTimeout(resolve, 3_500));
    assert.equal(existsSync(marker), false, "the hook's background child was killed too");
  });

  it("a plugin's hooks.json runs with ${CLAUDE_PLUGIN_ROOT} and CLAUDE_PROJECT_DIR", async () => {
    const session = new Session();
    const policy = claudeCodeHooks(join(fixtures, "plugin", "hooks", "hooks.json"), here());
    policy(session);
    const fold = await decidePre(session, "editor", "c1", {
      action: "write",
      filePath: "config/.env",
      content: "KEY=1",
    });
    assert.equal(fold.verdict, "deny");
    assert.equal(fold.reason, `plugin at ${join(fixtures, "plugin")} refuses .env in ${dir}`);
    const fine = await decidePre(session, "editor", "c2", {
      action: "write",
      filePath: "README.md",
      content: "x",
    });
    assert.equal(fine.verdict, "none");
  });

  it("PostToolUse replaces the result and adds context", async () => {
    const { session } = sessionWithEcho();
    claudeCodeHooks(
      {
        hooks: {
          PostToolUse: [{
            matcher: "Bash",
            hooks: [{ type: "command", command: script("post.sh") }],
          }],
        },
      },
      here(),
    )(session);
    const result = await session.defaultBranch.act({
      function: "bash",
      arguments: { command: "ls" },
    });
    assert.equal(result.output, "[redacted by post.sh]");
  });

  it("PostToolUseFailure gets the failed call's input and error; its additionalContext reaches the model", async () => {
    const session = new Session();
    session.defaultBranch.actions.register(
      new Tool({
        name: "bash",
        requestOptions: z.object({ command: z.string() }),
        func: () => {
          throw new Error("exit status 127");
        },
      }),
    );
    claudeCodeHooks(
      {
        hooks: {
          PostToolUseFailure: [{
            matcher: "Bash",
            hooks: [{ type: "command", command: script("failure.py") }],
          }],
        },
      },
      here(),
    )(session);
    // The agent loop's act (suppressErrors): the failure is told to the model with the context.
    const result = await session.defaultBranch.act(
      { function: "bash", arguments: { command: "nosuchprogram" } },
      { suppressErrors: true },
    );
    assert.deepEqual(result.context, [
      "failure.py saw Bash `nosuchprogram` fail: exit status 127",
    ]);
    const response = session.defaultBranch.messages.at(-1)!.content as Record<string, unknown>;
    assert.deepEqual(response.context, result.context);
  });

  it("UserPromptSubmit exit 2 blocks the message add", async () => {
    const session = new Session();
    claudeCodeHooks(
      {
        hooks: {
          UserPromptSubmit: [{
            hooks: [{
              type: "command",
              command:
                "grep -q password && { echo 'no secrets in prompts' >&2; exit 2; } || exit 0",
            }],
          }],
        },
      },
      here(),
    )(session);
    await session.defaultBranch.addMessage({ role: "user", content: "hello" });
    await assert.rejects(
      session.defaultBranch.addMessage({ role: "user", content: "my password is hunter2" }),
      (error: unknown) => {
        assert.ok(error instanceof ClaudePromptBlockedError);
        assert.match(error.message, /no secrets in prompts/);
        return true;
      },
    );
  });

  it("an http hook on 127.0.0.1 gets the event JSON and its answer decides", async () => {
    const seen: Record<string, unknown>[] = [];
    const server: Server = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk) => (body += chunk));
      req.on("end", () => {
        const event = JSON.parse(body);
        seen.push({ ...event, auth: req.headers.authorization });
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify({
          hookSpecificOutput: {
            hookEventName: "PreToolUse",
            permissionDecision: event.tool_input.command.includes("sudo") ? "deny" : "allow",
            permissionDecisionReason: "no sudo over http",
          },
        }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const port = (server.address() as { port: number }).port;
      const { session, ran } = sessionWithEcho();
      claudeCodeHooks(
        pre("Bash", {
          type: "http",
          url: `http://127.0.0.1:${port}/hook`,
          headers: { authorization: "Bearer $HOOK_TOKEN", "x-other": "$NOT_ALLOWED" },
          allowedEnvVars: ["HOOK_TOKEN"],
        }),
        { ...here(), env: { HOOK_TOKEN: "t0ken", NOT_ALLOWED: "leak" } },
      )(session);
      await assert.rejects(
        session.defaultBranch.act({ function: "bash", arguments: { command: "sudo reboot" } }),
        /no sudo over http/,
      );
      await session.defaultBranch.act({ function: "bash", arguments: { command: "ls" } });
      assert.deepEqual(ran, ["ls"]);
      assert.equal(seen[0].hook_event_name, "PreToolUse");
      assert.equal(seen[0].tool_name, "Bash");
      assert.equal(seen[0].session_id, session.id);
      assert.equal(seen[0].auth, "Bearer t0ken");
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("guards the coding toolkit's real bash tool: the victim survives a denied rm -rf", async () => {
    const ws = join(dir, "ws");
    rmSync(ws, { recursive: true, force: true });
    const { mkdirSync } = await import("node:fs");
    mkdirSync(join(ws, "victim"), { recursive: true });
    writeFileSync(join(ws, "victim", "data.txt"), "keep me");
    const session = new Session();
    const toolkit = new CodingToolkit({
      workspaceRoot: ws,
      tools: ["bash"],
      sandbox: { kind: "none" },
    });
    for (const tool of toolkit.bind()) session.defaultBranch.actions.register(tool);
    claudeCodeHooks(pre("Bash", { type: "command", command: script("deny_rm.sh") }), {
      projectDir: ws,
      transcriptDir: join(dir, "transcripts"),
    })(session);
    await assert.rejects(
      session.defaultBranch.act({ function: "bash", arguments: { command: "rm -rf victim" } }),
      ToolDeniedError,
    );
    assert.equal(readFileSync(join(ws, "victim", "data.txt"), "utf8"), "keep me");
  });

  it("shows file paths absolute under CLAUDE_PROJECT_DIR, as Claude Code does, and maps updatedInput back", async () => {
    // A project's own hook script compares file_path with "$CLAUDE_PROJECT_DIR"/src.
    const ws = join(dir, "paths");
    rmSync(ws, { recursive: true, force: true });
    const { mkdirSync } = await import("node:fs");
    mkdirSync(join(ws, "src"), { recursive: true });
    const outside = join(dir, "outside.txt");
    const settings = {
      hooks: {
        PreToolUse: [{
          matcher: "Read|Write|Edit|Grep|Glob|NotebookEdit",
          hooks: [{ type: "command" as const, command: script("project_paths.sh") }],
        }],
      },
    };
    const withHooks = (env: Record<string, string> = {}) => {
      const session = new Session();
      const toolkit = new CodingToolkit({
        workspaceRoot: ws,
        tools: ["reader", "editor", "search"],
        sandbox: { kind: "none" },
      });
      for (const tool of toolkit.bind()) session.defaultBranch.actions.register(tool);
      const notebooks: unknown[] = [];
      session.defaultBranch.actions.register(
        new Tool({
          name: "notebook",
          description: "Edit a notebook cell",
          inputSchema: z.object({ notebook_path: z.string(), new_source: z.string() }),
          execute: (args: Record<string, unknown>) => {
            notebooks.push(args);
            return "ok";
          },
        }),
      );
      claudeCodeHooks(settings, {
        projectDir: ws,
        transcriptDir: join(dir, "transcripts"),
        env,
        toolNames: { notebook: "NotebookEdit" },
      })(session);
      const act = (fn: string, args: Record<string, unknown>) =>
        session.defaultBranch.act({ function: fn, arguments: args });
      return { session, act, notebooks };
    };
    const denied = (promise: Promise<unknown>, pattern: RegExp) =>
      assert.rejects(promise, (error: unknown) => {
        assert.ok(error instanceof ToolDeniedError, String(error));
        assert.match(error.message, pattern);
        return true;
      });

    const { act, notebooks } = withHooks();
    // Relative paths inside src are allowed: the script saw "$CLAUDE_PROJECT_DIR"/src/x.txt.
    const wrote = await act("editor", { action: "write", filePath: "src/x.txt", content: "one" });
    assert.equal((wrote.output as { success: boolean }).success, true);
    assert.equal(readFileSync(join(ws, "src", "x.txt"), "utf8"), "one");
    const read = await act("reader", { action: "read", path: "src/x.txt" });
    assert.equal((read.output as { success: boolean }).success, true);
    await act("editor", {
      action: "edit",
      filePath: join(ws, "src", "x.txt"),
      oldString: "one",
      newString: "two",
    });
    assert.equal(readFileSync(join(ws, "src", "x.txt"), "utf8"), "two");
    const grep = await act("search", { action: "grep", pattern: "two", path: "src" });
    assert.equal((grep.output as { success: boolean }).success, true);
    await act("search", { action: "find", pattern: "*.txt", path: "./src/" });
    await act("notebook", { notebook_path: "src/a.ipynb", new_source: "x" });
    // The tool itself still gets its own (relative) arguments.
    assert.deepEqual(notebooks, [{ notebook_path: "src/a.ipynb", new_source: "x" }]);
    // Paths outside src are denied with the absolute path the script saw.
    await denied(
      act("editor", { action: "write", filePath: "notes.txt", content: "x" }),
      new RegExp(`not '${join(ws, "notes.txt")}'`),
    );
    await denied(act("reader", { action: "read", path: "src/../notes.txt" }), /not '.*notes\.txt'/);
    await denied(act("search", { action: "grep", pattern: "x", path: "." }), /not '.*paths'/);
    await denied(act("notebook", { notebook_path: "b.ipynb", new_source: "x" }), /b\.ipynb/);
    assert.equal(existsSync(join(ws, "notes.txt")), false);

    // An absolute updatedInput path inside the project becomes the tool's relative path.
    const inside = withHooks({ REWRITE_TO: join(ws, "src", "z.txt") });
    const decision = await decidePre(inside.session, "editor", "c-rewrite", {
      action: "write",
      filePath: "src/y.txt",
      content: "y",
    });
    assert.deepEqual(decision.updatedArgs, {
      action: "write",
      filePath: "src/z.txt",
      content: "rewritten",
    });
    await inside.act("editor", { action: "write", filePath: "src/y.txt", content: "y" });
    assert.equal(readFileSync(join(ws, "src", "z.txt"), "utf8"), "rewritten");
    assert.equal(existsSync(join(ws, "src", "y.txt")), false);

    // An updatedInput path outside the project is refused with a reason, never passed on.
    const escape = withHooks({ REWRITE_TO: outside });
    await denied(
      escape.act("editor", { action: "write", filePath: "src/w.txt", content: "w" }),
      /updatedInput\.file_path ".*outside\.txt" is outside the project folder/,
    );
    assert.equal(existsSync(outside), false);
    assert.equal(existsSync(join(ws, "src", "w.txt")), false);
  });

  it("never writes a transcript outside transcriptDir: a session id that is a path denies the call", async () => {
    const victim = join(dir, "victim", "important.jsonl");
    mkdirSync(join(dir, "victim"), { recursive: true });
    writeFileSync(victim, "keep me\n");
    for (
      const id of [
        "../victim/important",
        `../../../../../../..${dir}/victim/important`,
        "..",
        "a\u0000b",
      ]
    ) {
      const session = new Session({ id });
      claudeCodeHooks(pre("Bash", { type: "command", command: "true" }), here())(session);
      const fold = await decidePre(session, "bash", "c1", { command: "ls" });
      // A failed blocking hook: the act path (and a PreToolUse answer) denies the call with it.
      assert.match(
        String((fold.error as Error)?.message),
        /Cannot write the Claude transcript/,
        id,
      );
    }
    assert.equal(readFileSync(victim, "utf8"), "keep me\n");
    assert.equal(existsSync(join(dir, "victim", "..jsonl")), false);
  });

  it("a link put where a transcript goes is replaced, never followed; timeoutMs past a timer's reach is refused", async () => {
    const transcripts = join(dir, "linked-transcripts");
    mkdirSync(transcripts, { recursive: true });
    const victim = join(dir, "victim-of-link.txt");
    writeFileSync(victim, "keep me\n");
    const session = new Session({ id: "linked" });
    symlinkSync(victim, join(transcripts, "linked.jsonl"));
    claudeCodeHooks(pre("Bash", { type: "command", command: "true" }), {
      projectDir: dir,
      transcriptDir: transcripts,
    })(session);
    const fold = await decidePre(session, "bash", "c1", { command: "ls" });
    assert.equal(fold.error, undefined, String(fold.error));
    assert.equal(readFileSync(victim, "utf8"), "keep me\n");
    assert.ok(lstatSync(join(transcripts, "linked.jsonl")).isFile());
    assert.throws(
      () => claudeCodeHooks(pre("Bash", { type: "command", command: "true" }), { timeoutMs: 3e9 }),
      /timeoutMs must be a positive number of at most 2147483647; got 3000000000/,
    );
  });

  it("refuses configurations it cannot run, naming where", () => {
    assert.throws(() => claudeCodeHooks({ hooks: { PreToolUze: [] } }), ClaudeHookConfigError);
    assert.throws(
      () =>
        claudeCodeHooks(
          { hooks: { PreToolUse: [{ hooks: [{ type: "prompt", prompt: "x" }] }] } } as never,
        ),
      /hooks\.PreToolUse\[0\]\.hooks\[0\]: "prompt" hooks are not supported/,
    );
    assert.throws(
      () => claudeCodeHooks(pre("Bash", { type: "command", command: "x", timeout: -1 })),
      /timeout must be a positive number/,
    );
    assert.throws(
      () => claudeCodeHooks(pre("(unclosed", { type: "command", command: "x" })),
      /not a regular expression/,
    );
    const bad = join(dir, "bad.json");
    writeFileSync(bad, "{ nope");
    assert.throws(() => claudeCodeHooks(bad), /not JSON/);
    assert.throws(() => claudeCodeHooks(join(dir, "missing.json")), /cannot read the file/);
    assert.throws(
      () =>
        claudeCodeHooks(pre("Bash", { type: "command", command: "${CLAUDE_PLUGIN_ROOT}/x.sh" })),
      /no pluginRoot is known/,
    );
    // Known Claude events without a hookscope counterpart are accepted and not run.
    const session = new Session();
    claudeCodeHooks(
      { hooks: { Stop: [{ hooks: [{ type: "command", command: "true" }] }] } },
      here(),
    )(session);
    assert.equal(session.hooks.count("tool.pre"), 0);
  });
});
