import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { findControlOperators, MalformedCommandError, parseArgv } from "../../../action/_argv.ts";

function quote(word: string): string {
  return `'${word.replaceAll("'", `'"'"'`)}'`;
}

describe("bash argv parsing", () => {
  it("parseArgv() splits words and honours single, double and backslash quoting", () => {
    assert.deepEqual(parseArgv(`  a  'b c' "d \\"e\\" \\$f" g\\ h '' `), [
      "a",
      "b c",
      'd "e" $f',
      "g h",
      "",
    ]);
    assert.deepEqual(parseArgv(`x"y"'z'`), ["xyz"]);
    for (const bad of [`'open`, `"open`, `trailing\\`, "   "]) {
      assert.throws(() => parseArgv(bad), MalformedCommandError, bad);
    }
  });

  it("parseArgv() recovers any list of words from their single-quoted form (property)", () => {
    fc.assert(
      fc.property(fc.array(fc.string(), { minLength: 1, maxLength: 6 }), (words) => {
        assert.deepEqual(parseArgv(words.map(quote).join(" ")), words);
      }),
      { numRuns: 300 },
    );
  });

  it("findControlOperators() finds every operator wherever it appears (property)", () => {
    const ops = [";", "&&", "||", "|", "`", "$(", "<", ">", "\n", "\r"];
    fc.assert(
      fc.property(
        fc.string().filter((s) => !/[;&|`$<>\n\r]/.test(s)),
        fc.constantFrom(...ops),
        fc.string().filter((s) => !/[;&|`$<>\n\r]/.test(s)),
        (left, op, right) => {
          const found = findControlOperators(`${left}${op}${right}`);
          assert.ok(found.includes(op), JSON.stringify({ left, op, right, found }));
        },
      ),
      { numRuns: 300 },
    );
    assert.deepEqual(findControlOperators("ls -la & echo $HOME"), []);
    assert.deepEqual(findControlOperators("a || b"), ["||"]);
    assert.deepEqual(findControlOperators("a || b | c"), ["||", "|"]);
  });
});
