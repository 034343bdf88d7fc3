import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { NotPlainDataError } from "../../session/mod.ts";
import { plainDataCopy, samePlainData } from "../../core/_freeze.ts";

function refusal(value: unknown): NotPlainDataError {
  try {
    plainDataCopy(value, "Cannot test", "args", true);
  } catch (error) {
    assert.ok(error instanceof NotPlainDataError, String(error));
    return error;
  }
  assert.fail("the copy was accepted");
}

describe("plainDataCopy()", () => {
  it("copies JSON-like values exactly, deep-frozen, sharing nothing (property)", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (value) => {
        const copy = plainDataCopy(value, "Cannot test", "args", true) as Record<string, unknown>;
        assert.deepEqual(copy, structuredClone(value)); // plain objects come out with Object.prototype
        assert.ok(samePlainData(copy, value));
        const walk = (a: unknown, b: unknown): void => {
          if (a === null || typeof a !== "object") return;
          assert.ok(Object.isFrozen(a));
          assert.notEqual(a, b);
          for (const key of Object.keys(a)) {
            walk((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]);
          }
        };
        walk(copy, value);
      }),
      { numRuns: 200 },
    );
  });

  it("refuses cycles, functions, symbols, getters, class instances and deep nesting, naming the path", () => {
    const cyclic: Record<string, unknown> = { a: { b: [] } };
    ((cyclic.a as Record<string, unknown>).b as unknown[]).push(cyclic);
    const e1 = refusal(cyclic);
    assert.equal(e1.problem, "cycle");
    assert.deepEqual(e1.path, ["args", "a", "b", 0]);
    assert.equal(
      e1.message,
      "Cannot test: args.a.b[0] refers back to itself (a cycle), not plain data",
    );
    assert.equal(refusal({ run: () => 1 }).problem, "function");
    assert.equal(refusal({ s: Symbol("x") }).problem, "symbol");
    assert.equal(refusal({ [Symbol("k")]: 1 }).problem, "symbol");
    const getter = refusal({
      list: [1, Object.defineProperty({}, "x", { get: () => 1, enumerable: true })],
    });
    assert.equal(getter.problem, "getter");
    assert.deepEqual(getter.path, ["args", "list", 1, "x"]);
    assert.equal(refusal({ when: new Date(0) }).problem, "not_plain_object");
    assert.equal(refusal({ m: new Map() }).problem, "not_plain_object");
    class Args {
      command = "ls";
    }
    assert.equal(refusal(new Args()).problem, "not_plain_object");
    let deep: unknown = 1;
    for (let i = 0; i < 300; i++) deep = { d: deep };
    assert.equal(refusal(deep).problem, "too_deep");
  });

  it("reads each property once, keeps __proto__ as an own key, keeps shared (acyclic) values", () => {
    // Values come from one descriptor read per key, never through [[Get]] (a getter or a proxy's
    // get trap): the copy is one fixed value for the judge and the tool alike.
    let gets = 0;
    const proxy = new Proxy({ command: "ls" }, {
      get(target, key) {
        gets++;
        return Reflect.get(target, key);
      },
    });
    const copy = plainDataCopy(proxy, "Cannot test", "args", true) as Record<string, unknown>;
    assert.deepEqual(copy, { command: "ls" });
    assert.equal(gets, 0);
    assert.ok(Object.isFrozen(copy));
    const parsed = JSON.parse('{"__proto__": {"polluted": true}}');
    const safe = plainDataCopy(parsed, "Cannot test", "args", false) as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(safe), Object.prototype);
    assert.ok(Object.hasOwn(safe, "__proto__"));
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    const shared = { x: 1 };
    assert.deepEqual(plainDataCopy({ a: shared, b: [shared] }, "Cannot test", "args", true), {
      a: { x: 1 },
      b: [{ x: 1 }],
    });
    assert.ok(!Object.isFrozen(plainDataCopy({ a: {} }, "Cannot test", "args", false)));
  });
});
