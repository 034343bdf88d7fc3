// The linear-time matcher behind search grep: the same answers as JavaScript's RegExp on the
// subset it compiles, and no blow-up on patterns that make RegExp backtrack.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { compileLinearRegex } from "../../../action/coding/_linear_regex.ts";

const TOKENS = [
  "a",
  "b",
  "c",
  ".",
  "*",
  "+",
  "?",
  "|",
  "(",
  ")",
  "(?:",
  "[ab]",
  "[^a]",
  "[a-c]",
  "\\d",
  "\\w",
  "\\s",
  "\\W",
  "\\b",
  "\\B",
  "^",
  "$",
  "{2}",
  "{1,2}",
  "{0,}",
  "\\.",
  " ",
  "1",
  "*?",
];

describe("compileLinearRegex", () => {
  it("compileLinearRegex() agrees with RegExp on every pattern it compiles (property)", () => {
    const pattern = fc.array(fc.constantFrom(...TOKENS), { maxLength: 8 }).map((t) => t.join(""));
    const line = fc.array(fc.constantFrom("a", "b", "c", "1", " ", ".", "_", "-"), {
      maxLength: 12,
    }).map((t) => t.join(""));
    let compiled = 0;
    fc.assert(
      fc.property(pattern, fc.array(line, { minLength: 1, maxLength: 4 }), (source, lines) => {
        let native: RegExp;
        try {
          native = new RegExp(source);
        } catch {
          return;
        }
        const linear = compileLinearRegex(source);
        if (!linear) return;
        compiled++;
        for (const text of lines) {
          assert.equal(linear(text), native.test(text), `/${source}/ on ${JSON.stringify(text)}`);
        }
      }),
      { numRuns: 3000 },
    );
    assert.ok(compiled > 1000, `only ${compiled} patterns compiled`);
  });

  it("compileLinearRegex() handles escapes, classes and counted repeats", () => {
    const cases: [string, string, boolean][] = [
      ["^def\\s+\\w+", "def needle():", true],
      ["\\x41\\u0042", "xAB", true],
      ["[\\d.]{3}", "a1.2", true],
      ["[^\\s]+$", "a b", true],
      ["\\bfoo\\b", "a foo.", true],
      ["\\bfoo\\b", "afoo", false],
      ["a{3}", "aa", false],
      ["a{2,}b", "aaab", true],
      ["[]", "a", false],
      ["[^]", "a", true],
      ["x\\0", "x\0", true],
      ["a{", "a{", true],
      ["\\t|\\n", "\t", true],
    ];
    for (const [source, text, expected] of cases) {
      assert.equal(new RegExp(source).test(text), expected, `native /${source}/`);
      assert.equal(compileLinearRegex(source)?.(text), expected, `/${source}/`);
    }
  });

  it("compileLinearRegex() leaves lookaround, backreferences and named groups to RegExp", () => {
    for (const source of ["(?=a)", "(?!a)", "(?<=a)b", "(a)\\1", "(?<n>a)", "\\p{L}", "\\cA"]) {
      assert.equal(compileLinearRegex(source), null, source);
    }
    assert.equal(compileLinearRegex("(?:a{1000}){1000}"), null, "too many states");
  });

  it("compileLinearRegex() runs backtracking-prone patterns on long lines", () => {
    const line = `${"a".repeat(20_000)}!`;
    const cases: [string, boolean][] = [
      ["(a+)+$", false],
      [".*.*.*x", false],
      ["(a|aa)*b", false],
      ["(a?){30}a{30}$", false],
      ["\\w*\\w*\\w*\\w*x", false],
      ["(a|aa)*$", true],
    ];
    for (const [source, expected] of cases) {
      const linear = compileLinearRegex(source);
      assert.ok(linear, source);
      assert.equal(linear(line), expected, source);
    }
    assert.equal(compileLinearRegex("(a+)+!$")?.(line), true);
  });
});
