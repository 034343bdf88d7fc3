import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { Signal } from "../../core/mod.ts";
import { HookSignal } from "../../hooks/mod.ts";
import {
  createMessage,
  GateDenied,
  HookBlocked,
  MAX_SIGNAL_PAYLOAD_BYTES,
  MessageAdded,
  sanitizeSignalPayload,
  toolInvocation,
  utf8ByteLength,
} from "../../session/mod.ts";

const encoder = new TextEncoder();
const bytesOf = (value: unknown): number => encoder.encode(JSON.stringify(value)).length;

/** Arbitrary text: full Unicode, lone surrogates, quotes, backslashes and control characters. */
const nastyText = fc.oneof(
  fc.string({ unit: "binary", maxLength: 400 }),
  fc.string({
    unit: fc.constantFrom('"', "\\", "\n", "\u0000", "\u001f", "é", "😀", "\ud800", "a"),
    maxLength: 3000,
  }),
  fc.string({ unit: "grapheme", maxLength: 200 }),
);

describe("sanitizeSignalPayload()", () => {
  it("sanitizeSignalPayload() keeps every field but id, data and emitterRole, skipping null and empty strings", () => {
    const signal = new HookSignal({
      point: "tool.post",
      payload: { toolName: "reader" },
      createdAt: 5,
      metadata: {},
    });
    assert.deepEqual(sanitizeSignalPayload(signal), {
      createdAt: 5,
      metadata: {},
      schemaVersion: 1,
      point: "tool.post",
      payload: { toolName: "reader" },
    });
    const plain = new Signal({ data: "", emitterRole: "planner", createdAt: 1 });
    assert.deepEqual(sanitizeSignalPayload(plain), {
      createdAt: 1,
      metadata: {},
      schemaVersion: 1,
      data: "",
    });
  });

  it("sanitizeSignalPayload() gives MessageAdded a messageRef and never the message body", () => {
    const message = createMessage(
      { role: "user", content: "secret body", sender: "alice" },
      "b1",
      { id: "m1", createdAt: 1 },
    );
    const payload = sanitizeSignalPayload(new MessageAdded({ data: message, createdAt: 2 }));
    assert.deepEqual(payload, {
      createdAt: 2,
      metadata: {},
      schemaVersion: 1,
      messageRef: { id: "m1", role: "user", sender: "alice" },
    });
    assert.equal(JSON.stringify(payload).includes("secret body"), false);
  });

  it("sanitizeSignalPayload() renders data: objects JSON-safe, other values as strings", () => {
    const denied = new GateDenied({ data: toolInvocation("bash", { n: 1n }, "b1"), createdAt: 1 });
    assert.deepEqual(sanitizeSignalPayload(denied).data, {
      function: "bash",
      arguments: { n: "1n" },
      branchId: "b1",
    });
    assert.equal(sanitizeSignalPayload(new Signal({ data: 42 })).data, "42");
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    assert.deepEqual(sanitizeSignalPayload(new Signal({ data: cyclic })).data, {
      self: "[Circular]",
    });
    const blocked = new HookBlocked({
      point: "tool.pre",
      callId: "c1",
      toolName: "t",
      error: new Error("no"),
    });
    assert.deepEqual(sanitizeSignalPayload(blocked).error, { name: "Error", message: "no" });
  });

  it("sanitizeSignalPayload() cuts a payload over 16 KiB to { truncated, originalBytes, data }", () => {
    const text = '"\\'.repeat(20_000);
    const signal = new Signal({ data: text, createdAt: 1 });
    const original = JSON.stringify({ createdAt: 1, metadata: {}, schemaVersion: 1, data: text });
    const payload = sanitizeSignalPayload(signal);
    assert.equal(payload.truncated, true);
    assert.equal(payload.originalBytes, encoder.encode(original).length);
    assert.ok(original.startsWith(payload.data as string));
    assert.ok(bytesOf(payload) <= MAX_SIGNAL_PAYLOAD_BYTES);
    // Escaping is measured: nearly every byte of the budget is used, not half of it.
    assert.ok(bytesOf(payload) > MAX_SIGNAL_PAYLOAD_BYTES - 8);
  });

  it("sanitizeSignalPayload() rejects a maxBytes that is not a positive integer", () => {
    assert.throws(() => sanitizeSignalPayload(new Signal(), 0), RangeError);
    assert.throws(() => sanitizeSignalPayload(new Signal(), 1.5), RangeError);
  });

  it("utf8ByteLength() equals TextEncoder's length for arbitrary well-formed text", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (text) => {
        assert.equal(utf8ByteLength(text), encoder.encode(text).length);
      }),
      { numRuns: 300 },
    );
  });

  it("sanitizeSignalPayload() property: valid JSON of at most 16 384 UTF-8 bytes; small payloads unchanged", () => {
    fc.assert(
      fc.property(
        nastyText,
        fc.integer({ min: 1, max: 40 }),
        fc.dictionary(fc.string({ maxLength: 8 }), nastyText, { maxKeys: 4 }),
        (text, repeat, extra) => {
          const data = { text: text.repeat(repeat), extra };
          const signal = new Signal({ data, createdAt: 7, metadata: { k: text.slice(0, 10) } });
          const payload = sanitizeSignalPayload(signal);
          const json = JSON.stringify(payload);
          assert.deepEqual(JSON.parse(json), payload); // valid, JSON-native
          assert.ok(encoder.encode(json).length <= 16_384);
          const expected = JSON.parse(JSON.stringify({
            createdAt: 7,
            metadata: { k: text.slice(0, 10) },
            schemaVersion: 1,
            data,
          }));
          if (encoder.encode(JSON.stringify(expected)).length <= 16_384) {
            assert.deepEqual(payload, expected);
          } else {
            assert.equal(payload.truncated, true);
            assert.equal(payload.originalBytes, encoder.encode(JSON.stringify(expected)).length);
            assert.ok(JSON.stringify(expected).startsWith(payload.data as string));
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it("sanitizeSignalPayload() property: any maxBytes bound holds for arbitrary text, or it throws", () => {
    fc.assert(
      fc.property(nastyText, fc.integer({ min: 1, max: 5000 }), (text, max) => {
        const signal = new Signal({ data: text.repeat(5) });
        let payload: Record<string, unknown>;
        try {
          payload = sanitizeSignalPayload(signal, max);
        } catch (error) {
          // Only a bound too small for the empty truncation marker may throw.
          assert.ok(error instanceof RangeError);
          const full = bytesOf(sanitizeSignalPayload(signal, 1_000_000));
          assert.ok(bytesOf({ truncated: true, originalBytes: full, data: "" }) > max);
          return;
        }
        assert.ok(bytesOf(payload) <= max);
      }),
      { numRuns: 300 },
    );
  });

  it("sanitizeSignalPayload() throws a RangeError when maxBytes cannot hold the truncation marker", () => {
    const signal = new Signal({ data: "x".repeat(100) });
    assert.throws(() => sanitizeSignalPayload(signal, 10), RangeError);
    assert.deepEqual(sanitizeSignalPayload(new Signal({ data: 1, createdAt: 1 }), 1000), {
      createdAt: 1,
      metadata: {},
      schemaVersion: 1,
      data: "1",
    });
  });
});
