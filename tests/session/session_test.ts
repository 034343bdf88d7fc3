import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { BranchOwnershipError, Signal } from "../../core/mod.ts";
import { HookConfigError } from "../../hooks/errors.ts";
import { buildSessionBus, HookSignal, registerHandler } from "../../hooks/mod.ts";
import { DEFAULT_HOOKS, persistMessage } from "../../session/mod.ts";
import { MemoryStore } from "../../store/mod.ts";
import { Branch, type Message, MessageAdded, Session } from "../../session/mod.ts";

/** Registers a message.add handler on the session bus and collects the branch ids it sees. */
function listen(session: Session): string[] {
  const seen: string[] = [];
  session.hooks.on("message.add", (payload) => {
    seen.push(payload.branchId);
  });
  return seen;
}

describe("Session lazy ownership (D3)", () => {
  it("Session.observer and Session.hooks are made once and the bus is bound to the observer", () => {
    const session = new Session({ defaultBranch: false });
    assert.equal(session.hasHooks, false);
    const observer = session.observer;
    assert.equal(session.observer, observer);
    const bus = session.hooks;
    assert.equal(session.hooks, bus);
    assert.equal(bus.observer, observer);
    assert.equal(bus.context.sessionId, session.id);
  });

  it("a Session with a store makes the persisting observer and the bus at construction", () => {
    const session = new Session({ store: new MemoryStore() });
    assert.equal(session.hasHooks, true);
    assert.equal(session.observer.persisting, true);
    assert.equal(session.hooks.context.store, session.store);
    assert.equal(session.defaultBranch.hooks, session.hooks);
  });

  it("Session records a HookSignal for each hook point it emits, except message.add (X9)", async () => {
    const session = new Session();
    await session.start();
    await session.defaultBranch.addMessage({ role: "user", content: "x" });
    await session.end();
    await session.drainSignals();
    assert.deepEqual(session.observer.byType(HookSignal).map((s) => s.point), [
      "session.start",
      "session.end",
    ]);
    assert.equal(session.observer.byType(MessageAdded).length, 1);
  });
});

describe("Session.hooks backfill (X1 matrix)", () => {
  const cases = [
    { name: "bus made after the branches were included (backfill)", busFirst: false },
    { name: "bus made before the branches were included", busFirst: true },
  ];
  for (const { name, busFirst } of cases) {
    it(`Session delivers message.add from every branch: ${name}`, async () => {
      const session = new Session();
      let seen: string[] = [];
      if (busFirst) seen = listen(session);
      const included = new Branch();
      session.includeBranches(included);
      assert.equal(session.hasHooks, busFirst);
      if (!busFirst) {
        assert.equal(included.hooks, null);
        seen = listen(session); // makes the bus now: X1 backfills the included branches
      }
      const created = session.newBranch();
      const later = new Branch();
      session.includeBranches([later]);
      const branches = [session.defaultBranch, included, created, later];
      for (const branch of branches) {
        assert.equal(branch.hooks, session.hooks);
        await branch.addMessage({ role: "user", content: branch.id });
      }
      assert.deepEqual(seen, branches.map((b) => b.id));
    });
  }
});

describe("Session.hooks access order (X1)", () => {
  it("Session delivers from branches included before and after the bus in one matrix", async () => {
    for (const accessBusAt of [0, 1, 2, 3]) {
      const session = new Session({ defaultBranch: false });
      const seen: string[] = [];
      const steps: Array<() => void> = [
        () => session.includeBranches(new Branch()),
        () => session.newBranch(),
        () => session.includeBranches([new Branch(), new Branch()]),
      ];
      for (let i = 0; i <= steps.length; i++) {
        if (i === accessBusAt) session.hooks.on("message.add", (p) => void seen.push(p.branchId));
        steps[i]?.();
      }
      for (const branch of session.branches) {
        await branch.addMessage({ role: "user", content: "m" });
      }
      assert.deepEqual(
        seen,
        session.branches.map((b) => b.id),
        `bus accessed at step ${accessBusAt}`,
      );
    }
  });
});

describe("Session declarative hooks (X2)", () => {
  it("new Session({ hooks }) passes the overrides to buildSessionBus", async () => {
    const calls: string[] = [];
    registerHandler("sessionTestStart", (payload) => {
      calls.push((payload as { sessionId: string }).sessionId);
    });
    const session = new Session({
      hooks: { "session.start": ["sessionTestStart"], "message.add": [] },
    });
    assert.deepEqual(session.hooks.handlersFor("message.add"), []);
    await session.start();
    assert.deepEqual(calls, [session.id]);
    const defaults = buildSessionBus(null, { defaults: DEFAULT_HOOKS });
    assert.deepEqual(
      new Session().hooks.handlersFor("message.add"),
      defaults.handlersFor("message.add"),
    );
  });

  it("new Session({ hooks }) rejects a malformed config at construction", () => {
    assert.throws(
      () => new Session({ hooks: { "session.start": "nope" } as never }),
      HookConfigError,
    );
    assert.throws(() => new Session({ hooks: { "bogus.point": [] } }), RangeError);
  });
});

describe("Session branches", () => {
  it("includeBranches() is all-or-nothing with BranchOwnershipError", () => {
    const owner = new Session();
    const other = new Session({ defaultBranch: false });
    const owned = owner.newBranch();
    const free = new Branch();
    assert.throws(
      () => other.includeBranches([free, owned]),
      (error: unknown) =>
        error instanceof BranchOwnershipError && error.branchId === owned.id &&
        error.ownerId === owner.id,
    );
    assert.equal(other.branches.length, 0);
    assert.equal(free.session, null);
    assert.equal(other.branches.length, 0);
    assert.throws(() => other.includeBranches([{} as Branch]), TypeError);
  });

  it("includeBranches() twice is a no-op and the first branch becomes the default", () => {
    const session = new Session({ defaultBranch: false });
    const branch = new Branch();
    session.includeBranches(branch);
    session.includeBranches([branch, branch]);
    assert.deepEqual(session.branches, [branch]);
    assert.equal(session.defaultBranch, branch);
    assert.equal(branch.observer, session.observer);
  });

  it("removeBranch() detaches the branch, keeps its messages and re-points the default", async () => {
    const session = new Session();
    const first = session.defaultBranch;
    const second = session.newBranch();
    void session.hooks;
    await first.addMessage({ role: "user", content: "kept" });
    assert.equal(session.removeBranch(first.id), first);
    assert.equal(first.session, null);
    assert.equal(first.observer, null);
    assert.equal(first.hooks, null);
    assert.equal(first.messages.length, 1);
    assert.equal(session.defaultBranch, second);
    assert.throws(() => session.removeBranch(first), RangeError);
    const elsewhere = new Session({ defaultBranch: false });
    elsewhere.includeBranches(first); // reparenting works after removal
    assert.equal(first.session, elsewhere);
  });

  it("newBranch() emits branch.create with branchId, model, provider and agentName", async () => {
    const session = new Session();
    const payloads: unknown[] = [];
    session.hooks.on("branch.create", (p) => void payloads.push(p));
    const model = { model: "gpt-x", endpoint: { name: "openai" } } as never;
    const branch = session.newBranch({ name: "researcher", model });
    await session.drainSignals();
    assert.deepEqual(payloads, [{
      branchId: branch.id,
      model: "gpt-x",
      provider: "openai",
      agentName: "researcher",
    }]);
  });

  it("newBranch({ spec }) takes the spec's name unless a name is given; a non-spec is a TypeError", async () => {
    const { AgentSpec } = await import("../../action/mod.ts");
    const session = new Session();
    const names: unknown[] = [];
    session.hooks.on("branch.create", (p) => void names.push(p.agentName));
    const spec = new AgentSpec({ name: "coder" });
    assert.equal(session.newBranch({ spec }).name, "coder");
    assert.equal(session.newBranch({ spec, name: "reviewer" }).name, "reviewer");
    await session.drainSignals();
    assert.deepEqual(names, ["coder", "reviewer"]);
    assert.throws(() => new Branch({ spec: { name: "x" } as never }), {
      name: "TypeError",
      message: "Cannot create branch: spec must be an AgentSpec",
    });
  });

  it("a standalone Branch emits [] and authorizes true", async () => {
    const branch = new Branch();
    assert.deepEqual(await branch.emit("x"), []);
    assert.equal(await branch.authorize("x"), true);
    assert.equal(branch.session, null);
    assert.equal(branch.observer, null);
  });

  it("an included Branch emits to and authorizes through the session observer", async () => {
    const session = new Session();
    session.gate((p) => p !== "no");
    session.observe({ type: Signal }, () => "seen");
    const branch = session.defaultBranch;
    assert.deepEqual(await branch.emit("yes"), ["seen"]);
    assert.equal(await branch.authorize("no"), false);
  });
});

describe("Branch messages (X7, X20)", () => {
  it("Branch.addMessage() emits message.add with sessionId, branchId and the record, after storing (X7)", async () => {
    const session = new Session();
    const branch = session.defaultBranch;
    const seen: unknown[] = [];
    session.hooks.on("message.add", (payload) => {
      seen.push({ ...payload, stored: branch.messages.length });
    });
    const message = await branch.addMessage({
      role: "assistant",
      content: { text: "hi" },
      sender: "bot",
    });
    assert.deepEqual(seen, [{
      sessionId: session.id,
      branchId: branch.id,
      message: {
        id: message.id,
        role: "assistant",
        content: { text: "hi" },
        sender: "bot",
        recipient: null,
        branchId: branch.id,
        sessionId: session.id,
        createdAt: message.createdAt,
      },
      stored: 1,
    }]);
  });

  it("the default persistMessage handler persists Branch messages when a store is configured (X7)", async () => {
    const store = new MemoryStore();
    const session = new Session({ store });
    await session.start();
    assert.ok(session.hooks.handlersFor("message.add").includes(persistMessage as never));
    const branch = session.defaultBranch;
    await branch.addMessage({ role: "system", content: "rules" });
    await branch.addMessage({ role: "user", content: "hi" });
    const rows = await store.listMessages({ sessionId: session.id });
    assert.deepEqual(rows.map((r) => [r.role, r.content, r.branchId]), [
      ["system", "rules", branch.id],
      ["user", "hi", branch.id],
    ]);
    assert.equal((await store.getBranch(branch.id))?.systemMessageId, rows[0].id);
  });

  it("Branch.addMessage() runs callbacks in order after storing and reports their errors together (X20)", async () => {
    const branch = new Branch();
    const order: string[] = [];
    branch.onMessageAdded(async (m) => {
      await new Promise((r) => setTimeout(r, 5));
      order.push(`async ${m.content} ${branch.messages.length}`);
    });
    branch.onMessageAdded((m) => void order.push(`sync ${m.content}`));
    await branch.addMessage({ role: "user", content: "a" });
    assert.deepEqual(order, ["async a 1", "sync a"]);
    const one = new Error("one");
    branch.onMessageAdded(() => {
      throw one;
    });
    await assert.rejects(branch.addMessage({ role: "user", content: "b" }), (e) => e === one);
    // deno-lint-ignore require-await
    branch.onMessageAdded(async () => {
      throw new Error("two");
    });
    await assert.rejects(
      branch.addMessage({ role: "user", content: "c" }),
      (e: unknown) => e instanceof AggregateError && e.errors.length === 2,
    );
    assert.equal(branch.messages.length, 3, "the message is stored even when callbacks fail");
    assert.deepEqual(order.slice(-2), ["async c 3", "sync c"]);
  });

  it("Branch.addMessage() rejects a malformed message and adds nothing", async () => {
    const branch = new Branch();
    await assert.rejects(branch.addMessage({ role: "robot" as never, content: "x" }), TypeError);
    await assert.rejects(
      branch.addMessage({ role: "action_request", content: { arguments: {} } }),
      TypeError,
    );
    assert.equal(branch.messages.length, 0);
    const request = await branch.addMessage({
      role: "action_request",
      content: { function: "add", arguments: { x: 1 }, callId: "c1" },
    });
    assert.equal(request.role, "action_request");
  });

  it("the observer receives MessageAdded for every branch message, in order", async () => {
    const session = new Session();
    const seen: Message[] = [];
    session.observe({ type: MessageAdded }, (s) => void seen.push(s.data as Message));
    const branch = session.defaultBranch;
    for (const content of ["a", "b", "c"]) await branch.addMessage({ role: "user", content });
    await session.drainSignals();
    assert.deepEqual(seen.map((m) => m.content), ["a", "b", "c"]);
  });
});

describe("Session start and end", () => {
  it("Session.start() creates the row if missing and the default handlers mark it running, then completed", async () => {
    const store = new MemoryStore();
    const session = new Session({ store });
    await session.start({ model: "m", provider: "p" });
    const started = await store.getSession(session.id);
    assert.equal(started?.status, "running");
    assert.equal(started?.model, "m");
    await session.start(); // idempotent: the row exists and is started
    await session.end({ status: "failed", error: "boom" });
    const ended = await store.getSession(session.id);
    assert.equal(ended?.status, "failed");
    assert.equal(typeof ended?.endedAt, "number");
  });

  it("Session.start() keeps an existing row", async () => {
    const store = new MemoryStore();
    await store.createSession({ id: "fixed", status: "created", inputTokens: 7 });
    const session = new Session({ store, id: "fixed" });
    await session.start();
    const row = await store.getSession("fixed");
    assert.equal(row?.inputTokens, 7);
    assert.equal(row?.status, "running");
  });
});

describe("Session concurrency", () => {
  it("1 000 concurrent emits and addMessages on one session lose and duplicate nothing", async () => {
    const store = new MemoryStore();
    const session = new Session({ store });
    await session.start();
    const branch = session.defaultBranch;
    const seenEmits: unknown[] = [];
    session.observe({ where: (p) => typeof p === "number" }, async (n) => {
      await Promise.resolve();
      seenEmits.push(n);
    });
    const work: Promise<unknown>[] = [];
    for (let i = 0; i < 1000; i++) {
      work.push(session.emit(i));
      work.push(branch.addMessage({ role: "user", content: i }));
    }
    await Promise.all(work);
    await session.drainSignals();
    assert.deepEqual(
      [...seenEmits].sort((a, b) => Number(a) - Number(b)),
      Array.from({ length: 1000 }, (_, i) => i),
    );
    assert.equal(branch.messages.length, 1000);
    const rows = await store.listMessages({ sessionId: session.id });
    assert.equal(rows.length, 1000);
    assert.equal(new Set(rows.map((r) => r.id)).size, 1000);
    assert.deepEqual(rows.map((r) => r.content), branch.messages.map((m) => m.content));
    const signals = await store.listSessionSignals(session.id);
    const kinds = new Map<string, number>();
    for (const s of signals) kinds.set(s.kind, (kinds.get(s.kind) ?? 0) + 1);
    assert.equal(kinds.get("MessageAdded"), 1000);
    assert.equal(kinds.get("Signal"), 1000);
    assert.equal(new Set(signals.map((s) => s.seq)).size, signals.length);
    assert.equal(session.observer.byType(MessageAdded).length, 1000);
  });
});
