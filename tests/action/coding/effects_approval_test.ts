// A tool.effects ask goes through the call's approval path, like a tool.pre ask: inline through
// act()'s approve, or as a pending approval (ApprovalRequested, the run record, resume) whose
// staged layer is kept outside the workspace until it is answered or expires. Real bubblewrap,
// real overlayfs, a real SQLite store; the resume also runs in a second OS process.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import process from "node:process";
import { detectSandbox } from "../../../action/coding/mod.ts";
import {
  type ApprovalHandler,
  type PendingApproval,
  RunNotResumableError,
  Session,
} from "../../../session/mod.ts";
import { ApprovalConflictError } from "../../../store/store_errors.ts";
import { SqliteStore } from "../../../store/sqlite/mod.ts";
import { effectsStore } from "../../../action/coding/_commit.ts";
import { makeSandbox, type Result, type Sandbox, treeHash } from "./_helpers.ts";
import { bashModel, codingBranch } from "./_effects_agent.ts";
import { main } from "../../../cli/main.ts";

async function cli(args: string[]): Promise<{ code: number; text: string }> {
  const lines: string[] = [];
  const io = { out: (t: string) => lines.push(t), err: (t: string) => lines.push(t) };
  const code = await main(args, io);
  return { code, text: lines.join("\n") };
}

const CHILD = fileURLToPath(new URL("./_effects_resume_child.ts", import.meta.url));

function fill(ws: string): void {
  rmSync(ws, { recursive: true, force: true });
  mkdirSync(join(ws, "victim", "sub"), { recursive: true });
  writeFileSync(join(ws, "victim", "file"), "precious\n".repeat(20));
  writeFileSync(join(ws, "victim", "sub", "deep.txt"), "precious too\n");
  writeFileSync(join(ws, "notes.md"), "# notes\n");
}

// A command whose effects differ on every run: a random token, and the deletion the preset asks
// about. Had it run again, the token would differ from the one in the change set approved.
const TOKEN_AND_DELETE = "head -c 12 /dev/urandom | base64 > token.txt && rm -r victim";

function kinds(signals: readonly { kind: string }[]): string[] {
  return signals.map((s) => s.kind).filter((k) =>
    k.startsWith("Effects") || k.startsWith("Approval")
  );
}

function pendingDir(state: string, ws: string): string {
  return join(effectsStore(state, ws).dir, "pending");
}

function keptToken(state: string, ws: string): string {
  const dir = pendingDir(state, ws);
  const [key] = readdirSync(dir);
  return readFileSync(join(dir, key, "upper", "token.txt"), "utf8");
}

function runChild(
  env: Record<string, string>,
): Promise<{ code: number | null; output: Record<string, unknown>; stderr: string }> {
  const g = globalThis as { Deno?: unknown; Bun?: unknown };
  const argv = g.Deno
    ? [process.execPath, "run", "-A", CHILD]
    : g.Bun
    ? [process.execPath, CHILD]
    : [process.execPath, "--import", "tsx", CHILD];
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      const line = stdout.trim().split("\n").filter((l) => l.startsWith("{")).at(-1);
      resolve({ code, output: line ? JSON.parse(line) : {}, stderr: stderr + stdout });
    });
  });
}

describe("a change-set ask goes through the approval path", () => {
  let box: Sandbox;
  before(async () => {
    const info = await detectSandbox();
    assert.equal(info.kind, "bubblewrap", `bubblewrap must be installed: ${info.reason}`);
    assert.equal(info.effects, "overlay", `overlayfs must mount: ${info.effectsReason}`);
    box = makeSandbox();
  });
  after(() => box?.cleanup());

  it("act()'s approve sees the change set; an approval commits it and the signals record it all", async () => {
    const ws = join(box.base, "inline");
    const state = join(box.base, "inline-state");
    fill(ws);
    cpSync(ws, join(box.base, "inline-copy"), { recursive: true });
    let sessionId = "";
    const store = await SqliteStore.open(join(box.base, "inline.db"));
    try {
      const session = new Session({ store });
      await session.start();
      const branch = codingBranch(session, ws, state);
      const asked: PendingApproval[] = [];
      let answer: ReturnType<ApprovalHandler> = { approve: false, reason: "not today", by: "ana" };
      const approve: ApprovalHandler = (approval) => {
        asked.push(approval);
        return answer;
      };
      const before = treeHash(ws);
      const rejected = await branch.act(
        { function: "bash", arguments: { command: "rm -r victim" } },
        { callId: "c1", approve },
      );
      const out = rejected.output as Result;
      assert.equal(out.applied, false, JSON.stringify(out));
      assert.match(
        String(out.error),
        /ana rejected them: not today \(asked because: The command deletes 2 existing file/,
      );
      assert.equal(treeHash(ws), before);
      assert.equal(asked.length, 1);
      const effects = asked[0].effects!;
      assert.equal(effects.count, 4);
      assert.deepEqual(effects.changes.map((c) => `${c.kind} ${c.path}`), [
        "deleted victim",
        "deleted victim/file",
        "deleted victim/sub",
        "deleted victim/sub/deep.txt",
      ]);
      assert.match(effects.hash, /^[0-9a-f]{64}$/);
      assert.equal(asked[0].policy, "keepDataPolicy");
      assert.equal(asked[0].callId, "c1");
      assert.deepEqual(asked[0].args, { command: "rm -r victim" });

      answer = { approve: true, by: "ana" };
      const approved = await branch.act(
        { function: "bash", arguments: { command: "rm -r victim" } },
        { callId: "c2", approve },
      );
      const done = approved.output as Result;
      assert.equal(done.applied, true, JSON.stringify(done));
      assert.equal(typeof done.checkpoint, "string");
      assert.equal(existsSync(join(ws, "victim")), false);
      await session.drainSignals();
      await branch.drainSignals();
      const signals = await store.listSessionSignals(session.id);
      assert.deepEqual(kinds(signals), [
        "EffectsDecided",
        "ApprovalRequested",
        "ApprovalAnswered",
        "EffectsDiscarded",
        "EffectsDecided",
        "ApprovalRequested",
        "ApprovalAnswered",
        "EffectsCommitted",
      ]);
      const decided = signals.find((s) => s.kind === "EffectsDecided")!.payload as {
        data: Record<string, unknown>;
      };
      assert.equal(decided.data.decision, "ask");
      assert.equal(decided.data.hook, "keepDataPolicy");
      assert.equal(decided.data.callId, "c1");
      assert.match(String(decided.data.reason), /deletes 2 existing file/);
      assert.equal(decided.data.summary, "4 deleted");
      const committed = signals.find((s) => s.kind === "EffectsCommitted")!.payload as {
        data: Record<string, unknown>;
      };
      assert.equal(committed.data.checkpoint, done.checkpoint);
      assert.equal(committed.data.callId, "c2");
      const requested = signals.find((s) => s.kind === "ApprovalRequested")!.payload as {
        data: PendingApproval;
      };
      assert.equal(requested.data.effects?.hash, effects.hash);
      sessionId = session.id;
    } finally {
      await store.close();
    }
    // hookscope show prints the decisions and lists the checkpoint; hookscope undo restores it
    // and records the undo in the session, which show then marks.
    const db = join(box.base, "inline.db");
    const shown = await cli(["show", db, sessionId]);
    assert.equal(shown.code, 0, shown.text);
    assert.match(shown.text, /EFFECTS ASK bash call c1 by keepDataPolicy: The command deletes 2/);
    assert.match(shown.text, /ASK bash call c1 \[change set: 4 deleted\]: The command deletes/);
    assert.match(
      shown.text,
      /NOT APPLIED bash call c1 \(4 deleted\): ana rejected them: not today/,
    );
    assert.match(shown.text, /COMMITTED bash call c2 \(4 deleted\) checkpoint /);
    assert.match(shown.text, /checkpoints \(undo one with: hookscope undo/);
    assert.match(shown.text, /c2 +│? *bash .* 4 deleted .* committed/);
    const undone = await cli(["undo", db, "c2", "--effects-dir", state, "--by", "ana"]);
    assert.equal(undone.code, 0, undone.text);
    assert.match(undone.text, /recorded in session/);
    assert.equal(treeHash(ws, false), treeHash(join(box.base, "inline-copy"), false));
    const again = await cli(["show", db, sessionId, "--json"]);
    const json = JSON.parse(again.text) as { checkpoints: { callId: string; undoneAt?: number }[] };
    assert.equal(json.checkpoints.length, 1);
    assert.equal(typeof json.checkpoints[0].undoneAt, "number");
    const text = await cli(["show", db, sessionId]);
    assert.match(text.text, /UNDONE bash call c2 \(1 path\(s\) restored\) by ana/);
  });

  it("without an approver the run stops; resumed with an approval it commits the kept layer without running again", async () => {
    const ws = join(box.base, "resume");
    const state = join(box.base, "resume-state");
    fill(ws);
    const before = treeHash(ws);
    const store = await SqliteStore.open(join(box.base, "resume.db"));
    try {
      const session = new Session({ store });
      await session.start();
      const branch = codingBranch(session, ws, state, bashModel(TOKEN_AND_DELETE, "b1"));
      const stopped = await branch.operate("clean up");
      assert.equal(stopped.stoppedBy, "approval");
      assert.equal(treeHash(ws), before);
      const pending = stopped.pending![0];
      assert.equal(pending.callId, "b1");
      assert.equal(pending.effects?.count, 5);
      assert.ok(pending.expiresAt! > Date.now());
      const token = keptToken(state, ws);
      const rows = await store.listPendingApprovals({ runId: stopped.runId });
      assert.equal(rows[0].effects?.hash, pending.effects?.hash);
      // An answer bound to the arguments alone (what an older screen showed) is refused.
      await assert.rejects(
        store.answerApproval(stopped.runId, "b1", { approve: true, argsHash: pending.argsHash }),
        (error: unknown) => error instanceof ApprovalConflictError && error.why === "args_changed",
      );
      const done = await session.resume(stopped.runId, { b1: { approve: true, by: "ana" } });
      assert.equal(done.stoppedBy, "answer", JSON.stringify(done.actions));
      const out = done.actions[0].output as Result;
      assert.equal(out.applied, true, JSON.stringify(out));
      assert.equal(typeof out.stagedAt, "number");
      assert.equal(readFileSync(join(ws, "token.txt"), "utf8"), token);
      assert.equal(existsSync(join(ws, "victim")), false);
      assert.deepEqual(readdirSync(pendingDir(state, ws)), []);
      // The resume applies the stored answer to the kept change set: one ask in the record, and
      // the second decision says which answer it takes (nobody is asked again).
      await session.drainSignals();
      for (const b of session.branches) await b.drainSignals();
      const signals = (await store.listSessionSignals(session.id)).filter((s) =>
        (s.payload as { data?: { callId?: string } }).data?.callId === "b1"
      );
      assert.deepEqual(kinds(signals), [
        "EffectsDecided",
        "ApprovalRequested",
        "EffectsDecided",
        "ApprovalAnswered",
        "EffectsCommitted",
      ]);
      const data = (i: number) =>
        (signals.filter((s) => kinds([s]).length > 0)[i].payload as {
          data: Record<string, unknown>;
        }).data;
      assert.equal(data(2).decision, "ask");
      assert.deepEqual(data(2).answered, {
        approve: true,
        by: "ana",
        effectsHash: pending.effects?.hash,
      });
      assert.equal(data(3).approve, true);
      assert.equal(data(3).by, "ana");
      assert.equal(data(3).resumed, true);
    } finally {
      await store.close();
    }
  });

  it("a rejection recorded by hookscope reject or the console removes the kept layer at once", async () => {
    const ws = join(box.base, "rejected");
    const state = join(box.base, "rejected-state");
    fill(ws);
    const before = treeHash(ws);
    const db = join(box.base, "rejected.db");
    const store = await SqliteStore.open(db);
    try {
      const session = new Session({ store });
      await session.start();
      const branch = codingBranch(session, ws, state, bashModel(TOKEN_AND_DELETE, "x1"));
      const stopped = await branch.operate("clean up");
      assert.equal(stopped.stoppedBy, "approval");
      assert.equal(readdirSync(pendingDir(state, ws)).length, 1);
      const rejected = await cli(["reject", db, "x1", "--reason", "no", "--effects-dir", state]);
      assert.equal(rejected.code, 0, rejected.text);
      assert.match(rejected.text, /removed the staged layer kept for it/);
      assert.deepEqual(readdirSync(pendingDir(state, ws)), []);
      const done = await session.resume(stopped.runId, {});
      assert.equal(done.stoppedBy, "answer");
      assert.match(JSON.stringify(done.actions[0].output), /no/);
      assert.equal(treeHash(ws), before);

      // The console: a rejection removes it too; an approval of the change set keeps it.
      const again = codingBranch(session, ws, state, bashModel(TOKEN_AND_DELETE, "x2"));
      const second = await again.operate("clean up");
      assert.equal(second.stoppedBy, "approval");
      const { consoleHandler } = await import("../../../console/handler.ts");
      const handle = consoleHandler(store, { tokens: { ana: "s3cret" }, effectsDirs: [state] });
      const answer = async (approve: boolean, effectsHash: string) => {
        const [row] = await store.listPendingApprovals({ runId: second.runId });
        const response = await handle(
          new Request("http://127.0.0.1/api/answer", {
            method: "POST",
            headers: { "content-type": "application/json", authorization: "Bearer s3cret" },
            body: JSON.stringify({
              runId: second.runId,
              callId: "x2",
              approve,
              argsHash: row.argsHash,
              effectsHash,
            }),
          }),
        );
        return { status: response.status, body: await response.json() };
      };
      const hash = second.pending![0].effects!.hash;
      // An approval of another change set is refused by the store; the layer stays.
      assert.equal((await answer(true, "0".repeat(64))).status, 409);
      assert.equal(readdirSync(pendingDir(state, ws)).length, 1);
      const refused = await answer(false, hash);
      assert.equal(refused.status, 200, JSON.stringify(refused.body));
      assert.deepEqual(readdirSync(pendingDir(state, ws)), []);
    } finally {
      await store.close();
    }
  });

  it("a kept layer that is gone: the command runs again and a person is asked about its new change set", async () => {
    const ws = join(box.base, "gone");
    const state = join(box.base, "gone-state");
    fill(ws);
    const store = await SqliteStore.open(join(box.base, "gone.db"));
    try {
      const session = new Session({ store });
      await session.start();
      const branch = codingBranch(session, ws, state, bashModel(TOKEN_AND_DELETE, "g1"));
      const stopped = await branch.operate("clean up");
      assert.equal(stopped.stoppedBy, "approval");
      const first = stopped.pending![0].effects!.hash;
      rmSync(pendingDir(state, ws), { recursive: true, force: true });
      const again = await session.resume(stopped.runId, { g1: { approve: true } });
      assert.equal(again.stoppedBy, "approval");
      const second = again.pending![0];
      assert.equal(second.callId, "g1");
      assert.notEqual(second.effects!.hash, first);
      assert.equal(existsSync(join(ws, "victim")), true);
      const token = keptToken(state, ws);
      const done = await session.resume(again.runId, { g1: { approve: true } });
      assert.equal(done.stoppedBy, "answer");
      assert.equal(readFileSync(join(ws, "token.txt"), "utf8"), token);
    } finally {
      await store.close();
    }
  });

  it("a call id used again outside the stopped run does not take its kept layer", async () => {
    const ws = join(box.base, "reuse");
    const state = join(box.base, "reuse-state");
    fill(ws);
    const store = await SqliteStore.open(join(box.base, "reuse.db"));
    try {
      const session = new Session({ store });
      await session.start();
      const branch = codingBranch(session, ws, state, bashModel(TOKEN_AND_DELETE, "k1"));
      const stopped = await branch.operate("clean up");
      assert.equal(stopped.stoppedBy, "approval");
      const kept = keptToken(state, ws);
      const direct = await branch.act(
        { function: "bash", arguments: { command: TOKEN_AND_DELETE } },
        { callId: "k1", approve: () => true },
      );
      assert.equal((direct.output as Result).applied, true);
      assert.equal(typeof (direct.output as Result).stagedAt, "undefined");
      assert.notEqual(readFileSync(join(ws, "token.txt"), "utf8"), kept);
      assert.equal(keptToken(state, ws), kept);
    } finally {
      await store.close();
    }
  });

  it("approving a tool.pre ask does not approve the change set the call then makes", async () => {
    const ws = join(box.base, "both");
    const state = join(box.base, "both-state");
    fill(ws);
    const before = treeHash(ws);
    const store = await SqliteStore.open(join(box.base, "both.db"));
    try {
      const session = new Session({ store });
      session.hooks.on("tool.pre", () => ({ decision: "ask", reason: "every command" }));
      await session.start();
      const branch = codingBranch(session, ws, state, bashModel("rm -r victim", "p1"));
      const first = await branch.operate("clean up");
      assert.equal(first.stoppedBy, "approval");
      assert.equal(first.pending![0].effects, undefined);
      const second = await session.resume(first.runId, { p1: { approve: true } });
      assert.equal(second.stoppedBy, "approval");
      assert.equal(second.pending![0].effects?.count, 4);
      assert.equal(treeHash(ws), before);
      const rejected = await session.resume(second.runId, {
        p1: { approve: false, reason: "keep it" },
      });
      assert.equal(rejected.stoppedBy, "answer");
      assert.match(JSON.stringify(rejected.actions[0].output), /keep it/);
      assert.equal(treeHash(ws), before);
    } catch (error) {
      if (error instanceof RunNotResumableError) assert.fail(error.message);
      throw error;
    } finally {
      await store.close();
    }
  });

  it("an approval answered after the kept layer expired is refused; unanswered it resolves as expired", async () => {
    const ws = join(box.base, "expiry");
    const state = join(box.base, "expiry-state");
    fill(ws);
    const before = treeHash(ws);
    const store = await SqliteStore.open(join(box.base, "expiry.db"));
    try {
      const session = new Session({ store });
      await session.start();
      const branch = codingBranch(session, ws, state, bashModel("rm -r victim", "e1"), {
        pendingTtlMs: 1500,
      });
      const stopped = await branch.operate("clean up");
      assert.equal(stopped.stoppedBy, "approval");
      assert.ok(stopped.pending![0].expiresAt! <= Date.now() + 1500);
      await new Promise((resolve) => setTimeout(resolve, 1600));
      await assert.rejects(
        store.answerApproval(stopped.runId, "e1", { approve: true }),
        (error: unknown) => error instanceof ApprovalConflictError && error.why === "expired",
      );
      const done = await session.resume(stopped.runId, {});
      assert.equal(done.stoppedBy, "answer");
      assert.match(JSON.stringify(done.actions[0].output), /expired/);
      assert.equal(treeHash(ws), before);
    } finally {
      await store.close();
    }
  });

  it("another process resumes the run and commits the kept layer", async () => {
    const ws = join(box.base, "process");
    const state = join(box.base, "process-state");
    fill(ws);
    const path = join(box.base, "process.db");
    const store = await SqliteStore.open(path);
    let sessionId: string;
    let runId: string;
    try {
      const session = new Session({ store });
      await session.start();
      const branch = codingBranch(session, ws, state, bashModel(TOKEN_AND_DELETE, "x1"));
      const stopped = await branch.operate("clean up");
      assert.equal(stopped.stoppedBy, "approval");
      await session.drainSignals();
      sessionId = session.id;
      runId = stopped.runId;
    } finally {
      await store.close();
    }
    const token = keptToken(state, ws);
    const child = await runChild({
      DB: path,
      SESSION: sessionId,
      RUN: runId,
      WORKSPACE: ws,
      STATE: state,
      COMMAND: TOKEN_AND_DELETE,
      CALL: "x1",
      ANSWERS: JSON.stringify({ x1: { approve: true, by: "bo" } }),
    });
    assert.equal(child.code, 0, child.stderr);
    assert.equal(child.output.stoppedBy, "answer", child.stderr);
    assert.equal(readFileSync(join(ws, "token.txt"), "utf8"), token);
    assert.equal(existsSync(join(ws, "victim")), false);
  });
});
