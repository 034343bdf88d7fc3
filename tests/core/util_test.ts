import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { isThenable, messageOf } from "../../core/_util.ts";

describe("core/_util", () => {
  it("isThenable() is true exactly for objects and functions with a then method", () => {
    assert.equal(isThenable(Promise.resolve(1)), true);
    assert.equal(isThenable({ then: () => {} }), true);
    const fn = Object.assign(() => {}, { then: () => {} });
    assert.equal(isThenable(fn), true);
    for (const value of [null, undefined, 0, "then", {}, { then: 1 }, () => {}]) {
      assert.equal(isThenable(value), false, String(value));
    }
    fc.assert(fc.property(fc.anything(), (value) => {
      assert.equal(isThenable(value), false);
    }));
  });

  it("messageOf() gives an Error's message, any other value as a string, the cause on request", () => {
    const error = new Error("outer", { cause: new Error("inner") });
    assert.equal(messageOf(error), "outer");
    assert.equal(messageOf(error, { withCause: true }), "outer: inner");
    assert.equal(messageOf(new Error("alone"), { withCause: true }), "alone");
    assert.equal(messageOf("text"), "text");
    assert.equal(messageOf(42), "42");
    assert.equal(messageOf(undefined), "undefined");
  });
});
