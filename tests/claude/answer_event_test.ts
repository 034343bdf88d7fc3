// answerClaudeEvent in-process: every event of the mapping table, in the protocol's own terms,
// with the decision recorded in the session (what `hook`, `serve` and claudeAgentHooks share).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ApprovalAnswered, ApprovalRequested, MemoryStore, Session } from "../../mod.ts";
import { destructiveCommandGuard, guardHostPaths } from "../../action/coding/mod.ts";
import {
  answerClaudeEvent,
  ClaudeEventError,
  ClaudeHookDecision,
  type ClaudeHookDecisionData,
} from "../../claude/mod.ts";

const base = { session_id: "s1", transcript_path: "/tmp/t.jsonl", cwd: "/tmp" };
const pre = (tool_input: Record<string, unknown>, tool_name = "Bash") => ({
  ...base,
  hook_event_name: "PreToolUse",
  tool_name,
  tool_input,
  tool_use_id: "toolu_1",
});

function decisions(session: Session): ClaudeHookDecisionData[] {
  return session.observer.byType(ClaudeHookDecision).map((s) => s.data as ClaudeHookDecisionData);
}

describe("answerClaudeEvent", () => {
  it("PreToolUse: deny, ask, allow with updatedInput and context, no opinion", async () => {
    const session = new Session({ id: "s1" });
    session.hooks.on("tool.pre", ({ args }) => {
      const command = String(args.command);
      if (command.startsWith("rm")) return { decision: "deny", reason: "no rm" };
      if (command.startsWith("git push")) return { decision: "ask", reason: "a person decides" };
      if (command === "echo a") {
        return { decision: "allow", updatedArgs: { command: "echo b" }, context: "rewrote it" };
      }
      return undefined;
    }, { name: "policy" });
    const deny = await answerClaudeEvent(session, pre({ command: "rm -rf x" }));
    assert.deepEqual(deny.output, {
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "deny",
        permissionDecisionReason: "no rm",
      },
    });
    const ask = await answerClaudeEvent(session, pre({ command: "git push" }));
    assert.deepEqual(ask.output, {
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "ask",
        permissionDecisionReason: "a person decides",
      },
    });
    const rewrite = await answerClaudeEvent(session, pre({ command: "echo a" }));
    assert.deepEqual(rewrite.output, {
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "allow",
        updatedInput: { command: "echo b" },
        additionalContext: "rewrote it",
      },
    });
    const none = await answerClaudeEvent(session, pre({ command: "ls" }));
    assert.deepEqual(none.output, {});
    assert.deepEqual(decisions(session).map((d) => [d.verdict, d.hook ?? null]), [
      ["deny", "policy"],
      ["ask", "policy"],
      ["allow", null],
      ["none", null],
    ]);
  });

  it("PostToolUse: updatedToolOutput (and updatedMCPToolOutput for mcp__ tools) and context", async () => {
    const session = new Session({ id: "s1" });
    session.hooks.on("tool.post", ({ result }) => ({
      updatedResult: String(result).replaceAll("secret", "***"),
      context: "redacted",
    }));
    const answer = await answerClaudeEvent(session, {
      ...base,
      hook_event_name: "PostToolUse",
      tool_name: "mcp__files__read",
      tool_input: { path: "a" },
      tool_response: "the secret is 42",
      tool_use_id: "toolu_2",
    });
    assert.deepEqual(answer.output, {
      hookSpecificOutput: {
        hookEventName: "PostToolUse",
        updatedToolOutput: "the *** is 42",
        updatedMCPToolOutput: "the *** is 42",
        additionalContext: "redacted",
      },
    });
  });

  it("PostToolUseFailure: tool.error handlers see the error and the input; their context is additionalContext", async () => {
    const session = new Session({ id: "s1" });
    const seen: unknown[] = [];
    session.hooks.on("tool.error", ({ toolName, args, error, durationMs }) => {
      seen.push({ toolName, args, error, durationMs });
      return { context: "the test runner needs --no-cache here" };
    });
    session.hooks.on("tool.error", () => ({ context: "second" }));
    const answer = await answerClaudeEvent(session, {
      ...base,
      hook_event_name: "PostToolUseFailure",
      tool_name: "Bash",
      tool_input: { command: "npm test" },
      tool_use_id: "toolu_3",
      error: "Exit code 1",
      duration_ms: 12,
    });
    assert.deepEqual(seen, [{
      toolName: "Bash",
      args: { command: "npm test" },
      error: "Exit code 1",
      durationMs: 12,
    }]);
    assert.deepEqual(answer.output, {
      hookSpecificOutput: {
        hookEventName: "PostToolUseFailure",
        additionalContext: "the test runner needs --no-cache here\nsecond",
      },
    });
    assert.equal(decisions(session)[0].context, "the test runner needs --no-cache here\nsecond");
    // No handler with an opinion: {}.
    const quiet = await answerClaudeEvent(new Session({ id: "s1" }), {
      ...base,
      hook_event_name: "PostToolUseFailure",
      tool_name: "Bash",
      tool_input: {},
      tool_use_id: "toolu_4",
      error: "Exit code 1",
    });
    assert.deepEqual(quiet.output, {});
  });

  it("UserPromptSubmit: a message.add handler that throws or denies blocks the prompt with its reason", async () => {
    const reported: unknown[] = [];
    const store = new MemoryStore();
    const session = new Session({ id: "s1", store, onError: (e) => void reported.push(e) });
    session.hooks.on("message.add", ({ message }) => {
      if (String(message.content).includes("password")) throw new Error("no secrets in prompts");
    }, { name: "secrets" });
    session.hooks.on(
      "message.add",
      ({ message }) =>
        String(message.content).includes("deploy")
          ? { decision: "deny", reason: "no deploys from a prompt" }
          : undefined,
      { name: "deploys" },
    );
    const thrown = await answerClaudeEvent(session, {
      ...base,
      hook_event_name: "UserPromptSubmit",
      prompt: "my password is hunter2",
    });
    assert.deepEqual(thrown.output, { decision: "block", reason: "no secrets in prompts" });
    assert.deepEqual(decisions(session).at(-1), {
      event: "UserPromptSubmit",
      verdict: "block",
      reason: "no secrets in prompts",
      hook: "secrets",
      error: "no secrets in prompts",
    });
    const denied = await answerClaudeEvent(session, {
      ...base,
      hook_event_name: "UserPromptSubmit",
      prompt: "deploy to prod",
    });
    assert.deepEqual(denied.output, { decision: "block", reason: "no deploys from a prompt" });
    assert.deepEqual(decisions(session).at(-1), {
      event: "UserPromptSubmit",
      verdict: "block",
      reason: "no deploys from a prompt",
      hook: "deploys",
    });
    // Several: every handler runs, the first blocking one in chain order gives the reason.
    const both = await answerClaudeEvent(session, {
      ...base,
      hook_event_name: "UserPromptSubmit",
      prompt: "deploy with password x",
    });
    assert.deepEqual(both.output, { decision: "block", reason: "no secrets in prompts" });
    const fine = await answerClaudeEvent(session, {
      ...base,
      hook_event_name: "UserPromptSubmit",
      prompt: "tidy the repo",
    });
    assert.deepEqual(fine.output, {});
    assert.deepEqual(decisions(session).at(-1), { event: "UserPromptSubmit", verdict: "none" });
    // Every prompt is stored (blocked ones too: the record shows what was refused), and the
    // throwing handler is reported as anywhere else.
    await session.drainSignals();
    const stored = (await store.listMessages({ sessionId: "s1" })).map((m) => m.content);
    assert.deepEqual(stored, [
      "my password is hunter2",
      "deploy to prod",
      "deploy with password x",
      "tidy the repo",
    ]);
    assert.equal(reported.length, 2);
  });

  it("UserPromptSubmit: onFailure continue does not block; a malformed decision blocks; context is additionalContext", async () => {
    const session = new Session({ id: "s1", onError: () => {} });
    session.hooks.on("message.add", () => {
      throw new Error("a logging bug");
    }, { onFailure: "continue" });
    session.hooks.on(
      "message.add",
      ({ message }) =>
        String(message.content).startsWith("ask")
          ? { decision: "ask", reason: "prompts cannot ask" }
          : String(message.content).startsWith("bare")
          ? { decision: "deny" }
          : { decision: "allow", context: "the repo uses pnpm" },
      { name: "shapes" },
    );
    session.hooks.on("message.add", () => ({ context: "today is a release day" }));
    const fine = await answerClaudeEvent(session, {
      ...base,
      hook_event_name: "UserPromptSubmit",
      prompt: "tidy the repo",
    });
    assert.deepEqual(fine.output, {
      hookSpecificOutput: {
        hookEventName: "UserPromptSubmit",
        additionalContext: "the repo uses pnpm\ntoday is a release day",
      },
    });
    const ask = await answerClaudeEvent(session, {
      ...base,
      hook_event_name: "UserPromptSubmit",
      prompt: "ask me",
    });
    assert.deepEqual(ask.output, {
      decision: "block",
      reason:
        'Cannot apply message.add decision of "shapes": decision must be "allow" or "deny"; got "ask"',
    });
    const bare = await answerClaudeEvent(session, {
      ...base,
      hook_event_name: "UserPromptSubmit",
      prompt: "bare deny",
    });
    assert.match(String(bare.output.reason), /a deny needs a non-empty string reason/);
    assert.equal(bare.output.decision, "block");
  });

  it("UserPromptSubmit: a handler registered with onFailure block, or one that never settles, blocks (fail closed)", async () => {
    const session = new Session({ id: "s1", onError: () => {} });
    session.hooks.on("message.add", ({ message }) => {
      if (String(message.content).includes("password")) throw new Error("no secrets in prompts");
    }, { onFailure: "block", name: "secrets" });
    session.hooks.on(
      "message.add",
      ({ message }) => String(message.content) === "hang" ? new Promise(() => {}) : undefined,
    );
    const blocked = await answerClaudeEvent(session, {
      ...base,
      hook_event_name: "UserPromptSubmit",
      prompt: "my password is hunter2",
    });
    assert.deepEqual(blocked.output, { decision: "block", reason: "no secrets in prompts" });
    assert.equal(decisions(session).at(-1)?.hook, "secrets");
    const hung = await answerClaudeEvent(session, {
      ...base,
      hook_event_name: "UserPromptSubmit",
      prompt: "hang",
    }, { timeoutMs: 50 });
    assert.equal(hung.output.decision, "block");
    assert.match(String(hung.output.reason), /50 ms/);
  });

  it("a message.add handler's deny or throw outside the protocol is isolated, as always", async () => {
    const reported: unknown[] = [];
    const session = new Session({ onError: (e) => void reported.push(e) });
    session.hooks.on("message.add", () => ({ decision: "deny", reason: "ignored here" }));
    session.hooks.on("message.add", () => {
      throw new Error("reported");
    });
    const message = await session.defaultBranch.addMessage({ role: "user", content: "hi" });
    assert.equal(message.content, "hi");
    assert.equal(reported.length, 1);
    assert.match(String((reported[0] as Error).message), /reported/);
  });

  it("SessionStart: the session.start handlers' context, in order, is additionalContext; SessionEnd answers {}", async () => {
    const session = new Session({ id: "s1", onError: () => {} });
    session.hooks.on("session.start", ({ source }) => ({ context: `started by ${source}` }));
    session.hooks.on("session.start", () => undefined);
    session.hooks.on("session.start", () => {
      throw new Error("a broken start hook");
    });
    session.hooks.on("session.start", async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      return { context: "branch main is protected" };
    });
    session.hooks.on("session.end", () => ({ context: "not for SessionEnd" }));
    const started = await answerClaudeEvent(session, {
      ...base,
      hook_event_name: "SessionStart",
      source: "startup",
    });
    assert.deepEqual(started.output, {
      hookSpecificOutput: {
        hookEventName: "SessionStart",
        additionalContext: "started by startup\nbranch main is protected",
      },
    });
    assert.deepEqual(decisions(session).at(-1), {
      event: "SessionStart",
      verdict: "allow",
      context: "started by startup\nbranch main is protected",
    });
    const ended = await answerClaudeEvent(session, {
      ...base,
      hook_event_name: "SessionEnd",
      reason: "other",
    });
    assert.deepEqual(ended.output, {});
  });

  it("SessionStart: a start hook that never settles is recorded as an error and answered {}", async () => {
    const session = new Session({ id: "s1", onError: () => {} });
    session.hooks.on("session.start", () => new Promise(() => {}));
    const started = await answerClaudeEvent(session, {
      ...base,
      hook_event_name: "SessionStart",
      source: "startup",
    }, { timeoutMs: 50 });
    assert.deepEqual(started.output, {});
    assert.match(decisions(session).at(-1)?.error ?? "", /50 ms/);
  });

  it("a policy that throws or never answers denies a PreToolUse (fail closed); elsewhere {} with the error recorded", async () => {
    const session = new Session({ id: "s1" });
    session.hooks.on("tool.pre", ({ args }) => {
      if (args.command === "hang") return new Promise(() => {});
      throw new Error("policy bug");
    });
    session.hooks.on("tool.post", () => new Promise(() => {}));
    const thrown = await answerClaudeEvent(session, pre({ command: "ls" }));
    assert.equal(
      (thrown.output.hookSpecificOutput as Record<string, unknown>).permissionDecision,
      "deny",
    );
    assert.match(
      String(
        (thrown.output.hookSpecificOutput as Record<string, unknown>).permissionDecisionReason,
      ),
      /policy bug/,
    );
    const hung = await answerClaudeEvent(session, pre({ command: "hang" }), { timeoutMs: 50 });
    assert.equal(
      (hung.output.hookSpecificOutput as Record<string, unknown>).permissionDecision,
      "deny",
    );
    const post = await answerClaudeEvent(session, {
      ...base,
      hook_event_name: "PostToolUse",
      tool_name: "Bash",
      tool_input: {},
      tool_response: "",
      tool_use_id: "toolu_9",
    }, { timeoutMs: 50 });
    assert.deepEqual(post.output, {});
    assert.match(decisions(session).at(-1)?.error ?? "", /50 ms/);
  });

  it("an ask records ApprovalRequested; a later PostToolUse (approved, it ran) or PermissionDenied records ApprovalAnswered", async () => {
    const policy = (session: Session) =>
      session.hooks.on(
        "tool.pre",
        ({ args }) =>
          String(args.command).startsWith("git push")
            ? { decision: "ask", reason: "pushing needs a person" }
            : undefined,
        { name: "push-guard" },
      );
    // In-process, one session for every event (claudeAgentHooks without a store).
    const session = new Session({ id: "s1" });
    policy(session);
    const ask = (id: string) => ({ ...pre({ command: "git push origin" }), tool_use_id: id });
    await answerClaudeEvent(session, ask("toolu_a"));
    await answerClaudeEvent(session, ask("toolu_b"));
    await answerClaudeEvent(session, {
      ...base,
      hook_event_name: "PostToolUse",
      tool_name: "Bash",
      tool_input: { command: "git push origin" },
      tool_response: "pushed",
      tool_use_id: "toolu_a",
    });
    await answerClaudeEvent(session, {
      ...base,
      hook_event_name: "PermissionDenied",
      tool_name: "Bash",
      tool_input: { command: "git push origin" },
      tool_use_id: "toolu_b",
      reason: "the user said no",
    });
    // An event of a call nobody asked about records nothing.
    await answerClaudeEvent(session, {
      ...base,
      hook_event_name: "PostToolUse",
      tool_name: "Bash",
      tool_input: { command: "ls" },
      tool_response: "",
      tool_use_id: "toolu_c",
    });
    const requested = session.observer.byType(ApprovalRequested).map((s) => s.data);
    assert.deepEqual(
      requested.map((d) => {
        const { callId, toolName, args, reason, policy, runId, sessionId } = d as Record<
          string,
          unknown
        >;
        return { callId, toolName, args, reason, policy, runId, sessionId };
      }),
      ["toolu_a", "toolu_b"].map((callId) => ({
        callId,
        toolName: "Bash",
        args: { command: "git push origin" },
        reason: "pushing needs a person",
        policy: "push-guard",
        runId: "",
        sessionId: "s1",
      })),
    );
    assert.deepEqual(session.observer.byType(ApprovalAnswered).map((s) => s.data), [
      { runId: "", callId: "toolu_a", toolName: "Bash", approve: true, by: "claude-code" },
      {
        runId: "",
        callId: "toolu_b",
        toolName: "Bash",
        approve: false,
        by: "claude-code",
        reason: "the user said no",
      },
    ]);
  });

  it("a fresh session per event over one store (as hook and serve answer) finds the ask in the store", async () => {
    const store = new MemoryStore();
    await store.createSession({ id: "s2", status: "created" });
    const answer = async (event: Record<string, unknown>) => {
      const session = new Session({ id: "s2", store });
      session.hooks.on("tool.pre", () => ({ decision: "ask", reason: "always" }), { name: "ask" });
      await answerClaudeEvent(session, { ...event, session_id: "s2" });
      await session.drainSignals();
    };
    await answer({ ...pre({ command: "deploy" }), tool_use_id: "toolu_x" });
    assert.equal((await store.getSession("s2"))?.metadata?.claudeCodeAsked, true);
    // The person approved an edited command: the input that ran is recorded as updatedArgs.
    await answer({
      ...base,
      hook_event_name: "PostToolUseFailure",
      tool_name: "Bash",
      tool_input: { command: "deploy --dry-run" },
      tool_use_id: "toolu_x",
      error: "exit 1",
    });
    // A second outcome event of the same call is not a second answer.
    await answer({
      ...base,
      hook_event_name: "PostToolUse",
      tool_name: "Bash",
      tool_input: { command: "deploy" },
      tool_response: "",
      tool_use_id: "toolu_x",
    });
    const rows = await store.listSessionSignals("s2");
    const kinds = rows.map((r) => r.kind).filter((k) => k.startsWith("Approval"));
    assert.deepEqual(kinds, ["ApprovalRequested", "ApprovalAnswered"]);
    const answered = rows.find((r) => r.kind === "ApprovalAnswered")!.payload as {
      data: Record<string, unknown>;
    };
    assert.deepEqual(answered.data, {
      runId: "",
      callId: "toolu_x",
      toolName: "Bash",
      approve: true,
      by: "claude-code",
      updatedArgs: { command: "deploy --dry-run" },
    });
  });

  it("deferRecord with deferHookSignals records after the answer: the hook signals first, with their own times, then the decision", async () => {
    const store = new MemoryStore();
    const session = new Session({ id: "s3", store });
    session.hooks.on("tool.pre", () => ({ decision: "deny", reason: "no" }), { name: "no" });
    let recorded: Promise<void> | undefined;
    const before = Date.now();
    const answer = await answerClaudeEvent(
      session,
      { ...pre({ command: "ls" }), session_id: "s3" },
      {
        deferRecord: (pending) => (recorded = pending),
        deferHookSignals: true,
      },
    );
    assert.equal(
      (answer.output.hookSpecificOutput as Record<string, unknown>).permissionDecision,
      "deny",
    );
    // Nothing is recorded when the answer is given...
    assert.equal(session.observer.byType(ClaudeHookDecision).length, 0);
    assert.deepEqual(await store.listSessionSignals("s3"), []);
    await recorded;
    await session.drainSignals();
    // ...then the tool.pre hook signal, then the decision, and the bus records as before.
    const rows = await store.listSessionSignals("s3");
    assert.deepEqual(rows.map((r) => r.kind), ["HookSignal", "ClaudeHookDecision"]);
    assert.ok(rows[0].ts >= before && rows[0].ts <= rows[1].ts);
    assert.equal(session.hooks.observer, session.observer);
  });

  it("the coding guards take Claude's tool names and input shapes (Bash, Read/Write/Edit/NotebookEdit, Grep, mcp__)", async () => {
    const ws = realpathSync(mkdtempSync(join(tmpdir(), "hookscope-claude-guards-")));
    try {
      mkdirSync(join(ws, "src"));
      writeFileSync(join(ws, "src", "a.ts"), "export {};\n");
      const session = new Session({ id: "s1" });
      session.hooks.on("tool.pre", destructiveCommandGuard(), { name: "command-guard" });
      session.hooks.on("tool.pre", guardHostPaths({ allowedPaths: [ws] }), { name: "path-guard" });
      const verdict = async (tool_name: string, tool_input: Record<string, unknown>) => {
        const answer = await answerClaudeEvent(session, pre(tool_input, tool_name));
        const specific = answer.output.hookSpecificOutput as Record<string, unknown> | undefined;
        return specific?.permissionDecision ?? "none";
      };
      assert.equal(await verdict("Bash", { command: "rm -rf src", description: "x" }), "deny");
      assert.equal(await verdict("Bash", { command: "ls -la src" }), "none");
      assert.equal(await verdict("Read", { file_path: join(ws, "src", "a.ts") }), "none");
      assert.equal(await verdict("Write", { file_path: "/etc/passwd", content: "x" }), "deny");
      assert.equal(
        await verdict("Edit", {
          file_path: join(ws, "..", "elsewhere.ts"),
          old_string: "a",
          new_string: "b",
        }),
        "deny",
      );
      assert.equal(
        await verdict("NotebookEdit", { notebook_path: "/root/n.ipynb", new_source: "x" }),
        "deny",
      );
      assert.equal(await verdict("Grep", { pattern: "secret", path: "/etc" }), "deny");
      assert.equal(await verdict("Grep", { pattern: "TODO", path: join(ws, "src") }), "none");
      assert.equal(await verdict("mcp__files__read", { path: "/etc/shadow" }), "deny");
    } finally {
      rmSync(ws, { recursive: true, force: true });
    }
  });

  it("input that is not an event is a ClaudeEventError", async () => {
    const session = new Session({ id: "s1" });
    for (
      const bad of [
        null,
        [],
        "PreToolUse",
        { ...base },
        { ...base, hook_event_name: "" },
        { ...base, hook_event_name: "PreToolUse", tool_input: {} },
        { ...base, hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: "ls" },
        { ...base, hook_event_name: "UserPromptSubmit" },
      ]
    ) {
      await assert.rejects(answerClaudeEvent(session, bad), ClaudeEventError);
    }
  });
});
