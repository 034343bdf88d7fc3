import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { AIMessage, type BaseMessage, createAgent, fakeModel, tool } from "langchain";
import { Command, MemorySaver } from "@langchain/langgraph";
import { z } from "zod";
import { MemoryStore, Session } from "../../mod.ts";
import { type HookscopeInterruptValue, hookscopeMiddleware } from "../../langchain/mod.ts";

// The real `createAgent` loop (model node, tool node, middleware) with LangChain's own fake chat
// model, which first asks for tool calls and then answers.

function signalKinds(session: Session): string[] {
  return session.observer.events.map((e) => (e as object).constructor.name);
}

function toolMessages(
  messages: BaseMessage[],
): { id: string; content: unknown; status?: string }[] {
  return messages.filter((m) => m.type === "tool").map((m) => {
    const t = m as unknown as { tool_call_id: string; content: unknown; status?: string };
    return { id: t.tool_call_id, content: t.content, status: t.status };
  });
}

function tools(ran: unknown[]) {
  const read = tool(({ path }: { path: string }) => {
    ran.push({ read: path });
    return `contents of ${path}`;
  }, { name: "read", description: "read a file", schema: z.object({ path: z.string() }) });
  const remove = tool(({ path }: { path: string }) => {
    ran.push({ remove: path });
    return `removed ${path}`;
  }, { name: "remove", description: "remove a file", schema: z.object({ path: z.string() }) });
  return [read, remove];
}

describe("hookscopeMiddleware in a createAgent run", () => {
  it("a denied call never runs and the model sees the reason; an allowed one runs", async () => {
    const ran: unknown[] = [];
    const session = new Session({ store: new MemoryStore() });
    session.hooks.on(
      "tool.pre",
      ({ toolName, args }) =>
        toolName === "remove" && String(args.path).startsWith("/")
          ? { decision: "deny", reason: "absolute paths are off limits" }
          : undefined,
    );
    const model = fakeModel()
      .respondWithTools([
        { name: "read", args: { path: "notes.txt" }, id: "c1" },
        { name: "remove", args: { path: "/etc" }, id: "c2" },
      ])
      .respond(new AIMessage("done"));
    const agent = createAgent({
      model,
      tools: tools(ran),
      middleware: [hookscopeMiddleware({ session })],
    });
    const result = await agent.invoke({ messages: [{ role: "user", content: "tidy up" }] });
    assert.deepEqual(ran, [{ read: "notes.txt" }]);
    const byId = Object.fromEntries(toolMessages(result.messages).map((m) => [m.id, m]));
    assert.equal(byId.c1.content, "contents of notes.txt");
    assert.equal(byId.c2.content, "Tool call denied: absolute paths are off limits");
    assert.equal(byId.c2.status, "error");
    // The model's second call saw the denial.
    const seen = model.calls[1].messages.map((m) => m.content);
    assert.ok(seen.includes("Tool call denied: absolute paths are off limits"), String(seen));
    assert.equal(result.messages.at(-1)?.content, "done");
    const kinds = signalKinds(session);
    assert.ok(kinds.includes("ToolDenied"), kinds.join(","));
  });

  it("an allow with updatedArgs runs the tool with the rewritten arguments and adds context", async () => {
    const ran: unknown[] = [];
    const session = new Session();
    session.hooks.on("tool.pre", ({ toolName, args }) =>
      toolName === "read"
        ? {
          decision: "allow",
          updatedArgs: {
            path: String(args.path).startsWith("sandbox/") ? args.path : `sandbox/${args.path}`,
          },
          context: "read from the sandbox",
        }
        : undefined);
    const model = fakeModel()
      .respondWithTools([{ name: "read", args: { path: "notes.txt" }, id: "c1" }])
      .respond(new AIMessage("done"));
    const agent = createAgent({
      model,
      tools: tools(ran),
      middleware: [hookscopeMiddleware({ session })],
    });
    const result = await agent.invoke({ messages: [{ role: "user", content: "read" }] });
    assert.deepEqual(ran, [{ read: "sandbox/notes.txt" }]);
    const [message] = toolMessages(result.messages);
    assert.equal(message.content, "contents of sandbox/notes.txt\n\nread from the sandbox");
    // The session's record of the call holds the arguments the tool ran with.
    const recorded = JSON.stringify(
      session.observer.events.filter((e) => (e as object).constructor.name === "MessageAdded"),
    );
    assert.ok(recorded.includes("sandbox/notes.txt"), recorded);
  });

  it("an ask interrupts the run; resumed with an approval, the tool runs once", async () => {
    const ran: unknown[] = [];
    const session = new Session();
    session.hooks.on(
      "tool.pre",
      ({ toolName }) =>
        toolName === "remove" ? { decision: "ask", reason: "removes a file" } : undefined,
    );
    const model = fakeModel()
      .respondWithTools([{ name: "remove", args: { path: "old.txt" }, id: "c1" }])
      .respond(new AIMessage("removed it"));
    const agent = createAgent({
      model,
      tools: tools(ran),
      checkpointer: new MemorySaver(),
      middleware: [hookscopeMiddleware({ session, approvedBy: "ana" })],
    });
    const config = { configurable: { thread_id: "t1" } };
    const first = await agent.invoke({ messages: [{ role: "user", content: "clean" }] }, config);
    assert.deepEqual(ran, []);
    const interrupts = (first as { __interrupt__?: { value: HookscopeInterruptValue }[] })
      .__interrupt__;
    assert.equal(interrupts?.length, 1);
    const value = interrupts![0].value;
    assert.equal(value.kind, "hookscope.approval");
    assert.equal(value.approval.toolName, "remove");
    assert.equal(value.approval.callId, "c1");
    assert.deepEqual(value.approval.args, { path: "old.txt" });
    assert.equal(value.approval.reason, "removes a file");
    assert.ok(signalKinds(session).includes("ApprovalRequested"));
    assert.ok(!signalKinds(session).includes("ApprovalAnswered"));

    const second = await agent.invoke(new Command({ resume: { approve: true } }), config);
    assert.deepEqual(ran, [{ remove: "old.txt" }]);
    const [message] = toolMessages(second.messages);
    assert.equal(message.content, "removed old.txt");
    assert.equal(second.messages.at(-1)?.content, "removed it");
    const answered = session.observer.events.filter((e) =>
      (e as object).constructor.name === "ApprovalAnswered"
    ) as unknown as { data: { approve: boolean; by?: string; callId: string } }[];
    assert.equal(answered.length, 1);
    assert.equal(answered[0].data.approve, true);
    assert.equal(answered[0].data.by, "ana");
    assert.equal(answered[0].data.callId, "c1");
  });

  it("an ask resumed with a rejection: the tool never runs and the model sees the reason", async () => {
    const ran: unknown[] = [];
    const session = new Session();
    session.hooks.on("tool.pre", () => ({ decision: "ask" }));
    const model = fakeModel()
      .respondWithTools([{ name: "remove", args: { path: "old.txt" }, id: "c1" }])
      .respond(new AIMessage("ok, kept it"));
    const agent = createAgent({
      model,
      tools: tools(ran),
      checkpointer: new MemorySaver(),
      middleware: [hookscopeMiddleware({ session })],
    });
    const config = { configurable: { thread_id: "t2" } };
    await agent.invoke({ messages: [{ role: "user", content: "clean" }] }, config);
    const second = await agent.invoke(
      new Command({ resume: { approve: false, reason: "keep it" } }),
      config,
    );
    assert.deepEqual(ran, []);
    const [message] = toolMessages(second.messages);
    assert.equal(message.content, "Tool call denied: keep it");
    assert.ok(signalKinds(session).includes("ToolDenied"));
  });

  it("a failing tool goes through tool.error and then LangChain's own error handling", async () => {
    const session = new Session();
    const seen: { toolName: string; callId: string; message: string }[] = [];
    session.hooks.on("tool.error", ({ toolName, callId, error }) => {
      seen.push({ toolName, callId, message: (error as Error).message });
    });
    const broken = tool((): string => {
      throw new Error("disk on fire");
    }, { name: "broken", description: "always fails", schema: z.object({}) });
    const model = fakeModel()
      .respondWithTools([{ name: "broken", args: {}, id: "c1" }])
      .respond(new AIMessage("gave up"));
    const agent = createAgent({
      model,
      tools: [broken],
      middleware: [hookscopeMiddleware({ session })],
    });
    const outcome = await agent.invoke({ messages: [{ role: "user", content: "go" }] }).then(
      (r) => ({ ok: true as const, messages: r.messages }),
      (e: unknown) => ({ ok: false as const, error: e as Error }),
    );
    assert.deepEqual(seen.map((s) => [s.toolName, s.callId]), [["broken", "c1"]]);
    assert.match(seen[0].message, /disk on fire/);
    // LangChain decides what happens next: createAgent's tool node rethrows an error that
    // reaches it through a wrapToolCall middleware, so the run rejects with the tool's error.
    assert.equal(outcome.ok, false);
    if (!outcome.ok) assert.match(String(outcome.error.message), /disk on fire/);
  });
});
