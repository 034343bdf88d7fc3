import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  generateText,
  type LanguageModel,
  simulateReadableStream,
  stepCountIs,
  streamText,
  tool,
  wrapLanguageModel,
} from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";
import {
  type StreamPart,
  TapeExhaustedError,
  TapeFormatError,
  tapeMiddleware,
  TapeMismatchError,
  TapeUnconsumedError,
} from "../../ai-sdk/mod.ts";

// The real `ai` package runs a multi-step tool loop; its mock language model plays the provider
// while recording, and a model that fails every call stands in for "no provider" on replay.
const usage = {
  inputTokens: { total: 3, noCache: 3, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};
const PLANTED = "sk-planted9876543210zyxwvuTSRQ";
const HEADER_KEY = "sk-headerkey-0123456789abcdefghij";

const dir = await mkdtemp(join(tmpdir(), "hookscope-ai-tape-"));
let counter = 0;
const tapePath = (): string => join(dir, `tape-${counter++}.jsonl`);

const call = (id: string, input: unknown) => ({
  type: "tool-call",
  toolCallId: id,
  toolName: "bash",
  input: JSON.stringify(input),
});

function generating(turns: unknown[][]) {
  let i = 0;
  return new MockLanguageModelV3({
    doGenerate: () => {
      const content = turns[Math.min(i++, turns.length - 1)];
      const calls = content.some((c) => (c as { type: string }).type === "tool-call");
      return Promise.resolve({
        content,
        finishReason: calls
          ? { unified: "tool-calls", raw: "tool_calls" }
          : { unified: "stop", raw: "stop" },
        usage,
        warnings: [],
        response: { id: `r${i}`, timestamp: new Date(1_700_000_000_000 + i), modelId: "mock" },
      } as never);
    },
  });
}

function streaming(turns: StreamPart[][]) {
  let i = 0;
  return new MockLanguageModelV3({
    doStream: () => {
      const chunks = turns[Math.min(i++, turns.length - 1)];
      return Promise.resolve(
        { stream: simulateReadableStream({ chunks, chunkDelayInMs: 5 }) } as never,
      );
    },
  });
}

/** A model that must not be called: replay answers from the tape. */
function absent() {
  return new MockLanguageModelV3({
    doGenerate: () => Promise.reject(new Error("the provider was called")),
    doStream: () => Promise.reject(new Error("the provider was called")),
  });
}

function bashTool(commands: string[]) {
  return tool({
    description: "Run a command",
    inputSchema: z.object({ command: z.string() }),
    execute: ({ command }) => {
      commands.push(command);
      return { stdout: `ran ${command}` };
    },
  });
}

const toolTurns = (): unknown[][] => [
  [call("c1", { command: "ls" })],
  [call("c2", { command: "pwd" })],
  [{ type: "text", text: "Two commands ran." }],
];

async function runGenerate(model: LanguageModel, prompt: string) {
  const commands: string[] = [];
  const result = await generateText({
    model,
    tools: { bash: bashTool(commands) },
    stopWhen: stepCountIs(5),
    temperature: 0,
    headers: { Authorization: `Bearer ${HEADER_KEY}` },
    prompt,
  });
  return { result, commands };
}

const streamTurns = (): StreamPart[][] => [
  [
    { type: "stream-start", warnings: [] },
    {
      type: "response-metadata",
      id: "s1",
      modelId: "mock",
      timestamp: new Date(1_700_000_000_000),
    },
    { type: "tool-input-start", id: "t1", toolName: "bash" },
    { type: "tool-input-delta", id: "t1", delta: '{"command":"pwd"}' },
    { type: "tool-input-end", id: "t1" },
    { type: "tool-call", toolCallId: "t1", toolName: "bash", input: '{"command":"pwd"}' },
    { type: "finish", finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage },
  ],
  [
    { type: "stream-start", warnings: [] },
    { type: "text-start", id: "x1" },
    { type: "text-delta", id: "x1", delta: "Your " },
    { type: "text-delta", id: "x1", delta: "folder is /ws." },
    { type: "text-end", id: "x1" },
    { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage },
  ],
];

async function runStream(model: LanguageModel, prompt: string) {
  const commands: string[] = [];
  const result = streamText({
    model,
    tools: { bash: bashTool(commands) },
    stopWhen: stepCountIs(5),
    prompt,
  });
  const parts: string[] = [];
  for await (const part of result.fullStream) {
    if (part.type === "text-delta") parts.push(`text:${part.text}`);
    else if (part.type === "tool-call") {
      parts.push(`call:${part.toolName}:${JSON.stringify(part.input)}`);
    } else if (part.type === "tool-result") parts.push(`result:${part.toolName}`);
  }
  return { parts, commands, messages: (await result.response).messages };
}

describe("tapeMiddleware with the AI SDK", () => {
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("generateText: a replayed tool loop takes the same tool calls in order and gives the same messages", async () => {
    const path = tapePath();
    const recorder = tapeMiddleware({ path, mode: "record" });
    const recorded = await runGenerate(
      wrapLanguageModel({ model: generating(toolTurns()), middleware: recorder }),
      `list it (key ${PLANTED})`,
    );
    assert.deepEqual(recorded.commands, ["ls", "pwd"]);
    assert.equal(recorder.calls, 3);

    const replay = tapeMiddleware({ path, mode: "replay" });
    const replayed = await runGenerate(
      wrapLanguageModel({ model: absent(), middleware: replay }),
      `list it (key ${PLANTED})`,
    );
    assert.deepEqual(replayed.commands, ["ls", "pwd"]);
    assert.equal(replayed.result.text, "Two commands ran.");
    assert.equal(
      JSON.stringify(replayed.result.response.messages),
      JSON.stringify(recorded.result.response.messages),
    );
    assert.ok(replayed.result.response.timestamp instanceof Date);
    await replay.assertConsumed();
  });

  it("streamText: a replayed stream gives the same parts, tool calls and messages", async () => {
    const path = tapePath();
    const recorded = await runStream(
      wrapLanguageModel({
        model: streaming(streamTurns()),
        middleware: tapeMiddleware({ path, mode: "record" }),
      }),
      "where am I?",
    );
    assert.deepEqual(recorded.parts, [
      'call:bash:{"command":"pwd"}',
      "result:bash",
      "text:Your ",
      "text:folder is /ws.",
    ]);
    const replay = tapeMiddleware({ path, mode: "replay" });
    const replayed = await runStream(
      wrapLanguageModel({ model: absent(), middleware: replay }),
      "where am I?",
    );
    assert.deepEqual(replayed.parts, recorded.parts);
    assert.deepEqual(replayed.commands, ["pwd"]);
    assert.equal(JSON.stringify(replayed.messages), JSON.stringify(recorded.messages));
    await replay.assertConsumed();

    const lines = (await readFile(path, "utf8")).trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(lines[0], { content: "keep", hookscopeTape: 1, source: "ai-sdk" });
    assert.deepEqual(lines.slice(1).map((e) => [e.index, e.call, e.end]), [
      [0, "stream", "done"],
      [1, "stream", "done"],
    ]);
    assert.equal(lines[1].request.model.provider, "mock-provider");
  });

  it("keeps a header key and a key planted in the prompt out of the tape", async () => {
    const path = tapePath();
    await runGenerate(
      wrapLanguageModel({
        model: generating(toolTurns()),
        middleware: tapeMiddleware({ path, mode: "record" }),
      }),
      `list it (key ${PLANTED})`,
    );
    const text = await readFile(path, "utf8");
    assert.equal(text.includes(PLANTED), false);
    assert.equal(text.includes(HEADER_KEY), false);
    assert.equal(/sk-[A-Za-z0-9_-]{16,}/.test(text), false);
    assert.match(text, /list it \(key \[redacted\]\)/);
  });

  it("a changed prompt fails with TapeMismatchError naming the prompt field, with a line diff", async () => {
    const path = tapePath();
    await runGenerate(
      wrapLanguageModel({
        model: generating(toolTurns()),
        middleware: tapeMiddleware({ path, mode: "record" }),
      }),
      "list it",
    );
    const commands: string[] = [];
    const error = await generateText({
      model: wrapLanguageModel({
        model: absent(),
        middleware: tapeMiddleware({ path, mode: "replay" }),
      }),
      tools: { bash: bashTool(commands) },
      stopWhen: stepCountIs(5),
      temperature: 0,
      prompt: "list that",
    }).then(() => assert.fail("expected a mismatch"), (e: unknown) => e);
    assert.ok(error instanceof TapeMismatchError, String(error));
    assert.deepEqual(error.fields, ["prompt[0].content[0].text"]);
    assert.match(error.diff, /^-\s+"text": "list it"/m);
    assert.match(error.diff, /^\+\s+"text": "list that"/m);
    assert.deepEqual(commands, []);
  });

  it('content: "drop" matches another prompt text but not other tools; extra and unused calls are typed errors', async () => {
    const path = tapePath();
    const recorder = tapeMiddleware({ path, mode: "record", content: "drop" });
    await generateText({
      model: wrapLanguageModel({
        model: generating([[{ type: "text", text: "ok" }]]),
        middleware: recorder,
      }),
      prompt: "private text",
    });
    const text = await readFile(path, "utf8");
    assert.equal(text.includes("private text"), false);

    const replay = tapeMiddleware({ path, mode: "replay" });
    const model = wrapLanguageModel({ model: absent(), middleware: replay });
    const result = await generateText({ model, prompt: "other text" });
    assert.equal(result.text, "ok");
    await assert.rejects(generateText({ model, prompt: "again" }), TapeExhaustedError);

    const unused = tapeMiddleware({ path, mode: "replay" });
    await assert.rejects(unused.assertConsumed(), TapeUnconsumedError);

    const withTools = tapeMiddleware({ path, mode: "replay" });
    await assert.rejects(
      generateText({
        model: wrapLanguageModel({ model: absent(), middleware: withTools }),
        tools: { bash: bashTool([]) },
        prompt: "private text",
      }),
      (e: unknown) => e instanceof TapeMismatchError && e.fields.some((f) => f.startsWith("tools")),
    );
  });

  it("an endpoint tape or a newer format fails with TapeFormatError", async () => {
    for (
      const [header, pattern] of [
        [`{"content":"keep","hookscopeTape":1,"source":"endpoint"}`, /recorded by "endpoint"/],
        [`{"content":"keep","hookscopeTape":9,"source":"ai-sdk"}`, /format version 9 is newer/],
      ] as const
    ) {
      const path = tapePath();
      await writeFile(path, header + "\n");
      await assert.rejects(
        generateText({
          model: wrapLanguageModel({
            model: absent(),
            middleware: tapeMiddleware({ path, mode: "replay" }),
          }),
          prompt: "x",
        }),
        (e: unknown) => e instanceof TapeFormatError && pattern.test(e.message),
      );
    }
  });
});
