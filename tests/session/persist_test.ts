import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { persistMessage } from "../../session/mod.ts";
import { routeMessagePersistence, unrouteMessagePersistence } from "../../session/persist.ts";
import { MemoryStore } from "../../store/mod.ts";
import { Branch, Session } from "../../session/mod.ts";

describe("routeMessagePersistence()", () => {
  it("routeMessagePersistence() removes the default persistMessage and forwards this branch's messages", async () => {
    const store = new MemoryStore();
    const session = new Session({ store });
    const branch = session.defaultBranch;
    const other = session.newBranch();
    const saved: unknown[] = [];
    routeMessagePersistence(session, branch, (message) => void saved.push(message));
    assert.equal(session.hooks.handlersFor("message.add").includes(persistMessage as never), false);
    const m = await branch.addMessage({ role: "user", content: "mine" });
    await other.addMessage({ role: "user", content: "not mine" });
    assert.deepEqual(saved.map((r) => (r as { id: string }).id), [m.id]);
    assert.deepEqual(await store.listMessages({}), [], "the default handler no longer writes");
  });

  it("routeMessagePersistence() binds the session bus to a branch that had none", async () => {
    const session = new Session();
    const loose = new Branch();
    const saved: unknown[] = [];
    routeMessagePersistence(session, loose, (message) => void saved.push(message));
    assert.equal(loose.hooks, session.hooks);
    await loose.addMessage({ role: "user", content: "x" });
    assert.equal(saved.length, 1);
    assert.equal((saved[0] as { sessionId: string }).sessionId, session.id);
  });

  it("routeMessagePersistence() is idempotent per (branch, callback) (X18)", async () => {
    const session = new Session();
    const branch = session.defaultBranch;
    const saved: unknown[] = [];
    const onMessage = (message: unknown) => void saved.push(message);
    const first = routeMessagePersistence(session, branch, onMessage);
    const second = routeMessagePersistence(session, branch, onMessage);
    assert.equal(second, first);
    assert.equal(branch.messageCallbacks.filter((c) => c === branch.persistViaBus).length, 1);
    await branch.addMessage({ role: "user", content: "once" });
    assert.equal(saved.length, 1);
    const another: unknown[] = [];
    const third = routeMessagePersistence(session, branch, (m) => void another.push(m));
    assert.notEqual(third, first);
    await branch.addMessage({ role: "user", content: "twice" });
    assert.deepEqual([saved.length, another.length], [2, 1]);
  });

  it("unrouteMessagePersistence() removes the handler and the branch callback, and routing again works", async () => {
    const session = new Session();
    const branch = session.defaultBranch;
    const saved: unknown[] = [];
    const onMessage = (message: unknown) => void saved.push(message);
    const handler = routeMessagePersistence(session, branch, onMessage);
    unrouteMessagePersistence(branch, handler);
    assert.equal(session.hooks.handlersFor("message.add").includes(handler), false);
    assert.equal(branch.messageCallbacks.includes(branch.persistViaBus), false);
    assert.equal(branch.hooks, session.hooks, "the bus stays bound");
    await branch.addMessage({ role: "user", content: "dropped" });
    assert.equal(saved.length, 0);
    const again = routeMessagePersistence(session, branch, onMessage);
    assert.notEqual(again, handler);
    await branch.addMessage({ role: "user", content: "kept" });
    assert.equal(saved.length, 1);
  });

  it("routeMessagePersistence() rejects bad arguments and changes nothing", () => {
    const session = new Session();
    const before = session.hooks.handlersFor("message.add");
    assert.throws(
      () => routeMessagePersistence(session, session.defaultBranch, null as never),
      TypeError,
    );
    assert.throws(() => routeMessagePersistence(session, null as never, () => {}), TypeError);
    assert.deepEqual(session.hooks.handlersFor("message.add"), before);
  });
});
