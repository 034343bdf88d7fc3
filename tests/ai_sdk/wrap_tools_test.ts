import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  generateText,
  jsonSchema,
  type ModelMessage,
  stepCountIs,
  tool,
  wrapLanguageModel,
} from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";
import { AgentSpec, ApprovalRequiredError, MemoryStore, Session } from "../../mod.ts";
import { Branch } from "../../session/mod.ts";
import {
  hookscopeMiddleware,
  recordApprovalAnswers,
  ToolFailedError,
  ToolNameCollisionError,
  wrapTools,
} from "../../ai-sdk/mod.ts";

// The real `ai` package drives a multi-step tool loop; its mock language model plays a model
// that first calls tools and then answers, and records every prompt it was sent.
const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

function scripted(turns: unknown[][], prompts: unknown[][]) {
  let i = 0;
  return new MockLanguageModelV3({
    doGenerate: (options) => {
      prompts.push(options.prompt as unknown[]);
      const content = turns[Math.min(i++, turns.length - 1)];
      const calls = content.some((c) => (c as { type: string }).type === "tool-call");
      return Promise.resolve({
        content,
        finishReason: calls
          ? { unified: "tool-calls", raw: "tool_calls" }
          : { unified: "stop", raw: "stop" },
        usage,
        warnings: [],
      } as never);
    },
  });
}

const call = (id: string, name: string, input: unknown) => ({
  type: "tool-call",
  toolCallId: id,
  toolName: name,
  input: JSON.stringify(input),
});

function toolOutputs(prompt: unknown[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const message of prompt as { role: string; content: unknown }[]) {
    if (message.role !== "tool") continue;
    for (const part of message.content as { type: string; toolCallId: string; output: unknown }[]) {
      if (part.type === "tool-result") out[part.toolCallId] = part.output;
    }
  }
  return out;
}

describe("wrapTools in a multi-step generateText", () => {
  it("a denied call never runs and the model sees the reason; an allowed one runs", async () => {
    const ran: string[] = [];
    const session = new Session({ store: new MemoryStore() });
    session.hooks.on(
      "tool.pre",
      ({ toolName, args }) =>
        toolName === "remove" && String(args.path).startsWith("/")
          ? { decision: "deny", reason: "absolute paths are off limits" }
          : undefined,
    );
    const tools = wrapTools({
      read: tool({
        inputSchema: z.object({ path: z.string() }),
        execute: ({ path }) => {
          ran.push(`read ${path}`);
          return `contents of ${path}`;
        },
      }),
      remove: tool({
        inputSchema: jsonSchema<{ path: string }>({
          type: "object",
          properties: { path: { type: "string" } },
          required: ["path"],
        }),
        execute: ({ path }) => {
          ran.push(`remove ${path}`);
          return "removed";
        },
      }),
    }, { session });
    const prompts: unknown[][] = [];
    const model = scripted([
      [call("c1", "read", { path: "notes.txt" }), call("c2", "remove", { path: "/etc" })],
      [{ type: "text", text: "done" }],
    ], prompts);
    const result = await generateText({
      model,
      tools,
      prompt: "tidy up",
      stopWhen: stepCountIs(3),
    });
    assert.equal(result.text, "done");
    assert.deepEqual(ran, ["read notes.txt"]);
    const outputs = toolOutputs(prompts[1]);
    assert.deepEqual(outputs.c1, { type: "text", value: "contents of notes.txt" });
    assert.deepEqual(outputs.c2, {
      type: "text",
      value: "Tool call denied: absolute paths are off limits",
    });
    const kinds = session.observer.events.map((e) => (e as object).constructor.name);
    assert.ok(kinds.includes("ToolDenied"), kinds.join(","));
  });

  it("a failed call's tool.error context reaches the model with the AI SDK's tool error", async () => {
    const session = new Session({ store: new MemoryStore() });
    session.hooks.on(
      "tool.error",
      ({ toolName, args, error }) =>
        toolName === "read"
          ? {
            context: `${String(args?.path)} is gone (${(error as Error).message}): list the folder`,
          }
          : undefined,
    );
    const failure = new Error("ENOENT: no such file");
    const tools = wrapTools({
      read: tool({
        inputSchema: z.object({ path: z.string() }),
        execute: (): string => {
          throw failure;
        },
      }),
      stat: tool({
        inputSchema: z.object({ path: z.string() }),
        execute: (): string => {
          throw new Error("EACCES: no context for this one");
        },
      }),
    }, { session });
    const prompts: unknown[][] = [];
    const model = scripted([
      [call("e1", "read", { path: "notes.txt" }), call("e2", "stat", { path: "x" })],
      [{ type: "text", text: "noted" }],
    ], prompts);
    const result = await generateText({ model, tools, prompt: "read", stopWhen: stepCountIs(3) });
    assert.equal(result.text, "noted");
    const errors: Record<string, unknown> = {};
    for (const message of prompts[1] as { role: string; content: unknown }[]) {
      if (message.role !== "tool") continue;
      for (const part of message.content as { toolCallId: string; output: unknown }[]) {
        errors[part.toolCallId] = part.output;
      }
    }
    assert.deepEqual(errors.e1, {
      type: "error-text",
      value: "ENOENT: no such file\n\nnotes.txt is gone (ENOENT: no such file): list the folder",
    });
    assert.deepEqual(errors.e2, { type: "error-text", value: "EACCES: no context for this one" });
    // The rejection itself: a ToolFailedError with the context, the failure as its cause; a
    // failure without context rejects unchanged.
    const rejected = await Promise.resolve(
      tools.read.execute!({ path: "a" }, { toolCallId: "e3", messages: [] }),
    ).catch((e: unknown) => e);
    assert.ok(rejected instanceof ToolFailedError);
    assert.equal(rejected.cause, failure);
    assert.deepEqual(rejected.context, ["a is gone (ENOENT: no such file): list the folder"]);
    assert.equal(rejected.toolName, "read");
    assert.equal(rejected.callId, "e3");
    const plain = await Promise.resolve(
      tools.stat.execute!({ path: "a" }, { toolCallId: "e4", messages: [] }),
    ).catch((e: unknown) => e);
    assert.ok(!(plain instanceof ToolFailedError));
    assert.equal((plain as Error).message, "EACCES: no context for this one");
  });

  it("an ask pauses through the AI SDK approval flow and the approved call runs once", async () => {
    const ran: unknown[] = [];
    const session = new Session();
    session.hooks.on(
      "tool.pre",
      ({ toolName }) =>
        toolName === "deploy" ? { decision: "ask", reason: "deploys need a person" } : undefined,
    );
    const tools = wrapTools({
      deploy: tool({
        inputSchema: z.object({ env: z.string() }),
        execute: (input) => {
          ran.push(input);
          return "deployed";
        },
      }),
    }, { session, approvedBy: "alice" });
    const prompts: unknown[][] = [];
    const model = scripted([
      [call("d1", "deploy", { env: "prod" })],
      [{ type: "text", text: "shipped" }],
    ], prompts);
    const first = await generateText({ model, tools, prompt: "ship it", stopWhen: stepCountIs(3) });
    const request = first.content.find((p) => p.type === "tool-approval-request") as
      | { approvalId: string }
      | undefined;
    assert.ok(request, JSON.stringify(first.content.map((p) => p.type)));
    assert.deepEqual(ran, []);

    const messages: ModelMessage[] = [
      { role: "user", content: "ship it" },
      ...first.response.messages,
      {
        role: "tool",
        content: [{
          type: "tool-approval-response",
          approvalId: request.approvalId,
          approved: true,
        }],
      },
    ];
    const second = await generateText({ model, tools, messages, stopWhen: stepCountIs(3) });
    assert.equal(second.text, "shipped");
    assert.deepEqual(ran, [{ env: "prod" }]);
    const answered = session.observer.events.filter((e) =>
      (e as object).constructor.name === "ApprovalAnswered"
    ) as { data: { by?: string } }[];
    assert.equal(answered.length, 1);
    assert.equal(answered[0].data.by, "alice");
  });

  it("AgentSpec chains apply to wrapped tools", async () => {
    const ran: unknown[] = [];
    const spec = new AgentSpec().pre(
      "greet",
      ({ args }) => ({
        decision: "allow",
        updatedArgs: { ...args, name: String(args.name).trim() },
      }),
    );
    const tools = wrapTools({
      greet: tool({
        inputSchema: z.object({ name: z.string() }),
        execute: ({ name }) => {
          ran.push(name);
          return `hi ${name}`;
        },
      }),
    }, { spec });
    const out = await tools.greet.execute!({ name: "  bo  " }, { toolCallId: "g1", messages: [] });
    assert.equal(out, "hi bo");
    assert.deepEqual(ran, ["bo"]);
  });

  it("an ask without the approval flow rejects with ApprovalRequiredError", async () => {
    const session = new Session();
    let asks = 0;
    session.hooks.on("tool.pre", () => (++asks > 1 ? { decision: "ask" } : undefined));
    const tools = wrapTools({
      t: tool({ inputSchema: z.object({}), execute: () => "ran" }),
    }, { session });
    // needsApproval saw no ask (first fold); the ask appears only when the call runs.
    const needsApproval = tools.t.needsApproval as (i: unknown, o: unknown) => Promise<boolean>;
    assert.equal(await needsApproval({}, { toolCallId: "x", messages: [] }), false);
    await assert.rejects(
      Promise.resolve(tools.t.execute!({}, { toolCallId: "x", messages: [] })),
      ApprovalRequiredError,
    );
  });

  it("a malformed JSON Schema is a TypeError", () => {
    assert.throws(
      () =>
        wrapTools({
          bad: { inputSchema: { jsonSchema: { type: "object", required: "x" } }, execute: () => 1 },
        }),
      /required: must be an array/,
    );
  });
});

function signalsOf(session: Session): { kind: string; data: Record<string, unknown> }[] {
  return session.observer.events.map((e) => ({
    kind: (e as object).constructor.name,
    data: (e as { data?: Record<string, unknown> }).data ?? {},
  })).filter((s) => s.kind !== "MessageAdded" && s.kind !== "HookSignal");
}

/** An ask about every deploy, the first run paused on it; the messages to answer it with. */
async function pausedDeploy(options: { middleware?: boolean } = {}) {
  const ran: unknown[] = [];
  const session = new Session();
  session.hooks.on(
    "tool.pre",
    ({ toolName }) =>
      toolName === "deploy" ? { decision: "ask", reason: "deploys need a person" } : undefined,
  );
  const tools = wrapTools({
    deploy: tool({
      inputSchema: z.object({ env: z.string() }),
      execute: (input) => {
        ran.push(input);
        return "deployed";
      },
    }),
  }, { session, approvedBy: "alice" });
  const prompts: unknown[][] = [];
  const base = scripted([
    [call("d1", "deploy", { env: "prod" })],
    [{ type: "text", text: "not shipped" }],
  ], prompts);
  const model = options.middleware
    ? wrapLanguageModel({ model: base, middleware: hookscopeMiddleware({ session }) })
    : base;
  const first = await generateText({ model, tools, prompt: "ship it", stopWhen: stepCountIs(3) });
  const request = first.content.find((p) => p.type === "tool-approval-request") as {
    approvalId: string;
  };
  const answer = (approved: boolean, reason?: string): ModelMessage[] => [
    { role: "user", content: "ship it" },
    ...first.response.messages,
    {
      role: "tool",
      content: [{
        type: "tool-approval-response",
        approvalId: request.approvalId,
        approved,
        ...(reason === undefined ? {} : { reason }),
      }],
    },
  ];
  return { ran, session, tools, model, prompts, answer };
}

describe("wrapTools and the AI SDK approval flow", () => {
  it("a rejection seen by the middleware is recorded like an approval, once", async () => {
    const { ran, session, tools, model, prompts, answer } = await pausedDeploy({
      middleware: true,
    });
    const messages = answer(false, "not on a Friday");
    const second = await generateText({ model, tools, messages, stopWhen: stepCountIs(3) });
    await session.drainSignals();
    assert.equal(second.text, "not shipped");
    assert.deepEqual(ran, []);
    assert.deepEqual(toolOutputs(prompts.at(-1)!).d1, {
      type: "execution-denied",
      reason: "not on a Friday",
    });
    const kinds = signalsOf(session).map((s) => s.kind);
    assert.deepEqual(kinds, ["ApprovalRequested", "ApprovalAnswered", "ToolDenied"]);
    const answered = signalsOf(session).find((s) => s.kind === "ApprovalAnswered")!;
    assert.equal(answered.data.approve, false);
    assert.equal(answered.data.reason, "not on a Friday");
    assert.equal(answered.data.by, "alice");
    assert.equal(answered.data.callId, "d1");
    // The set forgot the call: the same conversation again records nothing more.
    await recordApprovalAnswers(session, messages);
    await session.drainSignals();
    assert.equal(signalsOf(session).length, 3);
  });

  it("without the middleware, recordApprovalAnswers records the rejection", async () => {
    const { ran, session, tools, model, answer } = await pausedDeploy();
    const messages = answer(false);
    await generateText({ model, tools, messages, stopWhen: stepCountIs(3) });
    assert.deepEqual(signalsOf(session), []); // nothing of the wrapped set saw the rejection
    await recordApprovalAnswers(session, messages);
    await session.drainSignals();
    assert.deepEqual(signalsOf(session).map((s) => s.kind), [
      "ApprovalRequested",
      "ApprovalAnswered",
      "ToolDenied",
    ]);
    assert.deepEqual(ran, []);
  });

  it("a call runs only with an approval for its id and its arguments", async () => {
    const { ran, tools, answer } = await pausedDeploy();
    const execute = tools.deploy.execute! as (i: unknown, o: unknown) => Promise<unknown>;
    // Asked, never answered.
    const asked = answer(true).slice(0, -1);
    await assert.rejects(
      execute({ env: "prod" }, { toolCallId: "d1", messages: asked }),
      ApprovalRequiredError,
    );
    // Approved, but for other arguments than the ones it is run with.
    await assert.rejects(
      execute({ env: "staging" }, { toolCallId: "d1", messages: answer(true) }),
      ApprovalRequiredError,
    );
    // Approved for another call id.
    await assert.rejects(
      execute({ env: "prod" }, { toolCallId: "d2", messages: answer(true) }),
      ApprovalRequiredError,
    );
    // Rejected.
    await assert.rejects(
      execute({ env: "prod" }, { toolCallId: "d1", messages: answer(false) }),
      ApprovalRequiredError,
    );
    assert.deepEqual(ran, []);
    assert.equal(
      await execute({ env: "prod" }, { toolCallId: "d1", messages: answer(true) }),
      "deployed",
    );
    assert.deepEqual(ran, [{ env: "prod" }]);
  });

  it("two wrapTools with the same tool name on one branch are refused", () => {
    const branch = new Branch();
    wrapTools({ read: tool({ inputSchema: z.object({}), execute: () => "first" }) }, { branch });
    assert.throws(
      () =>
        wrapTools({ read: tool({ inputSchema: z.object({}), execute: () => "second" }) }, {
          branch,
        }),
      (error: unknown) =>
        error instanceof ToolNameCollisionError && error.toolName === "read" &&
        error.branchId === branch.id,
    );
    // Other names, or another branch, are fine.
    wrapTools({ write: tool({ inputSchema: z.object({}), execute: () => "w" }) }, { branch });
    wrapTools({ read: tool({ inputSchema: z.object({}), execute: () => "r" }) }, {
      branch: new Branch(),
    });
  });
});
