// The glob matcher behind search find/include and guardPaths deny rules: same answers as a
// straightforward RegExp translation, without its catastrophic backtracking.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { globMatcher } from "../../action/_path.ts";

/** A RegExp translation of the simple glob alphabet used below (small inputs only). */
function reference(glob: string): RegExp {
  let source = "";
  for (const c of glob) {
    if (c === "*") source += "[^/]*";
    else if (c === "?") source += "[^/]";
    else source += c.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  }
  return new RegExp(`^${source}$`);
}

describe("globMatcher", () => {
  it("globMatcher() agrees with a RegExp translation on *, ? and literals (property)", () => {
    const glob = fc.array(fc.constantFrom("a", "b", "*", "?", "."), { maxLength: 8 })
      .map((parts) => parts.join(""));
    const name = fc.array(fc.constantFrom("a", "b", "."), { maxLength: 10 })
      .map((parts) => parts.join(""));
    fc.assert(
      fc.property(glob, name, (g, n) => {
        assert.equal(globMatcher(g)(n), reference(g).test(n), `${g} ~ ${n}`);
      }),
      { numRuns: 2000 },
    );
  });

  it("globMatcher() supports classes, ranges, negation and braces", () => {
    const cases: [string, string, boolean][] = [
      ["*.pem", "server.pem", true],
      ["*.pem", "server.pem.txt", false],
      ["b.p?", "b.py", true],
      ["[abc]x", "bx", true],
      ["[a-c]x", "dx", false],
      ["[!a-c]x", "dx", true],
      ["[^a-c]x", "ax", false],
      ["*.{ts,js}", "mod.js", true],
      ["*.{ts,js}", "mod.py", false],
      ["{a,b{c,d}}z", "bdz", true],
      ["[x", "[x", true],
      ["a*", "a/b", false],
      ["*", "", true],
    ];
    for (const [glob, name, expected] of cases) {
      assert.equal(globMatcher(glob)(name), expected, `${glob} ~ ${name}`);
    }
  });
});
