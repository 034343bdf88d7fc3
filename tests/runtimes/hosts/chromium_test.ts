// The fixture app (tests/fixtures/worker/app.ts), bundled with esbuild as an ES module, in headless
// Chromium (Debian package `chromium`, driven by playwright-core): a page served from 127.0.0.1
// imports the bundle and streams a model response through service hooks from the fixture OpenAI
// server (CORS on), runs a HookBus guard without a Session, and aborts a stream midway; the page
// reports its results back. Run by scripts/test.sh under Node 24. Nothing is downloaded: the
// browser is /usr/bin/chromium (.ci/setup/30-chromium.sh installs it).

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { sseReply, startOpenAIServer, textEvents } from "../../fixtures/openai_server.ts";
import { CHROMIUM, CHROMIUM_FLAGS, chromiumEnv } from "../../fixtures/chromium.ts";
import {
  bundle,
  EXPECTED_ENTRIES,
  EXPECTED_GUARD,
  EXPECTED_STREAM,
  type StreamLine,
  within,
} from "./_harness.ts";

const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>loading</title></head><body>
<script type="module">
  import * as app from "/app.js";
  globalThis.hookscopeApp = app;
  document.title = "ready";
</script>
</body></html>`;

/** A static server on 127.0.0.1 for the page and the bundled module. */
async function startPageServer(appJs: string): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    if (req.url === "/") {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(PAGE);
    } else if (req.url === "/app.js") {
      res.writeHead(200, { "content-type": "text/javascript; charset=utf-8" });
      res.end(appJs);
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Runs the app's `route` in the page; returns the NDJSON lines (or JSON) the page read. */
function inPage(
  page: Page,
  route: string,
  abortAfterLines?: number,
): Promise<{ lines: StreamLine[]; json: unknown; error: string | null }> {
  return page.evaluate(async ({ route, abortAfterLines }) => {
    const app = (globalThis as unknown as {
      hookscopeApp: { handle(request: Request): Promise<Response> };
    }).hookscopeApp;
    const controller = new AbortController();
    const response = await app.handle(
      new Request(`http://page.test${route}`, { signal: controller.signal }),
    );
    if (!(response.headers.get("content-type") ?? "").includes("ndjson")) {
      return { lines: [], json: await response.json(), error: null };
    }
    const lines: StreamLine[] = [];
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let newline: number;
        while ((newline = buffer.indexOf("\n")) >= 0) {
          lines.push(JSON.parse(buffer.slice(0, newline)));
          buffer = buffer.slice(newline + 1);
          if (lines.length === abortAfterLines) controller.abort(new Error("page aborted"));
        }
      }
      return { lines, json: null, error: null };
    } catch (error) {
      return { lines, json: null, error: String((error as Error)?.message ?? error) };
    }
  }, { route, abortAfterLines });
}

describe("chromium (headless /usr/bin/chromium via playwright-core, bundled ES module)", () => {
  let context: BrowserContext;
  let page: Page;
  let pages: { url: string; close(): Promise<void> };
  let profile: string;
  const consoleErrors: string[] = [];

  before(async () => {
    pages = await startPageServer(await bundle("tests/fixtures/worker/app.ts"));
    profile = mkdtempSync(join(tmpdir(), "hookscope-chromium-"));
    context = await within(
      chromium.launchPersistentContext(profile, {
        executablePath: CHROMIUM,
        headless: true,
        args: [...CHROMIUM_FLAGS],
        env: chromiumEnv(profile),
        timeout: 60_000,
      }),
      90_000,
      "Chromium to start",
    );
    page = context.pages()[0] ?? await context.newPage();
    page.on("pageerror", (error) => consoleErrors.push(error.message));
    await page.goto(pages.url, { timeout: 30_000 });
    await page.waitForFunction(
      () => (globalThis as unknown as { document: { title: string } }).document.title === "ready",
      null,
      { timeout: 30_000 },
    );
  });
  after(async () => {
    await context?.close();
    await pages?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  it("loads every web-standard entry in the page without errors", async () => {
    const result = await inPage(page, "/entries");
    assert.deepEqual(result.json, EXPECTED_ENTRIES);
    assert.deepEqual(consoleErrors, []);
  });

  it("streams a model response through service hooks from the fixture server", async () => {
    const server = await startOpenAIServer([sseReply(textEvents(["Hel", "lo"]), { gapMs: 5 })], {
      cors: true,
    });
    try {
      const result = await within(
        inPage(page, `/stream?upstream=${encodeURIComponent(server.baseURL)}`),
        30_000,
        "the page to read the stream",
      );
      assert.equal(result.error, null);
      assert.deepEqual(result.lines, EXPECTED_STREAM);
      assert.equal(server.requests.length, 1);
      assert.equal(server.requests[0].headers.authorization, "Bearer runtime-key");
      assert.match(String(server.requests[0].headers["user-agent"]), /Chrome/);
    } finally {
      await server.close();
    }
  });

  it("runs a HookBus guard without a Session", async () => {
    const result = await inPage(page, "/guard");
    assert.deepEqual(result.json, EXPECTED_GUARD);
  });

  it("an abort in the page reaches the upstream fetch: the fixture server sees the close", async () => {
    const pieces = Array.from({ length: 400 }, (_, i) => `p${i}`);
    const server = await startOpenAIServer([sseReply(textEvents(pieces), { gapMs: 25 })], {
      cors: true,
    });
    try {
      const result = await within(
        inPage(page, `/stream?upstream=${encodeURIComponent(server.baseURL)}`, 2),
        30_000,
        "the page to abort",
      );
      assert.equal(result.error, "page aborted");
      assert.deepEqual(result.lines.slice(0, 2), [
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
