// Approvals across OS processes, end to end against the real fixture server and a real SQLite
// file: a run stops on an ask in this process; a second process restores the session from the
// file and resumes it with edited arguments; two processes resuming at once run the call once; a
// rejection from another process reaches the model; everything is in the store in order.
// Under Node 20 (no node:sqlite) the SQLite store refuses clearly instead.

import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import process from "node:process";
import { Session } from "../../mod.ts";
import { SqliteStore, StoreUnavailableError } from "../../store/sqlite/mod.ts";
import { type OpenAIServer, startOpenAIServer } from "../fixtures/openai_server.ts";
import { sqliteMissing } from "../fixtures/sqlite_support.ts";
import {
  approvalScript,
  approvalTools,
  askBeforeNotes,
  messagesOf,
  modelFor,
} from "./_approval_agent.ts";

const HERE = resolve(import.meta.dirname ?? new URL(".", import.meta.url).pathname);
const CHILD = join(HERE, "_approval_child.ts");
const dir = mkdtempSync(join(tmpdir(), "hookscope-approval-proc-"));
let counter = 0;

/** How this runtime runs a TypeScript file as a new process. */
function childCommand(): string[] {
  if ("Deno" in globalThis) return ["run", "-A", CHILD];
  if ("Bun" in globalThis) return [CHILD];
  const keep = process.execArgv.filter((a) => a.startsWith("--experimental"));
  return [...keep, "--import", "tsx", CHILD];
}

interface ChildOutcome {
  code: number | null;
  output: Record<string, unknown>;
  stderr: string;
}

function runChild(env: Record<string, string>): Promise<ChildOutcome> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, childCommand(), {
      cwd: resolve(HERE, "../.."),
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (chunk) => (stdout += String(chunk)));
    child.stderr!.on("data", (chunk) => (stderr += String(chunk)));
    const timer = setTimeout(() => child.kill("SIGKILL"), 90_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      const line = stdout.trim().split("\n").filter((l) => l.startsWith("{")).at(-1);
      resolvePromise({ code, output: line ? JSON.parse(line) : {}, stderr: stderr + stdout });
    });
  });
}

interface Stopped {
  path: string;
  log: string;
  server: OpenAIServer;
  sessionId: string;
  runId: string;
  callId: string;
}

/** This process: a session on a fresh SQLite file runs until the ask stops it. */
async function stopOnAsk(): Promise<Stopped> {
  counter += 1;
  const path = join(dir, `approvals-${counter}.db`);
  const log = join(dir, `notes-${counter}.log`);
  const server = await startOpenAIServer(approvalScript());
  const store = await SqliteStore.open(path);
  try {
    const session = new Session({ store, model: modelFor(server.baseURL), defaultBranch: false });
    const branch = session.newBranch({
      model: modelFor(server.baseURL),
      tools: approvalTools(log),
    });
    askBeforeNotes(session);
    await session.start();
    const result = await branch.operate("take a note");
    await session.drainSignals();
    assert.equal(result.stoppedBy, "approval");
    assert.deepEqual(readNotes(log), []);
    return {
      path,
      log,
      server,
      sessionId: session.id,
      runId: result.runId,
      callId: result.pending![0].callId,
    };
  } finally {
    await store.close();
  }
}

function readNotes(log: string): unknown[] {
  if (!existsSync(log)) return [];
  return readFileSync(log, "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));
}

function childEnv(stopped: Stopped, answers: unknown, extra: Record<string, string> = {}) {
  return {
    DB: stopped.path,
    SESSION: stopped.sessionId,
    RUN: stopped.runId,
    BASE_URL: stopped.server.baseURL,
    LOG: stopped.log,
    ANSWERS: JSON.stringify(answers),
    ...extra,
  };
}

if (sqliteMissing) {
  describe("approvals across processes on Node without node:sqlite", () => {
    after(() => rmSync(dir, { recursive: true, force: true }));
    it("SqliteStore.open() rejects with a StoreUnavailableError naming Node 22.5", async () => {
      await assert.rejects(SqliteStore.open(join(dir, "x.db")), (error: unknown) => {
        assert.ok(error instanceof StoreUnavailableError);
        assert.match(error.message, /Node >= 22\.5/);
        return true;
      });
    });
  });
} else {
  describe("approvals across processes (SQLite file, fixture server)", () => {
    const servers: OpenAIServer[] = [];
    after(async () => {
      for (const server of servers) await server.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it("a second process restores the session, approves with edited arguments and resumes: the tool runs once with them, and the store holds everything in order", async () => {
      const stopped = await stopOnAsk();
      servers.push(stopped.server);
      const child = await runChild(
        childEnv(stopped, {
          [stopped.callId]: {
            approve: true,
            updatedArgs: { text: "edited by alice" },
            by: "alice",
          },
        }),
      );
      assert.equal(child.code, 0, child.stderr);
      assert.equal(child.output.stoppedBy, "answer");
      assert.equal(child.output.turns, 2);
      assert.deepEqual(readNotes(stopped.log), [{ text: "edited by alice" }]);
      assert.equal(stopped.server.requests.length, 2);
      const tool = messagesOf(stopped.server, 1).find((m) => m.tool_call_id === stopped.callId);
      assert.deepEqual(JSON.parse(String(tool?.content)), { saved: "edited by alice" });

      const store = await SqliteStore.open(stopped.path, { readOnly: true });
      try {
        const run = await store.getRun(stopped.runId);
        assert.equal(run?.status, "completed");
        assert.equal(run?.stoppedBy, "answer");
        assert.match(String(run?.owner), /^child-\d+$/);
        assert.equal(run?.answers[stopped.callId]?.by, "alice");
        const messages = await store.listMessages({ sessionId: stopped.sessionId });
        assert.deepEqual(messages.map((m) => m.role), [
          "user",
          "assistant",
          "action_request",
          "action_response",
          "action_request",
          "action_response",
          "assistant",
        ]);
        const noteRequest = messages[4].content as { callId: string; arguments: unknown };
        assert.equal(noteRequest.callId, stopped.callId);
        const noteResponse = messages[5].content as { output: unknown };
        assert.deepEqual(noteResponse.output, { saved: "edited by alice" });
        const signals = await store.listSessionSignals(stopped.sessionId);
        const seqs = signals.map((s) => s.seq);
        assert.deepEqual(seqs, [...seqs].sort((a, b) => a - b));
        const kinds = signals.map((s) => s.kind);
        const asked = kinds.indexOf("ApprovalRequested");
        const answered = kinds.indexOf("ApprovalAnswered");
        assert.ok(asked >= 0 && answered > asked, kinds.join(","));
        const data = signals[answered].payload.data as Record<string, unknown>;
        assert.equal(data.by, "alice");
        assert.equal(data.approve, true);
        assert.deepEqual(data.updatedArgs, { text: "edited by alice" });
        assert.deepEqual(await store.listPendingApprovals(), []);
      } finally {
        await store.close();
      }
    });

    it("two processes resuming the same run at once run the approved call once; the other is refused", async () => {
      const stopped = await stopOnAsk();
      servers.push(stopped.server);
      const go = join(dir, `go-${counter}`);
      const answers = { [stopped.callId]: { approve: true, by: "bob" } };
      const both = Promise.all([
        runChild(childEnv(stopped, answers, { WAIT_FOR: go, READY: `${go}.1`, OWNER: "first" })),
        runChild(childEnv(stopped, answers, { WAIT_FOR: go, READY: `${go}.2`, OWNER: "second" })),
      ]);
      // Once both children have restored the session, start them together.
      const deadline = Date.now() + 60_000;
      while (!(existsSync(`${go}.1`) && existsSync(`${go}.2`)) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 10));
      }
      writeFileSync(go, "go");
      const outcomes = await both;
      const codes = outcomes.map((o) => o.code).sort();
      assert.deepEqual(codes, [0, 3], outcomes.map((o) => o.stderr).join("\n"));
      const refused = outcomes.find((o) => o.code === 3)!;
      assert.match(String(refused.output.refused), /claimed|not_waiting|already_answered/);
      assert.deepEqual(readNotes(stopped.log), [{ text: "draft 1" }]);
      const store = await SqliteStore.open(stopped.path, { readOnly: true });
      try {
        const run = await store.getRun(stopped.runId);
        assert.equal(run?.status, "completed");
        const winner = outcomes.find((o) => o.code === 0)!;
        assert.ok(["first", "second"].includes(String(run?.owner)), String(run?.owner));
        assert.equal(winner.output.stoppedBy, "answer");
        const notes = (await store.listMessages({ sessionId: stopped.sessionId }))
          .filter((m) =>
            m.role === "action_response" && (m.content as { function: string }).function === "note"
          );
        assert.equal(notes.length, 1);
      } finally {
        await store.close();
      }
    });

    it("a rejection from another process reaches the model as a tool message with the reason", async () => {
      const stopped = await stopOnAsk();
      servers.push(stopped.server);
      const child = await runChild(
        childEnv(stopped, {
          [stopped.callId]: { approve: false, reason: "no notes on Sundays", by: "carol" },
        }),
      );
      assert.equal(child.code, 0, child.stderr);
      assert.equal(child.output.stoppedBy, "answer");
      assert.deepEqual(readNotes(stopped.log), []);
      const tool = messagesOf(stopped.server, 1).find((m) => m.tool_call_id === stopped.callId);
      assert.ok(tool, "the rejected call is answered with a tool message");
      assert.match(String(tool.content), /no notes on Sundays/);
      assert.match(String(child.output.answer), /no notes on Sundays/);
      const store = await SqliteStore.open(stopped.path, { readOnly: true });
      try {
        const kinds = (await store.listSessionSignals(stopped.sessionId)).map((s) => s.kind);
        assert.ok(kinds.includes("ToolDenied"), kinds.join(","));
        assert.ok(kinds.indexOf("ApprovalAnswered") > kinds.indexOf("ApprovalRequested"));
      } finally {
        await store.close();
      }
    });

    it("a resume killed with SIGKILL after the tool ran: after release the call is interrupted and runs again only on a new answer", async () => {
      const stopped = await stopOnAsk();
      servers.push(stopped.server);
      const owner = "doomed-resumer";
      const child = spawn(process.execPath, childCommand(), {
        cwd: resolve(HERE, "../.."),
        env: {
          ...process.env,
          ...childEnv(stopped, { [stopped.callId]: { approve: true, by: "ana" } }, {
            HANG_AFTER_NOTE: "1",
            OWNER: owner,
          }),
        },
        stdio: ["ignore", "ignore", "ignore"],
      });
      const exited = new Promise<void>((done) => child.once("exit", () => done()));
      try {
        const deadline = Date.now() + 60_000;
        while (readNotes(stopped.log).length === 0) {
          assert.ok(Date.now() < deadline, "the resume never ran the tool");
          await new Promise((wait) => setTimeout(wait, 10));
        }
      } finally {
        child.kill("SIGKILL");
        await exited;
      }
      assert.deepEqual(readNotes(stopped.log), [{ text: "draft 1" }]);
      const store = await SqliteStore.open(stopped.path);
      try {
        assert.equal((await store.getRun(stopped.runId))?.owner, owner);
        assert.equal(await store.releaseRun(stopped.runId, owner), true);
        const [row] = await store.listPendingApprovals({ runId: stopped.runId });
        assert.equal(row.interrupted, true);
        assert.equal(row.answer, undefined);
      } finally {
        await store.close();
      }
      // Without a person's word nothing runs.
      const refused = await runChild(childEnv(stopped, {}));
      assert.equal(refused.code, 3, refused.stderr);
      assert.equal(refused.output.refused, "unanswered");
      assert.deepEqual(readNotes(stopped.log), [{ text: "draft 1" }]);
      // A person decides it may run again.
      const again = await runChild(
        childEnv(stopped, { [stopped.callId]: { approve: true, by: "ana" } }),
      );
      assert.equal(again.code, 0, again.stderr);
      assert.equal(again.output.stoppedBy, "answer");
      assert.deepEqual(readNotes(stopped.log), [{ text: "draft 1" }, { text: "draft 1" }]);
    });
  });
}
