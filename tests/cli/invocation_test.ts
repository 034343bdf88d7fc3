// How the CLI names itself in the hints it prints (the demo's "inspect it" line), by where it was
// loaded from: a checkout, JSR, or another URL.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { invocation, mainOf } from "../../cli/_self.ts";

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

  it("names main.js of an installed npm package, with the runtime running it", () => {
    const runtime = "Deno" in globalThis ? "deno run -A" : "Bun" in globalThis ? "bun" : "node";
    assert.equal(
      invocation("file:///app/node_modules/@hookscope/core/cli/_self.js"),
      `${runtime} /app/node_modules/@hookscope/core/cli/main.js`,
    );
  });

  it("names the URL of main.ts when loaded from any other server", () => {
    assert.equal(
      invocation("http://127.0.0.1:8000/cli/_self.ts"),
      "deno run -A http://127.0.0.1:8000/cli/main.ts",
    );
  });
});

describe("mainOf()", () => {
  it("is main.ts beside a .ts module and main.js beside a .js one (the npm form)", () => {
    assert.equal(
      mainOf("file:///p/cli/_self.ts").href,
      "file:///p/cli/main.ts",
    );
    assert.equal(
      mainOf("file:///app/node_modules/@hookscope/core/cli/_self.js").href,
      "file:///app/node_modules/@hookscope/core/cli/main.js",
    );
    assert.equal(
      mainOf("https://jsr.io/@hookscope/core/0.3.0/cli/_self.ts").href,
      "https://jsr.io/@hookscope/core/0.3.0/cli/main.ts",
    );
  });
});
