import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { IModel } from "../../service/mod.ts";
import { Branch, Session } from "../../session/mod.ts";
import type { HookBus } from "../../hooks/mod.ts";
import {
  jsonReply,
  type OpenAIServer,
  sseReply,
  startOpenAIServer,
  textEvents,
} from "../fixtures/openai_server.ts";

const servers: OpenAIServer[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

async function modelFor(replies: Parameters<typeof startOpenAIServer>[0]): Promise<IModel> {
  const server = await startOpenAIServer(replies);
  servers.push(server);
  return new IModel({ model: "test-model", baseURL: server.baseURL, apiKey: "sk-x" });
}

const REPLY = { choices: [{ message: { content: "hi" } }] };

function points(bus: HookBus): string[] {
  const seen: string[] = [];
  for (const point of ["api.pre_call", "api.post_call", "api.stream_chunk"] as const) {
    bus.on(point, () => void seen.push(point));
  }
  return seen;
}

describe("Session({ model }) bridges the model's api.* points", () => {
  it("emits api.pre_call and api.post_call on the session bus for each model call", async () => {
    const model = await modelFor([jsonReply(REPLY), jsonReply(REPLY)]);
    const session = new Session({ model });
    assert.equal(session.hasHooks, true, "the bus is made at construction");
    const seen = points(session.hooks);
    await model.invoke({ messages: [{ role: "user", content: "a" }] });
    await model.invoke({ messages: [{ role: "user", content: "b" }] });
    await session.drainSignals();
    assert.deepEqual(seen, ["api.pre_call", "api.post_call", "api.pre_call", "api.post_call"]);
  });

  it("bridgeModel: false leaves the model unobserved (0 emissions)", async () => {
    const model = await modelFor([jsonReply(REPLY)]);
    const session = new Session({ model, bridgeModel: false });
    assert.equal(session.hasHooks, false);
    const seen = points(session.hooks);
    await model.invoke({ messages: [] });
    await session.drainSignals();
    assert.deepEqual(seen, []);
  });

  it("bridgeModel takes the bridge's options: { chunks: false } drops api.stream_chunk", async () => {
    const quietModel = await modelFor([sseReply(textEvents(["Hel", "lo"]))]);
    const quiet = new Session({ model: quietModel, bridgeModel: { chunks: false } });
    const seen = points(quiet.hooks);
    for await (const _ of quietModel.stream({ messages: [] })) { /* read to the end */ }
    await quiet.drainSignals();
    assert.deepEqual(seen, ["api.pre_call", "api.post_call"]);

    const loudModel = await modelFor([sseReply(textEvents(["Hel", "lo"]))]);
    const loud = new Session({ model: loudModel });
    const all = points(loud.hooks);
    for await (const _ of loudModel.stream({ messages: [] })) { /* read to the end */ }
    await loud.drainSignals();
    assert.equal(all[0], "api.pre_call");
    assert.equal(all[all.length - 1], "api.post_call");
    assert.ok(all.includes("api.stream_chunk"), all.join(","));
  });

  it("rejects a bridgeModel that is neither a boolean nor an object, and a model that is not an IModel", () => {
    assert.throws(() => new Session({ bridgeModel: "yes" as never }), /bridgeModel must be/);
    assert.throws(() => new Session({ bridgeModel: null as never }), /bridgeModel must be/);
    assert.throws(() => new Session({ model: {} as never }), /model must be an IModel/);
  });
});

describe("Session.defaultBranch is never null", () => {
  it("is made (with the session's model) when first read if none was made at construction", async () => {
    const model = await modelFor([]);
    const session = new Session({ model, defaultBranch: false, bridgeModel: false });
    assert.equal(session.branches.length, 0);
    const branch = session.defaultBranch;
    assert.ok(branch instanceof Branch);
    assert.equal(branch.model, model);
    assert.equal(branch.session, session);
    assert.equal(session.defaultBranch, branch);
    assert.deepEqual(session.branches, [branch]);
  });

  it("is the first included branch when one was included before it was read", () => {
    const session = new Session({ defaultBranch: false });
    const included = new Branch();
    session.includeBranches(included);
    assert.equal(session.defaultBranch, included);
    assert.equal(session.branches.length, 1);
  });

  it("is made again after every branch was removed", () => {
    const session = new Session();
    const first = session.defaultBranch;
    session.removeBranch(first);
    assert.equal(session.branches.length, 0);
    const next = session.defaultBranch;
    assert.notEqual(next, first);
    assert.deepEqual(session.branches, [next]);
  });
});
