// Approvals in the agent loop, in one process, against the real fixture server: a run stops on
// an ask, is answered inline or resumed, denials reach the model, and the run record follows.

import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ApprovalConflictError } from "../../store/store_errors.ts";
import {
  ApprovalAnswered,
  ApprovalRequested,
  MemoryStore,
  type OperateResult,
  Session,
  ToolDenied,
} from "../../mod.ts";
import { RunNotResumableError } from "../../session/mod.ts";
import { type OpenAIServer, startOpenAIServer } from "../fixtures/openai_server.ts";
import {
  approvalScript,
  approvalTools,
  askBeforeNotes,
  messagesOf,
  modelFor,
} from "./_approval_agent.ts";

const dir = mkdtempSync(join(tmpdir(), "hookscope-approval-"));
const servers: OpenAIServer[] = [];
let logs = 0;
after(async () => {
  for (const server of servers) await server.close();
  rmSync(dir, { recursive: true, force: true });
});

async function setup(options: { ask?: boolean } = {}) {
  const server = await startOpenAIServer(approvalScript());
  servers.push(server);
  const log = join(dir, `notes-${++logs}.log`);
  const store = new MemoryStore();
  const session = new Session({ store, model: modelFor(server.baseURL), defaultBranch: false });
  const branch = session.newBranch({ model: modelFor(server.baseURL), tools: approvalTools(log) });
  if (options.ask !== false) askBeforeNotes(session);
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

describe("approvals in the agent loop", () => {
  it("operate() stops on an ask without an approve handler: stoppedBy approval, the run saved as waiting_approval, the other call ran", async () => {
    const { server, store, session, branch, notes } = await setup();
    const result = await branch.operate("take a note");
    assert.equal(result.stoppedBy, "approval");
    assert.equal(result.turns, 1);
    assert.deepEqual(result.actions.map((a) => a.function), ["look"]);
    assert.equal(result.pending?.length, 1);
    const pending = result.pending![0];
    assert.equal(pending.runId, result.runId);
    assert.equal(pending.callId, "note_1");
    assert.equal(pending.toolName, "note");
    assert.deepEqual(pending.args, { text: "draft 1" });
    assert.equal(pending.reason, "notes need a person's approval");
    assert.equal(pending.sessionId, session.id);
    assert.equal(pending.branchId, branch.id);
    assert.ok(Object.isFrozen(pending.args));
    assert.deepEqual(notes(), []);
    assert.equal(server.requests.length, 1);
    const run = await store.getRun(result.runId);
    assert.equal(run?.status, "waiting_approval");
    assert.equal(run?.stoppedBy, "approval");
    assert.deepEqual(run?.state.done, ["look_1"]);
    assert.deepEqual(run?.state.toolCalls.map((c) => c.id), ["look_1", "note_1"]);
    assert.deepEqual(
      (await store.listPendingApprovals()).map((p) => [p.runId, p.callId]),
      [[result.runId, "note_1"]],
    );
    await session.drainSignals();
    const kinds = (await store.listSessionSignals(session.id)).map((s) => s.kind);
    assert.ok(kinds.includes("ApprovalRequested"));
  });

  it("operate() with an approve handler asks inline and runs the call once with the approver's arguments", async () => {
    const { server, branch, session, notes } = await setup();
    const asked: string[] = [];
    const answered: ApprovalAnswered[] = [];
    session.observe({ type: ApprovalAnswered }, (signal) => void answered.push(signal));
    const result = await branch.operate("take a note", {
      approve: (pending) => {
        asked.push(pending.callId);
        return { approve: true, updatedArgs: { text: "edited inline" }, by: "ana" };
      },
    });
    assert.equal(result.stoppedBy, "answer");
    assert.deepEqual(asked, ["note_1"]);
    assert.deepEqual(notes(), [{ text: "edited inline" }]);
    assert.equal(server.requests.length, 2);
    await session.drainSignals();
    assert.equal((answered[0].data as { by?: string }).by, "ana");
  });

  it("a rejection reaches the model as a tool message with the reason and the run goes on; interrupt ends it with stoppedBy denied", async () => {
    const { server, branch, notes } = await setup();
    const result = await branch.operate("take a note", {
      approve: () => ({ approve: false, reason: "not today" }),
    });
    assert.equal(result.stoppedBy, "answer");
    assert.deepEqual(notes(), []);
    const tool = messagesOf(server, 1).find((m) => m.tool_call_id === "note_1");
    assert.match(String(tool?.content), /not today/);

    const second = await setup();
    const stopped = await second.branch.operate("take a note", {
      approve: () => ({ approve: false, reason: "stop everything", interrupt: true }),
    });
    assert.equal(stopped.stoppedBy, "denied");
    assert.equal(second.server.requests.length, 1);
    assert.equal((await second.store.getRun(stopped.runId))?.status, "completed");
  });

  it("a tool.pre deny is answered to the model with the reason and the allow context reaches the tool message", async () => {
    const { server, session, branch, notes } = await setup({ ask: false });
    session.hooks.on(
      "tool.pre",
      ({ toolName }) =>
        toolName === "note"
          ? { decision: "deny", reason: "notes are read-only today" }
          : { decision: "allow", context: "the room was tidied yesterday" },
    );
    const denied: ToolDenied[] = [];
    session.observe({ type: ToolDenied }, (signal) => void denied.push(signal));
    const result = await branch.operate("take a note");
    assert.equal(result.stoppedBy, "answer");
    assert.deepEqual(notes(), []);
    const messages = messagesOf(server, 1);
    const note = messages.find((m) => m.tool_call_id === "note_1");
    assert.match(String(note?.content), /notes are read-only today/);
    const look = messages.find((m) => m.tool_call_id === "look_1");
    assert.match(String(look?.content), /the room was tidied yesterday/);
    await session.drainSignals();
    assert.equal((denied[0].data as { reason: string }).reason, "notes are read-only today");
  });

  it("session.resume() runs an approved call once with the edited arguments and continues the loop", async () => {
    const { server, store, session, branch, notes } = await setup();
    const stopped = await branch.operate("take a note");
    const result = await session.resume(stopped.runId, {
      note_1: { approve: true, updatedArgs: { text: "edited" }, by: "bob" },
    });
    assert.equal(result.stoppedBy, "answer");
    assert.equal(result.runId, stopped.runId);
    assert.equal(result.turns, 2);
    assert.deepEqual(result.actions.map((a) => a.function), ["note"]);
    assert.deepEqual(notes(), [{ text: "edited" }]);
    assert.equal(server.requests.length, 2);
    assert.match(String(result.message.content), /edited/);
    const run = await store.getRun(stopped.runId);
    assert.equal(run?.status, "completed");
    assert.equal(run?.answers.note_1?.by, "bob");
    await assert.rejects(
      session.resume(stopped.runId, { note_1: { approve: true } }),
      (error: unknown) => error instanceof RunNotResumableError && error.reason === "claimed",
    );
    assert.deepEqual(notes(), [{ text: "edited" }]);
  });

  it("a claim whose claimer died before running the call is released; the resumed run runs the call once", async () => {
    const { store, session, branch, notes } = await setup();
    const stopped = await branch.operate("take a note");
    // A claimer that took the run and died before running anything (no process is left to save).
    assert.equal(await store.claimRun(stopped.runId, "dead-worker"), true);
    await assert.rejects(
      session.resume(stopped.runId, { note_1: { approve: true } }),
      (error: unknown) =>
        error instanceof RunNotResumableError && error.reason === "claimed" &&
        /"dead-worker".*releaseRun/.test(error.message),
    );
    assert.equal(await store.releaseRun(stopped.runId, "someone-else"), false);
    assert.equal(await store.releaseRun(stopped.runId, "dead-worker"), true);
    const result = await session.resume(stopped.runId, { note_1: { approve: true } });
    assert.equal(result.stoppedBy, "answer");
    assert.deepEqual(result.actions.map((a) => a.function), ["note"]);
    assert.deepEqual(notes(), [{ text: "draft 1" }]);
    assert.equal((await store.getRun(stopped.runId))?.status, "completed");
  });

  it("two concurrent session.resume() calls run the approved call once", async () => {
    const { session, branch, notes } = await setup();
    const stopped = await branch.operate("take a note");
    const outcomes = await Promise.allSettled([
      session.resume(stopped.runId, { note_1: { approve: true } }),
      session.resume(stopped.runId, { note_1: { approve: true } }),
    ]);
    const fulfilled = outcomes.filter((o) => o.status === "fulfilled");
    const rejected = outcomes.filter((o) => o.status === "rejected") as PromiseRejectedResult[];
    assert.equal(fulfilled.length, 1);
    assert.equal(rejected.length, 1);
    // The loser's answer comes second (refused), or it finds the run claimed.
    assert.ok(
      rejected[0].reason instanceof RunNotResumableError ||
        (rejected[0].reason instanceof ApprovalConflictError &&
          rejected[0].reason.why === "already_answered"),
      String(rejected[0].reason),
    );
    assert.deepEqual(notes(), [{ text: "draft 1" }]);
  });

  it("a stored rejection is applied even when the hooks no longer ask: the tool does not run and the model gets the reason", async () => {
    const { server, store, session, branch, notes } = await setup();
    const stopped = await branch.operate("take a note");
    assert.equal(
      await store.answerApproval(stopped.runId, "note_1", {
        approve: false,
        reason: "never",
        by: "carol",
      }),
      true,
    );
    for (const handler of session.hooks.handlersFor("tool.pre")) {
      session.hooks.off("tool.pre", handler);
    }
    const answered: ApprovalAnswered[] = [];
    session.observe({ type: ApprovalAnswered }, (signal) => void answered.push(signal));
    const result = await session.resume(stopped.runId, {});
    assert.equal(result.stoppedBy, "answer");
    assert.deepEqual(notes(), []);
    const tool = messagesOf(server, 1).find((m) => m.tool_call_id === "note_1");
    assert.match(String(tool?.content), /never/);
    await session.drainSignals();
    assert.deepEqual(
      {
        by: (answered[0].data as { by?: string }).by,
        approve: (answered[0].data as { approve: boolean }).approve,
      },
      { by: "carol", approve: false },
    );
  });

  it("session.resume() refuses bad input clearly and claims nothing", async () => {
    const { store, session, branch } = await setup();
    const stopped = await branch.operate("take a note");
    await assert.rejects(session.resume("", {}), TypeError);
    await assert.rejects(session.resume(stopped.runId, null as never), TypeError);
    await assert.rejects(
      session.resume(stopped.runId, { ghost: { approve: true } }),
      (error: unknown) =>
        error instanceof TypeError && /"ghost" is not pending/.test(error.message),
    );
    await assert.rejects(
      session.resume(stopped.runId, { note_1: { approve: "yes" } as never }),
      TypeError,
    );
    await assert.rejects(
      session.resume(stopped.runId, {}),
      (error: unknown) => error instanceof RunNotResumableError && error.reason === "unanswered",
    );
    await assert.rejects(
      session.resume("no-such-run", {}),
      (error: unknown) => error instanceof RunNotResumableError && error.reason === "not_found",
    );
    assert.equal((await store.getRun(stopped.runId))?.status, "waiting_approval");
  });

  it("session.resume() rejects any malformed answer with a TypeError and leaves the run waiting", async () => {
    const { store, session, branch, notes } = await setup();
    const stopped = await branch.operate("take a note");
    const isValid = (value: unknown): boolean => {
      if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
      const a = value as Record<string, unknown>;
      const plain = (v: unknown) => v !== null && typeof v === "object" && !Array.isArray(v);
      if (typeof a.approve !== "boolean") return false;
      if (a.by !== undefined && typeof a.by !== "string") return false;
      if (a.approve) {
        return (a.updatedArgs === undefined || plain(a.updatedArgs)) &&
          a.reason === undefined && a.interrupt === undefined;
      }
      return (a.reason === undefined || typeof a.reason === "string") &&
        (a.interrupt === undefined || typeof a.interrupt === "boolean") &&
        a.updatedArgs === undefined;
    };
    const answer = fc.oneof(
      fc.anything(),
      fc.record(
        {
          approve: fc.oneof(fc.boolean(), fc.anything()),
          updatedArgs: fc.anything(),
          reason: fc.anything(),
          interrupt: fc.anything(),
          by: fc.anything(),
        },
        { requiredKeys: [] },
      ),
    );
    await fc.assert(
      fc.asyncProperty(answer, async (value) => {
        fc.pre(!isValid(value));
        await assert.rejects(
          session.resume(stopped.runId, { note_1: value as never }),
          TypeError,
        );
      }),
      { numRuns: 150 },
    );
    assert.equal((await store.getRun(stopped.runId))?.status, "waiting_approval");
    assert.deepEqual(notes(), []);
  });

  it("operateStream() stops on an ask with a done event, and the resumed run streams the next turn", async () => {
    const server = await startOpenAIServer((request) => {
      const body = request.body as { messages: { role: string }[]; stream?: boolean };
      assert.equal(body.stream, true);
      const last = body.messages.at(-1)?.role;
      const events = last === "tool"
        ? [
          { choices: [{ index: 0, delta: { content: "noted" }, finish_reason: "stop" }] },
        ]
        : [
          {
            choices: [{
              index: 0,
              delta: {
                tool_calls: [{
                  index: 0,
                  id: "s1",
                  type: "function",
                  function: { name: "note", arguments: '{"text":"streamed"}' },
                }],
              },
              finish_reason: "tool_calls",
            }],
          },
        ];
      return { kind: "sse", events };
    });
    servers.push(server);
    const log = join(dir, `notes-${++logs}.log`);
    const session = new Session({ model: modelFor(server.baseURL) });
    session.defaultBranch.actions.register(approvalTools(log)[0]);
    askBeforeNotes(session);
    let done: OperateResult | undefined;
    for await (const event of session.defaultBranch.operateStream("note it")) {
      if (event.type === "done") done = event.result;
    }
    assert.equal(done?.stoppedBy, "approval");
    assert.equal(done?.pending?.[0].callId, "s1");
    const result = await session.resume(done!.runId, { s1: { approve: true } });
    assert.equal(result.stoppedBy, "answer");
    assert.equal(result.message.content, "noted");
    assert.equal(readFileSync(log, "utf8"), '{"text":"streamed"}\n');
    assert.equal(server.requests.length, 2);
  });

  it("records ApprovalRequested, then on resume only ApprovalAnswered with who answered, in order in the store", async () => {
    const { store, session, branch } = await setup();
    const stopped = await branch.operate("take a note");
    await session.resume(stopped.runId, { note_1: { approve: true, by: "dora" } });
    await session.drainSignals();
    const signals = await store.listSessionSignals(session.id);
    const kinds = signals.map((s) => s.kind);
    const requested = kinds.indexOf("ApprovalRequested");
    const answered = kinds.indexOf("ApprovalAnswered");
    assert.ok(requested >= 0 && answered > requested, kinds.join(","));
    const data = signals[answered].payload.data as {
      by: string;
      callId: string;
      approve: boolean;
      resumed?: boolean;
    };
    assert.deepEqual([data.by, data.callId, data.approve], ["dora", "note_1", true]);
    // The resume applies dora's answer to the hook's ask again: one ask in the record, and the
    // answer marked as the stored one.
    assert.equal(kinds.filter((k) => k === "ApprovalRequested").length, 1, kinds.join(","));
    assert.equal(data.resumed, true);
    const roles = (await store.listMessages({ sessionId: session.id })).map((m) => m.role);
    assert.deepEqual(roles, [
      "user",
      "assistant",
      "action_request",
      "action_response",
      "action_request",
      "action_response",
      "assistant",
    ]);
    assert.ok(ApprovalRequested);
  });
});

describe("the agent loop's store calls", () => {
  it("operate() resolves with stoppedBy aborted soon after an abort even when the store never answers", async () => {
    const server = await startOpenAIServer(approvalScript());
    servers.push(server);
    const store = new MemoryStore();
    let hang = false;
    const hanging = new Proxy(store, {
      get(target, key, receiver) {
        if (key === "saveRun") {
          return (run: unknown) => hang ? new Promise(() => {}) : target.saveRun(run as never);
        }
        const value = Reflect.get(target, key, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const session = new Session({ store: hanging, model: modelFor(server.baseURL) });
    const branch = session.defaultBranch;
    branch.actions.register(approvalTools(join(dir, "hang.log"))[1]);
    const controller = new AbortController();
    hang = true;
    const pending = branch.operate("look", { signal: controller.signal });
    setTimeout(() => controller.abort(new Error("stop")), 50);
    const result = await Promise.race([
      pending,
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error("operate() did not settle after the abort")), 10_000)
      ),
    ]);
    assert.equal(result.stoppedBy, "aborted");
    assert.equal(server.requests.length, 0);
  });
});
