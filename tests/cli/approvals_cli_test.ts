// hookscope pending / approve / reject / resume against a real SQLite file and the real fixture
// server: a coding-agent run stops on an ask, the CLI lists and answers it, and `resume` (two
// processes at once) finishes the run once. Under Node 20 (no node:sqlite) the commands refuse
// clearly instead.

import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import process from "node:process";
import { main } from "../../cli/main.ts";
import { runCodingAgent } from "../../cli/agent_run.ts";
import { SqliteStore } from "../../store/sqlite/mod.ts";
import {
  jsonReply,
  type OpenAIServer,
  type RecordedRequest,
  type Reply,
  sseReply,
  startOpenAIServer,
  textEvents,
  toolCallEvents,
} from "../fixtures/openai_server.ts";
import { sqliteMissing } from "../fixtures/sqlite_support.ts";
import { Session } from "../../mod.ts";
import { approvalScript, approvalTools, modelFor } from "../session/_approval_agent.ts";

const ROOT = resolve(import.meta.dirname ?? new URL(".", import.meta.url).pathname, "../..");
const DENO = join(ROOT, "node_modules", ".bin", "deno");
const dirs: string[] = [];
const servers: OpenAIServer[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "hookscope-cli-approvals-"));
  dirs.push(dir);
  return dir;
}
after(async () => {
  for (const server of servers) await server.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function run(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (t) => out.push(t), err: (t) => err.push(t) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

function hookscope(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolvePromise, reject) => {
    // Its own process group, so that the timeout kills the deno binary too, not only the npm
    // launcher that runs it.
    const child = spawn(DENO, ["run", "-A", join(ROOT, "cli/main.ts"), ...args], {
      env: { ...process.env, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let out = "";
    let err = "";
    child.stdout!.on("data", (chunk) => (out += String(chunk)));
    child.stderr!.on("data", (chunk) => (err += String(chunk)));
    const timer = setTimeout(() => process.kill(-child.pid!, "SIGKILL"), 90_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolvePromise({ code, out, err });
    });
  });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: string }).code === "EPERM";
  }
}

/** The model: one turn writing notes.md (needs approval), then an answer quoting the tool. */
function script(request: RecordedRequest): Reply {
  const messages = (request.body as { messages: { role: string; content: unknown }[] }).messages;
  const last = messages.at(-1);
  if (last?.role === "tool") {
    return sseReply(textEvents([`Tool said: ${String(last.content)}`]));
  }
  const args = JSON.stringify({ action: "write", filePath: "notes.md", content: "draft\n" });
  return sseReply(
    toolCallEvents([{ index: 0, id: "call_w1", name: "editor", argumentPieces: [args] }]),
  );
}

async function stoppedRun(reply: (request: RecordedRequest) => Reply = script) {
  const server = await startOpenAIServer(reply);
  servers.push(server);
  const dir = tempDir();
  const workspace = join(dir, "ws");
  await import("node:fs").then((fs) => fs.mkdirSync(workspace));
  const db = join(dir, "runs.db");
  const lines: string[] = [];
  const summary = await runCodingAgent({
    baseURL: server.baseURL,
    model: "test-model",
    dbPath: db,
    workspace,
    instruction: "write the notes",
    askBefore: ["editor"],
    io: { out: (t) => lines.push(t), err: (t) => lines.push(t) },
    write: () => {},
  });
  return { server, dir, workspace, db, summary };
}

describe("hookscope approval commands (in-process and subprocess)", () => {
  it("pending, approve, reject and resume print --help and exit 0; usage errors exit 2", async () => {
    for (const command of ["pending", "approve", "reject", "resume"]) {
      const help = await run([command, "--help"]);
      assert.equal(help.code, 0);
      assert.match(help.out, new RegExp(`Usage: hookscope ${command} DB`));
      assert.match(help.out, /--json/);
    }
    const general = await run(["--help"]);
    for (const command of ["pending", "approve", "reject", "resume"]) {
      assert.match(general.out, new RegExp(`\\b${command} DB`));
    }
    assert.equal((await run(["pending"])).code, 2);
    assert.equal((await run(["approve", "x.db"])).code, 2);
    assert.equal((await run(["reject", "x.db", "c1", "extra"])).code, 2);
    assert.equal((await run(["resume", "x.db"])).code, 2);
    assert.equal((await run(["approve", "x.db", "c1", "--args", "{not json"])).code, 2);
    assert.equal((await run(["approve", "x.db", "c1", "--args", "[1]"])).code, 2);
    assert.equal((await run(["approve", "x.db", "c1", "--bogus"])).code, 2);
    assert.equal((await run(["resume", "x.db", "r1", "--base-url", "ftp://x"])).code, 2);
    // --ask-before takes only the agent's tool names: a typo would run that tool without asking.
    for (
      const [value, message] of [
        ["edtor", /unknown tool "edtor"; tools: reader, editor, bash, search/],
        ["reader,,bash", /got an empty name/],
        ["", /got an empty name/],
      ] as const
    ) {
      const bad = await run([
        "run",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--model",
        "m",
        "--ask-before",
        value,
      ]);
      assert.equal(bad.code, 2, value);
      assert.match(bad.err, message);
    }
    const missing = await run(["pending", join(tempDir(), "missing.db")]);
    assert.equal(missing.code, 1);
    assert.match(missing.err, /no file at/);
  });

  if (sqliteMissing) {
    it("the commands refuse clearly where node:sqlite is missing (Node 20)", async () => {
      const server = await startOpenAIServer(script);
      servers.push(server);
      const dir = tempDir();
      await assert.rejects(
        runCodingAgent({
          baseURL: server.baseURL,
          model: "m",
          dbPath: join(dir, "x.db"),
          workspace: dir,
          instruction: "x",
          askBefore: ["editor"],
          io: { out: () => {}, err: () => {} },
          write: () => {},
        }),
        /22\.5/,
      );
    });
    return;
  }

  it("a run stops on an ask; pending lists it; approve --args edits it from the CLI; two resume processes finish it once", async () => {
    const { server, workspace, db, summary } = await stoppedRun();
    assert.equal(summary.status, "waiting_approval");
    assert.equal(summary.pending?.[0].callId, "call_w1");
    const runId = summary.runId!;

    const listed = await run(["pending", db, "--json"]);
    assert.equal(listed.code, 0, listed.err);
    const rows = JSON.parse(listed.out);
    assert.equal(rows.length, 1);
    assert.equal(rows[0].callId, "call_w1");
    assert.equal(rows[0].toolName, "editor");
    assert.equal(rows[0].runId, runId);
    assert.deepEqual(rows[0].args, { action: "write", filePath: "notes.md", content: "draft\n" });
    const table = await run(["pending", db]);
    assert.match(table.out, /CALL\s+TOOL\s+RUN/);
    assert.match(table.out, /call_w1\s+editor/);

    const early = await run(["resume", db, runId]);
    assert.equal(early.code, 1);
    assert.match(early.err, /still waits for answers to call_w1 \(editor\)/);

    const edited = { action: "write", filePath: "notes.md", content: "edited by tester\n" };
    const approved = await run([
      "approve",
      db,
      "call_w1",
      "--args",
      JSON.stringify(edited),
      "--by",
      "tester",
      "--json",
    ]);
    assert.equal(approved.code, 0, approved.err);
    const answer = JSON.parse(approved.out);
    assert.equal(answer.runId, runId);
    assert.deepEqual(answer.answer.updatedArgs, edited);
    assert.equal(answer.answer.by, "tester");
    assert.deepEqual(answer.unanswered, []);
    assert.match((await run(["pending", db])).out, /approve by tester/);
    // The first answer wins: a second one is refused and shows the first.
    const second = await run(["reject", db, "call_w1", "--reason", "late", "--by", "bo"]);
    assert.equal(second.code, 1);
    assert.match(second.err, /answered already: approved by tester at \d{4}-/);
    assert.match(second.err, /already_answered/);
    const columns = await run(["pending", db]);
    assert.match(columns.out, /WHO MAY ANSWER\s+EXPIRES/);
    assert.match(columns.out, /anyone\s+never/);

    const [a, b] = await Promise.all([
      hookscope(["resume", db, runId, "--json"]),
      hookscope(["resume", db, runId, "--json"]),
    ]);
    const codes = [a.code, b.code].sort();
    assert.deepEqual(codes, [0, 1], `${a.err}\n${b.err}`);
    const winner = a.code === 0 ? a : b;
    const loser = a.code === 0 ? b : a;
    assert.match(loser.err, /claimed|not waiting for approval/);
    const result = JSON.parse(winner.out);
    assert.equal(result.stoppedBy, "answer");
    assert.equal(result.turns, 2);
    assert.equal(readFileSync(join(workspace, "notes.md"), "utf8"), "edited by tester\n");
    assert.match(result.answer, /Tool said:/);
    assert.equal(server.requests.length, 2);

    const sessionId = summary.sessionId;
    const shown = await run(["show", db, sessionId]);
    assert.equal(shown.code, 0, shown.err);
    assert.match(
      shown.out,
      /ApprovalRequested\s+ASK editor call call_w1: editor calls need a person's approval/,
    );
    assert.match(shown.out, /ApprovalAnswered\s+APPROVED editor call call_w1 by tester/);
    const json = JSON.parse((await run(["show", db, sessionId, "--json"])).out);
    assert.equal(json.session.status, "completed");
    assert.equal((await run(["pending", db])).out, "no pending approvals");
    const again = await run(["approve", db, "call_w1"]);
    assert.equal(again.code, 1);
    assert.match(again.err, /No pending approval for call "call_w1"/);
  });

  it("run --ask-before stops at the call, prints it with the commands that answer it, and pending lists it", async () => {
    // `hookscope run` first asks GET /models whether the server is up.
    const server = await startOpenAIServer((request) =>
      request.method === "GET" ? jsonReply({ data: [] }) : script(request)
    );
    servers.push(server);
    const dir = tempDir();
    const db = join(dir, "runs.db");
    const result = await run([
      "run",
      "--base-url",
      server.baseURL,
      "--model",
      "m",
      "--workspace",
      dir,
      "--db",
      db,
      "--ask-before",
      " editor ,bash",
      "--prompt",
      "write the notes",
    ]);
    assert.equal(result.code, 0, result.err);
    assert.match(result.out, /waiting_approval: 1 turns/);
    const runId = /run (\S+) waits for a person's answer to:/.exec(result.out)?.[1];
    assert.ok(runId, result.out);
    assert.match(result.out, /call_w1 {2}editor {2}\{"action":"write","filePath":"notes\.md"/);
    assert.match(result.out, new RegExp(`hookscope resume \\S*runs\\.db ${runId}`));
    assert.equal(existsSync(join(dir, "notes.md")), false, "the asked-for call did not run");
    const rows = JSON.parse((await run(["pending", db, "--json"])).out);
    assert.deepEqual(rows.map((r: { callId: string; runId: string }) => [r.callId, r.runId]), [
      ["call_w1", runId],
    ]);
  });

  it("reject --reason reaches the model as the tool's answer when resume runs; show prints the denial", async () => {
    const { server, workspace, db, summary } = await stoppedRun();
    const rejected = await run([
      "reject",
      db,
      "call_w1",
      "--reason",
      "write it by hand",
      "--by",
      "tester",
    ]);
    assert.equal(rejected.code, 0, rejected.err);
    assert.match(rejected.out, /rejected call call_w1 \(editor\)/);
    assert.match(rejected.out, /hookscope resume/);
    const resumed = await run(["resume", db, summary.runId!]);
    assert.equal(resumed.code, 0, resumed.err);
    assert.match(resumed.out, /stopped by answer after 2 turns/);
    const tool = (server.requests[1].body as { messages: Record<string, unknown>[] }).messages
      .find((m) => m.tool_call_id === "call_w1");
    assert.match(String(tool?.content), /write it by hand/);
    assert.throws(() => readFileSync(join(workspace, "notes.md")));
    const shown = await run(["show", db, summary.sessionId]);
    assert.match(
      shown.out,
      /ApprovalAnswered\s+REJECTED editor call call_w1 by tester: write it by hand/,
    );
    assert.match(
      shown.out,
      /ToolDenied\s+DENIED editor call call_w1 by approval by tester: write it by hand/,
    );
    const resumeAgain = await run(["resume", db, summary.runId!]);
    assert.equal(resumeAgain.code, 1);
    assert.match(resumeAgain.err, /not waiting for approval/);
    assert.equal((await run(["resume", db, "no-such-run"])).code, 1);
  });

  it("release takes back the claim of a resume process that was killed; resume then finishes the run", async () => {
    // The first model request after the approval hangs, so the resuming process is stopped after
    // its claim, with the approved call already run; it is then killed (SIGKILL).
    let afterTool = 0;
    const { server, workspace, db, summary } = await stoppedRun((request) => {
      const messages = (request.body as { messages: { role: string }[] }).messages;
      if (messages.at(-1)?.role === "tool" && afterTool++ === 0) return { kind: "hang" };
      return script(request);
    });
    const runId = summary.runId!;
    assert.equal((await run(["approve", db, "call_w1", "--by", "tester"])).code, 0);
    // Its own process group: node_modules/.bin/deno is a Node launcher that runs the deno binary
    // as a child, and both must die.
    const child = spawn(DENO, ["run", "-A", join(ROOT, "cli/main.ts"), "resume", db, runId], {
      env: { ...process.env, NO_COLOR: "1" },
      stdio: ["ignore", "ignore", "ignore"],
      detached: true,
    });
    const exited = new Promise<void>((resolveExit) => child.once("exit", () => resolveExit()));
    try {
      const deadline = Date.now() + 60_000;
      while (server.requests.length < 2) {
        assert.ok(Date.now() < deadline, "the resume process never called the model");
        await new Promise((resolveWait) => setTimeout(resolveWait, 20));
      }
    } finally {
      process.kill(-child.pid!, "SIGKILL");
      await exited;
    }
    // The claim names the process that made it (the deno binary); wait until it is gone.
    const owner = await SqliteStore.open(db).then(async (store) => {
      try {
        return (await store.getRun(runId))?.owner ?? "";
      } finally {
        await store.close();
      }
    });
    const claimerPid = Number(/pid (\d+)/.exec(owner)?.[1]);
    assert.ok(claimerPid > 0, owner);
    for (let i = 0; i < 500 && isAlive(claimerPid); i++) {
      await new Promise((resolveWait) => setTimeout(resolveWait, 20));
    }
    assert.equal(isAlive(claimerPid), false, "the killed resume process is gone");
    const stuck = await run(["resume", db, runId]);
    assert.equal(stuck.code, 1);
    assert.match(stuck.err, /status running, claimed by hookscope resume \(pid \d+ on [^)]+\)/);
    assert.match(stuck.err, /hookscope release/);

    const released = await run(["release", db, runId]);
    assert.equal(released.code, 0, released.err);
    assert.match(
      released.out,
      /released run \S+ \(claimed by hookscope resume \(pid \d+ on [^)]+\) at /,
    );
    assert.match(released.out, /ran, result stored, not run again: call_w1 \(editor\)/);
    assert.doesNotMatch(released.out, /will run on resume/);
    const twice = await run(["release", db, runId]);
    assert.equal(twice.code, 1);
    assert.match(twice.err, /is not claimed \(status waiting_approval\); nothing to release/);
    assert.equal((await run(["pending", db, "--json"])).code, 0);

    const resumed = await run(["resume", db, runId, "--json"]);
    assert.equal(resumed.code, 0, resumed.err);
    assert.equal(JSON.parse(resumed.out).stoppedBy, "answer");
    assert.equal(readFileSync(join(workspace, "notes.md"), "utf8"), "draft\n");
    assert.equal(server.requests.length, 3);
    // The killed process had run the call and stored its result: it is not run again, and the
    // model sees it once.
    const tools = (server.requests[2].body as { messages: Record<string, unknown>[] }).messages
      .filter((m) => m.role === "tool");
    assert.deepEqual(tools.map((m) => m.tool_call_id), ["call_w1"]);
    assert.match(String(tools[0].content), /"success":true/);

    // A claim by a resume process that still runs here (this test's own process stands in for
    // it) is refused without --force.
    const claimer = `hookscope resume (pid ${process.pid} on ${hostname()})`;
    const store = await SqliteStore.open(db);
    try {
      // The finished run is put back to waiting so that the stand-in can claim it.
      await store.saveRun({ ...(await store.getRun(runId))!, status: "waiting_approval" });
      assert.equal(await store.claimRun(runId, claimer), true);
    } finally {
      await store.close();
    }
    const alive = await run(["release", db, runId]);
    assert.equal(alive.code, 1);
    assert.match(alive.err, new RegExp(`process ${process.pid} still runs on this machine`));
    const forced = await run(["release", db, runId, "--force", "--json"]);
    assert.equal(forced.code, 0, forced.err);
    const json = JSON.parse(forced.out);
    assert.equal(json.runId, runId);
    assert.equal(json.releasedOwner, claimer);
    assert.equal(json.status, "waiting_approval");
    // The run put back from "completed" has no pending calls, so none is listed either way.
    assert.deepEqual([json.resultStored, json.runAgain], [[], []]);

    assert.equal((await run(["release", db])).code, 2);
    assert.equal((await run(["release", db, "no-such-run"])).code, 1);
    const help = await run(["release", "--help"]);
    assert.match(help.out, /Usage: hookscope release DB RUN_ID/);
    assert.match((await run(["--help"])).out, /release DB RUN_ID/);
  });

  it("demo --answer reject: the second process rejects, the resumed run tells the model and writes nothing", async () => {
    const dir = tempDir();
    const db = join(dir, "demo.db");
    const result = await new Promise<{ code: number | null; out: string; err: string }>(
      (resolvePromise, reject) => {
        const child = spawn(
          DENO,
          ["run", "-A", join(ROOT, "cli/main.ts"), "demo", "--db", db, "--answer", "reject"],
          { cwd: dir, env: { ...process.env, NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"] },
        );
        let out = "";
        let err = "";
        child.stdout!.on("data", (chunk) => (out += String(chunk)));
        child.stderr!.on("data", (chunk) => (err += String(chunk)));
        const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
        child.on("error", reject);
        child.on("close", (code) => {
          clearTimeout(timer);
          resolvePromise({ code, out, err });
        });
      },
    );
    assert.equal(result.code, 0, result.err);
    assert.match(result.out, /\$\s+hookscope reject .* --reason /);
    assert.match(
      result.out,
      /│ rejected call call_\w+ \(editor\) of run [0-9a-f-]{36} as demo-reviewer/,
    );
    assert.match(
      result.out,
      /│ .*answer\s+call_\w+ editor: rejected by demo-reviewer \(the reviewer wants/,
    );
    assert.doesNotMatch(result.out, /│ .*tool\.post editor/);
    assert.match(result.out, /completed: 6 turns/);
    const sessionId = /session ([0-9a-f-]{36}) completed/.exec(result.out)![1];
    const shown = await run(["show", db, sessionId]);
    assert.match(shown.out, /ToolDenied\s+DENIED editor .* by approval by demo-reviewer/);
  });

  it("a run of an application whose hook set expiry and answerers: pending shows them, approve enforces them and does not suggest hookscope resume", async () => {
    const server = await startOpenAIServer(approvalScript());
    servers.push(server);
    const dir = tempDir();
    const db = join(dir, "app.db");
    const store = await SqliteStore.open(db);
    try {
      const session = new Session({ store, model: modelFor(server.baseURL), defaultBranch: false });
      const branch = session.newBranch({
        model: modelFor(server.baseURL),
        tools: approvalTools(join(dir, "notes.log")),
      });
      let terms: Record<string, unknown> = { expiresInMs: 3_600_000, answerableBy: ["ana", "bo"] };
      session.hooks.on(
        "tool.pre",
        ({ toolName }) =>
          toolName === "note" ? { decision: "ask", reason: "notes", ...terms } : undefined,
        { name: "notes-policy" },
      );
      await session.start();
      const first = await branch.operate("take a note");
      terms = { expiresInMs: 30 };
      const second = await branch.operate("take another note");
      await new Promise((resolveWait) => setTimeout(resolveWait, 80));

      const rows = JSON.parse((await run(["pending", db, "--json"])).out);
      const byRun = (runId: string) => rows.find((r: { runId: string }) => r.runId === runId);
      assert.deepEqual(byRun(first.runId).answerableBy, ["ana", "bo"]);
      assert.ok(byRun(first.runId).expiresAt > Date.now());
      assert.ok(byRun(second.runId).expiresAt <= Date.now());
      const table = (await run(["pending", db])).out;
      assert.match(table, /note_1\s+note\s+.*ana, bo\s+\d{4}-\d\d-\d\d[ T][\d:]+/);
      assert.match(table, /note_2\s+note\s+.*anyone\s+\S.*\(expired\)/);

      const stranger = await run(["approve", db, "note_1", "--by", "mallory"]);
      assert.equal(stranger.code, 1);
      assert.match(
        stranger.err,
        /"mallory" may not answer it; who may: "ana", "bo" \(refused: not_allowed\)/,
      );
      const late = await run(["approve", db, "note_2", "--by", "ana"]);
      assert.equal(late.code, 1);
      assert.match(late.err, /the approval expired at .* \(refused: expired\)/);

      const approved = await run(["approve", db, "note_1", "--by", "bo"]);
      assert.equal(approved.code, 0, approved.err);
      assert.doesNotMatch(approved.out, /hookscope resume/);
      assert.match(approved.out, /the application that started it resumes it/);
      const again = await run(["reject", db, "note_1", "--by", "ana", "--reason", "no"]);
      assert.equal(again.code, 1);
      assert.match(again.err, /answered already: approved by bo at \d{4}-/);
      // show prints the answers as they were stored or refused, with who gave them.
      const shown = (await run(["show", db, session.id])).out;
      assert.match(
        shown,
        /ApprovalRefused\s+ANSWER REFUSED \(not_allowed\) approve call note_1 by mallory/,
      );
      assert.match(
        shown,
        /ApprovalRefused\s+ANSWER REFUSED \(expired\) approve call note_2 by ana/,
      );
      assert.match(shown, /ApprovalAccepted\s+ANSWER STORED approve note call note_1 by bo/);
      assert.match(
        shown,
        /ApprovalRefused\s+ANSWER REFUSED \(already_answered\) reject call note_1 by ana/,
      );
    } finally {
      await store.close();
    }
  });
});
