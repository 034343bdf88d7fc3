import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  EndpointError,
  EndpointParseError,
  OpenAICompatibleEndpoint,
  type StreamChunk,
} from "../../service/mod.ts";
import {
  completion,
  errorReply,
  jsonReply,
  type OpenAIServer,
  type Script,
  sseReply,
  startOpenAIServer,
  textEvents,
  toolCallEvents,
} from "../fixtures/openai_server.ts";

const KEY = "sk-secret-test-key-123";

async function withServer(
  script: Script,
  body: (server: OpenAIServer, endpoint: OpenAICompatibleEndpoint) => Promise<void>,
): Promise<void> {
  const server = await startOpenAIServer(script);
  try {
    await body(server, new OpenAICompatibleEndpoint({ baseURL: server.baseURL, apiKey: KEY }));
  } finally {
    await server.close();
  }
}

const live = () => ({ signal: new AbortController().signal });

async function collect(stream: ReadableStream<StreamChunk>): Promise<StreamChunk[]> {
  const out: StreamChunk[] = [];
  for await (const chunk of stream) out.push(chunk);
  return out;
}

function assertNoKey(error: unknown): void {
  const text = `${(error as Error).message} ${(error as EndpointError).bodyExcerpt ?? ""} ${
    JSON.stringify(error)
  } ${String((error as Error).stack)}`;
  assert.equal(text.includes(KEY), false, "the API key leaked into the error");
}

describe("OpenAICompatibleEndpoint", () => {
  it("OpenAICompatibleEndpoint rejects a bad baseURL with a TypeError", () => {
    assert.throws(() => new OpenAICompatibleEndpoint({ baseURL: "not a url" }), TypeError);
    assert.throws(() => new OpenAICompatibleEndpoint({ baseURL: 42 as never }), TypeError);
  });

  it("OpenAICompatibleEndpoint rejects bad headers at construction and unserializable payloads unsent", async () => {
    assert.throws(
      () => new OpenAICompatibleEndpoint({ baseURL: "http://x.test", headers: { "x-a": "1\n2" } }),
      (e) => e instanceof TypeError && /invalid headers/.test(e.message),
    );
    await withServer([jsonReply(completion("unused"))], async (server, endpoint) => {
      const cyclic: Record<string, unknown> = { model: "m" };
      cyclic.self = cyclic;
      for (const payload of [{ model: "m", n: 1n }, cyclic]) {
        const error = await endpoint.call(payload, live()).catch((e) => e);
        assert.ok(error instanceof TypeError && !(error instanceof EndpointError), String(error));
        assert.match(error.message, /not JSON-serializable/);
        const streamed = await collect(endpoint.stream(payload, live())).catch((e) => e);
        assert.ok(streamed instanceof TypeError, String(streamed));
      }
      assert.equal(server.requests.length, 0);
    });
  });

  it("OpenAICompatibleEndpoint.call() POSTs to /chat/completions with a Bearer key and returns the typed answer (the JSON as raw)", async () => {
    await withServer([jsonReply(completion("hi there"))], async (server, endpoint) => {
      const payload = { model: "m1", messages: [{ role: "user", content: "hi" }], stream: true };
      const out = await endpoint.call(payload, live());
      assert.equal(out.text, "hi there");
      assert.deepEqual(out.toolCalls, []);
      const raw = out.raw as { choices: { message: { content: string } }[] };
      assert.equal(raw.choices[0].message.content, "hi there");
      const [request] = server.requests;
      assert.equal(request.method, "POST");
      assert.equal(request.url, "/v1/chat/completions");
      assert.equal(request.headers.authorization, `Bearer ${KEY}`);
      assert.equal(request.headers["content-type"], "application/json");
      assert.deepEqual(request.body, { model: "m1", messages: [{ role: "user", content: "hi" }] });
    });
  });

  it("OpenAICompatibleEndpoint.call() turns 429 and 500 into EndpointError with status and body excerpt", async () => {
    await withServer(
      [
        errorReply(429, { error: { message: "Rate limit reached" } }),
        errorReply(500, "x".repeat(2000)),
      ],
      async (_server, endpoint) => {
        const e429 = await endpoint.call({ model: "m" }, live()).catch((e) => e);
        assert.ok(e429 instanceof EndpointError);
        assert.equal(e429.status, 429);
        assert.match(e429.bodyExcerpt, /Rate limit reached/);
        assert.match(e429.message, /status 429/);
        assertNoKey(e429);
        const e500 = await endpoint.call({ model: "m" }, live()).catch((e) => e);
        assert.ok(e500 instanceof EndpointError);
        assert.equal(e500.status, 500);
        assert.equal(e500.bodyExcerpt.length, 500);
        assertNoKey(e500);
      },
    );
  });

  it("OpenAICompatibleEndpoint.call() rejects truncated JSON with EndpointParseError", async () => {
    await withServer(
      [{ kind: "raw", body: '{"choices":[{"message":', contentType: "application/json" }],
      async (_server, endpoint) => {
        const error = await endpoint.call({ model: "m" }, live()).catch((e) => e);
        assert.ok(error instanceof EndpointParseError);
        assert.equal(error.status, 200);
        assert.match(error.bodyExcerpt, /choices/);
      },
    );
  });

  it("OpenAICompatibleEndpoint.call() turns a connection broken mid-body into EndpointError", async () => {
    await withServer(
      [{ kind: "json", body: completion("x".repeat(5000)), breakMidway: true }],
      async (_server, endpoint) => {
        const error = await endpoint.call({ model: "m" }, live()).catch((e) => e);
        assert.ok(error instanceof EndpointError, String(error));
        assert.ok(!(error instanceof EndpointParseError));
        assert.equal(error.status, 200);
        assert.match(error.message, /broke before it finished/);
        assertNoKey(error);
      },
    );
  });

  it("OpenAICompatibleEndpoint.call() reports an unreachable server as EndpointError without the key", async () => {
    const server = await startOpenAIServer([]);
    const baseURL = server.baseURL;
    await server.close();
    const endpoint = new OpenAICompatibleEndpoint({ baseURL, apiKey: KEY });
    const error = await endpoint.call({ model: "m" }, live()).catch((e) => e);
    assert.ok(error instanceof EndpointError);
    assert.equal(error.status, null);
    assertNoKey(error);
  });

  it("OpenAICompatibleEndpoint.stream() yields text, usage and done and asks for usage", async () => {
    await withServer(
      [sseReply(textEvents(["Hel", "lo", "!"], { usage: { prompt: 4, completion: 3 } }))],
      async (server, endpoint) => {
        const chunks = await collect(endpoint.stream({ model: "m", messages: [] }, live()));
        assert.deepEqual(chunks, [
          { type: "text", text: "Hel" },
          { type: "text", text: "lo" },
          { type: "text", text: "!" },
          { type: "usage", promptTokens: 4, completionTokens: 3, totalTokens: 7 },
          { type: "done", finishReason: "stop" },
        ]);
        const body = server.requests[0].body as Record<string, unknown>;
        assert.equal(body.stream, true);
        assert.deepEqual(body.stream_options, { include_usage: true });
        assert.equal(server.requests[0].headers.accept, "text/event-stream");
      },
    );
  });

  it("OpenAICompatibleEndpoint.stream() assembles interleaved tool-call deltas into complete calls", async () => {
    const events = toolCallEvents([
      { index: 0, id: "call_a", name: "get_weather", argumentPieces: ['{"ci', 'ty":"Par', 'is"}'] },
      { index: 1, id: "call_b", name: "get_time", argumentPieces: ['{"tz":', '"CET"}'] },
    ], { usage: null });
    await withServer([sseReply(events)], async (_server, endpoint) => {
      const chunks = await collect(endpoint.stream({ model: "m" }, live()));
      assert.deepEqual(chunks, [
        {
          type: "tool_call",
          index: 0,
          id: "call_a",
          name: "get_weather",
          arguments: '{"city":"Paris"}',
        },
        { type: "tool_call", index: 1, id: "call_b", name: "get_time", arguments: '{"tz":"CET"}' },
        { type: "done", finishReason: "tool_calls" },
      ]);
    });
  });

  it("OpenAICompatibleEndpoint.stream() keeps tool calls apart when the server omits their index", async () => {
    const delta = (toolCalls: unknown[], finish: string | null = null) => ({
      choices: [{ index: 0, delta: { tool_calls: toolCalls }, finish_reason: finish }],
    });
    const events = [
      // A whole call in one delta, then a second call whose arguments follow without an id.
      delta([{ id: "call_a", type: "function", function: { name: "f", arguments: '{"x":1}' } }]),
      delta([{ id: "call_b", type: "function", function: { name: "g", arguments: '{"y"' } }]),
      delta([{ function: { arguments: ":2}" } }]),
      // The first call again, by id.
      delta([{ id: "call_a", function: { arguments: "" } }]),
      delta([], "tool_calls"),
    ];
    await withServer([sseReply(events)], async (_server, endpoint) => {
      const chunks = await collect(endpoint.stream({ model: "m" }, live()));
      assert.deepEqual(chunks, [
        { type: "tool_call", index: 0, id: "call_a", name: "f", arguments: '{"x":1}' },
        { type: "tool_call", index: 1, id: "call_b", name: "g", arguments: '{"y":2}' },
        { type: "done", finishReason: "tool_calls" },
      ]);
    });
  });

  it("OpenAICompatibleEndpoint.stream() assembles tool calls per choice when n > 1", async () => {
    const part = (choice: number, call: Record<string, unknown>, finish: string | null = null) => ({
      choices: [{ index: choice, delta: { tool_calls: [call] }, finish_reason: finish }],
    });
    const events = [
      part(0, { index: 0, id: "a0", function: { name: "f", arguments: '{"x"' } }),
      part(1, { index: 0, id: "b0", function: { name: "g", arguments: '{"y"' } }),
      part(0, { index: 0, function: { arguments: ":1}" } }),
      part(1, { index: 0, function: { arguments: ":2}" } }),
      { choices: [{ index: 1, delta: { content: "second" }, finish_reason: null }] },
      { choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] },
      { choices: [{ index: 1, delta: {}, finish_reason: "tool_calls" }] },
    ];
    await withServer([sseReply(events)], async (_server, endpoint) => {
      const chunks = await collect(endpoint.stream({ model: "m", n: 2 }, live()));
      assert.deepEqual(chunks, [
        { type: "text", text: "second", choice: 1 },
        { type: "tool_call", index: 0, id: "a0", name: "f", arguments: '{"x":1}' },
        { type: "tool_call", index: 0, id: "b0", name: "g", arguments: '{"y":2}', choice: 1 },
        { type: "done", finishReason: "tool_calls" },
      ]);
    });
  });

  it("OpenAICompatibleEndpoint.stream() emits pending tool calls at [DONE] when no finish reason came", async () => {
    const events = toolCallEvents([
      { index: 0, id: "c1", name: "f", argumentPieces: ["{}"] },
    ], { usage: null }).slice(0, -1); // drop the finish event
    await withServer([sseReply(events)], async (_server, endpoint) => {
      const chunks = await collect(endpoint.stream({ model: "m" }, live()));
      assert.deepEqual(chunks, [
        { type: "tool_call", index: 0, id: "c1", name: "f", arguments: "{}" },
        { type: "done", finishReason: null },
      ]);
    });
  });

  it("OpenAICompatibleEndpoint.stream() ignores SSE comments and tolerates a stream without [DONE]", async () => {
    await withServer(
      [sseReply(textEvents(["a"], { usage: null }), { preamble: ": keep-alive\n\n", done: false })],
      async (_server, endpoint) => {
        const chunks = await collect(endpoint.stream({ model: "m" }, live()));
        assert.deepEqual(chunks.map((c) => c.type), ["text", "done"]);
      },
    );
  });

  it("OpenAICompatibleEndpoint.stream() errors with EndpointParseError on a malformed data line", async () => {
    const events = [
      ...textEvents(["ok"], { usage: null }).slice(0, 2),
      "{not json",
      ...textEvents(["never"]),
    ];
    await withServer([sseReply(events)], async (_server, endpoint) => {
      const seen: StreamChunk[] = [];
      const error = await (async () => {
        for await (const chunk of endpoint.stream({ model: "m" }, live())) seen.push(chunk);
      })().catch((e) => e);
      assert.ok(error instanceof EndpointParseError, String(error));
      assert.equal(error.bodyExcerpt, "{not json");
      assert.deepEqual(seen, [{ type: "text", text: "ok" }]);
    });
  });

  it("OpenAICompatibleEndpoint.stream() rejects a body without any Server-Sent Events", async () => {
    await withServer(
      [
        jsonReply(completion("not streamed")),
        jsonReply({ error: { message: "streaming is not supported" } }),
        { kind: "raw", body: "<html>maintenance</html>", contentType: "text/html" },
      ],
      async (_server, endpoint) => {
        const json = await collect(endpoint.stream({ model: "m" }, live())).catch((e) => e);
        assert.ok(json instanceof EndpointParseError, String(json));
        assert.equal(json.status, 200);
        assert.match(json.bodyExcerpt, /not streamed/);
        const said = await collect(endpoint.stream({ model: "m" }, live())).catch((e) => e);
        assert.ok(said instanceof EndpointError && !(said instanceof EndpointParseError));
        assert.match(said.message, /streaming is not supported/);
        const html = await collect(endpoint.stream({ model: "m" }, live())).catch((e) => e);
        assert.ok(html instanceof EndpointParseError, String(html));
        assert.match(html.bodyExcerpt, /maintenance/);
      },
    );
  });

  it("OpenAICompatibleEndpoint.stream() errors on a data line that never ends and closes it", async () => {
    await withServer(
      [sseReply(textEvents(["a"], { usage: null }), { endlessData: true })],
      async (server, endpoint) => {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const hung = new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error("the endless line was buffered")), 30_000);
        });
        try {
          const seen: StreamChunk[] = [];
          const error = await Promise.race([
            (async () => {
              for await (const chunk of endpoint.stream({ model: "m" }, live())) seen.push(chunk);
            })().catch((e) => e),
            hung,
          ]);
          assert.ok(error instanceof EndpointParseError, String(error));
          assert.match(error.message, /without ending/);
          assert.deepEqual(seen, [{ type: "text", text: "a" }]);
          await Promise.race([server.requests[0].closed, hung]);
          assert.equal(server.requests[0].clientClosed, true);
        } finally {
          clearTimeout(timer);
        }
      },
    );
  });

  it("OpenAICompatibleEndpoint.stream() errors with EndpointError when the stream breaks midway", async () => {
    await withServer(
      [sseReply(textEvents(["a", "b", "c", "d"]), { breakAfter: 2, gapMs: 5 })],
      async (_server, endpoint) => {
        const seen: StreamChunk[] = [];
        const error = await (async () => {
          for await (const chunk of endpoint.stream({ model: "m" }, live())) seen.push(chunk);
        })().catch((e) => e);
        assert.ok(error instanceof EndpointError, String(error));
        assert.ok(!(error instanceof EndpointParseError));
        assert.deepEqual(seen, [{ type: "text", text: "a" }]);
        assert.equal(seen.some((c) => c.type === "done"), false);
      },
    );
  });

  it("OpenAICompatibleEndpoint.stream() turns an HTTP error into EndpointError on the stream", async () => {
    await withServer(
      [errorReply(500, { error: { message: "overloaded" } })],
      async (_s, endpoint) => {
        const error = await collect(endpoint.stream({ model: "m" }, live())).catch((e) => e);
        assert.ok(error instanceof EndpointError);
        assert.equal(error.status, 500);
        assert.match(error.bodyExcerpt, /overloaded/);
        assertNoKey(error);
      },
    );
  });

  it("OpenAICompatibleEndpoint.stream() surfaces an error object sent inside the stream", async () => {
    await withServer(
      [sseReply([{ error: { message: "context too long" } }])],
      async (_s, endpoint) => {
        const error = await collect(endpoint.stream({ model: "m" }, live())).catch((e) => e);
        assert.ok(error instanceof EndpointError);
        assert.match(error.message, /context too long/);
      },
    );
  });

  it("OpenAICompatibleEndpoint redacts a key the server echoes, even where the excerpt cuts it", async () => {
    const prefix = KEY.slice(0, 5);
    const straddling = "x".repeat(495) + KEY + " was rejected";
    await withServer(
      [
        errorReply(401, straddling),
        { kind: "raw", body: `${KEY} is not a valid key`, contentType: "text/plain" },
        sseReply([{ error: { message: `invalid api key ${KEY}` } }]),
        sseReply([`{"echo": "${KEY}`]),
      ],
      async (_server, endpoint) => {
        const http = await endpoint.call({ model: "m" }, live()).catch((e) => e);
        assert.ok(http instanceof EndpointError);
        assert.equal(http.status, 401);
        assert.equal(http.bodyExcerpt.length, 500);
        assert.equal(http.bodyExcerpt.includes(prefix), false, http.bodyExcerpt.slice(-20));

        const parse = await endpoint.call({ model: "m" }, live()).catch((e) => e);
        assert.ok(parse instanceof EndpointParseError);
        assert.match(parse.bodyExcerpt, /^\[redacted\] is not a valid key$/);
        assertNoKey(parse);
        // A runtime's SyntaxError quotes the start of the text it could not parse.
        assert.equal(String((parse.cause as Error | undefined)?.message).includes(prefix), false);

        const inStream = await collect(endpoint.stream({ model: "m" }, live())).catch((e) => e);
        assert.ok(inStream instanceof EndpointError);
        assert.match(inStream.message, /invalid api key \[redacted\]/);
        assertNoKey(inStream);

        const badLine = await collect(endpoint.stream({ model: "m" }, live())).catch((e) => e);
        assert.ok(badLine instanceof EndpointParseError);
        assert.match(badLine.bodyExcerpt, /\[redacted\]/);
        assertNoKey(badLine);
        assert.equal(String((badLine.cause as Error | undefined)?.message).includes(prefix), false);
      },
    );
  });

  it("OpenAICompatibleEndpoint redacts credentials given as headers (api-key, Authorization)", async () => {
    const server = await startOpenAIServer([
      errorReply(401, `bad api-key ${KEY}`),
      errorReply(401, `bad token ${KEY}`),
    ]);
    try {
      const azure = new OpenAICompatibleEndpoint({
        baseURL: server.baseURL,
        headers: { "api-key": KEY },
      });
      const first = await azure.call({ model: "m" }, live()).catch((e) => e);
      assert.ok(first instanceof EndpointError);
      assert.equal(first.bodyExcerpt, "bad api-key [redacted]");
      const bearer = new OpenAICompatibleEndpoint({
        baseURL: server.baseURL,
        headers: { Authorization: `Bearer ${KEY}` },
      });
      const second = await bearer.call({ model: "m" }, live()).catch((e) => e);
      assert.ok(second instanceof EndpointError);
      assert.equal(second.bodyExcerpt, "bad token [redacted]");
      assert.equal(server.requests[0].headers["api-key"], KEY);
      assert.equal(server.requests[1].headers.authorization, `Bearer ${KEY}`);
    } finally {
      await server.close();
    }
  });

  it("OpenAICompatibleEndpoint sends one Authorization header: apiKey replaces a given one", async () => {
    const server = await startOpenAIServer([jsonReply(completion("ok"))]);
    try {
      const endpoint = new OpenAICompatibleEndpoint({
        baseURL: server.baseURL,
        apiKey: KEY,
        headers: { Authorization: "Bearer other", "X-Trace": "t1" },
      });
      await endpoint.call({ model: "m" }, live());
      assert.equal(server.requests[0].headers.authorization, `Bearer ${KEY}`);
      assert.equal(server.requests[0].headers["x-trace"], "t1");
    } finally {
      await server.close();
    }
  });

  it("OpenAICompatibleEndpoint reads only the start of an endless error body and closes it", async () => {
    await withServer(
      [{ kind: "error", status: 503, body: "overloaded ".repeat(100), endless: true }],
      async (server, endpoint) => {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const hung = new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error("the error body was read to its end")), 20_000);
        });
        try {
          const error = await Promise.race([
            endpoint.call({ model: "m" }, live()).catch((e) => e),
            hung,
          ]);
          assert.ok(error instanceof EndpointError, String(error));
          assert.equal(error.status, 503);
          assert.equal(error.bodyExcerpt.length, 500);
          assert.match(error.bodyExcerpt, /^overloaded overloaded/);
          await Promise.race([server.requests[0].closed, hung]);
          assert.equal(server.requests[0].clientClosed, true);
        } finally {
          clearTimeout(timer);
        }
      },
    );
  });

  it("OpenAICompatibleEndpoint passes the abort signal to fetch: the server sees the client close", async () => {
    await withServer(
      [sseReply(textEvents(["a"]), { firstByteDelayMs: 10_000 })],
      async (server, endpoint) => {
        const controller = new AbortController();
        const reader = endpoint.stream({ model: "m" }, { signal: controller.signal }).getReader();
        const pending = reader.read();
        while (server.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
        const reason = new DOMException("user stopped", "AbortError");
        controller.abort(reason);
        await assert.rejects(pending, (e) => e === reason);
        await server.requests[0].closed;
        assert.equal(server.requests[0].clientClosed, true);
      },
    );
  });

  it("OpenAICompatibleEndpoint.stream() cancel closes the connection mid-stream", async () => {
    await withServer(
      [sseReply(textEvents(Array.from({ length: 200 }, (_, i) => `t${i}`)), { gapMs: 10 })],
      async (server, endpoint) => {
        const reader = endpoint.stream({ model: "m" }, live()).getReader();
        assert.deepEqual(await reader.read(), { done: false, value: { type: "text", text: "t0" } });
        await reader.cancel();
        await server.requests[0].closed;
        assert.equal(server.requests[0].clientClosed, true);
        assert.ok(server.requests[0].eventsWritten < 200);
      },
    );
  });
});
