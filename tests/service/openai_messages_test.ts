import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { toOpenAIMessages } from "../../service/endpoints/openai_messages.ts";

describe("toOpenAIMessages()", () => {
  it("toOpenAIMessages() gives each turn one assistant message with all its calls, then its tool messages", () => {
    const turn = fc.record({
      text: fc.string({ maxLength: 6 }),
      calls: fc.array(fc.string({ minLength: 1, maxLength: 4 }), { maxLength: 4 }),
      grouped: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(turn, { minLength: 1, maxLength: 5 }), (turns) => {
        const items: { role: string; content: unknown }[] = [];
        turns.forEach((t, ti) => {
          items.push({ role: "user", content: `q${ti}` });
          items.push({ role: "assistant", content: t.text });
          const ids = t.calls.map((name, ci) => ({ id: `t${ti}c${ci}`, name }));
          const request = (c: { id: string; name: string }) => ({
            role: "action_request",
            content: { function: c.name, arguments: { n: c.id }, callId: c.id },
          });
          const response = (c: { id: string; name: string }) => ({
            role: "action_response",
            content: { function: c.name, arguments: {}, output: c.id, callId: c.id },
          });
          if (t.grouped) {
            items.push(...ids.map(request), ...ids.map(response));
          } else {
            for (const c of ids) items.push(request(c), response(c));
          }
        });
        const chat = toOpenAIMessages(items);
        let i = 0;
        turns.forEach((t, ti) => {
          assert.deepEqual(chat[i++], { role: "user", content: `q${ti}` });
          const assistant = chat[i++];
          assert.equal(assistant.role, "assistant");
          if (t.calls.length === 0) {
            assert.equal(assistant.content, t.text);
            assert.equal(assistant.tool_calls, undefined);
            return;
          }
          assert.equal(assistant.content, t.text === "" ? null : t.text);
          assert.deepEqual(
            assistant.tool_calls?.map((c) => [c.id, c.function.name, c.function.arguments]),
            t.calls.map((
              name,
              ci,
            ) => [`t${ti}c${ci}`, name, JSON.stringify({ n: `t${ti}c${ci}` })]),
          );
          for (let ci = 0; ci < t.calls.length; ci++) {
            assert.deepEqual(chat[i++], {
              role: "tool",
              tool_call_id: `t${ti}c${ci}`,
              content: `t${ti}c${ci}`,
            });
          }
        });
        assert.equal(i, chat.length);
      }),
      { numRuns: 200 },
    );
  });

  it("toOpenAIMessages() appends a response's context to its tool message and rebuilds a call for an orphan response", () => {
    const chat = toOpenAIMessages([
      {
        role: "action_response",
        content: {
          function: "ls",
          arguments: { p: "." },
          output: "a",
          callId: "c1",
          context: "note",
        },
      },
    ]);
    assert.deepEqual(chat, [
      {
        role: "assistant",
        content: null,
        tool_calls: [{
          id: "c1",
          type: "function",
          function: { name: "ls", arguments: '{"p":"."}' },
        }],
      },
      { role: "tool", tool_call_id: "c1", content: "a\n\nnote" },
    ]);
  });
});
