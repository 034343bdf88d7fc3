import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { AgentSpec, IModel, Session, Tool } from "../../mod.ts";
import { type Endpoint, OpenAICompatibleEndpoint } from "../../service/mod.ts";
import {
  tapeEndpoint,
  TapeExhaustedError,
  TapeFormatError,
  TapeMismatchError,
  TapeUnconsumedError,
} from "../../tape/mod.ts";
import {
  jsonReply,
  type OpenAIServer,
  type Script,
  sseReply,
  startOpenAIServer,
  textEvents,
  toolCallEvents,
} from "../fixtures/openai_server.ts";

const KEY = "sk-live-tapekey-0123456789abcdefXYZ";
const PLANTED = "sk-planted9876543210zyxwvuTSRQ";

const dir = await mkdtemp(join(tmpdir(), "hookscope-tape-"));
let counter = 0;
const tapePath = (): string => join(dir, `tape-${counter++}.jsonl`);
const servers: OpenAIServer[] = [];

async function serve(script: Script): Promise<OpenAIServer> {
  const server = await startOpenAIServer(script);
  servers.push(server);
  return server;
}

function toolCallCompletion(calls: { id: string; name: string; args: unknown }[]) {
  return {
    id: "chatcmpl-tools",
    object: "chat.completion",
    model: "test-model",
    choices: [{
      index: 0,
      message: {
        role: "assistant",
        content: null,
        tool_calls: calls.map((c) => ({
          id: c.id,
          type: "function",
          function: { name: c.name, arguments: JSON.stringify(c.args) },
        })),
      },
      finish_reason: "tool_calls",
    }],
  };
}

function answer(text: string) {
  return {
    choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
  };
}

function agentWith(endpoint: Endpoint) {
  const session = new Session();
  const model = new IModel({ model: "test-model", endpoint });
  const agent = session.newBranch({
    spec: new AgentSpec({ name: "tester" }),
    model,
    system: "You are a test agent.",
  });
  const commands: string[] = [];
  agent.actions.register(
    new Tool({
      name: "bash",
      description: "Run a command",
      inputSchema: z.object({ command: z.string() }),
      execute: (args: { command: string }) => {
        commands.push(args.command);
        return { stdout: `ran ${args.command}`, returnCode: 0 };
      },
    }),
  );
  return { agent, commands };
}

/** The conversation without what differs per run (message ids, clock, the branch's id). */
function transcript(messages: readonly Record<string, unknown>[]): string {
  const branch = String(messages[0].branchId);
  return JSON.stringify(messages.map(({ id: _i, createdAt: _c, branchId: _b, ...rest }) => rest))
    .replaceAll(branch, "<branch>");
}

const toolScript = (): Script => [
  jsonReply(toolCallCompletion([{ id: "call_1", name: "bash", args: { command: "ls" } }])),
  jsonReply(toolCallCompletion([{ id: "call_2", name: "bash", args: { command: "pwd" } }])),
  jsonReply(answer("Two commands ran.")),
];

const streamScript = (): Script => [
  sseReply(toolCallEvents([{
    index: 0,
    id: "s1",
    name: "bash",
    argumentPieces: ['{"comm', 'and":"pwd"}'],
  }])),
  sseReply(textEvents(["Your ", "folder ", "is /ws."]), { gapMs: 40 }),
];

const PROMPT = `what is here? (my key is ${PLANTED})`;

async function recordNonStreamed(path: string) {
  const server = await serve(toolScript());
  const live = new OpenAICompatibleEndpoint({ baseURL: server.baseURL, apiKey: KEY });
  const recorder = tapeEndpoint({ path, mode: "record", endpoint: live });
  const { agent, commands } = agentWith(recorder);
  const result = await agent.operate(PROMPT);
  await recorder.flush();
  await server.close();
  return { agent, commands, result, server };
}

async function streamEvents(agent: ReturnType<typeof agentWith>["agent"], prompt: string) {
  const seen: string[] = [];
  for await (const event of agent.operateStream(prompt)) {
    if (event.type === "text") seen.push(`text:${event.text}`);
    else if (event.type === "tool_call") {
      seen.push(`call:${event.call.name}:${event.call.arguments}`);
    } else if (event.type === "tool_result") seen.push(`result:${event.result.function}`);
    else seen.push(`done:${event.result.turns}`);
  }
  return seen;
}

describe("tapeEndpoint", () => {
  after(async () => {
    await Promise.all(servers.map((s) => s.close()));
    await rm(dir, { recursive: true, force: true });
  });

  it("replays a recorded non-streamed agent run without the server: same transcript, same tool calls in order", async () => {
    const path = tapePath();
    const recorded = await recordNonStreamed(path);
    assert.equal(recorded.result.turns, 3);
    assert.deepEqual(recorded.commands, ["ls", "pwd"]);
    assert.equal(recorded.server.requests.length, 3);

    const replay = tapeEndpoint({ path, mode: "replay" });
    const { agent, commands } = agentWith(replay);
    const result = await agent.operate(PROMPT);
    assert.equal(result.turns, 3);
    assert.equal(result.message.content, "Two commands ran.");
    assert.deepEqual(commands, ["ls", "pwd"]);
    assert.equal(
      transcript(agent.messages as never),
      transcript(recorded.agent.messages as never),
    );
    await replay.assertConsumed();
    assert.equal(replay.calls, 3);
  });

  it("replays a recorded streamed agent run: same events, same transcript", async () => {
    const path = tapePath();
    const server = await serve(streamScript());
    const live = new OpenAICompatibleEndpoint({ baseURL: server.baseURL, apiKey: KEY });
    const first = agentWith(tapeEndpoint({ path, mode: "record", endpoint: live }));
    const recordedEvents = await streamEvents(first.agent, "where am I?");
    await server.close();
    assert.deepEqual(recordedEvents, [
      'call:bash:{"command":"pwd"}',
      "result:bash",
      "text:Your ",
      "text:folder ",
      "text:is /ws.",
      "done:2",
    ]);

    const second = agentWith(tapeEndpoint({ path, mode: "replay" }));
    assert.deepEqual(await streamEvents(second.agent, "where am I?"), recordedEvents);
    assert.deepEqual(second.commands, ["pwd"]);
    assert.equal(
      transcript(second.agent.messages as never),
      transcript(first.agent.messages as never),
    );

    const lines = (await readFile(path, "utf8")).trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(lines[0], { content: "keep", hookscopeTape: 1, source: "endpoint" });
    assert.deepEqual(lines.slice(1).map((e) => [e.index, e.call, e.end]), [
      [0, "stream", "done"],
      [1, "stream", "done"],
    ]);
    assert.match(lines[1].fingerprint, /^[0-9a-f]{64}$/);
    const times = lines[2].chunks.map((c: { ms: number }) => c.ms);
    assert.deepEqual([...times].sort((a, b) => a - b), times);
  });

  it("keeps the API key and a key planted in a message out of the tape file", async () => {
    const path = tapePath();
    await recordNonStreamed(path);
    const text = await readFile(path, "utf8");
    assert.equal(text.includes(KEY), false);
    assert.equal(text.includes(PLANTED), false);
    assert.equal(/sk-[A-Za-z0-9_-]{16,}/.test(text), false);
    assert.match(text, /my key is \[redacted\]/);
  });

  it("uses the endpoint's own redaction: a key that is not key-shaped, echoed by the server, stays off the tape", async () => {
    const path = tapePath();
    const short = "tok-abc12345";
    const server = await serve([jsonReply(answer(`your key was ${short}`))]);
    const live = new OpenAICompatibleEndpoint({ baseURL: server.baseURL, apiKey: short });
    const recorder = tapeEndpoint({ path, mode: "record", endpoint: live });
    const signal = new AbortController().signal;
    const payload = { model: "m", messages: [{ role: "user", content: `echo ${short}` }] };
    assert.deepEqual(
      (await recorder.call(payload, { signal })).raw,
      answer(`your key was ${short}`),
    );
    await server.close();
    const text = await readFile(path, "utf8");
    assert.equal(text.includes(short), false);
    assert.match(text, /your key was \[redacted\]/);
    // A replay without that endpoint redacts with `secrets`, so the same request matches.
    const replay = tapeEndpoint({ path, mode: "replay", secrets: [short] });
    assert.deepEqual(
      (await replay.call(payload, { signal })).raw,
      answer("your key was [redacted]"),
    );
  });

  it("a changed prompt fails with TapeMismatchError naming the field, with a line diff", async () => {
    const path = tapePath();
    await recordNonStreamed(path);
    const { agent, commands } = agentWith(tapeEndpoint({ path, mode: "replay" }));
    const error = await agent.operate("what is there?").then(
      () => assert.fail("expected a mismatch"),
      (e: unknown) => e,
    );
    assert.ok(error instanceof TapeMismatchError, String(error));
    assert.equal(error.index, 0);
    assert.deepEqual(error.fields, ["messages[1].content"]);
    assert.match(error.message, /call 0 of tape .*differs at messages\[1\]\.content/);
    assert.match(error.diff, /^-\s+"content": "what is here\? \(my key is \[redacted\]\)"/m);
    assert.match(error.diff, /^\+\s+"content": "what is there\?"/m);
    assert.deepEqual(commands, []);
  });

  it("a call beyond the tape fails with TapeExhaustedError; unused entries fail assertConsumed()", async () => {
    const path = tapePath();
    const server = await serve([jsonReply(answer("one"))]);
    const live = new OpenAICompatibleEndpoint({ baseURL: server.baseURL, apiKey: KEY });
    const recorder = tapeEndpoint({ path, mode: "record", endpoint: live });
    const signal = new AbortController().signal;
    await recorder.call({ model: "m", messages: [{ role: "user", content: "a" }] }, { signal });
    await server.close();

    const unused = tapeEndpoint({ path, mode: "replay" });
    await assert.rejects(unused.assertConsumed(), TapeUnconsumedError);

    const replay = tapeEndpoint({ path, mode: "replay" });
    const payload = { model: "m", messages: [{ role: "user", content: "a" }] };
    assert.deepEqual((await replay.call(payload, { signal })).raw, answer("one"));
    await replay.assertConsumed();
    await assert.rejects(replay.call(payload, { signal }), (e: unknown) => {
      assert.ok(e instanceof TapeExhaustedError);
      assert.match(e.message, /call 1 of tape .* holds 1 calls/);
      return true;
    });
    // A streamed call of a tape recorded non-streamed is a mismatch of the kind of call.
    const third = tapeEndpoint({ path, mode: "replay" });
    const reader = third.stream(payload, { signal }).getReader();
    await assert.rejects(reader.read(), TapeMismatchError);
  });

  it("a malformed tape, a foreign file and a newer format fail with TapeFormatError", async () => {
    const signal = new AbortController().signal;
    const payload = { model: "m", messages: [] };
    const cases: [string, RegExp][] = [
      [
        `{"content":"keep","hookscopeTape":1,"source":"endpoint"}\n{"index":0,`,
        /line 2: invalid JSON/,
      ],
      [`{"hello":"world"}\n`, /line 1: no tape header/],
      [`{"content":"keep","hookscopeTape":2,"source":"endpoint"}\n`, /format version 2 is newer/],
      [`{"content":"keep","hookscopeTape":1,"source":"ai-sdk"}\n`, /recorded by "ai-sdk"/],
      [
        `{"content":"keep","hookscopeTape":1,"source":"endpoint"}\n{"call":"call","index":1,"request":{}}\n`,
        /line 2: expected the entry of index 0/,
      ],
    ];
    for (const [text, pattern] of cases) {
      const path = tapePath();
      await writeFile(path, text);
      await assert.rejects(
        tapeEndpoint({ path, mode: "replay" }).call(payload, { signal }),
        (e: unknown) => e instanceof TapeFormatError && pattern.test(e.message),
      );
    }
    await assert.rejects(
      tapeEndpoint({ path: join(dir, "missing.jsonl"), mode: "replay" }).call(payload, { signal }),
      TapeFormatError,
    );
  });

  it('timing: "recorded" waits the recorded gaps, and the caller\'s abort ends such a wait', async () => {
    const path = tapePath();
    const server = await serve([sseReply(textEvents(["a", "b", "c"]), { gapMs: 150 })]);
    const live = new OpenAICompatibleEndpoint({ baseURL: server.baseURL, apiKey: KEY });
    const payload = { model: "m", messages: [{ role: "user", content: "go" }], stream: true };
    const signal = new AbortController().signal;
    const recorder = tapeEndpoint({ path, mode: "record", endpoint: live });
    for await (const _ of recorder.stream(payload, { signal }));
    await server.close();
    const entry = JSON.parse((await readFile(path, "utf8")).trim().split("\n")[1]);
    const last = entry.chunks.at(-1).ms as number;
    assert.ok(last >= 300, `recorded ${last} ms`);

    const paced = tapeEndpoint({ path, mode: "replay", timing: "recorded" });
    const started = Date.now();
    const texts: string[] = [];
    for await (const chunk of paced.stream(payload, { signal })) {
      if (chunk.type === "text") texts.push(chunk.text);
    }
    assert.deepEqual(texts, ["a", "b", "c"]);
    assert.ok(Date.now() - started >= last - 50, "the recorded gaps were waited");

    const controller = new AbortController();
    const waiting = tapeEndpoint({ path, mode: "replay", timing: "recorded" });
    const reader = waiting.stream(payload, { signal: controller.signal }).getReader();
    const reason = new Error("stop waiting");
    setTimeout(() => controller.abort(reason), 20);
    await assert.rejects(
      (async () => {
        while (!(await reader.read()).done);
      })(),
      (e: unknown) => e === reason,
    );
  });

  it('content: "drop" keeps message text off the tape; the fingerprint still covers model and tools', async () => {
    const path = tapePath();
    const server = await serve([jsonReply(answer("ok"))]);
    const live = new OpenAICompatibleEndpoint({ baseURL: server.baseURL, apiKey: KEY });
    const recorder = tapeEndpoint({ path, mode: "record", endpoint: live, content: "drop" });
    const signal = new AbortController().signal;
    const tools = [{ type: "function", function: { name: "bash", parameters: {} } }];
    await recorder.call({
      model: "m",
      temperature: 0,
      tools,
      messages: [{ role: "user", content: "secret plan alpha" }],
    }, { signal });
    await server.close();
    const text = await readFile(path, "utf8");
    assert.equal(text.includes("secret plan alpha"), false);
    assert.match(text, /"content":"\[dropped\]"/);

    const replay = tapeEndpoint({ path, mode: "replay" });
    const other = { model: "m", temperature: 0, tools, messages: [{ role: "user", content: "x" }] };
    assert.deepEqual((await replay.call(other, { signal })).raw, answer("ok"));

    const changed = tapeEndpoint({ path, mode: "replay" });
    await assert.rejects(
      changed.call({ ...other, temperature: 1 }, { signal }),
      (e: unknown) => e instanceof TapeMismatchError && e.fields.join() === "temperature",
    );
  });

  it("a failed recorded call and a stream that broke midway replay as TapeRecordedError", async () => {
    const path = tapePath();
    const server = await serve([
      { kind: "error", status: 500, body: { error: { message: "upstream down" } } },
      sseReply(textEvents(["a", "b", "c", "d"]), { breakAfter: 2 }),
    ]);
    const live = new OpenAICompatibleEndpoint({ baseURL: server.baseURL, apiKey: KEY });
    const recorder = tapeEndpoint({ path, mode: "record", endpoint: live });
    const signal = new AbortController().signal;
    const payload = { model: "m", messages: [{ role: "user", content: "x" }] };
    const live500 = await recorder.call(payload, { signal }).then(
      () => assert.fail("expected a 500"),
      (e: Error) => e,
    );
    const texts = async (stream: ReadableStream<{ type: string; text?: string }>) => {
      const seen: string[] = [];
      const failure = await (async () => {
        for await (const chunk of stream) if (chunk.type === "text") seen.push(chunk.text!);
      })().then(() => undefined, (e: Error) => e);
      return { seen, failure };
    };
    const liveStream = await texts(recorder.stream({ ...payload, stream: true }, { signal }));
    await server.close();
    assert.ok(liveStream.failure, "the live stream broke");

    const replay = tapeEndpoint({ path, mode: "replay" });
    await assert.rejects(replay.call(payload, { signal }), (e: unknown) => {
      assert.equal((e as Error).name, "TapeRecordedError");
      assert.equal((e as { recordedName: string }).recordedName, live500.name);
      assert.equal((e as Error).message, live500.message);
      return true;
    });
    const replayed = await texts(replay.stream({ ...payload, stream: true }, { signal }));
    assert.deepEqual(replayed.seen, liveStream.seen);
    assert.equal(replayed.failure?.name, "TapeRecordedError");
    assert.equal(replayed.failure?.message, liveStream.failure.message);
    await replay.assertConsumed();
  });

  it("a stream cancelled before its first read or while opening, and a call aborted before it was sent, leave no gap: the tape replays", async () => {
    const path = tapePath();
    const server = await serve([jsonReply(answer("done"))]);
    const live = new OpenAICompatibleEndpoint({ baseURL: server.baseURL, apiKey: KEY });
    // The live endpoint, as a user could wrap it: says which upstream streams were cancelled.
    const upstream: string[] = [];
    const watched: Endpoint = {
      name: "watched",
      call: (payload, options) => live.call(payload, options),
      stream: (payload, options) => {
        upstream.push("opened");
        const inner = live.stream(payload, options).getReader();
        return new ReadableStream({
          pull: async (controller) => {
            const next = await inner.read();
            if (next.done) controller.close();
            else controller.enqueue(next.value);
          },
          cancel: async (reason) => {
            upstream.push("cancelled");
            await inner.cancel(reason);
          },
        }, { highWaterMark: 0 }); // nothing is asked of the server before a read
      },
    };
    const payload = { model: "m", messages: [{ role: "user", content: "x" }] };
    const signal = new AbortController().signal;
    const aborted = AbortSignal.abort();
    const script = async (endpoint: Endpoint) => {
      // 0: never read.
      await endpoint.stream({ ...payload, stream: true }, { signal }).cancel("not needed");
      // 1: aborted before it was sent.
      const early = await endpoint.call(payload, { signal: aborted }).then(
        () => assert.fail("expected the abort"),
        (e: Error) => e.name,
      );
      // 2: cancelled while the first read is opening it.
      const reader = endpoint.stream({ ...payload, stream: true }, { signal }).getReader();
      await new Promise((r) => setTimeout(r, 0)); // the stream has started: a read pulls at once
      const first = reader.read().then(() => "read", (e: Error) => e.name);
      await reader.cancel("changed my mind");
      await first;
      // 3: an ordinary call.
      const done = await endpoint.call(payload, { signal });
      return { early, text: done.text };
    };
    const recorder = tapeEndpoint({ path, mode: "record", endpoint: watched });
    const recorded = await script(recorder);
    await recorder.flush();
    assert.deepEqual(recorded, { early: "AbortError", text: "done" });
    assert.equal(server.requests.length, 1, "only the ordinary call reached the server");
    // The stream cancelled while opening was opened upstream, and cancelled there too.
    assert.deepEqual(upstream, ["opened", "cancelled"]);
    const lines = (await readFile(path, "utf8")).trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(
      lines.slice(1).map((l) => [l.index, l.call, l.end ?? l.error?.name ?? "answer"]),
      [[0, "stream", "cancelled"], [1, "call", "AbortError"], [2, "stream", "cancelled"], [
        3,
        "call",
        "answer",
      ]],
    );
    const replay = tapeEndpoint({ path, mode: "replay" });
    assert.deepEqual(await script(replay), recorded);
    await replay.assertConsumed();
  });

  it("recording without an endpoint is a TypeError", () => {
    assert.throws(
      () => tapeEndpoint({ path: tapePath(), mode: "record" }),
      /Cannot create tape endpoint: recording needs an endpoint/,
    );
    assert.throws(
      () => tapeEndpoint({ path: tapePath(), mode: "play" as never }),
      /mode must be "record" or "replay"/,
    );
  });
});
