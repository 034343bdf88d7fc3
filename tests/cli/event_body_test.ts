// How `hookscope serve` reads a body that may not be a whole event: `readEventBody` keeps the
// start and drops the rest (stopping past the drop limit or at the deadline), and `eventNameOf`
// tells the event's name from the outermost level of a cut or garbled JSON text only.

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { eventNameOf, readEventBody } from "../../cli/_event_body.ts";

const NAMES = ["PreToolUse", "UserPromptSubmit", "PostToolUse", "Stop", "Notification"];

function streamOf(chunks: string[], end = true): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let i = 0;
  return new ReadableStream({
    pull(controller) {
      if (i < chunks.length) controller.enqueue(encoder.encode(chunks[i++]));
      else if (end) controller.close();
    },
  });
}

describe("reading an event body that may not be whole", () => {
  it("eventNameOf: the top-level name of any cut after it; never a nested one", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...NAMES),
        fc.constantFrom(...NAMES),
        fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 4 }),
        fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 4 }),
        fc.boolean(),
        (name, nested, before, after, pretty) => {
          const event: Record<string, unknown> = {};
          for (const [k, v] of Object.entries(before)) if (k !== "hook_event_name") event[k] = v;
          event.tool_input = { hook_event_name: nested, ...after };
          event.hook_event_name = name;
          for (const [k, v] of Object.entries(after)) {
            if (k !== "hook_event_name" && !(k in event)) event[k] = v;
          }
          const text = JSON.stringify(event, null, pretty ? 1 : undefined);
          assert.equal(eventNameOf(text), name);
          // Cut anywhere after the name's value: still the name.
          const end = text.lastIndexOf(JSON.stringify(name)) + JSON.stringify(name).length;
          for (const cut of [end, Math.floor((end + text.length) / 2), text.length - 1]) {
            assert.equal(eventNameOf(text.slice(0, cut)), name);
          }
          // Cut before it: nothing (the one in tool_input does not count).
          const at = text.indexOf('"hook_event_name":' + JSON.stringify(name));
          const start = at >= 0 ? at : text.lastIndexOf('"hook_event_name"');
          assert.equal(eventNameOf(text.slice(0, start)), undefined);
        },
      ),
    );
  });

  it("eventNameOf: nothing for text that is not an object, a name that is not a string, two names", () => {
    for (
      const text of [
        "",
        "[1,2]",
        '"PreToolUse"',
        '{"hook_event_name":1}',
        '{"hook_event_name":"PreToolUse","hook_event_name":"PostToolUse"}',
        '{"tool_input":{"hook_event_name":"PreToolUse"}}',
        '{"a":"\\u00',
        "\ufffd\ufffd{",
      ]
    ) {
      assert.equal(eventNameOf(text), undefined, text);
    }
    // Garbage after the name does not take it back; the same name twice is that name.
    assert.equal(eventNameOf('{"hook_event_name" : "Stop" , "x": \ufffd'), "Stop");
    assert.equal(
      eventNameOf('{"hook_event_name":"Stop","hook_event_name":"Stop"}'),
      "Stop",
    );
  });

  it("readEventBody keeps the start, drops the rest, and stops past the drop limit", async () => {
    const signal = new AbortController().signal;
    const whole = await readEventBody(streamOf(["abc", "def", "ghi"]), 4, 100, signal);
    assert.deepEqual([new TextDecoder().decode(whole.bytes), whole.size, whole.ending], [
      "abcd",
      9,
      "end",
    ]);
    const large = await readEventBody(streamOf(["abc", "def", "ghi"], false), 2, 5, signal);
    assert.deepEqual([new TextDecoder().decode(large.bytes), large.size, large.ending], [
      "ab",
      6,
      "too-large",
    ]);
    const none = await readEventBody(null, 10, 10, signal);
    assert.deepEqual([none.bytes.length, none.size, none.ending], [0, 0, "end"]);
  });

  it("readEventBody ends at the deadline with what arrived", async () => {
    const controller = new AbortController();
    const reading = readEventBody(streamOf(["abc"], false), 10, 100, controller.signal);
    setTimeout(() => controller.abort(new Error("late")), 20);
    const read = await reading;
    assert.deepEqual([new TextDecoder().decode(read.bytes), read.ending], ["abc", "deadline"]);
  });
});
