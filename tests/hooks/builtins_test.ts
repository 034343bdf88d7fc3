import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { HookBus, type HookContext, MemoryStore } from "../../mod.ts";
import {
  buildSessionBus,
  logApiMetrics,
  logger,
  type LogRecord,
  logToolCall,
} from "../../hooks/mod.ts";
import {
  DEFAULT_HOOKS,
  persistBranchProvenance,
  persistMessage,
  persistSessionEnd,
  persistSessionStart,
} from "../../session/mod.ts";

function contextFor(store?: MemoryStore): HookContext {
  return new HookBus(null, store ? { store } : {}).context;
}

async function storeWith(status: string, extra: Record<string, unknown> = {}) {
  const store = new MemoryStore();
  await store.createSession({ id: "s1", status, ...extra });
  return store;
}

describe("built-in handlers: persistSessionStart", () => {
  it("marks a created session running with reason code and all provenance fields", async () => {
    const store = await storeWith("created");
    await persistSessionStart(
      { sessionId: "s1", model: "gpt", provider: "openai" },
      contextFor(store),
    );
    const row = await store.getSession("s1");
    assert.equal(row?.status, "running");
    assert.equal(row?.statusReasonCode, "run.started.ok");
    assert.equal(row?.model, "gpt");
    assert.equal(row?.provider, "openai");
    assert.equal(typeof row?.startedAt, "number");
  });

  it("is idempotent: a second start changes nothing", async () => {
    const store = await storeWith("created");
    const ctx = contextFor(store);
    await persistSessionStart({ sessionId: "s1", model: "first" }, ctx);
    const first = await store.getSession("s1");
    await persistSessionStart({ sessionId: "s1", model: "second" }, ctx);
    assert.deepEqual(await store.getSession("s1"), first);
  });

  it("does nothing for a missing row or a terminal status", async () => {
    for (
      const status of [
        "completed",
        "completed_empty",
        "failed",
        "timed_out",
        "aborted",
        "cancelled",
      ]
    ) {
      const store = await storeWith(status);
      await persistSessionStart({ sessionId: "s1" }, contextFor(store));
      assert.equal((await store.getSession("s1"))?.status, status);
    }
    const empty = new MemoryStore();
    await persistSessionStart({ sessionId: "nope" }, contextFor(empty));
    assert.equal(await empty.getSession("nope"), undefined);
  });

  it("rejects when sessionId is missing, with or without a store", async () => {
    await assert.rejects(
      persistSessionStart({} as never, contextFor()),
      /non-empty string "sessionId"/,
    );
    await assert.rejects(
      persistSessionStart({} as never, contextFor(new MemoryStore())),
      TypeError,
    );
  });

  it("without a store, every persistence handler resolves and still validates its payload", async () => {
    const message = { id: "m1", role: "user", content: "hi" };
    const cases = [
      [persistSessionStart, { sessionId: "s1" }],
      [persistSessionEnd, { sessionId: "s1", status: "failed" }],
      [persistBranchProvenance, { branchId: "b1" }],
      [persistMessage, { sessionId: "s1", message }],
    ] as const;
    for (const [handler, payload] of cases) {
      const run = handler as (p: unknown, c: HookContext) => Promise<void>;
      assert.equal(await run(payload, contextFor()), undefined, handler.name);
      await assert.rejects(run({}, contextFor()), TypeError, handler.name);
    }
  });
});

describe("built-in handlers: persistSessionEnd", () => {
  it("maps each status to its reason code and stamps endedAt", async () => {
    const codes: Record<string, string> = {
      completed: "run.completed.ok",
      failed: "run.failed.exception",
      timed_out: "run.timed_out.deadline",
      aborted: "run.aborted.user",
      cancelled: "run.cancelled.system",
      weird: "run.failed.exception",
    };
    for (const [status, code] of Object.entries(codes)) {
      const store = await storeWith("running");
      await persistSessionEnd({ sessionId: "s1", status }, contextFor(store));
      const row = await store.getSession("s1");
      assert.equal(row?.status, status);
      assert.equal(row?.statusReasonCode, code);
      assert.equal(typeof row?.endedAt, "number");
    }
  });

  it("defaults to completed, merges the error into metadata and adds only present usage", async () => {
    const store = await storeWith("running", { metadata: { host: "a" } });
    await persistSessionEnd(
      { sessionId: "s1", error: "boom", inputTokens: 10, outputTokens: null },
      contextFor(store),
    );
    const row = await store.getSession("s1");
    assert.equal(row?.status, "completed");
    assert.deepEqual(row?.metadata, { host: "a", error: "boom" });
    assert.equal(row?.inputTokens, 10);
    assert.equal(row?.outputTokens ?? null, null);
  });

  it("an already terminal row only receives usage: no status change, no endedAt", async () => {
    const store = await storeWith("failed");
    await persistSessionEnd(
      { sessionId: "s1", status: "completed", numTurns: 3 },
      contextFor(store),
    );
    const row = await store.getSession("s1");
    assert.equal(row?.status, "failed");
    assert.equal(row?.numTurns, 3);
    assert.equal(row?.endedAt ?? null, null);
  });

  it("does nothing for a missing row and rejects without sessionId", async () => {
    const store = new MemoryStore();
    await persistSessionEnd({ sessionId: "ghost" }, contextFor(store));
    assert.equal(await store.getSession("ghost"), undefined);
    await assert.rejects(persistSessionEnd({} as never, contextFor(store)), TypeError);
  });
});

describe("built-in handlers: persistBranchProvenance and persistMessage", () => {
  it("persistBranchProvenance writes the three fields, nulls included", async () => {
    const store = new MemoryStore();
    await persistBranchProvenance({ branchId: "b1", model: "m" }, contextFor(store));
    const branch = await store.getBranch("b1");
    assert.equal(branch?.model, "m");
    assert.equal(branch?.provider ?? null, null);
    await assert.rejects(persistBranchProvenance({} as never, contextFor(store)), TypeError);
  });

  it("persistMessage inserts, appends to progressions, remembers system messages, touches activity", async () => {
    const store = await storeWith("running");
    const ctx = contextFor(store);
    await persistMessage({
      sessionId: "s1",
      branchId: "b1",
      branchSequenceId: "bp",
      sessionSequenceId: "sp",
      message: { id: "m1", role: "system", content: "be brief", createdAt: 5 },
    }, ctx);
    await persistMessage({
      sessionId: "s1",
      branchId: "b1",
      sequenceId: "bp",
      message: { id: "m2", role: "user", content: { text: "hi" }, sender: "u", createdAt: 6 },
    }, ctx);
    const messages = await store.listMessages({ sessionId: "s1" });
    assert.deepEqual(messages.map((m) => m.id), ["m1", "m2"]);
    assert.equal(messages[1].sender, "u");
    assert.equal(messages[1].branchId, "b1");
    assert.deepEqual((await store.listMessages({ sequenceId: "bp" })).map((m) => m.id), [
      "m1",
      "m2",
    ]);
    assert.deepEqual((await store.listMessages({ sequenceId: "sp" })).map((m) => m.id), ["m1"]);
    assert.equal((await store.getBranch("b1"))?.systemMessageId, "m1");
    assert.equal(typeof (await store.getSession("s1"))?.lastActivityAt, "number");
  });

  it("persistMessage rejects a payload without sessionId or message, and an unknown role", async () => {
    const store = await storeWith("running");
    const ctx = contextFor(store);
    await assert.rejects(
      persistMessage({ branchId: "b", message: { id: "m", role: "user" } } as never, ctx),
      /"sessionId"/,
    );
    await assert.rejects(persistMessage({ sessionId: "s1" } as never, ctx), /"message"/);
    await assert.rejects(
      persistMessage({ sessionId: "s1", message: { id: "m", role: "robot" } } as never, ctx),
      /unknown message role "robot"/,
    );
    assert.equal((await store.listMessages({ sessionId: "s1" })).length, 0);
  });

  it("the default bus persists a session lifecycle end to end through its context store", async () => {
    const store = await storeWith("created");
    const bus = buildSessionBus(null, { store, sessionId: "s1", defaults: DEFAULT_HOOKS });
    await bus.emit("session.start", { sessionId: "s1", model: "m" });
    await bus.emit("message.add", {
      sessionId: "s1",
      branchId: "b1",
      message: { id: "m1", role: "user", content: "hi" },
    });
    await bus.emit("branch.create", { branchId: "b1", agentName: "a" });
    await bus.emit("session.end", { sessionId: "s1", status: "completed", numTurns: 1 });
    const row = await store.getSession("s1");
    assert.equal(row?.status, "completed");
    assert.equal(row?.numTurns, 1);
    assert.equal((await store.listMessages({ sessionId: "s1" })).length, 1);
    assert.equal((await store.getBranch("b1"))?.agentName, "a");
  });
});

describe("built-in handlers: logging", () => {
  it("logApiMetrics and logToolCall write one info line each", () => {
    const lines: LogRecord[] = [];
    logger.configure({ level: "info", sink: (r) => lines.push(r) });
    try {
      logApiMetrics({ model: "m", provider: "p", status: "completed", latencyMs: 5 });
      logToolCall({ toolName: "editor", args: { action: "edit", filePath: "a" } });
      logToolCall({ toolName: "bash", callId: "c", argsSummary: '{"command":"ls"}' });
    } finally {
      logger.configure({ level: "silent", sink: null });
    }
    assert.deepEqual(lines.map((l) => l.message), [
      "api.post_call model=m provider=p latency_ms=5",
      "tool.pre tool=editor action=edit args=[action, filePath]",
      'tool.pre tool=bash action= args={"command":"ls"}',
    ]);
    assert.throws(() => logToolCall({}), TypeError);
  });
});
