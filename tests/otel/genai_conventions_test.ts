// Golden tests of instrument() against the GenAI semantic conventions: every attribute name and
// well-known value comes from @opentelemetry/semantic-conventions (1.45, incubating entry), and
// the metrics are read back through a real MetricReader of @opentelemetry/sdk-metrics.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import {
  type DataPoint,
  type Histogram,
  MeterProvider,
  MetricReader,
  type ResourceMetrics,
} from "@opentelemetry/sdk-metrics";
import {
  ATTR_ERROR_TYPE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
} from "@opentelemetry/semantic-conventions";
import {
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_INPUT_MESSAGES,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_OUTPUT_MESSAGES,
  ATTR_GEN_AI_OUTPUT_TYPE,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_CHOICE_COUNT,
  ATTR_GEN_AI_REQUEST_FREQUENCY_PENALTY,
  ATTR_GEN_AI_REQUEST_MAX_TOKENS,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_REQUEST_PRESENCE_PENALTY,
  ATTR_GEN_AI_REQUEST_SEED,
  ATTR_GEN_AI_REQUEST_STOP_SEQUENCES,
  ATTR_GEN_AI_REQUEST_STREAM,
  ATTR_GEN_AI_REQUEST_TEMPERATURE,
  ATTR_GEN_AI_REQUEST_TOP_K,
  ATTR_GEN_AI_REQUEST_TOP_P,
  ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  ATTR_GEN_AI_RESPONSE_ID,
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK,
  ATTR_GEN_AI_SYSTEM_INSTRUCTIONS,
  ATTR_GEN_AI_TOKEN_TYPE,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_CALL_RESULT,
  ATTR_GEN_AI_TOOL_DEFINITIONS,
  ATTR_GEN_AI_TOOL_DESCRIPTION,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_TOOL_TYPE,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  GEN_AI_OPERATION_NAME_VALUE_CHAT,
  GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
  GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
  GEN_AI_OUTPUT_TYPE_VALUE_JSON,
  GEN_AI_PROVIDER_NAME_VALUE_OPENAI,
  GEN_AI_TOKEN_TYPE_VALUE_INPUT,
  GEN_AI_TOKEN_TYPE_VALUE_OUTPUT,
  METRIC_GEN_AI_CLIENT_OPERATION_DURATION,
  METRIC_GEN_AI_CLIENT_OPERATION_TIME_PER_OUTPUT_CHUNK,
  METRIC_GEN_AI_CLIENT_OPERATION_TIME_TO_FIRST_CHUNK,
  METRIC_GEN_AI_CLIENT_TOKEN_USAGE,
} from "@opentelemetry/semantic-conventions/incubating";
import { FunctionEndpoint, IModel, Session, Tool } from "../../mod.ts";
import { instrument } from "../../otel/mod.ts";
import { ClaudeHookDecision } from "../../claude/mod.ts";
import {
  completion,
  errorReply,
  jsonReply,
  type OpenAIServer,
  sseReply,
  startOpenAIServer,
  textEvents,
} from "../fixtures/openai_server.ts";

class TestReader extends MetricReader {
  protected onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

function telemetry() {
  const exporter = new InMemorySpanExporter();
  const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
    .getTracer("hookscope-test");
  const reader = new TestReader();
  const meter = new MeterProvider({ readers: [reader] }).getMeter("hookscope-test");
  return { exporter, tracer, reader, meter };
}

type Point = DataPoint<Histogram>;
async function histograms(
  reader: MetricReader,
): Promise<Map<string, { unit: string; points: Point[] }>> {
  const { resourceMetrics } = await reader.collect() as { resourceMetrics: ResourceMetrics };
  const out = new Map<string, { unit: string; points: Point[] }>();
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const metric of scope.metrics) {
      out.set(metric.descriptor.name, {
        unit: metric.descriptor.unit,
        points: metric.dataPoints as Point[],
      });
    }
  }
  return out;
}

function only(spans: readonly ReadableSpan[], name: string): ReadableSpan {
  const found = spans.filter((s) => s.name === name);
  assert.equal(found.length, 1, `one span named ${name}: ${spans.map((s) => s.name).join(", ")}`);
  return found[0];
}

const REQUEST = {
  messages: [
    { role: "system", content: "You are terse." },
    { role: "user", content: "Weather in Paris?" },
    {
      role: "assistant",
      content: null,
      tool_calls: [{
        id: "call_1",
        type: "function",
        function: { name: "get_weather", arguments: '{"location":"Paris"}' },
      }],
    },
    { role: "tool", tool_call_id: "call_1", content: "rainy, 57°F" },
  ],
  tools: [{
    type: "function",
    function: {
      name: "get_weather",
      description: "The weather of a city",
      parameters: { type: "object", properties: { location: { type: "string" } } },
    },
  }],
  temperature: 0.2,
  max_tokens: 64,
  top_p: 0.9,
  top_k: 40,
  seed: 7,
  frequency_penalty: 0.1,
  presence_penalty: 0.3,
  stop: ["END"],
  n: 2,
  response_format: { type: "json_object" },
};

async function withServer<T>(
  script: Parameters<typeof startOpenAIServer>[0],
  run: (server: OpenAIServer) => Promise<T>,
): Promise<T> {
  const server = await startOpenAIServer(script);
  try {
    return await run(server);
  } finally {
    await server.close();
  }
}

describe("chat spans follow the GenAI conventions", () => {
  it("a call to an OpenAI-compatible server: request, response, server, content", async () => {
    const { exporter, tracer, meter } = telemetry();
    const answer = completion("It is rainy.", "gpt-test-2026-01");
    (answer.choices as unknown[]).push({
      index: 1,
      message: {
        role: "assistant",
        content: null,
        tool_calls: [{
          id: "call_2",
          type: "function",
          function: { name: "get_weather", arguments: '{"location":"Lyon"}' },
        }],
      },
      finish_reason: "tool_calls",
    });
    await withServer([jsonReply(answer)], async (server) => {
      const model = new IModel({
        model: "gpt-test",
        baseURL: server.baseURL,
        apiKey: "sk-test-0123456789",
      });
      const stop = instrument(model, { tracer, meter, captureContent: true });
      await model.invoke(REQUEST);
      stop();
      const port = Number(new URL(server.baseURL).port);
      const span = only(exporter.getFinishedSpans(), "chat gpt-test");
      assert.equal(span.kind, 2); // CLIENT
      const a = span.attributes;
      assert.equal(a[ATTR_GEN_AI_OPERATION_NAME], GEN_AI_OPERATION_NAME_VALUE_CHAT);
      assert.equal(a[ATTR_GEN_AI_PROVIDER_NAME], GEN_AI_PROVIDER_NAME_VALUE_OPENAI);
      assert.equal(a[ATTR_GEN_AI_REQUEST_MODEL], "gpt-test");
      assert.equal(a[ATTR_SERVER_ADDRESS], "127.0.0.1");
      assert.equal(a[ATTR_SERVER_PORT], port);
      assert.equal(a[ATTR_GEN_AI_REQUEST_TEMPERATURE], 0.2);
      assert.equal(a[ATTR_GEN_AI_REQUEST_MAX_TOKENS], 64);
      assert.equal(a[ATTR_GEN_AI_REQUEST_TOP_P], 0.9);
      assert.equal(a[ATTR_GEN_AI_REQUEST_TOP_K], 40);
      assert.equal(a[ATTR_GEN_AI_REQUEST_SEED], 7);
      assert.equal(a[ATTR_GEN_AI_REQUEST_FREQUENCY_PENALTY], 0.1);
      assert.equal(a[ATTR_GEN_AI_REQUEST_PRESENCE_PENALTY], 0.3);
      assert.deepEqual(a[ATTR_GEN_AI_REQUEST_STOP_SEQUENCES], ["END"]);
      assert.equal(a[ATTR_GEN_AI_REQUEST_CHOICE_COUNT], 2);
      assert.equal(a[ATTR_GEN_AI_OUTPUT_TYPE], GEN_AI_OUTPUT_TYPE_VALUE_JSON);
      assert.equal(a[ATTR_GEN_AI_REQUEST_STREAM], undefined);
      assert.equal(a[ATTR_GEN_AI_RESPONSE_MODEL], "gpt-test-2026-01");
      assert.equal(a[ATTR_GEN_AI_RESPONSE_ID], "chatcmpl-test");
      assert.deepEqual(a[ATTR_GEN_AI_RESPONSE_FINISH_REASONS], ["stop", "tool_calls"]);
      assert.equal(a[ATTR_GEN_AI_USAGE_INPUT_TOKENS], 3);
      assert.equal(a[ATTR_GEN_AI_USAGE_OUTPUT_TOKENS], 1);
      // Structured content: valid JSON in the conventions' schemas, never cut.
      assert.deepEqual(JSON.parse(String(a[ATTR_GEN_AI_INPUT_MESSAGES])), [
        { role: "system", parts: [{ type: "text", content: "You are terse." }] },
        { role: "user", parts: [{ type: "text", content: "Weather in Paris?" }] },
        {
          role: "assistant",
          parts: [{
            type: "tool_call",
            id: "call_1",
            name: "get_weather",
            arguments: { location: "Paris" },
          }],
        },
        {
          role: "tool",
          parts: [{ type: "tool_call_response", id: "call_1", result: "rainy, 57°F" }],
        },
      ]);
      assert.deepEqual(JSON.parse(String(a[ATTR_GEN_AI_OUTPUT_MESSAGES])), [
        {
          role: "assistant",
          parts: [{ type: "text", content: "It is rainy." }],
          finish_reason: "stop",
        },
        {
          role: "assistant",
          parts: [{
            type: "tool_call",
            id: "call_2",
            name: "get_weather",
            arguments: { location: "Lyon" },
          }],
          finish_reason: "tool_calls",
        },
      ]);
      assert.deepEqual(JSON.parse(String(a[ATTR_GEN_AI_TOOL_DEFINITIONS])), [{
        type: "function",
        name: "get_weather",
        description: "The weather of a city",
        parameters: { type: "object", properties: { location: { type: "string" } } },
      }]);
      // System messages of the chat history stay in the input messages.
      assert.equal(a[ATTR_GEN_AI_SYSTEM_INSTRUCTIONS], undefined);
      for (const value of Object.values(a)) {
        assert.ok(!String(value).includes("sk-test-0123456789"), "no API key in attributes");
      }
    });
  });

  it("no content attributes without captureContent", async () => {
    const { exporter, tracer } = telemetry();
    await withServer([jsonReply(completion("hi"))], async (server) => {
      const model = new IModel({ model: "m", baseURL: server.baseURL });
      const stop = instrument(model, { tracer, meter: null });
      await model.invoke(REQUEST);
      stop();
      const a = only(exporter.getFinishedSpans(), "chat m").attributes;
      for (
        const key of [
          ATTR_GEN_AI_INPUT_MESSAGES,
          ATTR_GEN_AI_OUTPUT_MESSAGES,
          ATTR_GEN_AI_SYSTEM_INSTRUCTIONS,
          ATTR_GEN_AI_TOOL_DEFINITIONS,
        ]
      ) assert.equal(a[key], undefined, key);
      assert.equal(a[ATTR_GEN_AI_RESPONSE_ID], "chatcmpl-test");
    });
  });

  it("a typed answer and separate system instructions (redacted per string, still JSON)", async () => {
    const { exporter, tracer } = telemetry();
    // The typed answer of Endpoint.call() (ModelAnswer).
    const model = new IModel({
      model: "typed",
      endpoint: new FunctionEndpoint({
        call: () => ({
          text: "secret plan",
          toolCalls: [{
            index: 0,
            id: "t1",
            name: "lookup",
            arguments: '{"q":"secret"}',
            args: { q: "secret" },
          }],
          usage: { promptTokens: 12, completionTokens: 4, totalTokens: 16 },
          finishReason: "tool_calls",
          responseId: "resp_9",
          model: "typed-2026",
          raw: {},
        }),
      }),
    });
    const stop = instrument(model, {
      tracer,
      meter: null,
      captureContent: true,
      providerName: "acme",
      redact: (t) => t.replaceAll("secret", '"*"'),
    });
    await model.invoke({ system: "Keep the secret.", messages: [{ role: "user", content: "go" }] });
    stop();
    const a = only(exporter.getFinishedSpans(), "chat typed").attributes;
    assert.equal(a[ATTR_GEN_AI_PROVIDER_NAME], "acme");
    assert.equal(a[ATTR_SERVER_ADDRESS], undefined); // an in-process endpoint has no server
    assert.equal(a[ATTR_GEN_AI_RESPONSE_ID], "resp_9");
    assert.equal(a[ATTR_GEN_AI_RESPONSE_MODEL], "typed-2026");
    assert.deepEqual(a[ATTR_GEN_AI_RESPONSE_FINISH_REASONS], ["tool_calls"]);
    assert.equal(a[ATTR_GEN_AI_USAGE_INPUT_TOKENS], 12);
    assert.equal(a[ATTR_GEN_AI_USAGE_OUTPUT_TOKENS], 4);
    assert.deepEqual(JSON.parse(String(a[ATTR_GEN_AI_SYSTEM_INSTRUCTIONS])), [
      { type: "text", content: 'Keep the "*".' },
    ]);
    assert.deepEqual(JSON.parse(String(a[ATTR_GEN_AI_OUTPUT_MESSAGES])), [{
      role: "assistant",
      parts: [
        { type: "text", content: '"*" plan' },
        // Arguments are parsed first, then each string in them redacted.
        { type: "tool_call", id: "t1", name: "lookup", arguments: { q: '"*"' } },
      ],
      finish_reason: "tool_calls",
    }]);
  });

  it("a streamed call: stream flag, time to first chunk, output from the chunks", async () => {
    const { exporter, tracer, reader, meter } = telemetry();
    await withServer([
      sseReply(textEvents(["Hel", "lo"], { usage: { prompt: 5, completion: 2 } }), { gapMs: 20 }),
    ], async (server) => {
      const model = new IModel({ model: "s", baseURL: server.baseURL });
      const stop = instrument(model, { tracer, meter, captureContent: true });
      const chunks = [];
      for await (const chunk of model.stream({ messages: [{ role: "user", content: "hi" }] })) {
        chunks.push(chunk);
      }
      stop();
      assert.ok(chunks.length >= 3);
      const a = only(exporter.getFinishedSpans(), "chat s").attributes;
      assert.equal(a[ATTR_GEN_AI_REQUEST_STREAM], true);
      const ttfc = a[ATTR_GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK];
      assert.equal(typeof ttfc, "number");
      assert.ok((ttfc as number) >= 0 && (ttfc as number) < 60, `seconds, not ms: ${ttfc}`);
      assert.deepEqual(a[ATTR_GEN_AI_RESPONSE_FINISH_REASONS], ["stop"]);
      assert.equal(a[ATTR_GEN_AI_USAGE_INPUT_TOKENS], 5);
      assert.equal(a[ATTR_GEN_AI_USAGE_OUTPUT_TOKENS], 2);
      assert.deepEqual(JSON.parse(String(a[ATTR_GEN_AI_OUTPUT_MESSAGES])), [
        { role: "assistant", parts: [{ type: "text", content: "Hello" }], finish_reason: "stop" },
      ]);
      const metrics = await histograms(reader);
      const first = metrics.get(METRIC_GEN_AI_CLIENT_OPERATION_TIME_TO_FIRST_CHUNK);
      assert.equal(first?.unit, "s");
      assert.equal(first?.points.length, 1);
      assert.equal(first?.points[0].value.count, 1);
      const per = metrics.get(METRIC_GEN_AI_CLIENT_OPERATION_TIME_PER_OUTPUT_CHUNK);
      assert.equal(per?.unit, "s");
      assert.equal(per?.points[0].value.count, 1); // "lo" after "Hel"
    });
  });
});

describe("GenAI client metrics through a real metric reader", () => {
  it("operation.duration and token.usage with the conventions' attributes; a failure has error.type", async () => {
    const { tracer, reader, meter } = telemetry();
    await withServer(
      [jsonReply(completion("ok", "gpt-x-1")), errorReply(500, { error: "boom" })],
      async (server) => {
        const model = new IModel({ model: "gpt-x", baseURL: server.baseURL });
        const stop = instrument(model, { tracer, meter });
        await model.invoke({ messages: [] });
        const failed = await model.invoke({ messages: [] }).catch((e) => e);
        stop();
        const errorName = failed instanceof Error
          ? failed.name
          : (failed as { execution: { error: Error } }).execution.error.name;
        const port = Number(new URL(server.baseURL).port);
        const metrics = await histograms(reader);
        const duration = metrics.get(METRIC_GEN_AI_CLIENT_OPERATION_DURATION)!;
        assert.equal(duration.unit, "s");
        assert.equal(duration.points.length, 2);
        const ok = duration.points.find((p) => p.attributes[ATTR_ERROR_TYPE] === undefined)!;
        assert.deepEqual(ok.attributes, {
          [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_CHAT,
          [ATTR_GEN_AI_PROVIDER_NAME]: GEN_AI_PROVIDER_NAME_VALUE_OPENAI,
          [ATTR_GEN_AI_REQUEST_MODEL]: "gpt-x",
          [ATTR_GEN_AI_RESPONSE_MODEL]: "gpt-x-1",
          [ATTR_SERVER_ADDRESS]: "127.0.0.1",
          [ATTR_SERVER_PORT]: port,
        });
        assert.equal(ok.value.count, 1);
        assert.ok(ok.value.sum! >= 0 && ok.value.sum! < 60, `seconds: ${ok.value.sum}`);
        const bad = duration.points.find((p) => p.attributes[ATTR_ERROR_TYPE] !== undefined)!;
        assert.equal(bad.attributes[ATTR_ERROR_TYPE], errorName);
        assert.equal(bad.attributes[ATTR_GEN_AI_RESPONSE_MODEL], undefined);
        // The conventions' advised boundaries.
        assert.deepEqual(ok.value.buckets.boundaries.slice(0, 3), [0.01, 0.02, 0.04]);

        const tokens = metrics.get(METRIC_GEN_AI_CLIENT_TOKEN_USAGE)!;
        assert.equal(tokens.unit, "{token}");
        const byType = new Map(tokens.points.map((p) => [p.attributes[ATTR_GEN_AI_TOKEN_TYPE], p]));
        assert.deepEqual(
          [...byType.keys()].sort(),
          [
            GEN_AI_TOKEN_TYPE_VALUE_INPUT,
            GEN_AI_TOKEN_TYPE_VALUE_OUTPUT,
          ].sort(),
        );
        assert.equal(byType.get(GEN_AI_TOKEN_TYPE_VALUE_INPUT)!.value.sum, 3);
        assert.equal(byType.get(GEN_AI_TOKEN_TYPE_VALUE_OUTPUT)!.value.sum, 1);
        assert.equal(byType.get(GEN_AI_TOKEN_TYPE_VALUE_INPUT)!.attributes[ATTR_SERVER_PORT], port);
        assert.deepEqual(
          byType.get(GEN_AI_TOKEN_TYPE_VALUE_INPUT)!.value.buckets.boundaries.slice(0, 3),
          [1, 4, 16],
        );
      },
    );
  });
});

describe("session spans", () => {
  it("chat spans of the session model carry the response; execute_tool its type and description; invoke_agent its provider", async () => {
    const { exporter, tracer, meter } = telemetry();
    const toolTurn = completion("", "gpt-s-1");
    (toolTurn.choices as { message: Record<string, unknown>; finish_reason: string }[])[0] = {
      message: {
        role: "assistant",
        content: null,
        tool_calls: [{
          id: "c1",
          type: "function",
          function: { name: "read", arguments: '{"path":"a.md"}' },
        }],
      },
      finish_reason: "tool_calls",
    };
    await withServer(
      [jsonReply(toolTurn), jsonReply(completion("done", "gpt-s-1"))],
      async (server) => {
        const model = new IModel({ model: "gpt-s", baseURL: server.baseURL });
        const session = new Session({ name: "reader-agent", model });
        const branch = session.newBranch({ model, system: "Be brief." });
        branch.actions.register(
          new Tool({ name: "read", description: "Reads a file", execute: () => "body" }),
        );
        const stop = instrument(session, { tracer, meter, captureContent: true });
        await session.start({ agentName: "reader-agent" });
        await branch.operate("read a.md");
        await session.drainSignals();
        await session.end({ status: "completed" });
        stop();
        const spans = exporter.getFinishedSpans();
        const agent = only(spans, "invoke_agent reader-agent");
        assert.equal(
          agent.attributes[ATTR_GEN_AI_OPERATION_NAME],
          GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
        );
        assert.equal(
          agent.attributes[ATTR_GEN_AI_PROVIDER_NAME],
          GEN_AI_PROVIDER_NAME_VALUE_OPENAI,
        );
        assert.equal(agent.attributes[ATTR_GEN_AI_AGENT_NAME], "reader-agent");
        assert.equal(agent.attributes[ATTR_GEN_AI_CONVERSATION_ID], session.id);
        const chats = spans.filter((s) => s.name === "chat gpt-s");
        assert.equal(chats.length, 2, "one span per call, not one more from the session's bridge");
        for (const chat of chats) {
          assert.equal(chat.parentSpanContext?.spanId, agent.spanContext().spanId);
          assert.equal(chat.attributes[ATTR_GEN_AI_RESPONSE_MODEL], "gpt-s-1");
          assert.equal(chat.attributes[ATTR_GEN_AI_RESPONSE_ID], "chatcmpl-test");
          assert.equal(chat.attributes[ATTR_SERVER_ADDRESS], "127.0.0.1");
        }
        assert.deepEqual(chats.map((c) => c.attributes[ATTR_GEN_AI_RESPONSE_FINISH_REASONS]), [
          ["tool_calls"],
          ["stop"],
        ]);
        const input = JSON.parse(String(chats[1].attributes[ATTR_GEN_AI_INPUT_MESSAGES]));
        assert.deepEqual(input.map((m: { role: string }) => m.role), [
          "system",
          "user",
          "assistant",
          "tool",
        ]);
        const definitions = JSON.parse(String(chats[0].attributes[ATTR_GEN_AI_TOOL_DEFINITIONS]));
        assert.deepEqual(definitions.map((d: { name: string }) => d.name), ["read"]);
        const tool = only(spans, "execute_tool read");
        assert.equal(
          tool.attributes[ATTR_GEN_AI_OPERATION_NAME],
          GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
        );
        assert.equal(tool.attributes[ATTR_GEN_AI_TOOL_NAME], "read");
        assert.equal(tool.attributes[ATTR_GEN_AI_TOOL_CALL_ID], "c1");
        assert.equal(tool.attributes[ATTR_GEN_AI_TOOL_TYPE], "function");
        assert.equal(tool.attributes[ATTR_GEN_AI_TOOL_DESCRIPTION], "Reads a file");
        assert.deepEqual(JSON.parse(String(tool.attributes[ATTR_GEN_AI_TOOL_CALL_ARGUMENTS])), {
          path: "a.md",
        });
        assert.equal(tool.attributes[ATTR_GEN_AI_TOOL_CALL_RESULT], "body");
      },
    );
  });
});

describe("hook decisions as hookscope.decision events", () => {
  it("deny, ask and its answer, shadow verdicts, a block and a rewrite, with the documented attributes", async () => {
    const { exporter, tracer } = telemetry();
    const session = new Session();
    const branch = session.newBranch();
    for (const name of ["wipe", "deploy", "read", "boom", "ls"]) {
      branch.actions.register(new Tool({ name, execute: (a: Record<string, unknown>) => a }));
    }
    session.hooks.on(
      "tool.pre",
      ({ toolName }) =>
        toolName === "wipe"
          ? { decision: "deny", reason: "never wipe" }
          : toolName === "deploy"
          ? { decision: "ask", reason: "a person decides" }
          : undefined,
      { name: "policy" },
    );
    session.hooks.on(
      "tool.pre",
      ({ toolName }) =>
        toolName === "read" ? { decision: "deny", reason: "would refuse reads" } : undefined,
      {
        mode: "shadow",
        name: "candidate",
      },
    );
    session.hooks.on("tool.pre", ({ toolName }) => {
      if (toolName === "boom") throw new RangeError("guard threw");
    });
    session.hooks.on(
      "tool.pre",
      ({ toolName, args }) =>
        toolName === "ls" && !args.safe
          ? { decision: "allow", updatedArgs: { ...args, safe: true } }
          : undefined,
    );
    const stop = instrument(session, { tracer, meter: null });
    await assert.rejects(branch.act({ function: "wipe", arguments: {} }));
    await branch.act({ function: "deploy", arguments: {} }, {
      approve: () => ({ approve: true, by: "alice" }),
    });
    await branch.act({ function: "read", arguments: {} });
    await assert.rejects(branch.act({ function: "boom", arguments: {} }), RangeError);
    await branch.act({ function: "ls", arguments: {} });
    await branch.emit(
      new ClaudeHookDecision({
        data: { event: "PreToolUse", callId: "toolu_1", toolName: "Bash", verdict: "deny" },
      }),
    );
    await session.drainSignals();
    stop();
    const spans = exporter.getFinishedSpans();
    const events = (name: string) =>
      only(spans, `execute_tool ${name}`).events.map((e) => {
        assert.equal(e.name, "hookscope.decision");
        return e.attributes ?? {};
      });

    const [deny] = events("wipe");
    assert.equal(deny["hookscope.decision.kind"], "deny");
    assert.equal(deny["hookscope.signal"], "ToolDenied");
    assert.equal(deny["hookscope.decision.shadow"], false);
    assert.equal(deny["hookscope.decision.reason"], "never wipe");
    assert.equal(deny["hookscope.decision.hook"], "policy");
    assert.equal(deny[ATTR_GEN_AI_TOOL_NAME], "wipe");
    assert.equal(only(spans, "execute_tool wipe").attributes[ATTR_ERROR_TYPE], "ToolDeniedError");

    const deploy = events("deploy");
    const ask = deploy.find((e) => e["hookscope.decision.kind"] === "ask")!;
    assert.equal(ask["hookscope.signal"], "ApprovalRequested");
    assert.equal(ask["hookscope.decision.reason"], "a person decides");
    const answer = deploy.find((e) => e["hookscope.decision.kind"] === "answer")!;
    assert.equal(answer["hookscope.approval.approved"], true);
    assert.equal(answer["hookscope.approval.by"], "alice");
    assert.equal(answer["hookscope.approval.updated_args"], false);

    const [shadow] = events("read");
    assert.equal(shadow["hookscope.decision.kind"], "deny");
    assert.equal(shadow["hookscope.decision.shadow"], true);
    assert.equal(shadow["hookscope.signal"], "WouldDeny");
    assert.equal(shadow["hookscope.hook.point"], "tool.pre");
    assert.equal(only(spans, "execute_tool read").status.code, 0); // it ran

    const [block] = events("boom");
    assert.equal(block["hookscope.decision.kind"], "block");
    assert.equal(block["hookscope.decision.reason"], "guard threw");
    assert.equal(only(spans, "execute_tool boom").attributes[ATTR_ERROR_TYPE], "RangeError");

    const [claude] = events("Bash");
    assert.equal(claude["hookscope.decision.kind"], "deny");
    assert.equal(claude["hookscope.signal"], "ClaudeHookDecision");

    const [effect] = events("ls");
    assert.equal(effect["hookscope.decision.kind"], "effect");
    assert.equal(effect["hookscope.effect.type"], "args_rewritten");
  });
});
