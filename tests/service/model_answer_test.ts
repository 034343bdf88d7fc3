// Typed model answers: OpenAICompatibleEndpoint.call() and FunctionEndpoint resolve to a
// ModelAnswer, and an endpoint with its own answer and message form (no OpenAI anywhere) drives
// the agent loop.

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Tool } from "../../action/mod.ts";
import {
  type ConversationItem,
  type Endpoint,
  FunctionEndpoint,
  IModel,
  type ModelAnswer,
  openAICompatible,
  type StreamChunk,
} from "../../service/mod.ts";
import { Branch } from "../../session/mod.ts";

const signal = new AbortController().signal;

describe("ModelAnswer", () => {
  it("OpenAICompatibleEndpoint.call() reads a chat completion into one typed answer", async () => {
    const body = {
      id: "chatcmpl-1",
      model: "gpt-x",
      choices: [{
        index: 0,
        finish_reason: "tool_calls",
        message: {
          role: "assistant",
          content: "Checking.",
          tool_calls: [
            { id: "c1", type: "function", function: { name: "ls", arguments: '{"dir":"."}' } },
            { id: "c2", type: "function", function: { name: "cat", arguments: "{oops" } },
          ],
        },
      }],
      usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
    };
    const endpoint = openAICompatible({
      baseURL: "http://example.test/v1",
      fetch: () =>
        Promise.resolve(
          new Response(JSON.stringify(body), { headers: { "content-type": "application/json" } }),
        ),
    });
    const answer = await endpoint.call({ model: "gpt-x", messages: [] }, { signal });
    assert.equal(answer.text, "Checking.");
    assert.equal(answer.finishReason, "tool_calls");
    assert.equal(answer.responseId, "chatcmpl-1");
    assert.equal(answer.model, "gpt-x");
    assert.deepEqual(answer.usage, { promptTokens: 3, completionTokens: 4, totalTokens: 7 });
    assert.deepEqual(answer.raw, body);
    assert.deepEqual(answer.toolCalls[0], {
      index: 0,
      id: "c1",
      name: "ls",
      arguments: '{"dir":"."}',
      args: { dir: "." },
    });
    assert.equal(answer.toolCalls[1].args, null);
    assert.match(String(answer.toolCalls[1].argsError), /JSON/);
  });

  it("FunctionEndpoint reads a string, a completion body and a hand-made answer", async () => {
    const text = await new FunctionEndpoint({ call: () => "hi" }).call({}, { signal });
    assert.equal(text.text, "hi");
    assert.equal(text.raw, "hi");
    const openai = await new FunctionEndpoint({
      call: () => ({ choices: [{ message: { content: "from choices" } }] }),
    }).call({}, { signal });
    assert.equal(openai.text, "from choices");
    const made = await new FunctionEndpoint({
      call: () => ({ text: "", toolCalls: [{ id: "t1", name: "add", arguments: '{"x":1}' }] }),
    }).call({}, { signal });
    assert.deepEqual(made.toolCalls[0].args, { x: 1 });
    assert.equal(made.usage, null);
    assert.equal(made.finishReason, null);
  });
});

/** An endpoint in a made-up provider form: its own request messages, typed answers. */
function ownFormEndpoint(seen: unknown[][]): Endpoint {
  let turn = 0;
  return {
    name: "own",
    renderMessages: (conversation: readonly ConversationItem[]) =>
      conversation.map((item) => ({ speaker: item.role, said: item.content })),
    call(payload): Promise<ModelAnswer> {
      seen.push(payload.messages as unknown[]);
      const first = turn++ === 0;
      return Promise.resolve({
        text: first ? "" : "three",
        toolCalls: first
          ? [{ index: 0, id: "k1", name: "add", arguments: '{"x":2}', args: { x: 2 } }]
          : [],
        usage: null,
        finishReason: first ? "tool_calls" : "stop",
        responseId: null,
        model: null,
        raw: null,
      });
    },
    stream(): ReadableStream<StreamChunk> {
      return new ReadableStream({ start: (c) => c.close() });
    },
  };
}

describe("an endpoint with its own form", () => {
  it("drives operate(): the loop sends the endpoint's messages and runs the answer's tool calls", async () => {
    const seen: unknown[][] = [];
    const model = new IModel({ model: "own", endpoint: ownFormEndpoint(seen) });
    const branch = new Branch({ model });
    branch.actions.register(new Tool({ name: "add", execute: (a: { x: number }) => a.x + 1 }));
    const result = await branch.operate("add one to two");
    assert.equal(result.message.content, "three");
    assert.equal(result.actions[0].output, 3);
    assert.deepEqual(seen[0], [{ speaker: "user", said: "add one to two" }]);
    assert.deepEqual(
      (seen[1] as { speaker: string }[]).map((m) => m.speaker),
      ["user", "assistant", "action_request", "action_response"],
    );
  });
});
