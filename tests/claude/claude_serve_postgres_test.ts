// Two `hookscope serve` processes over one PostgreSQL store answer one Claude Code session's
// events, alternately, as behind a load balancer: every decision lands in that one session, and
// each process gives the same answer for the same event.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServe, stopGroup } from "./_cli.ts";
import { PostgresStore } from "../../store/postgres/mod.ts";
import {
  adminSql,
  assertPostgresAnswers,
  dropSchemas,
  freshSchema,
  PG_URL,
} from "../store/postgres_fixture.ts";

describe("hookscope serve over one PostgreSQL store", () => {
  const admin = adminSql();
  const schema = freshSchema("hs_claude_serve");
  let dir: string;
  let servers: ChildProcess[] = [];
  before(async () => {
    await assertPostgresAnswers(admin);
    dir = realpathSync(mkdtempSync(join(tmpdir(), "hookscope-claude-pg-")));
    const store = await PostgresStore.open(PG_URL, { schema });
    await store.close();
  });
  after(async () => {
    for (const child of servers) stopGroup(child);
    await new Promise((r) => setTimeout(r, 500));
    await dropSchemas(admin, [schema]).catch(() => {});
    await admin.end();
    rmSync(dir, { recursive: true, force: true });
  });

  it("alternating events of one session land in that session; both processes answer alike; an ask on one is answered on the other", async () => {
    const policy = join(dir, "policy.ts");
    writeFileSync(
      policy,
      `export const policy = (session) => session.hooks.on("tool.pre", ({ args }) =>
        /rm\\s+-rf/.test(String(args.command)) ? { decision: "deny", reason: "no rm -rf" }
        : String(args.command).startsWith("git push") ? { decision: "ask", reason: "a person decides" }
        : undefined, { name: "no-rm" });`,
    );
    const db = `${PG_URL}?schema=${schema}`;
    const started = await Promise.all([
      startServe(["--policy", policy, "--db", db]),
      startServe(["--policy", policy, "--db", db]),
    ]);
    servers = started.map((s) => s.child);
    const urls = started.map((s) => s.url);
    const answers: string[] = [];
    for (let i = 0; i < 10; i++) {
      const response = await fetch(`${urls[i % 2]}/claude/hooks`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          session_id: "claude-team-session",
          hook_event_name: "PreToolUse",
          tool_name: "Bash",
          tool_input: { command: i % 3 === 0 ? "rm -rf build" : `ls ${i}` },
          tool_use_id: `toolu_${i}`,
        }),
        signal: AbortSignal.timeout(30_000),
      });
      assert.equal(response.status, 200);
      const body = await response.json();
      answers.push(body.hookSpecificOutput?.permissionDecision ?? "none");
    }
    assert.deepEqual(answers, [
      "deny",
      "none",
      "none",
      "deny",
      "none",
      "none",
      "deny",
      "none",
      "none",
      "deny",
    ]);
    const store = await PostgresStore.open(PG_URL, { schema, migrate: false });
    try {
      // The decisions are written right after each answer: wait (boundedly) for the last ones.
      let decisions: { opId: string; payload: unknown }[] = [];
      for (let tries = 0; tries < 100; tries++) {
        decisions = (await store.listSessionSignals("claude-team-session")).filter((s) =>
          s.kind === "ClaudeHookDecision"
        );
        if (decisions.length === 10) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.deepEqual(
        decisions.map((d) => d.opId).sort(),
        Array.from({ length: 10 }, (_, i) => `toolu_${i}`).sort(),
      );
      assert.ok(await store.getSession("claude-team-session"));

      // An ask answered by one process, its outcome told to the other: the approval is recorded
      // once, from what the store holds.
      const post = (url: string, body: Record<string, unknown>) =>
        fetch(`${url}/claude/hooks`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ session_id: "claude-team-session", ...body }),
          signal: AbortSignal.timeout(30_000),
        }).then((r) => r.json());
      const ask = await post(urls[0], {
        hook_event_name: "PreToolUse",
        tool_name: "Bash",
        tool_input: { command: "git push" },
        tool_use_id: "toolu_push",
      });
      assert.equal(ask.hookSpecificOutput.permissionDecision, "ask");
      let approvals: string[] = [];
      for (let tries = 0; tries < 100 && approvals.length === 0; tries++) {
        approvals = (await store.listSessionSignals("claude-team-session"))
          .filter((s) => s.kind.startsWith("Approval")).map((s) => s.kind);
        if (approvals.length === 0) await new Promise((r) => setTimeout(r, 100));
      }
      assert.deepEqual(approvals, ["ApprovalRequested"]);
      assert.deepEqual(
        await post(urls[1], {
          hook_event_name: "PostToolUse",
          tool_name: "Bash",
          tool_input: { command: "git push" },
          tool_response: "pushed",
          tool_use_id: "toolu_push",
        }),
        {},
      );
      for (let tries = 0; tries < 100 && approvals.length < 2; tries++) {
        approvals = (await store.listSessionSignals("claude-team-session"))
          .filter((s) => s.kind.startsWith("Approval")).map((s) => s.kind);
        if (approvals.length < 2) await new Promise((r) => setTimeout(r, 100));
      }
      assert.deepEqual(approvals, ["ApprovalRequested", "ApprovalAnswered"]);
      assert.equal(
        (await store.listSessions()).filter((s) => s.id === "claude-team-session").length,
        1,
      );
    } finally {
      await store.close();
    }
  });
});
