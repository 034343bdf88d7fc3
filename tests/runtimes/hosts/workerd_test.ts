// The fixture app (tests/fixtures/worker/app.ts), bundled with esbuild, in real workerd (the
// `workerd` npm package): streaming through service hooks from the fixture OpenAI server on
// 127.0.0.1, a HookBus guard without a Session, and a client abort that reaches the upstream fetch.
// Run by scripts/test.sh under Node 24 (not under Deno or Bun: it drives a server binary).

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { sseReply, startOpenAIServer, textEvents } from "../../fixtures/openai_server.ts";
import {
  bundle,
  EXPECTED_ENTRIES,
  EXPECTED_GUARD,
  EXPECTED_STREAM,
  readLines,
  ROOT,
  type StreamLine,
  within,
} from "./_harness.ts";

/** The workerd binary from the platform package that `npm ci` installed. */
function workerdBinary(): string {
  const require = createRequire(join(ROOT, "package.json"));
  return join(require.resolve("workerd/package.json"), "..", "bin", "workerd");
}

interface Workerd {
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts workerd on `workerSource` (an ES module) with tests/fixtures/worker/config.capnp; resolves
 * once it listens (port from --control-fd), rejects with its stderr if it exits first.
 */
function startWorkerd(workerSource: string): Promise<Workerd> {
  const dir = mkdtempSync(join(tmpdir(), "hookscope-workerd-"));
  writeFileSync(join(dir, "worker.js"), workerSource);
  copyFileSync(join(ROOT, "tests/fixtures/worker/config.capnp"), join(dir, "config.capnp"));
  const child: ChildProcess = spawn(
    workerdBinary(),
    ["serve", join(dir, "config.capnp"), "--control-fd=3"],
    { stdio: ["ignore", "pipe", "pipe", "pipe"] },
  );
  let output = "";
  child.stdout!.on("data", (d: Uint8Array) => (output += new TextDecoder().decode(d)));
  child.stderr!.on("data", (d: Uint8Array) => (output += new TextDecoder().decode(d)));
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await within(exited, 20_000, "workerd to exit");
    rmSync(dir, { recursive: true, force: true });
  };
  const listening = new Promise<Workerd>((resolve, reject) => {
    let control = "";
    (child.stdio[3] as Readable).on("data", (d: Uint8Array) => {
      control += new TextDecoder().decode(d);
      const match = control.match(/"event":"listen","socket":"http","port":(\d+)/);
      if (match) resolve({ url: `http://127.0.0.1:${match[1]}`, stop });
    });
    void exited.then((code) => {
      rmSync(dir, { recursive: true, force: true });
      reject(new Error(`workerd exited with ${code} before listening:\n${output}`));
    });
  });
  return within(listening, 60_000, "workerd to listen").catch(async (error) => {
    await stop().catch(() => {});
    throw error;
  });
}

describe("workerd (real workerd, bundled Worker of web-standard entries)", () => {
  let workerd: Workerd;

  before(async () => {
    workerd = await startWorkerd(await bundle("tests/fixtures/worker/worker.ts"));
  });
  after(async () => {
    await workerd?.stop();
  });

  it("starts with every web-standard entry loaded", async () => {
    const response = await fetch(`${workerd.url}/entries`);
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), EXPECTED_ENTRIES);
  });

  it("streams a model response through service hooks from the fixture server", async () => {
    const server = await startOpenAIServer([sseReply(textEvents(["Hel", "lo"]), { gapMs: 5 })]);
    try {
      const response = await fetch(
        `${workerd.url}/stream?upstream=${encodeURIComponent(server.baseURL)}`,
      );
      assert.equal(response.status, 200);
      assert.equal(response.headers.get("content-type"), "application/x-ndjson");
      const lines = await within(readLines(response.body!), 30_000, "the streamed response");
      assert.deepEqual(lines, EXPECTED_STREAM);
      assert.equal(server.requests.length, 1);
      assert.equal(server.requests[0].headers.authorization, "Bearer runtime-key");
      assert.equal((server.requests[0].body as { stream?: boolean }).stream, true);
    } finally {
      await server.close();
    }
  });

  it("runs a HookBus guard without a Session", async () => {
    const response = await fetch(`${workerd.url}/guard`);
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), EXPECTED_GUARD);
  });

  it("a client abort reaches the upstream fetch: the fixture server sees the connection close", async () => {
    const pieces = Array.from({ length: 400 }, (_, i) => `p${i}`);
    const server = await startOpenAIServer([sseReply(textEvents(pieces), { gapMs: 25 })]);
    try {
      const client = new AbortController();
      const response = await fetch(
        `${workerd.url}/stream?upstream=${encodeURIComponent(server.baseURL)}`,
        { signal: client.signal },
      );
      const seen: StreamLine[] = [];
      await within(
        readLines(response.body!, (line) => {
          seen.push(line);
          return seen.length === 2; // stop reading after two chunks
        }),
        30_000,
        "the first chunks",
      );
      assert.deepEqual(seen, [
        { chunk: { type: "text", text: "P0" } },
        { chunk: { type: "text", text: "P1" } },
      ]);
      client.abort();
      await within(server.requests[0].closed, 30_000, "the upstream connection to close");
      assert.equal(server.requests[0].clientClosed, true);
      assert.ok(
        server.requests[0].eventsWritten < pieces.length,
        `the upstream stream ran to the end (${server.requests[0].eventsWritten} events)`,
      );
    } finally {
      await server.close();
    }
  });

  it("refuses to start a Worker that makes a random value at module load (the check is real)", async () => {
    const bad = await bundle("tests/fixtures/worker/bad_worker.ts");
    await assert.rejects(
      startWorkerd(bad),
      (error: Error) => /Disallowed operation called within global scope/.test(error.message),
    );
  });
});
