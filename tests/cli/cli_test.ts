import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { main } from "../../cli/main.ts";
import { SqliteStore } from "../../store/sqlite/mod.ts";
import { jsonReply, startOpenAIServer } from "../fixtures/openai_server.ts";

const ROOT = resolve(import.meta.dirname ?? new URL(".", import.meta.url).pathname, "../..");
const DENO = join(ROOT, "node_modules", ".bin", "deno");
const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "hookscope-cli-"));
  dirs.push(dir);
  return dir;
}
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function run(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (t) => out.push(t), err: (t) => err.push(t) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

/** SQLite needs node:sqlite (Deno, Node ≥ 22.5) or bun:sqlite; Node 20 has neither. */
async function sqliteAvailable(): Promise<boolean> {
  try {
    const store = await SqliteStore.open(":memory:");
    await store.close();
    return true;
  } catch (error) {
    assert.match(String((error as Error).message), /22\.5/);
    return false;
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

describe("hookscope demo (subprocess)", () => {
  it("runs offline, prints the timeline, and persists the session to the SQLite file it names", async () => {
    const dir = tempDir();
    const db = join(dir, "demo.db");
    const result = spawnSync(DENO, ["run", "-A", join(ROOT, "cli/main.ts"), "demo", "--db", db], {
      cwd: dir,
      encoding: "utf8",
      timeout: 120_000,
      env: { ...process.env, NO_COLOR: "1" },
    });
    assert.equal(result.status, 0, result.stderr);
    const out = result.stdout;
    for (
      const expected of [
        /scripted model at http:\/\/127\.0\.0\.1:\d+\/v1/,
        /session\s+start /,
        /api\s+pre_call hookscope-demo/,
        /model\s+▸ Let me look around the workspace first\./,
        /tool\.pre reader/,
        // The demo writes directly (effects: "direct"), and says so.
        /effects\s+DIRECT: commands write straight into the workspace, the command judge blocks \(sandbox\.effects is "direct"\)/,
        /DENIED\s+bash by guardDestructive: Blocked destructive command: rm -rf build/,
        /BLOCKED\s+reader by tool\.pre: reader may not touch secrets/,
        /persist\s+message assistant/,
        /── approval: run [0-9a-f-]{36} stopped, waiting for a person ──/,
        /\$\s+hookscope pending /,
        /│ call_\w+\s+editor\s+[0-9a-f-]{36}/,
        /\$\s+hookscope approve .* --by demo-reviewer --args /,
        /│ approved call call_\w+ \(editor\) of run [0-9a-f-]{36} as demo-reviewer/,
        /\$\s+hookscope resume /,
        /│ .*answer\s+call_\w+ editor: approved by demo-reviewer with/,
        /│ .*tool\.post editor/,
        /│ run [0-9a-f-]{36} stopped by answer after 6 turns/,
        /completed: 6 turns, 2 blocked tool calls/,
      ]
    ) assert.match(out, expected);
    assert.ok(out.includes(`persisted to ${db}`));
    const sessionId = /session ([0-9a-f-]{36}) completed/.exec(out)![1];

    const listed = spawnSync(DENO, [
      "run",
      "-A",
      join(ROOT, "cli/main.ts"),
      "sessions",
      db,
      "--json",
    ], {
      encoding: "utf8",
    });
    assert.equal(listed.status, 0, listed.stderr);
    const sessions = JSON.parse(listed.stdout);
    assert.equal(sessions.length, 1);
    assert.equal(sessions[0].id, sessionId);
    assert.equal(sessions[0].status, "completed");
    assert.equal(sessions[0].model, "hookscope-demo");

    const shown = spawnSync(DENO, [
      "run",
      "-A",
      join(ROOT, "cli/main.ts"),
      "show",
      db,
      sessionId,
      "--json",
    ], {
      encoding: "utf8",
    });
    assert.equal(shown.status, 0, shown.stderr);
    const timeline = JSON.parse(shown.stdout);
    const roles = timeline.messages.map((m: { role: string }) => m.role);
    assert.deepEqual(roles.slice(0, 3), ["system", "user", "assistant"]);
    assert.equal(roles.at(-1), "assistant");
    assert.equal(roles.filter((r: string) => r === "action_request").length, 6);
    const created = timeline.messages.map((m: { createdAt: number }) => m.createdAt);
    assert.deepEqual(
      created,
      [...created].sort((a: number, b: number) => a - b),
      "messages in order",
    );
    const seqs = timeline.signals.map((s: { seq: number }) => s.seq);
    assert.deepEqual(seqs, [...seqs].sort((a: number, b: number) => a - b), "signals in sequence");
    const kinds = timeline.signals.map((s: { kind: string }) => s.kind);
    assert.ok(kinds.includes("HookBlocked"), "the blocked call is persisted");
    const points = timeline.signals
      .filter((s: { kind: string }) => s.kind === "HookSignal")
      .map((s: { payload: { point: string } }) => s.payload.point);
    for (
      const point of [
        "session.start",
        "branch.create",
        "tool.pre",
        "tool.post",
        "api.pre_call",
        "api.post_call",
        "session.end",
      ]
    ) {
      assert.ok(points.includes(point), `${point} persisted`);
    }
    // A security hook's denial is a denial like any other: ToolDenied, not tool.error.
    const denied = timeline.signals.find((s: { kind: string }) => s.kind === "ToolDenied");
    assert.equal(denied.payload.data.toolName, "bash");
    assert.equal(denied.payload.data.hook, "guardDestructive");
    assert.match(denied.payload.data.reason, /Destructive command \(recursive delete/);
    assert.ok(kinds.indexOf("ApprovalRequested") >= 0, "the ask is persisted");
    const answered = timeline.signals.find((s: { kind: string }) => s.kind === "ApprovalAnswered");
    assert.equal(answered.payload.data.by, "demo-reviewer");
    assert.equal(answered.payload.data.approve, true);
    const write = timeline.messages.find((m: { role: string; content: { function?: string } }) =>
      m.role === "action_request" && m.content.function === "editor"
    );
    assert.match(write.content.arguments.content, /Reviewed by demo-reviewer before writing/);
    const blocked = timeline.signals.find((s: { kind: string }) => s.kind === "HookBlocked");
    assert.equal(blocked.payload.toolName, "reader");
    assert.match(blocked.payload.error.message, /secrets/);

    if (await sqliteAvailable()) {
      const store = await SqliteStore.open(db, { readOnly: true });
      try {
        assert.equal((await store.getSession(sessionId))?.status, "completed");
        assert.equal((await store.listMessages({ sessionId })).length, timeline.messages.length);
      } finally {
        await store.close();
      }
    }
    assert.deepEqual(readdirSync(dir).filter((f) => !f.startsWith("demo.db")), []);
  });
});

describe("hookscope (in-process)", () => {
  it("prints --help for every subcommand and exits 0", async () => {
    for (const command of ["demo", "run", "sessions", "show", "points"]) {
      const result = await run([command, "--help"]);
      assert.equal(result.code, 0);
      assert.match(result.out, new RegExp(`Usage: hookscope ${command}`));
    }
    assert.equal((await run(["--help"])).code, 0);
    assert.equal((await run([])).code, 2);
  });

  it("rejects unknown commands and flags with exit code 2", async () => {
    const unknown = await run(["frobnicate"]);
    assert.equal(unknown.code, 2);
    assert.match(unknown.err, /unknown command "frobnicate"/);
    const flag = await run(["points", "--colour"]);
    assert.equal(flag.code, 2);
    assert.match(flag.err, /Unknown option '--colour'/);
    const missing = await run(["show", "only-one-arg"]);
    assert.equal(missing.code, 2);
  });

  it("points lists all twelve points with wiring status", async () => {
    const table = await run(["points"]);
    assert.equal(table.code, 0);
    assert.match(table.out, /artifact\.created\s+no\s+no\s+reserved/);
    assert.match(table.out, /tool\.pre\s+yes\s+yes/);
    const json = JSON.parse((await run(["points", "--json"])).out);
    assert.equal(json.length, 12);
  });

  it("a missing or corrupt database file is a clear error with exit code 1", async () => {
    const dir = tempDir();
    const missing = await run(["sessions", join(dir, "nope.db")]);
    assert.equal(missing.code, 1);
    assert.match(missing.err, /no file at/);
    const corrupt = join(dir, "corrupt.db");
    writeFileSync(corrupt, "this is not a database, just text ".repeat(200));
    const bad = await run(["show", corrupt, "s1"]);
    assert.equal(bad.code, 1);
    assert.match(bad.err, /Cannot open database .*corrupt\.db/);
    assert.equal((await run(["sessions", dir])).code, 1);
  });

  it("run rejects a bad URL (2) and reports a server that is down (1)", async () => {
    const bad = await run(["run", "--base-url", "not a url", "--model", "m"]);
    assert.equal(bad.code, 2);
    assert.match(bad.err, /is not a URL/);
    const ftp = await run(["run", "--base-url", "ftp://127.0.0.1/v1", "--model", "m"]);
    assert.equal(ftp.code, 2);
    const noModel = await run(["run", "--base-url", "http://127.0.0.1:1/v1"]);
    assert.equal(noModel.code, 2);
    const port = await freePort();
    const down = await run([
      "run",
      "--base-url",
      `http://127.0.0.1:${port}/v1`,
      "--model",
      "m",
      "--workspace",
      tempDir(),
    ]);
    assert.equal(down.code, 1);
    assert.match(
      down.err,
      new RegExp(`Cannot reach the model server at http://127\\.0\\.0\\.1:${port}/v1`),
    );
  });

  it("run drives the agent against a real OpenAI-compatible server and persists the session", async () => {
    const server = await startOpenAIServer((request) => {
      if (request.method === "GET") return jsonReply({ data: [] });
      return {
        kind: "sse",
        events: [
          { choices: [{ index: 0, delta: { content: "All " }, finish_reason: null }] },
          { choices: [{ index: 0, delta: { content: "good." }, finish_reason: "stop" }] },
        ],
      };
    });
    try {
      const dir = tempDir();
      const db = join(dir, "runs.db");
      const result = await run([
        "run",
        "--base-url",
        server.baseURL,
        "--model",
        "local-model",
        "--workspace",
        dir,
        "--db",
        db,
        "--prompt",
        "say hi",
      ]);
      if (await sqliteAvailable()) {
        assert.equal(result.code, 0, result.err);
        assert.match(result.out, /All\s+good\./);
        assert.match(result.out, /completed: 1 turns/);
        const post = server.requests.find((r) => r.method === "POST")!;
        assert.equal((post.body as { model: string }).model, "local-model");
      } else {
        assert.equal(result.code, 1);
        assert.match(result.err, /22\.5/);
      }
    } finally {
      await server.close();
    }
  });
});
