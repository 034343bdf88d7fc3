import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { FunctionEndpoint, IModel, Session, Tool } from "../../mod.ts";
import { bridgeModelToSession } from "../../session/mod.ts";
import { instrument } from "../../otel/mod.ts";
import { ATTR_ERROR_TYPE } from "@opentelemetry/semantic-conventions";
import {
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROVIDER_NAME,
  GEN_AI_PROVIDER_NAME_VALUE_OPENAI,
} from "@opentelemetry/semantic-conventions/incubating";

function tracing() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { exporter, tracer: provider.getTracer("hookscope-test") };
}

function model(): IModel {
  return new IModel({
    model: "gpt-test",
    endpoint: new FunctionEndpoint({
      call: () => ({
        model: "gpt-test-2026",
        choices: [{ finish_reason: "stop", message: { content: "ok" } }],
        usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
      }),
    }),
  });
}

/** The span tree as "name" lines, children indented under their parent, in start order. */
function tree(spans: readonly ReadableSpan[]): string[] {
  const byParent = new Map<string | undefined, ReadableSpan[]>();
  for (const span of spans) {
    const parent = span.parentSpanContext?.spanId;
    byParent.set(parent, [...(byParent.get(parent) ?? []), span]);
  }
  const lines: string[] = [];
  const walk = (parent: string | undefined, depth: number) => {
    const children = (byParent.get(parent) ?? []).sort((a, b) =>
      a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]
    );
    for (const child of children) {
      lines.push(`${"  ".repeat(depth)}${child.name}`);
      walk(child.spanContext().spanId, depth + 1);
    }
  };
  walk(undefined, 0);
  return lines;
}

describe("instrument(session)", () => {
  it("builds invoke_agent → chat / execute_tool spans with GenAI attributes and hook events", async () => {
    const { exporter, tracer } = tracing();
    const session = new Session({ name: "coder" });
    const branch = session.newBranch();
    branch.actions.register(new Tool({ name: "read", execute: () => "file body" }));
    branch.actions.register(new Tool({ name: "wipe", execute: () => "gone" }));
    session.hooks.on("tool.pre", ({ toolName }) => {
      if (toolName === "wipe") throw new Error("destructive");
    });
    const m = model();
    const bridge = bridgeModelToSession(m, session);
    const stop = instrument(session, {
      tracer,
      captureContent: true,
      redact: (t) => t.replaceAll("body", "****"),
    });

    await session.start({ agentName: "coder" });
    await m.invoke({ messages: [{ role: "user", content: "read it" }] });
    await bridge.drain();
    await branch.act({ function: "read", arguments: { path: "a.txt" } });
    await assert.rejects(branch.act({ function: "wipe", arguments: {} }), /destructive/);
    await m.invoke({ messages: [] });
    await bridge.drain();
    await session.drainSignals();
    await session.end({ status: "completed" });
    stop();
    bridge();

    const spans = exporter.getFinishedSpans();
    assert.deepEqual(tree(spans), [
      "invoke_agent coder",
      "  chat gpt-test",
      "  execute_tool read",
      "  execute_tool wipe",
      "  chat gpt-test",
    ]);
    const chat = spans.find((s) => s.name === "chat gpt-test")!;
    assert.equal(chat.attributes["gen_ai.operation.name"], "chat");
    assert.equal(chat.attributes["gen_ai.request.model"], "gpt-test");
    assert.equal(chat.attributes["gen_ai.usage.input_tokens"], 11);
    assert.equal(chat.attributes["gen_ai.usage.output_tokens"], 7);
    const read = spans.find((s) => s.name === "execute_tool read")!;
    assert.equal(read.attributes["gen_ai.tool.name"], "read");
    assert.equal(typeof read.attributes["gen_ai.tool.call.id"], "string");
    assert.match(String(read.attributes["gen_ai.tool.call.result"]), /file \*\*\*\*/);
    const wipe = spans.find((s) => s.name === "execute_tool wipe")!;
    assert.equal(wipe.status.code, 2); // ERROR
    assert.deepEqual(wipe.events.map((e) => e.name), ["hookscope.decision"]);
    assert.equal(wipe.events[0].attributes?.["hookscope.signal"], "HookBlocked");
    assert.equal(wipe.attributes[ATTR_ERROR_TYPE], "Error"); // the class the guard threw
    assert.equal(wipe.events[0].attributes?.["hookscope.decision.reason"], "destructive");
    const agent = spans.find((s) => s.name === "invoke_agent coder")!;
    assert.equal(agent.attributes["gen_ai.conversation.id"], session.id);
  });

  it("records no content without captureContent", async () => {
    const { exporter, tracer } = tracing();
    const session = new Session();
    const branch = session.newBranch();
    branch.actions.register(
      new Tool({ name: "echo", execute: (a: Record<string, unknown>) => a.v }),
    );
    const stop = instrument(session, { tracer });
    await branch.act({ function: "echo", arguments: { v: "secret" } });
    stop();
    const [span] = exporter.getFinishedSpans();
    assert.equal(span.name, "execute_tool echo");
    assert.equal(span.attributes["gen_ai.tool.call.arguments"], undefined);
    assert.equal(span.attributes["gen_ai.tool.call.result"], undefined);
  });

  it("the disposer removes every listener", async () => {
    const { exporter, tracer } = tracing();
    const session = new Session();
    const before = ["tool.pre", "tool.post", "tool.error", "api.pre_call"].map((p) =>
      session.hooks.handlersFor(p as "tool.pre").length
    );
    const stop = instrument(session, { tracer });
    stop();
    const after = ["tool.pre", "tool.post", "tool.error", "api.pre_call"].map((p) =>
      session.hooks.handlersFor(p as "tool.pre").length
    );
    assert.deepEqual(after, before);
    const branch = session.newBranch();
    branch.actions.register(new Tool({ name: "t", execute: () => 1 }));
    await branch.act({ function: "t", arguments: {} });
    assert.equal(exporter.getFinishedSpans().length, 0);
  });

  it("a failing tracer never blocks a tool call", async () => {
    const session = new Session();
    const branch = session.newBranch();
    let ran = 0;
    branch.actions.register(new Tool({ name: "t", execute: () => ++ran }));
    const tracer = {
      startSpan: () => {
        throw new Error("exporter down");
      },
    };
    const stop = instrument(session, { tracer, meter: null });
    const result = await branch.act({ function: "t", arguments: {} });
    stop();
    assert.equal(ran, 1);
    assert.equal(result.output, 1);
  });

  it("bad arguments are TypeErrors", () => {
    const { tracer } = tracing();
    assert.throws(() => instrument(new Session(), {} as never), TypeError);
    assert.throws(() => instrument({} as never, { tracer }), TypeError);
  });
});

describe("instrument(model)", () => {
  it("a standalone model call is a chat span with usage, response model and finish reasons", async () => {
    const { exporter, tracer } = tracing();
    const m = model();
    const stop = instrument(m, { tracer });
    await m.invoke({ messages: [] });
    stop();
    await m.invoke({ messages: [] });
    const spans = exporter.getFinishedSpans();
    assert.equal(spans.length, 1);
    assert.equal(spans[0].name, "chat gpt-test");
    assert.equal(spans[0].attributes["gen_ai.response.model"], "gpt-test-2026");
    assert.deepEqual(spans[0].attributes["gen_ai.response.finish_reasons"], ["stop"]);
    assert.equal(spans[0].attributes["gen_ai.usage.output_tokens"], 7);
  });
});

describe("instrument() provider names", () => {
  it("providerName sets gen_ai.provider.name on chat spans", async () => {
    const { exporter, tracer } = tracing();
    const m = model();
    const stop = instrument(m, { tracer, providerName: GEN_AI_PROVIDER_NAME_VALUE_OPENAI });
    await m.invoke({ messages: [] });
    stop();
    const [span] = exporter.getFinishedSpans();
    assert.equal(span.attributes[ATTR_GEN_AI_PROVIDER_NAME], GEN_AI_PROVIDER_NAME_VALUE_OPENAI);
  });
});

describe("instrument(session) over an agent run", () => {
  it("a two-turn run with a denied and an approved call has the golden span structure", async () => {
    const { exporter, tracer } = tracing();
    let turn = 0;
    const m = new IModel({
      model: "gpt-test",
      endpoint: new FunctionEndpoint({
        call: () =>
          turn++ === 0
            ? {
              model: "gpt-test",
              choices: [{
                finish_reason: "tool_calls",
                message: {
                  content: null,
                  tool_calls: [
                    { id: "c1", type: "function", function: { name: "wipe", arguments: "{}" } },
                    { id: "c2", type: "function", function: { name: "deploy", arguments: "{}" } },
                  ],
                },
              }],
              usage: { prompt_tokens: 5, completion_tokens: 2 },
            }
            : {
              model: "gpt-test",
              choices: [{ finish_reason: "stop", message: { content: "done" } }],
              usage: { prompt_tokens: 9, completion_tokens: 1 },
            },
      }),
    });
    const session = new Session({ name: "ops", model: m });
    const branch = session.newBranch({ model: m });
    const ran: string[] = [];
    branch.actions.register(new Tool({ name: "wipe", execute: () => void ran.push("wipe") }));
    branch.actions.register(new Tool({ name: "deploy", execute: () => void ran.push("deploy") }));
    session.hooks.on(
      "tool.pre",
      ({ toolName }) =>
        toolName === "wipe"
          ? { decision: "deny", reason: "never wipe" }
          : { decision: "ask", reason: "deploys need a person" },
    );
    const stop = instrument(session, { tracer });
    await session.start({ agentName: "ops" });
    const result = await branch.operate("clean up and ship", {
      approve: () => ({ approve: true, by: "alice" }),
    });
    await session.drainSignals();
    await session.end({ status: "completed" });
    stop();

    assert.equal(result.stoppedBy, "answer");
    assert.deepEqual(ran, ["deploy"]);
    const spans = exporter.getFinishedSpans();
    assert.deepEqual(tree(spans), [
      "invoke_agent ops",
      "  chat gpt-test",
      "  execute_tool wipe",
      "  execute_tool deploy",
      "  chat gpt-test",
    ]);
    const wipe = spans.find((s) => s.name === "execute_tool wipe")!;
    assert.equal(wipe.status.code, 2);
    assert.deepEqual(wipe.events.map((e) => e.name), ["hookscope.decision"]);
    assert.equal(wipe.events[0].attributes?.["hookscope.signal"], "ToolDenied");
    assert.equal(wipe.attributes[ATTR_ERROR_TYPE], "ToolDeniedError");
    assert.equal(wipe.events[0].attributes?.["hookscope.decision.reason"], "never wipe");
    assert.equal(wipe.attributes["gen_ai.tool.call.id"], "c1");
    const deploy = spans.find((s) => s.name === "execute_tool deploy")!;
    assert.notEqual(deploy.status.code, 2);
    const events = deploy.events.map((e) => String(e.attributes?.["hookscope.signal"]));
    assert.ok(deploy.events.every((e) => e.name === "hookscope.decision"));
    assert.ok(events.includes("ApprovalAnswered"), events.join(","));
    const answered = deploy.events.find((e) =>
      e.attributes?.["hookscope.signal"] === "ApprovalAnswered"
    )!;
    assert.equal(answered.attributes?.["hookscope.approval.by"], "alice");
    const chats = spans.filter((s) => s.name === "chat gpt-test");
    assert.deepEqual(chats.map((c) => c.attributes["gen_ai.usage.input_tokens"]), [5, 9]);
    for (const span of spans) {
      assert.equal(typeof span.attributes[ATTR_GEN_AI_OPERATION_NAME], "string", span.name);
    }
    // FunctionEndpoint is not a well-known provider: its name passes through, a chat span
    // always carries one, and so does invoke_agent when the session has a model.
    assert.equal(chats[0].attributes[ATTR_GEN_AI_PROVIDER_NAME], "function");
    const agent = spans.find((s) => s.name === "invoke_agent ops")!;
    assert.equal(agent.attributes[ATTR_GEN_AI_PROVIDER_NAME], "function");
  });
});
