// The fixture app (tests/fixtures/worker/app.ts), bundled with esbuild, inside the Vercel Edge
// runtime emulator (`@edge-runtime/vm`), which has no AbortSignal.any: streaming through service
// hooks from the fixture OpenAI server, a HookBus guard without a Session, and an abort of the
// request's signal that reaches the upstream fetch. Run by scripts/test.sh under Node 24.

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { EdgeVM } from "@edge-runtime/vm";
import { sseReply, startOpenAIServer, textEvents } from "../../fixtures/openai_server.ts";
import {
  bundle,
  EXPECTED_ENTRIES,
  EXPECTED_GUARD,
  EXPECTED_STREAM,
  readLines,
  type StreamLine,
  within,
} from "./_harness.ts";

describe("edge-runtime (@edge-runtime/vm, bundled app of web-standard entries)", () => {
  let vm: EdgeVM;
  let calls = 0;

  /** Calls the app inside the VM; `abortName` names a VM-side AbortController for the request. */
  function handle(url: string, abortName?: string): Promise<Response> {
    calls++;
    const init = abortName
      ? `{ signal: (globalThis[${JSON.stringify(abortName)}] = new AbortController()).signal }`
      : "{}";
    return vm.evaluate(
      `hookscopeApp.handle(new Request(${JSON.stringify(`http://edge.test${url}`)}, ${init}))`,
    ) as Promise<Response>;
  }

  before(async () => {
    vm = new EdgeVM();
    vm.evaluate(
      await bundle("tests/fixtures/worker/app.ts", {
        format: "iife",
        globalName: "hookscopeApp",
      }),
    );
  });
  after(() => {
    assert.ok(calls > 0);
  });

  it("loads every web-standard entry in the VM", async () => {
    const response = await handle("/entries");
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), EXPECTED_ENTRIES);
  });

  it("streams a model response through service hooks from the fixture server", async () => {
    const server = await startOpenAIServer([sseReply(textEvents(["Hel", "lo"]), { gapMs: 5 })]);
    try {
      const response = await handle(`/stream?upstream=${encodeURIComponent(server.baseURL)}`);
      assert.equal(response.status, 200);
      const lines = await within(readLines(response.body!), 30_000, "the streamed response");
      assert.deepEqual(lines, EXPECTED_STREAM);
      assert.equal(server.requests[0].headers.authorization, "Bearer runtime-key");
    } finally {
      await server.close();
    }
  });

  it("runs a HookBus guard without a Session", async () => {
    const response = await handle("/guard");
    assert.deepEqual(await response.json(), EXPECTED_GUARD);
  });

  it("aborting the request's signal (no AbortSignal.any here) reaches the upstream fetch", async () => {
    const pieces = Array.from({ length: 400 }, (_, i) => `p${i}`);
    const server = await startOpenAIServer([sseReply(textEvents(pieces), { gapMs: 25 })]);
    try {
      const response = await handle(
        `/stream?upstream=${encodeURIComponent(server.baseURL)}`,
        "edgeAbort",
      );
      const seen: StreamLine[] = [];
      const reading = readLines(response.body!, (line) => {
        seen.push(line);
        if (seen.length === 2) vm.evaluate(`globalThis.edgeAbort.abort()`);
      });
      // The body errors with the abort reason once the signal aborts.
      await assert.rejects(within(reading, 30_000, "the aborted stream"));
      assert.deepEqual(seen.slice(0, 2), [
        { chunk: { type: "text", text: "P0" } },
        { chunk: { type: "text", text: "P1" } },
      ]);
      await within(server.requests[0].closed, 30_000, "the upstream connection to close");
      assert.equal(server.requests[0].clientClosed, true);
      assert.ok(server.requests[0].eventsWritten < pieces.length);
    } finally {
      await server.close();
    }
  });
});
