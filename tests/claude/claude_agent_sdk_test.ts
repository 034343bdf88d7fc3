// claudeAgentHooks with the real Claude Agent SDK's query() (a test-only install that
// .ci/setup/40-claude-code.sh caches outside the repository) and the real Claude Code binary it
// runs, against the fake Anthropic Messages API on 127.0.0.1: the session's policy decides
// in-process, and every decision is recorded in the session.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
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
import { pathToFileURL } from "node:url";
import process from "node:process";
import { Session } from "../../mod.ts";
import { destructiveCommandGuard } from "../../action/coding/mod.ts";
import { ApprovalAnswered, ApprovalRequested } from "../../session/mod.ts";
import { claudeAgentHooks, ClaudeHookDecision } from "../../claude/mod.ts";
import { startAnthropicFake } from "../fixtures/anthropic_server.ts";

const SDK = process.env.HOOKSCOPE_CLAUDE_SDK ??
  join(homedir(), ".cache/hookscope/claude-agent-sdk/node_modules/@anthropic-ai/claude-agent-sdk");
const CLAUDE = process.env.HOOKSCOPE_CLAUDE_BIN ??
  join(
    homedir(),
    ".cache/hookscope/claude-agent-sdk/node_modules/@anthropic-ai/claude-agent-sdk-linux-x64/claude",
  );
const skip = existsSync(join(SDK, "sdk.mjs")) && existsSync(CLAUDE)
  ? false
  : `the Claude Agent SDK is not installed at ${SDK} (.ci/setup/40-claude-code.sh installs it)`;

function sdkEnv(dir: string, url: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: join(dir, "home"),
    // Claude Code's own temporary files (claude-UID/, cc-socks/) stay in the test's directory.
    TMPDIR: join(dir, "home"),
    ANTHROPIC_BASE_URL: url,
    ANTHROPIC_API_KEY: "sk-ant-test-not-a-key",
    IS_SANDBOX: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_TELEMETRY: "1",
  };
}

async function collect(
  run: AsyncIterable<Record<string, unknown>> & {
    interrupt?: () => Promise<void>;
  },
): Promise<Record<string, unknown>[]> {
  const messages: Record<string, unknown>[] = [];
  const deadline = setTimeout(() => void run.interrupt?.().catch(() => {}), 150_000);
  try {
    for await (const message of run) messages.push(message);
  } finally {
    clearTimeout(deadline);
  }
  return messages;
}

describe("claudeAgentHooks with the real Claude Agent SDK", { skip }, () => {
  let dir: string;
  before(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), "hookscope-claude-sdk-")));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("query() runs the session's policy in-process: a denied rm -rf, a rewrite, context; all recorded", async () => {
    const project = join(dir, "project");
    mkdirSync(join(project, "victim"), { recursive: true });
    writeFileSync(join(project, "victim", "data.txt"), "precious");
    mkdirSync(join(dir, "home"), { recursive: true });
    const session = new Session();
    session.hooks.on("tool.pre", destructiveCommandGuard(), { name: "destructive-command-guard" });
    session.hooks.on(
      "tool.pre",
      ({ toolName, args }) =>
        toolName === "Bash" && args.command === "echo original"
          ? {
            decision: "allow",
            updatedArgs: { ...args, command: "echo rewritten-in-process" },
            context: "sdk-context-marker",
          }
          : undefined,
      { name: "rewrite-echo" },
    );
    session.hooks.on(
      "message.add",
      ({ message }) =>
        message.role === "user" ? { context: "sdk-prompt-context-marker" } : undefined,
    );
    const recorded: ClaudeHookDecision[] = [];
    session.observer.observe({ type: ClaudeHookDecision }, (signal) => void recorded.push(signal));
    const fake = await startAnthropicFake([
      { name: "Bash", input: { command: "rm -rf victim", description: "clean up" } },
      { name: "Bash", input: { command: "echo original", description: "say something" } },
    ]);
    try {
      const { query } = await import(pathToFileURL(join(SDK, "sdk.mjs")).href);
      const messages: Record<string, unknown>[] = [];
      const run = query({
        prompt: "do the task",
        options: {
          cwd: project,
          hooks: claudeAgentHooks(session),
          pathToClaudeCodeExecutable: CLAUDE,
          permissionMode: "bypassPermissions",
          allowDangerouslySkipPermissions: true,
          settingSources: [],
          env: {
            PATH: process.env.PATH ?? "/usr/bin:/bin",
            HOME: join(dir, "home"),
            TMPDIR: join(dir, "home"),
            ANTHROPIC_BASE_URL: fake.url,
            ANTHROPIC_API_KEY: "sk-ant-test-not-a-key",
            IS_SANDBOX: "1",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
            DISABLE_AUTOUPDATER: "1",
            DISABLE_TELEMETRY: "1",
          },
        },
      });
      const deadline = setTimeout(() => void run.interrupt?.().catch(() => {}), 150_000);
      try {
        for await (const message of run) messages.push(message);
      } finally {
        clearTimeout(deadline);
      }
      const result = messages.find((m) => m.type === "result") as
        | { permission_denials: { tool_input: { command?: string } }[] }
        | undefined;
      assert.ok(result, "the query ended with a result");
      assert.deepEqual(result.permission_denials.map((d) => d.tool_input.command), [
        "rm -rf victim",
      ]);
      assert.equal(readFileSync(join(project, "victim", "data.txt"), "utf8"), "precious");
      assert.match(JSON.stringify(fake.toolResults[1]?.content), /rewritten-in-process/);
      assert.match(JSON.stringify(fake.requests.at(-1)), /sdk-context-marker/);
      // UserPromptSubmit context, answered in-process, reaches the model too (the SDK sends no
      // SessionStart to callback hooks).
      assert.match(JSON.stringify(fake.requests[0]), /sdk-prompt-context-marker/);
      await session.drainSignals();
      const pre = recorded.map((s) => s.data as Record<string, unknown>).filter((d) =>
        d.event === "PreToolUse"
      );
      assert.deepEqual(pre.map((d) => [d.verdict, d.hook ?? null]), [[
        "deny",
        "destructive-command-guard",
      ], ["allow", null]]);
    } finally {
      await fake.close();
    }
  });

  it("an ask goes to the SDK's canUseTool: an approved call runs and records ApprovalAnswered; a failure's tool.error context reaches the model", async () => {
    const project = join(dir, "asks");
    mkdirSync(project, { recursive: true });
    mkdirSync(join(dir, "home"), { recursive: true });
    const session = new Session();
    session.hooks.on(
      "tool.pre",
      ({ args }) =>
        String(args.command).startsWith("git push")
          ? { decision: "ask", reason: "pushing needs a person" }
          : undefined,
      { name: "push-guard" },
    );
    session.hooks.on("tool.error", ({ args }) => ({
      context: `sdk-failure-context for ${String(args?.command)}`,
    }));
    const fake = await startAnthropicFake([
      { name: "Bash", input: { command: "git push --dry-run", description: "try a push" } },
      { name: "Bash", input: { command: "git push origin main", description: "publish" } },
    ]);
    const asked: string[] = [];
    try {
      const { query } = await import(pathToFileURL(join(SDK, "sdk.mjs")).href);
      const messages = await collect(query({
        prompt: "publish",
        options: {
          cwd: project,
          hooks: claudeAgentHooks(session),
          pathToClaudeCodeExecutable: CLAUDE,
          permissionMode: "default",
          settingSources: [],
          // The person: approves the dry run, refuses the real push.
          canUseTool: (tool: string, input: { command?: string }) => {
            asked.push(`${tool} ${input.command}`);
            return Promise.resolve(
              input.command === "git push --dry-run"
                ? { behavior: "allow", updatedInput: input }
                : { behavior: "deny", message: "not on a Friday" },
            );
          },
          env: sdkEnv(dir, fake.url),
        },
      }));
      assert.ok(messages.some((m) => m.type === "result"), "the query ended with a result");
      assert.deepEqual(asked, ["Bash git push --dry-run", "Bash git push origin main"]);
      // The approved call ran (and failed: no repository here), so PostToolUseFailure came.
      assert.equal(fake.toolResults[0].is_error, true);
      assert.match(JSON.stringify(fake.requests), /sdk-failure-context for git push --dry-run/);
      await session.drainSignals();
      assert.deepEqual(
        session.observer.byType(ApprovalRequested).map((s) => [
          (s.data as { callId: string }).callId,
          (s.data as { policy: string }).policy,
        ]),
        [["toolu_hs_1", "push-guard"], ["toolu_hs_2", "push-guard"]],
      );
      const answered = session.observer.byType(ApprovalAnswered).map((s) =>
        s.data as { callId: string; approve: boolean; by: string }
      );
      assert.deepEqual(answered[0], {
        runId: "",
        callId: "toolu_hs_1",
        toolName: "Bash",
        approve: true,
        by: "claude-code",
      });
      // A refusal in canUseTool sends no hook event: that ask stays unanswered in the record
      // (the result's permission_denials lists it).
      assert.equal(answered.length, 1);
      const result = messages.find((m) => m.type === "result") as {
        permission_denials: { tool_use_id: string }[];
      };
      assert.deepEqual(result.permission_denials.map((d) => d.tool_use_id), ["toolu_hs_2"]);
    } finally {
      await fake.close();
    }
  });
});
