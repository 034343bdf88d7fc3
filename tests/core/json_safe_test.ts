import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { cutText, renderJson, summarize, toJsonSafe } from "../../hooks/mod.ts";

class Point {
  x = 1;
  y = 2;
  get sum(): number {
    return this.x + this.y;
  }
}

function oddValues(): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.anything(),
    fc.bigInt(),
    fc.constant(() => 1),
    fc.constant(Symbol("s")),
    fc.constant(new Error("e")),
    fc.constant(new Map<unknown, unknown>([[1, "a"], [{ k: 1 }, 2n]])),
    fc.constant(new Set([1, NaN])),
    fc.constant(new Point()),
    fc.constant(new Date(Number.NaN)),
    fc.constant(new Uint8Array(3)),
    fc.constant(Number.POSITIVE_INFINITY),
    fc.string({ unit: "binary", maxLength: 300 }),
  );
}

function hostile(): Record<string, unknown> {
  const cyclic: Record<string, unknown> = { name: "loop" };
  cyclic.self = cyclic;
  cyclic.list = [cyclic, { back: cyclic }];
  Object.defineProperty(cyclic, "trap", {
    enumerable: true,
    get() {
      throw new Error("getter trap");
    },
  });
  return cyclic;
}

describe("JSON-safe rendering", () => {
  it("toJsonSafe() renders cycles, BigInt, functions, symbols, Errors, Maps, Sets and instances", () => {
    const value = {
      big: 10n,
      fn: function named() {},
      sym: Symbol("tag"),
      err: new TypeError("bad", { cause: "root" }),
      map: new Map([["k", new Set([1, 2])]]),
      point: new Point(),
      nan: Number.NaN,
      date: new Date(0),
      undef: undefined,
      list: [undefined, 1],
    };
    assert.deepEqual(toJsonSafe(value), {
      big: "10n",
      fn: "[Function named]",
      sym: "Symbol(tag)",
      err: { name: "TypeError", message: "bad", cause: "root" },
      map: { k: [1, 2] },
      point: { x: 1, y: 2 },
      nan: "NaN",
      date: "1970-01-01T00:00:00.000Z",
      list: [null, 1],
    });
  });

  it("toJsonSafe() marks cycles and unreadable getters instead of throwing", () => {
    const rendered = toJsonSafe(hostile()) as Record<string, unknown>;
    assert.equal(rendered.self, "[Circular]");
    assert.equal(rendered.trap, "[Unreadable]");
    assert.deepEqual(rendered.list, ["[Circular]", { back: "[Circular]" }]);
  });

  it("toJsonSafe() keeps a __proto__ key as data without touching the prototype", () => {
    const parsed = JSON.parse('{"__proto__": {"polluted": true}}');
    const rendered = toJsonSafe(parsed) as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(rendered), Object.prototype);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.deepEqual(JSON.parse(JSON.stringify(rendered)), { ["__proto__"]: { polluted: true } });
  });

  it("toJsonSafe() bounds depth and width", () => {
    let deep: unknown = "bottom";
    for (let i = 0; i < 100; i++) deep = { d: deep };
    assert.match(renderJson(deep), /\[Depth\]/);
    const wide = Array.from({ length: 5000 }, (_, i) => i);
    const out = toJsonSafe(wide) as unknown[];
    assert.equal(out.length, 1001);
    assert.equal(out[1000], "[+4000 more]");
  });

  it("toJsonSafe() survives a throwing toJSON and a Proxy that throws on every trap", () => {
    const proxy = new Proxy({}, {
      ownKeys() {
        throw new Error("no keys");
      },
      get() {
        throw new Error("no get");
      },
    });
    assert.equal(toJsonSafe(proxy), "[Unrenderable]");
    assert.equal(
      toJsonSafe({
        toJSON: () => {
          throw new Error("x");
        },
      }),
      "[Unrenderable]",
    );
  });

  it("property: renderJson() never throws and always returns valid JSON", () => {
    fc.assert(
      fc.property(oddValues(), (value) => {
        const text = renderJson(value);
        JSON.parse(text);
      }),
      { numRuns: 500 },
    );
    JSON.parse(renderJson(hostile()));
  });

  it("property: summarize() never throws and returns at most 200 characters", () => {
    fc.assert(
      fc.property(oddValues(), (value) => {
        const text = summarize(value);
        assert.equal(typeof text, "string");
        assert.ok(text.length <= 200, `length ${text.length}`);
      }),
      { numRuns: 500 },
    );
    assert.ok(summarize(hostile()).length <= 200);
  });

  it("property: summarize() keeps short strings unchanged and cuts long ones to a prefix", () => {
    fc.assert(fc.property(fc.string({ unit: "grapheme", maxLength: 400 }), (text) => {
      const out = summarize(text);
      if (text.length <= 200) assert.equal(out, text);
      else {
        assert.ok(text.startsWith(out));
        assert.ok(out.length >= 199 && out.length <= 200);
      }
    }));
  });

  it("cutText() never leaves half a surrogate pair", () => {
    assert.equal(cutText("ab😀", 3), "ab");
    assert.equal(cutText("ab😀", 4), "ab😀");
    assert.equal(cutText("abc", 0), "");
  });
});
