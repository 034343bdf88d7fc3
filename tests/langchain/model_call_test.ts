import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { AIMessage, createAgent, fakeModel, HumanMessage, tool } from "langchain";
import { z } from "zod";
import { Session } from "../../mod.ts";
import { HookPhaseError, HookRegistry } from "../../service/mod.ts";
import {
  hookscopeMiddleware,
  type LangChainModelCall,
  ModelCallRefusedError,
} from "../../langchain/mod.ts";

// The real `createAgent` loop with LangChain's own fake chat model: each model call of the run
// goes through the middleware's wrapModelCall and the service hooks given as `modelHooks`.

function readTool(ran: string[]) {
  return tool(({ path }: { path: string }) => {
    ran.push(path);
    return `contents of ${path}`;
  }, { name: "read", description: "read a file", schema: z.object({ path: z.string() }) });
}

function record(session: Session): { point: string; payload: Record<string, unknown> }[] {
  const points: { point: string; payload: Record<string, unknown> }[] = [];
  session.hooks.on("api.pre_call", (payload) => {
    points.push({ point: "api.pre_call", payload: { ...payload } });
  });
  session.hooks.on("api.post_call", (payload) => {
    points.push({ point: "api.post_call", payload: { ...payload } });
  });
  return points;
}

describe("hookscopeMiddleware around model calls", () => {
  it("every model call passes through preInvoke and postInvoke and is recorded", async () => {
    const ran: string[] = [];
    const session = new Session();
    const points = record(session);
    const seen: { phase: string; tools: readonly string[]; messages: number; answer?: unknown }[] =
      [];
    const modelHooks = new HookRegistry({
      hooks: {
        preInvoke: (event) => {
          const call = event as unknown as LangChainModelCall;
          assert.equal(call.type, "langchain");
          seen.push({ phase: "pre", tools: call.tools, messages: call.messages.length });
          // A pre hook may rewrite what the model is sent.
          call.messages = [...call.messages, new HumanMessage("(checked by hookscope)")];
        },
        postInvoke: (event) => {
          const call = event as unknown as LangChainModelCall;
          seen.push({
            phase: "post",
            tools: call.tools,
            messages: call.messages.length,
            answer: (call.response as AIMessage).content,
          });
        },
      },
    });
    const model = fakeModel()
      .respondWithTools([{ name: "read", args: { path: "a.txt" }, id: "c1" }])
      .respond(new AIMessage("done"));
    const agent = createAgent({
      model,
      tools: [readTool(ran)],
      middleware: [hookscopeMiddleware({ session, modelHooks })],
    });
    const result = await agent.invoke({ messages: [{ role: "user", content: "read a.txt" }] });
    assert.equal(result.messages.at(-1)?.content, "done");
    assert.deepEqual(ran, ["a.txt"]);
    assert.deepEqual(seen.map((s) => s.phase), ["pre", "post", "pre", "post"]);
    assert.deepEqual(seen[0].tools, ["read"]);
    assert.equal(seen[3].answer, "done");
    // The model received the rewritten messages.
    assert.equal(model.calls.length, 2);
    assert.equal(model.calls[0].messages.at(-1)?.content, "(checked by hookscope)");
    // Each call is recorded on the session's bus, as the AI SDK middleware does.
    assert.deepEqual(points.map((p) => p.point), [
      "api.pre_call",
      "api.post_call",
      "api.pre_call",
      "api.post_call",
    ]);
    const post = points[3].payload;
    assert.equal(post.status, "completed");
    assert.equal(typeof post.latencyMs, "number");
    assert.equal(typeof post.model, "string");
    assert.match(String(points[0].payload.requestSummary), /read a\.txt/);
  });

  it("a postInvoke handler may replace the answer", async () => {
    const modelHooks = new HookRegistry({
      hooks: {
        postInvoke: (event) => {
          const call = event as unknown as LangChainModelCall;
          call.response = new AIMessage(`[reviewed] ${(call.response as AIMessage).content}`);
        },
      },
    });
    const agent = createAgent({
      model: fakeModel().respond(new AIMessage("hello")),
      tools: [],
      middleware: [hookscopeMiddleware({ modelHooks })],
    });
    const result = await agent.invoke({ messages: [{ role: "user", content: "hi" }] });
    assert.equal(result.messages.at(-1)?.content, "[reviewed] hello");
  });

  it("a throwing preInvoke refuses the call: the model is not called, the run rejects", async () => {
    const ran: string[] = [];
    const session = new Session();
    const points = record(session);
    const modelHooks = new HookRegistry({
      hooks: {
        preInvoke: () => {
          throw new Error("budget spent");
        },
      },
    });
    const model = fakeModel()
      .respondWithTools([{ name: "read", args: { path: "a.txt" }, id: "c1" }])
      .respond(new AIMessage("done"));
    const agent = createAgent({
      model,
      tools: [readTool(ran)],
      middleware: [hookscopeMiddleware({ session, modelHooks })],
    });
    const error = await agent.invoke({ messages: [{ role: "user", content: "go" }] }).then(
      () => undefined,
      (e: unknown) => e,
    );
    // LangChain wraps a middleware's error in its MiddlewareError, keeping the name and the
    // original as `cause`.
    assert.ok(error instanceof Error, String(error));
    assert.equal(error.name, "ModelCallRefusedError");
    const refused = error instanceof ModelCallRefusedError ? error : error.cause;
    assert.ok(refused instanceof ModelCallRefusedError, String(refused));
    assert.ok(refused instanceof HookPhaseError);
    assert.equal(refused.reason, "budget spent");
    assert.equal((refused.cause as Error).message, "budget spent");
    assert.equal(model.calls.length, 0);
    assert.deepEqual(ran, []);
    assert.deepEqual(points.map((p) => [p.point, p.payload.status]), [
      ["api.pre_call", undefined],
      ["api.post_call", "cancelled"],
    ]);
  });

  it("a failing postInvoke is ignored by default and rejects with modelHookExit", async () => {
    const hooks = () =>
      new HookRegistry({
        hooks: {
          postInvoke: () => {
            throw new Error("audit down");
          },
        },
      });
    const quiet = createAgent({
      model: fakeModel().respond(new AIMessage("hello")),
      tools: [],
      middleware: [hookscopeMiddleware({ modelHooks: hooks() })],
    });
    const result = await quiet.invoke({ messages: [{ role: "user", content: "hi" }] });
    assert.equal(result.messages.at(-1)?.content, "hello");
    const strict = createAgent({
      model: fakeModel().respond(new AIMessage("hello")),
      tools: [],
      middleware: [hookscopeMiddleware({ modelHooks: hooks(), modelHookExit: true })],
    });
    await assert.rejects(
      strict.invoke({ messages: [{ role: "user", content: "hi" }] }),
      /audit down/,
    );
  });

  it("bad model-hook options are a TypeError", () => {
    assert.throws(
      () => hookscopeMiddleware({ modelHooks: {} as unknown as HookRegistry }),
      { name: "TypeError", message: /modelHooks must be a HookRegistry/ },
    );
    assert.throws(() => hookscopeMiddleware({ modelHookTimeoutMs: 0 }), TypeError);
  });
});
