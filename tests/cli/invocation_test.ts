// How the CLI names itself in the hints it prints (the demo's "inspect it" line), by where it was
// loaded from: a checkout, JSR, or another URL.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { invocation } from "../../cli/_self.ts";

describe("invocation()", () => {
  it("is null for a checkout (the repository's npm run hookscope --)", () => {
    assert.equal(invocation("file:///home/ana/hookscope/cli/_self.ts"), null);
    assert.equal(invocation(), null); // these tests run from the checkout
  });

  it("names the JSR package and its version when loaded from JSR", () => {
    assert.equal(
      invocation("https://jsr.io/@hookscope/core/0.3.0/cli/_self.ts"),
      "deno run -A jsr:@hookscope/core@0.3.0/cli",
    );
  });

  it("names the URL of main.ts when loaded from any other server", () => {
    assert.equal(
      invocation("http://127.0.0.1:8000/cli/_self.ts"),
      "deno run -A http://127.0.0.1:8000/cli/main.ts",
    );
  });
});
