// Decisions of the Tool scope on the act path: an AgentSpec hook's ask goes through the session's
// approval path (recorded, answered inline, or pending and resumed from the store), one call is
// approved once whoever asks, and the session's `tool.error` hooks return the same decisions as
// the Tool scope's error hooks (`updatedResult` recovers, `context` reaches the model).

import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  AgentSpec,
  ApprovalAnswered,
  ApprovalRequested,
  ApprovalRequiredError,
  MemoryStore,
  Session,
  Tool,
  ToolDenied,
  ToolDeniedError,
} from "../../mod.ts";
import { type OpenAIServer, startOpenAIServer } from "../fixtures/openai_server.ts";
import { approvalScript, approvalTools, messagesOf, modelFor } from "./_approval_agent.ts";

const dir = mkdtempSync(join(tmpdir(), "hookscope-tool-scope-"));
const servers: OpenAIServer[] = [];
let logs = 0;
after(async () => {
  for (const server of servers) await server.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The approval agent, its `note` calls asked about by an AgentSpec pre hook, not `tool.pre`. */
async function agent() {
  const server = await startOpenAIServer(approvalScript());
  servers.push(server);
  const log = join(dir, `notes-${++logs}.log`);
  const store = new MemoryStore();
  const session = new Session({ store, model: modelFor(server.baseURL), defaultBranch: false });
  const spec = new AgentSpec().pre("note", function notesPolicy() {
    return { decision: "ask", reason: "notes need a person (tool scope)" };
  });
  const branch = session.newBranch({
    model: modelFor(server.baseURL),
    tools: approvalTools(log),
    spec,
  });
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

describe("an AgentSpec ask on the session's approval path", () => {
  it("operate() stops for approval on it; session.resume() runs the approved call once", async () => {
    const { server, store, session, branch, notes } = await agent();
    const stopped = await branch.operate("take a note");
    assert.equal(stopped.stoppedBy, "approval");
    assert.deepEqual(stopped.actions.map((a) => a.function), ["look"]);
    const pending = stopped.pending![0];
    assert.deepEqual(
      [pending.runId, pending.callId, pending.toolName, pending.reason, pending.policy],
      [stopped.runId, "note_1", "note", "notes need a person (tool scope)", "notesPolicy"],
    );
    assert.deepEqual(pending.args, { text: "draft 1" });
    assert.deepEqual(notes(), []);
    assert.equal((await store.getRun(stopped.runId))?.status, "waiting_approval");
    const result = await session.resume(stopped.runId, { note_1: { approve: true, by: "ana" } });
    assert.equal(result.stoppedBy, "answer");
    assert.deepEqual(notes(), [{ text: "draft 1" }]);
    const tool = messagesOf(server, 1).find((m) => m.tool_call_id === "note_1");
    assert.match(String(tool?.content), /draft 1/);
  });

  it("an inline approver is asked once; a rejection reaches the model and denies", async () => {
    const { server, session, branch, notes } = await agent();
    const asked: string[] = [];
    const answered: ApprovalAnswered[] = [];
    session.observe({ type: ApprovalAnswered }, (signal) => void answered.push(signal));
    const result = await branch.operate("take a note", {
      approve: (pending) => {
        asked.push(`${pending.callId} ${pending.reason}`);
        return { approve: true, updatedArgs: { text: "edited" }, by: "ana" };
      },
    });
    assert.equal(result.stoppedBy, "answer");
    assert.deepEqual(asked, ["note_1 notes need a person (tool scope)"]);
    assert.deepEqual(notes(), [{ text: "edited" }]);
    await session.drainSignals();
    assert.equal(answered.length, 1);
    const second = await agent();
    const rejected = await second.branch.operate("take a note", {
      approve: () => ({ approve: false, reason: "not today" }),
    });
    assert.equal(rejected.stoppedBy, "answer");
    assert.deepEqual(second.notes(), []);
    const tool = messagesOf(second.server, 1).find((m) => m.tool_call_id === "note_1");
    assert.match(String(tool?.content), /Denied: not today/);
    void server;
  });

  it("a call both tool.pre and an AgentSpec hook ask about is approved once", async () => {
    const session = new Session();
    session.hooks.on("tool.pre", () => ({ decision: "ask", reason: "session asks" }));
    const spec = new AgentSpec().pre("t", () => ({ decision: "ask", reason: "spec asks" }));
    const branch = session.newBranch({ spec });
    const ran: Record<string, unknown>[] = [];
    branch.actions.register(new Tool({ name: "t", execute: (args) => ran.push(args) }));
    const asked: (string | undefined)[] = [];
    await branch.act({ function: "t", arguments: { v: 1 } }, {
      approve: (pending) => {
        asked.push(pending.reason);
        return true;
      },
    });
    assert.deepEqual(asked, ["session asks"]);
    assert.deepEqual(ran, [{ v: 1 }]);
    // Arguments the approver edited are the ones the person approved: not asked about again.
    const edits: (string | undefined)[] = [];
    await branch.act({ function: "t", arguments: { v: 2 } }, {
      approve: (pending) => {
        edits.push(pending.reason);
        return { approve: true, updatedArgs: { v: 3 } };
      },
    });
    assert.deepEqual(edits, ["session asks"]);
    assert.deepEqual(ran.at(-1), { v: 3 });
    // The spec asks about other arguments than the ones approved: the person is asked again.
    const spec2 = new AgentSpec().pre("t", ({ args }) => ({
      decision: "ask",
      reason: "spec asks",
      updatedArgs: { ...args, checked: true },
    }));
    const other = session.newBranch({ spec: spec2 });
    const ranOther: unknown[] = [];
    other.actions.register(new Tool({ name: "t", execute: (args) => ranOther.push(args) }));
    const twice: (string | undefined)[] = [];
    await other.act({ function: "t", arguments: { v: 4 } }, {
      approve: (pending) => {
        twice.push(`${pending.reason} ${JSON.stringify(pending.args)}`);
        return true;
      },
    });
    assert.deepEqual(twice, ['session asks {"v":4}', 'spec asks {"v":4,"checked":true}']);
    assert.deepEqual(ranOther, [{ v: 4, checked: true }]);
    await session.drainSignals();
    assert.equal(session.observer.byType(ApprovalRequested).length, 4);
  });

  it("without an approver, act rejects with the session's ApprovalRequiredError (run and session ids filled in)", async () => {
    const session = new Session();
    const spec = new AgentSpec().pre("t", () => ({ decision: "ask" }));
    const branch = session.newBranch({ spec });
    branch.actions.register(new Tool({ name: "t", execute: () => "ran" }));
    const error = await branch.act({ function: "t", arguments: {} }, { runId: "r9", callId: "c9" })
      .then(() => null, (e: unknown) => e);
    assert.ok(error instanceof ApprovalRequiredError);
    assert.deepEqual(
      [
        error.approval.runId,
        error.approval.callId,
        error.approval.sessionId,
        error.approval.branchId,
      ],
      ["r9", "c9", session.id, branch.id],
    );
    await session.drainSignals();
    assert.equal(session.observer.byType(ApprovalRequested).length, 1);
    assert.equal(session.observer.byType(ToolDenied).length, 0);
  });

  it("an AgentSpec ask's answerers are enforced by the session's approval path", async () => {
    const session = new Session();
    const spec = new AgentSpec().pre("t", () => ({ decision: "ask", answerableBy: ["ana"] }));
    const branch = session.newBranch({ spec });
    const ran: unknown[] = [];
    branch.actions.register(new Tool({ name: "t", execute: (args) => ran.push(args) }));
    await assert.rejects(
      branch.act({ function: "t", arguments: {} }, {
        approve: () => ({ approve: true, by: "bo" }),
      }),
      ToolDeniedError,
    );
    assert.deepEqual(ran, []);
    await branch.act({ function: "t", arguments: {} }, {
      approve: (pending) => {
        assert.deepEqual(pending.answerableBy, ["ana"]);
        return { approve: true, by: "ana" };
      },
    });
    assert.equal(ran.length, 1);
  });

  it("an AgentSpec deny with interrupt ends an agent run like a tool.pre deny", async () => {
    const { branch, notes } = await agent();
    branch.actions.spec!.pre("note", () => ({
      decision: "deny",
      reason: "no notes today",
      interrupt: true,
    }));
    const result = await branch.operate("take a note");
    assert.equal(result.stoppedBy, "denied");
    assert.deepEqual(notes(), []);
  });
});

describe("the session's tool.error hooks return the Tool scope's error decisions", () => {
  function failing() {
    const session = new Session();
    const branch = session.newBranch();
    branch.actions.register(
      new Tool({
        name: "f",
        execute: () => {
          throw new Error("disk full");
        },
      }),
    );
    return { session, branch };
  }

  it("updatedResult recovers the call: act resolves with it, the model reads it with the context", async () => {
    const { session, branch } = failing();
    const seen: unknown[] = [];
    session.hooks.on("tool.error", ({ error, args, signal, source, toolName, callId }) => {
      seen.push({
        error: (error as Error).message,
        args,
        aborted: signal.aborted,
        source,
        toolName,
        callId,
      });
      return { context: "the disk is full" };
    });
    session.hooks.on("tool.error", () => ({ updatedResult: { fallback: true } }));
    session.hooks.on("tool.error", () => ({ updatedResult: { second: true } }));
    const result = await branch.act({ function: "f", arguments: { n: 1 } }, { callId: "e1" });
    assert.deepEqual(result.output, { fallback: true });
    assert.deepEqual(result.context, ["the disk is full"]);
    assert.deepEqual(seen, [{
      error: "disk full",
      args: { n: 1 },
      aborted: false,
      source: { kind: "local" },
      toolName: "f",
      callId: "e1",
    }]);
    const response = branch.messages.at(-1)!.content as Record<string, unknown>;
    assert.deepEqual(response.output, { fallback: true });
    assert.deepEqual(response.context, ["the disk is full"]);
  });

  it("context alone leaves the failure standing; with suppressErrors the model reads it next to the error", async () => {
    const { session, branch } = failing();
    session.hooks.on("tool.error", () => ({ context: "try a smaller file" }));
    await assert.rejects(branch.act({ function: "f", arguments: {} }), /disk full/);
    const result = await branch.act({ function: "f", arguments: {} }, { suppressErrors: true });
    assert.match(String((result.output as { error: string }).error), /disk full/);
    assert.deepEqual(result.context, ["try a smaller file"]);
    assert.deepEqual(
      (branch.messages.at(-1)!.content as Record<string, unknown>).context,
      ["try a smaller file"],
    );
  });

  it("a throwing tool.error handler is reported and the next ones still run", async () => {
    const reported: string[] = [];
    const session = new Session({
      onError: (error, where) => void reported.push(`${where}: ${(error as Error).message}`),
    });
    const branch = session.newBranch();
    branch.actions.register(
      new Tool({
        name: "f",
        execute: () => {
          throw new Error("disk full");
        },
      }),
    );
    session.hooks.on("tool.error", () => {
      throw new Error("handler broke");
    });
    session.hooks.on("tool.error", () => ({ updatedResult: "recovered" }));
    const result = await branch.act({ function: "f", arguments: {} });
    assert.equal(result.output, "recovered");
    assert.deepEqual(reported, ["hook tool.error: handler broke"]);
  });

  it("a denial never reaches tool.error", async () => {
    const session = new Session();
    const errors: unknown[] = [];
    session.hooks.on("tool.error", ({ error }) => void errors.push(error));
    const spec = new AgentSpec().pre("t", () => ({ decision: "deny", reason: "no" }));
    const branch = session.newBranch({ spec });
    branch.actions.register(new Tool({ name: "t", execute: () => "ran" }));
    await assert.rejects(branch.act({ function: "t", arguments: {} }), ToolDeniedError);
    assert.deepEqual(errors, []);
  });
});
