// The CLI's output helpers on arbitrary input: `visible` never lets a control character,
// terminal escape or bidi override through, keeps JSON valid and equal, and is idempotent;
// `renderArgs` never hides the head or the tail of a value; `redactCredentials` removes key
// shapes and known secrets from any text around them.

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { visible } from "../../cli/_output.ts";
import { fold, renderArgs } from "../../cli/_fold.ts";
import { modelServer, redactCredentials } from "../../cli/_credentials.ts";

const UNSAFE =
  // deno-lint-ignore no-control-regex -- the characters that must never reach a terminal
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]/;

/** Strings rich in the characters that matter here. */
const hostile = fc.string({
  unit: fc.oneof(
    fc.constantFrom(
      "\x1b",
      "\x07",
      "\r",
      "\n",
      "\t",
      "\u009b",
      "\u202e",
      "\u2066",
      "\u200b",
      "]",
      "[",
      "\\",
    ),
    fc.string({ minLength: 1, maxLength: 1 }),
    fc.integer({ min: 0, max: 0x2100 }).map((code) => String.fromCharCode(code)),
  ),
  maxLength: 200,
});

describe("CLI output helpers (property tests)", () => {
  it("visible() leaves no unsafe character, is idempotent and keeps tab and line feed", () => {
    fc.assert(
      fc.property(hostile, (text) => {
        const shown = visible(text);
        assert.equal(UNSAFE.test(shown), false, JSON.stringify(shown));
        assert.equal(visible(shown), shown);
        assert.equal(shown.split("\n").length, text.split("\n").length);
        assert.equal(shown.split("\t").length, text.split("\t").length);
      }),
      { numRuns: 500 },
    );
    assert.equal(visible("a\x1b]52;c;eA==\x07b"), "a\\u001b]52;c;eA==\\u0007b");
  });

  it("visible() of JSON is JSON with the same value", () => {
    fc.assert(
      fc.property(fc.dictionary(hostile, hostile, { maxKeys: 4 }), (value) => {
        const shown = visible(JSON.stringify(value, null, 2));
        assert.deepEqual(JSON.parse(shown), JSON.parse(JSON.stringify(value)));
      }),
      { numRuns: 300 },
    );
  });

  it("renderArgs() shows the head and the tail of every value, with a marker when folded", () => {
    const hint = "hookscope pending DB --full";
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom("a", "b", "-", "#", "/", "."), maxLength: 4000 }),
        fc.string({ unit: fc.constantFrom("x", "y", "-"), minLength: 1, maxLength: 40 }),
        fc.nat({ max: 5000 }),
        (head, tail, pad) => {
          const value = `${head}${" ".repeat(pad)}${tail}`;
          const joined = renderArgs({ command: value }, { hint }).map((l) => l.slice(4)).join("");
          const encoded = JSON.stringify(value);
          assert.ok(joined.endsWith(`${JSON.stringify(tail).slice(1)}`), "the tail is shown");
          const start = JSON.stringify(head).slice(0, -1).slice(0, 20);
          assert.ok(joined.startsWith(`"command": ${start}`), "the head is shown");
          const folded = encoded.length > 1200 || pad >= 16;
          assert.equal(joined.includes(`; ${hint}] …`), folded, joined.slice(0, 200));
          const full = renderArgs({ command: value }, { hint, full: true }).map((l) => l.slice(4));
          assert.equal(full.join(""), `"command": ${encoded}`);
        },
      ),
      { numRuns: 200 },
    );
    assert.equal(fold("a b", { hint }), "a b");
    const long = fold("a".repeat(5000), { hint });
    assert.equal(long, `${"a".repeat(400)}\n… [folded 4200 chars; ${hint}] …\n${"a".repeat(400)}`);
    // A blank run folded inside the folded middle counts at its length; markers are never cut.
    const mixed = fold(`${"a".repeat(390)}${" ".repeat(50)}${"b".repeat(2000)}`, { hint });
    assert.match(mixed, /^a{390}\n… \[folded 1650 chars; [^\n]*\] …\nb{400}$/);
  });

  it("redactCredentials() removes key shapes and known secrets from any surrounding text", () => {
    const server = modelServer("http://agent:S3cr3t-pw@127.0.0.1:9/v1");
    assert.equal(server.url, "http://127.0.0.1:9/v1");
    assert.equal(server.headers?.authorization, `Basic ${btoa("agent:S3cr3t-pw")}`);
    fc.assert(
      fc.property(hostile, hostile, fc.stringMatching(/^[A-Za-z0-9_-]{20,40}$/), (a, b, key) => {
        const text = `${a} sk-${key} ${b} S3cr3t-pw ${btoa("agent:S3cr3t-pw")}`;
        const clean = redactCredentials(text, server.secrets);
        assert.equal(clean.includes(`sk-${key}`), false);
        assert.equal(clean.toLowerCase().includes("s3cr3t-pw"), false);
        assert.equal(clean.includes(btoa("agent:S3cr3t-pw")), false);
      }),
      { numRuns: 200 },
    );
  });
});
