// A hook's ask sets the approval's terms: how long a person has (`expiresInMs` / `expiresAt`) and
// who may answer (`answerableBy`). Several asks fold to the earliest expiry and the answerers all
// of them allow; the terms reach the pending approval, the stored run, and every store enforces
// them; an inline answer is bounded by the expiry and checked against the answerers.

import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HookBus, MemoryStore, Session, Tool, ToolDeniedError } from "../../mod.ts";
import { ApprovalConflictError } from "../../store/store_errors.ts";
import type { SessionStore } from "../../store/mod.ts";
import { SqliteStore } from "../../store/sqlite/mod.ts";
import { ApprovalAnswered, ApprovalRequested, ToolDenied } from "../../session/signal.ts";
import type { PendingApproval } from "../../core/approval.ts";
import { type OpenAIServer, startOpenAIServer } from "../fixtures/openai_server.ts";
import { approvalScript, approvalTools, messagesOf, modelFor } from "./_approval_agent.ts";

const dir = mkdtempSync(join(tmpdir(), "hookscope-terms-"));
const servers: OpenAIServer[] = [];
const stores: SessionStore[] = [];
after(async () => {
  for (const server of servers) await server.close();
  for (const store of stores) await store.close().catch(() => {});
  rmSync(dir, { recursive: true, force: true });
});

const CALL = {
  toolName: "deploy",
  callId: "c1",
  args: {},
  argsSummary: "",
  signal: new AbortController().signal,
  source: { kind: "local" },
} as const;

describe("a tool.pre ask sets expiry and who may answer (the fold)", () => {
  it("one ask: expiresInMs counts from the ask, answerableBy is kept", async () => {
    const bus = new HookBus();
    bus.on("tool.pre", () => ({ decision: "ask", expiresInMs: 60_000, answerableBy: ["ana"] }));
    const before = Date.now();
    const fold = await bus.decide("tool.pre", CALL);
    assert.equal(fold.verdict, "ask");
    assert.ok(fold.expiresAt! >= before + 60_000 && fold.expiresAt! <= Date.now() + 60_000);
    assert.deepEqual(fold.answerableBy, ["ana"]);
  });

  it("several asks: the earliest expiry and the answerers every one of them allows", async () => {
    const bus = new HookBus();
    const at = Date.now() + 5_000;
    bus.on("tool.pre", () => ({ decision: "ask", reason: "first", answerableBy: ["ana", "bo"] }), {
      name: "a",
    });
    bus.on("tool.pre", () => ({ decision: "ask", expiresAt: at, expiresInMs: 3_600_000 }), {
      name: "b",
    });
    bus.on(
      "tool.pre",
      () => ({ decision: "ask", expiresInMs: 3_600_000, answerableBy: ["bo", "cy", "ana"] }),
      { name: "c" },
    );
    const fold = await bus.decide("tool.pre", CALL);
    assert.equal(fold.verdict, "ask");
    assert.equal(fold.reason, "first");
    assert.equal(fold.hook, "a");
    assert.equal(fold.expiresAt, at);
    assert.deepEqual(fold.answerableBy, ["ana", "bo"]);
  });

  it("asks that name no common answerer deny: nobody could approve the call", async () => {
    const bus = new HookBus();
    bus.on("tool.pre", () => ({ decision: "ask", answerableBy: ["ana"] }), { name: "a" });
    bus.on("tool.pre", () => ({ decision: "ask", answerableBy: ["bo"] }), { name: "b" });
    const fold = await bus.decide("tool.pre", CALL);
    assert.equal(fold.verdict, "deny");
    assert.equal(fold.hook, "b");
    assert.match(fold.reason!, /nobody may answer/);
    assert.equal(fold.answerableBy, undefined);
  });

  it("terms do not outlive a deny, and an allow carries none", async () => {
    const bus = new HookBus();
    bus.on("tool.pre", () => ({ decision: "ask", expiresInMs: 1_000 }));
    bus.on("tool.pre", () => ({ decision: "deny", reason: "no" }));
    const denied = await bus.decide("tool.pre", CALL);
    assert.equal(denied.verdict, "deny");
    assert.equal(denied.expiresAt, undefined);
    const allowing = new HookBus();
    allowing.on("tool.pre", () => ({ decision: "allow" }));
    assert.equal((await allowing.decide("tool.pre", CALL)).expiresAt, undefined);
  });

  for (
    const [terms, message] of [
      [{ expiresInMs: 0 }, /expiresInMs must be a positive number/],
      [{ expiresInMs: "10" }, /expiresInMs must be a positive number/],
      [{ expiresAt: Number.NaN }, /expiresAt must be a time in ms since the epoch/],
      [{ answerableBy: [] }, /answerableBy must be a non-empty array of non-empty names/],
      [{ answerableBy: "ana" }, /answerableBy must be a non-empty array/],
      [{ answerableBy: ["ana", ""] }, /answerableBy must be a non-empty array of non-empty names/],
    ] as const
  ) {
    it(`malformed terms fail closed: ${JSON.stringify(terms)}`, async () => {
      const bus = new HookBus();
      bus.on("tool.pre", () => ({ decision: "ask", ...terms }) as never, { name: "bad" });
      const fold = await bus.decide("tool.pre", CALL);
      assert.ok(fold.error instanceof TypeError);
      assert.match((fold.error as Error).message, message);
      assert.equal(fold.errorHook, "bad");
    });
  }
});

function inlineSession() {
  const session = new Session();
  const branch = session.defaultBranch;
  const ran: unknown[] = [];
  branch.actions.register(new Tool({ name: "deploy", execute: (a: unknown) => ran.push(a) }));
  const kinds: { kind: string; data: Record<string, unknown> }[] = [];
  for (const type of [ApprovalRequested, ApprovalAnswered, ToolDenied]) {
    session.observe({ type }, (signal) => {
      kinds.push({ kind: type.name, data: (signal as { data: Record<string, unknown> }).data });
    });
  }
  return { session, branch, ran, kinds };
}

describe("an inline approval honours the ask's terms", () => {
  it("nobody answers before the expiry: rejected with reason expired, the handler's signal aborts", async () => {
    const { session, branch, ran, kinds } = inlineSession();
    session.hooks.on("tool.pre", () => ({ decision: "ask", expiresInMs: 80 }));
    let seen: PendingApproval | undefined;
    let handlerSignal: AbortSignal | undefined;
    await assert.rejects(
      branch.act({ function: "deploy", arguments: { to: "prod" } }, {
        approve: (pending, { signal }) => {
          seen = pending;
          handlerSignal = signal;
          return new Promise<boolean>(() => {}); // a person who never answers
        },
      }),
      (error: unknown) => error instanceof ToolDeniedError && error.reason === "expired",
    );
    assert.deepEqual(ran, []);
    assert.ok(seen!.expiresAt! > seen!.requestedAt);
    assert.equal(handlerSignal?.aborted, true);
    const answered = kinds.find((k) => k.kind === "ApprovalAnswered");
    assert.deepEqual(
      { approve: answered?.data.approve, reason: answered?.data.reason, by: answered?.data.by },
      { approve: false, reason: "expired", by: "hookscope" },
    );
    assert.deepEqual(kinds.map((k) => k.kind), [
      "ApprovalRequested",
      "ApprovalAnswered",
      "ToolDenied",
    ]);
  });

  it("an answer in time runs the call", async () => {
    const { session, branch, ran } = inlineSession();
    session.hooks.on("tool.pre", () => ({ decision: "ask", expiresInMs: 60_000 }));
    await branch.act({ function: "deploy", arguments: { to: "prod" } }, { approve: () => true });
    assert.deepEqual(ran, [{ to: "prod" }]);
  });

  it("an answer by someone the hooks did not name is not taken: rejected, the tool does not run", async () => {
    const { session, branch, ran, kinds } = inlineSession();
    session.hooks.on("tool.pre", () => ({ decision: "ask", answerableBy: ["ana"] }));
    await assert.rejects(
      branch.act({ function: "deploy", arguments: {} }, {
        approve: () => ({ approve: true, by: "mallory" }),
      }),
      (error: unknown) =>
        error instanceof ToolDeniedError && /"mallory" may not answer it; who may: "ana"/.test(
          error.reason,
        ),
    );
    await assert.rejects(
      branch.act({ function: "deploy", arguments: {} }, { approve: () => true }),
      (error: unknown) =>
        error instanceof ToolDeniedError && /an answer without a name may not/.test(error.reason),
    );
    assert.deepEqual(ran, []);
    const requested = kinds.find((k) => k.kind === "ApprovalRequested");
    assert.deepEqual(requested?.data.answerableBy, ["ana"]);
    await branch.act({ function: "deploy", arguments: {} }, {
      approve: () => ({ approve: true, by: "ana" }),
    });
    assert.equal(ran.length, 1);
  });
});

const hasSqlite = await SqliteStore.open(join(dir, "probe.db")).then(
  (s) => (stores.push(s), true),
  () => false,
);

let count = 0;
for (const kind of ["memory", "sqlite"] as const) {
  describe(`a stopped run keeps the ask's terms, and the store enforces them (${kind})`, {
    skip: kind === "sqlite" && !hasSqlite ? "no node:sqlite here" : false,
  }, () => {
    async function setup(terms: Record<string, unknown>) {
      const server = await startOpenAIServer(approvalScript());
      servers.push(server);
      const n = ++count;
      const log = join(dir, `notes-${kind}-${n}.log`);
      const store = kind === "memory"
        ? new MemoryStore()
        : await SqliteStore.open(join(dir, `terms-${n}.db`));
      stores.push(store);
      const session = new Session({ store, model: modelFor(server.baseURL), defaultBranch: false });
      const branch = session.newBranch({
        model: modelFor(server.baseURL),
        tools: approvalTools(log),
      });
      session.hooks.on(
        "tool.pre",
        ({ toolName }) =>
          toolName === "note" ? { decision: "ask", reason: "notes", ...terms } : undefined,
        { name: "notes-policy" },
      );
      await session.start();
      const notes = () => {
        try {
          return readFileSync(log, "utf8").trim().split("\n").filter(Boolean);
        } catch {
          return [];
        }
      };
      return { server, store, session, branch, notes };
    }

    it("the pending approval and the stored run carry expiresAt and answerableBy", async () => {
      const { store, branch } = await setup({ expiresInMs: 600_000, answerableBy: ["ana", "bo"] });
      const before = Date.now();
      const stopped = await branch.operate("take a note");
      assert.equal(stopped.stoppedBy, "approval");
      const pending = stopped.pending![0];
      assert.ok(pending.expiresAt! >= before + 600_000);
      assert.deepEqual(pending.answerableBy, ["ana", "bo"]);
      const [row] = await store.listPendingApprovals({ runId: stopped.runId });
      assert.equal(row.expiresAt, pending.expiresAt);
      assert.deepEqual(row.answerableBy, ["ana", "bo"]);
      assert.equal(row.policy, "notes-policy");
      await assert.rejects(
        store.answerApproval(stopped.runId, "note_1", { approve: true, by: "mallory" }),
        (error: unknown) => error instanceof ApprovalConflictError && error.why === "not_allowed",
      );
      assert.equal(
        await store.answerApproval(stopped.runId, "note_1", { approve: true, by: "bo" }),
        true,
      );
    });

    it("past the expiry the store refuses answers and the resumed run tells the model expired", async () => {
      const { store, session, branch, server, notes } = await setup({ expiresInMs: 50 });
      const stopped = await branch.operate("take a note");
      await new Promise((resolve) => setTimeout(resolve, 120));
      await assert.rejects(
        store.answerApproval(stopped.runId, "note_1", { approve: true, by: "ana" }),
        (error: unknown) => error instanceof ApprovalConflictError && error.why === "expired",
      );
      const done = await session.resume(stopped.runId, {});
      assert.equal(done.stoppedBy, "answer");
      assert.deepEqual(notes(), []);
      const tool = messagesOf(server, 1).find((m) => m.tool_call_id === "note_1");
      assert.match(String(tool?.content), /Denied: expired/);
      const answer = (await store.getRun(stopped.runId))?.answers.note_1;
      assert.deepEqual({ approve: answer?.approve, reason: answer?.reason, by: answer?.by }, {
        approve: false,
        reason: "expired",
        by: "hookscope",
      });
    });

    it("an answer given in time runs on resume, even after the expiry has passed", async () => {
      // An absolute expiry: the resumed run's hooks ask again with the same, now past, time; the
      // stored answer was given in time and stands. The time is fixed when the hook first asks,
      // a second later: time enough to answer on a loaded machine (a fixed time from before the
      // model turn left only what was left of 400 ms); the test then waits until it has passed.
      let expiresAt: number | undefined;
      const terms = {
        get expiresAt(): number {
          return expiresAt ??= Date.now() + 1_000;
        },
      };
      const { store, session, branch, notes } = await setup(terms);
      const stopped = await branch.operate("take a note");
      assert.equal(stopped.pending?.[0].expiresAt, expiresAt);
      await store.answerApproval(stopped.runId, "note_1", { approve: true, by: "ana" });
      await new Promise((resolve) => setTimeout(resolve, expiresAt! - Date.now() + 50));
      assert.ok(Date.now() > expiresAt!, "the expiry has passed");
      const done = await session.resume(stopped.runId, {});
      assert.equal(done.stoppedBy, "answer");
      assert.deepEqual(notes(), ['{"text":"draft 1"}']);
    });
  });
}
