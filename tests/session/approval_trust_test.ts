// Approvals a team can trust: the arguments that run are the approved ones (never the mutable run
// state), answers are first-wins and bound to a hash, expiry rejects, and a call whose resumer
// died is not run again without a new answer.

import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { argsHash } from "../../core/approval.ts";
import { ApprovalConflictError } from "../../store/store_errors.ts";
import { MemoryStore, Session } from "../../mod.ts";
import { RunNotResumableError } from "../../session/mod.ts";
import type { SessionStore } from "../../store/mod.ts";
import { SqliteStore } from "../../store/sqlite/mod.ts";
import { type OpenAIServer, startOpenAIServer } from "../fixtures/openai_server.ts";
import {
  approvalScript,
  approvalTools,
  askBeforeNotes,
  messagesOf,
  modelFor,
} from "./_approval_agent.ts";

const dir = mkdtempSync(join(tmpdir(), "hookscope-trust-"));
const servers: OpenAIServer[] = [];
const stores: SessionStore[] = [];
let count = 0;
after(async () => {
  for (const server of servers) await server.close();
  for (const store of stores) await store.close().catch(() => {});
  rmSync(dir, { recursive: true, force: true });
});

const hasSqlite = await SqliteStore.open(join(dir, "probe.db")).then(
  (s) => (stores.push(s), true),
  () => false,
);

async function setup(kind: "memory" | "sqlite") {
  const server = await startOpenAIServer(approvalScript());
  servers.push(server);
  const n = ++count;
  const log = join(dir, `notes-${n}.log`);
  const store = kind === "memory"
    ? new MemoryStore()
    : await SqliteStore.open(join(dir, `t-${n}.db`));
  stores.push(store);
  const session = new Session({ store, model: modelFor(server.baseURL), defaultBranch: false });
  const branch = session.newBranch({ model: modelFor(server.baseURL), tools: approvalTools(log) });
  askBeforeNotes(session);
  await session.start();
  const notes = () => {
    try {
      return readFileSync(log, "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));
    } catch {
      return [];
    }
  };
  return { server, store, session, branch, notes };
}

for (const kind of ["memory", "sqlite"] as const) {
  describe(`approvals a team can trust (${kind})`, {
    skip: kind === "sqlite" && !hasSqlite ? "no node:sqlite here" : false,
  }, () => {
    it("a pending approval carries the hash of its arguments and the policy that asked", async () => {
      const { branch, store } = await setup(kind);
      const stopped = await branch.operate("take a note");
      const pending = stopped.pending![0];
      assert.equal(pending.argsHash, argsHash({ text: "draft 1" }));
      assert.ok(pending.policy === undefined || typeof pending.policy === "string");
      const [row] = await store.listPendingApprovals();
      assert.equal(row.argsHash, pending.argsHash);
    });

    it("tampering with the run's tool calls does not change what runs: the approved arguments and tool run", async () => {
      const { branch, store, session, notes } = await setup(kind);
      const stopped = await branch.operate("take a note");
      await store.answerApproval(stopped.runId, "note_1", {
        approve: true,
        by: "ana",
        argsHash: stopped.pending![0].argsHash,
      });
      const run = (await store.getRun(stopped.runId))!;
      run.state.toolCalls = run.state.toolCalls.map((c) =>
        c.id === "note_1" ? { ...c, name: "look", arguments: '{"tag":"TAMPERED"}' } : c
      );
      run.state.toolCalls.push({ id: "evil", name: "note", arguments: '{"text":"injected"}' });
      await store.saveRun(run);
      const done = await session.resume(stopped.runId, {});
      assert.equal(done.stoppedBy, "answer");
      assert.deepEqual(notes(), [{ text: "draft 1" }]);
    });

    it("tampering with the approval's own arguments is refused: nothing runs and the run can be looked at again", async () => {
      const { branch, store, session, notes } = await setup(kind);
      const stopped = await branch.operate("take a note");
      await store.answerApproval(stopped.runId, "note_1", { approve: true, by: "ana" });
      const run = (await store.getRun(stopped.runId))!;
      run.pending[0].args = { text: "TAMPERED" };
      await store.saveRun(run);
      await assert.rejects(
        session.resume(stopped.runId, {}),
        (error: unknown) => error instanceof ApprovalConflictError && error.why === "args_changed",
      );
      assert.deepEqual(notes(), []);
      assert.equal((await store.getRun(stopped.runId))?.status, "waiting_approval");
    });

    it("a second answer is refused (the first stands), also when given to resume, and is recorded as ApprovalRefused", async () => {
      const { branch, store, session, notes } = await setup(kind);
      const stopped = await branch.operate("take a note");
      await store.answerApproval(stopped.runId, "note_1", {
        approve: false,
        reason: "no",
        by: "ana",
      });
      await assert.rejects(
        session.resume(stopped.runId, { note_1: { approve: true, by: "bo" } }),
        (error: unknown) =>
          error instanceof ApprovalConflictError && error.why === "already_answered" &&
          error.answer?.by === "ana",
      );
      const refused = (await store.listSessionSignals(session.id)).filter((s) =>
        s.kind === "ApprovalRefused"
      );
      assert.equal(refused.length, 1);
      assert.equal(refused[0].payload.why, "already_answered");
      assert.equal(refused[0].payload.by, "bo");
      const done = await session.resume(stopped.runId, {});
      assert.equal(done.stoppedBy, "answer");
      assert.deepEqual(notes(), []);
    });

    it("an answer for other arguments is refused; a replayed answer is refused after the run was resumed", async () => {
      const { branch, store, session, notes } = await setup(kind);
      const stopped = await branch.operate("take a note");
      await assert.rejects(
        store.answerApproval(stopped.runId, "note_1", {
          approve: true,
          argsHash: argsHash({ text: "something else" }),
        }),
        (error: unknown) => error instanceof ApprovalConflictError && error.why === "args_changed",
      );
      const answer = { approve: true as const, by: "ana", argsHash: stopped.pending![0].argsHash };
      assert.equal(await store.answerApproval(stopped.runId, "note_1", answer), true);
      await session.resume(stopped.runId, {});
      await assert.rejects(
        store.answerApproval(stopped.runId, "note_1", answer),
        (error: unknown) =>
          error instanceof ApprovalConflictError && error.why === "already_answered",
      );
      await assert.rejects(session.resume(stopped.runId, {}), RunNotResumableError);
      assert.deepEqual(notes(), [{ text: "draft 1" }]);
    });

    it("an expired approval resolves as rejected with reason expired: the model is told, the tool does not run", async () => {
      const { branch, store, session, server, notes } = await setup(kind);
      const stopped = await branch.operate("take a note");
      const run = (await store.getRun(stopped.runId))!;
      run.pending[0].expiresAt = Date.now() - 1000;
      await store.saveRun(run);
      await assert.rejects(
        store.answerApproval(stopped.runId, "note_1", { approve: true }),
        (error: unknown) => error instanceof ApprovalConflictError && error.why === "expired",
      );
      const done = await session.resume(stopped.runId, {});
      assert.equal(done.stoppedBy, "answer");
      assert.deepEqual(notes(), []);
      const tool = messagesOf(server, 1).find((m) => m.tool_call_id === "note_1");
      assert.match(String(tool?.content), /expired/);
      assert.equal((await store.getRun(stopped.runId))?.answers.note_1?.reason, "expired");
    });

    it("a call its dead resumer had started is interrupted after release: not run again until a person answers again", async () => {
      const { branch, store, session, notes } = await setup(kind);
      const stopped = await branch.operate("take a note");
      await store.answerApproval(stopped.runId, "note_1", { approve: true, by: "ana" });
      // A resumer claims, marks the call started and dies before storing its result.
      assert.equal(await store.claimRun(stopped.runId, "dead"), true);
      const run = (await store.getRun(stopped.runId))!;
      run.state.started = ["note_1"];
      await store.saveRun(run);
      assert.equal(await store.releaseRun!(stopped.runId, "dead"), true);
      const [row] = await store.listPendingApprovals({ runId: stopped.runId });
      assert.equal(row.interrupted, true);
      assert.equal(row.answer, undefined);
      await assert.rejects(
        session.resume(stopped.runId, {}),
        (error: unknown) => error instanceof RunNotResumableError && error.reason === "unanswered",
      );
      assert.deepEqual(notes(), []);
      await store.answerApproval(stopped.runId, "note_1", {
        approve: false,
        reason: "it may have run",
        by: "ana",
      });
      const done = await session.resume(stopped.runId, {});
      assert.equal(done.stoppedBy, "answer");
      assert.deepEqual(notes(), []);
    });

    it("who may answer: an answer by someone else is refused", async () => {
      const { branch, store } = await setup(kind);
      const stopped = await branch.operate("take a note");
      const run = (await store.getRun(stopped.runId))!;
      run.pending[0].answerableBy = ["ana"];
      await store.saveRun(run);
      await assert.rejects(
        store.answerApproval(stopped.runId, "note_1", { approve: true, by: "mallory" }),
        (error: unknown) => error instanceof ApprovalConflictError && error.why === "not_allowed",
      );
      assert.equal(
        await store.answerApproval(stopped.runId, "note_1", { approve: true, by: "ana" }),
        true,
      );
    });
  });
}
