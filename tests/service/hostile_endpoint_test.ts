// The OpenAI-compatible endpoint against a hostile server: every mode ends in a typed error
// within the configured limit, with bounded memory, and no credential reaches any output.

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import { logger, type LogRecord } from "../../core/mod.ts";
import { setDeadlineFactory } from "../../service/_deadline.ts";
import {
  DEFAULT_TIMEOUT_MS,
  EndpointError,
  FunctionEndpoint,
  globalHookLogger,
  HookRegistry,
  IModel,
  OpenAICompatibleEndpoint,
} from "../../service/mod.ts";
import { bridgeModelToSession, Session } from "../../session/mod.ts";
import { MemoryStore } from "../../store/mod.ts";
import { encodingsOf, type HostileMode, startHostileServer } from "../fixtures/hostile_server.ts";

const KEY = "sk-live/Ab+Cd=Ef_0123456789+zz/Q==";
const HEADER_SECRETS = {
  "api-key": "azure-key/with+plus=eq",
  "x-api-key": "anthropic-Key_123/456==",
  "x-goog-api-key": "AIzaSyD-goog/key+9",
  "openai-api-key": "oak-openai+key/77",
  cookie: "session=cookie-secret/abc+def; other=zz-second-cookie",
};
const SECRETS = [
  KEY,
  ...Object.values(HEADER_SECRETS),
  "cookie-secret/abc+def",
  "zz-second-cookie",
];

/** The names of encodings of any secret found in `text` (empty: clean). */
function leaksIn(text: string): string[] {
  const found: string[] = [];
  const lower = text.toLowerCase();
  const squeezed = lower.replace(/\s+/g, "");
  for (const secret of SECRETS) {
    for (const [name, encoded] of Object.entries(encodingsOf(secret))) {
      const e = encoded.toLowerCase();
      if (lower.includes(e) || squeezed.includes(e.replace(/\s+/g, ""))) {
        found.push(`${secret.slice(0, 6)}…:${name}`);
      }
    }
  }
  return found;
}

/** Everything an error exposes: message, excerpt, string form, JSON, stack, cause chain. */
function exposed(error: unknown): string {
  const parts: string[] = [];
  let e: unknown = error;
  for (let depth = 0; e !== undefined && e !== null && depth < 5; depth++) {
    parts.push(String(e));
    if (e instanceof Error) parts.push(e.message, e.stack ?? "");
    try {
      parts.push(JSON.stringify(e));
    } catch {
      // cyclic: the parts above suffice
    }
    if (e instanceof EndpointError) parts.push(e.bodyExcerpt);
    e = (e as { cause?: unknown }).cause;
  }
  return parts.join("\n");
}

/** Runs `work` while sampling RSS; returns its outcome and the peak growth in MiB. */
async function withRss<T>(work: () => Promise<T>): Promise<{ value: T; growthMiB: number }> {
  const start = process.memoryUsage().rss;
  let peak = start;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 20);
  try {
    const value = await work();
    peak = Math.max(peak, process.memoryUsage().rss);
    return { value, growthMiB: (peak - start) / 1024 / 1024 };
  } finally {
    clearInterval(timer);
  }
}

const live = () => ({ signal: new AbortController().signal });

async function streamAll(endpoint: OpenAICompatibleEndpoint): Promise<number> {
  let n = 0;
  for await (const _ of endpoint.stream({ model: "m", messages: [] }, live())) n++;
  return n;
}

describe("OpenAICompatibleEndpoint against a hostile server", () => {
  const servers: { close(): Promise<void> }[] = [];
  const start = async (mode: HostileMode, extra: Record<string, number> = {}) => {
    const server = await startHostileServer({ mode, ...extra });
    servers.push(server);
    return server;
  };
  const records: LogRecord[] = [];
  before(() => logger.configure({ level: "debug", sink: (record) => records.push(record) }));
  after(async () => {
    logger.configure({ level: "silent", sink: null });
    for (const server of servers) await server.close();
  });

  it("a 401 echoing every credential in every encoding leaks none into errors, rows, signals or logs", async () => {
    const server = await start("echo");
    const endpoint = new OpenAICompatibleEndpoint({
      baseURL: server.baseURL,
      apiKey: KEY,
      headers: HEADER_SECRETS,
      idleTimeoutMs: 10_000,
    });
    const error = await endpoint.call({ model: "m", messages: [] }, live()).catch((e) => e);
    assert.ok(error instanceof EndpointError, String(error));
    assert.equal(error.kind, "http", error.message);
    assert.equal(error.status, 401);
    assert.match(error.bodyExcerpt, /\[redacted\]/);
    assert.deepEqual(leaksIn(exposed(error)), []);

    const streamed = await streamAll(endpoint).catch((e) => e);
    assert.ok(streamed instanceof EndpointError && streamed.kind === "http");
    assert.deepEqual(leaksIn(exposed(streamed)), []);

    // The whole path: a model bridged into a persisted session, its hook log and the logger.
    const store = new MemoryStore();
    const session = new Session({ store });
    await session.start({ model: "m", provider: "p", agentName: "a" });
    const model = new IModel({ model: "m", endpoint });
    const bridge = bridgeModelToSession(model, session);
    const event = await model.invoke({ messages: [{ role: "user", content: "hi" }] });
    assert.equal(event.status, "failed");
    const chunks = await (async () => {
      for await (const _ of model.stream({ messages: [] })) { /* drain */ }
    })().catch((e) => e);
    assert.ok(chunks instanceof EndpointError);
    await bridge.drain();
    await session.end({ status: "failed", error: String(event.execution.error) });
    await session.drainSignals();
    const stored = JSON.stringify({
      session: await store.getSession(session.id),
      signals: await store.listSessionSignals(session.id),
      event: event.toJSON(),
      hookLog: globalHookLogger.entries,
      log: records.map((r) => [r.message, String(r.details ?? ""), exposed(r.details)]),
    });
    assert.match(stored, /status 401/);
    assert.deepEqual(leaksIn(stored), []);
    bridge();
  });

  it("an endless SSE stream ends with a timeout error at timeoutMs", async () => {
    const server = await start("endless-sse");
    const endpoint = new OpenAICompatibleEndpoint({ baseURL: server.baseURL, timeoutMs: 800 });
    const { value: error } = await withRss(() => streamAll(endpoint).catch((e) => e));
    assert.ok(error instanceof EndpointError, String(error));
    assert.equal(error.kind, "timeout");
    assert.match(error.message, /800 ms/);
  });

  it("a slow drip (one byte every 500 ms) ends with an idle error at idleTimeoutMs", async () => {
    const server = await start("drip", { dripMs: 500 });
    const endpoint = new OpenAICompatibleEndpoint({ baseURL: server.baseURL, idleTimeoutMs: 150 });
    const error = await streamAll(endpoint).catch((e) => e);
    assert.ok(error instanceof EndpointError, String(error));
    assert.equal(error.kind, "idle");
    const called = await endpoint.call({ model: "m" }, live()).catch((e) => e);
    assert.ok(called instanceof EndpointError && called.kind === "idle", String(called));
  });

  it("a slow drip under an overall deadline ends with a timeout error even when bytes keep coming", async () => {
    const server = await start("drip", { dripMs: 50 });
    const endpoint = new OpenAICompatibleEndpoint({
      baseURL: server.baseURL,
      idleTimeoutMs: 5_000,
      timeoutMs: 600,
    });
    const error = await endpoint.call({ model: "m" }, live()).catch((e) => e);
    assert.ok(error instanceof EndpointError, String(error));
    assert.equal(error.kind, "timeout");
  });

  /** `work` with the caller's signal aborted after `ms` (a guard: the old endpoint never ended). */
  const guarded = async <T>(ms: number, work: (signal: AbortSignal) => Promise<T>) => {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new Error(`still running after ${ms} ms`)), ms);
    try {
      return await work(controller.signal).catch((e) => e);
    } finally {
      clearTimeout(timer);
    }
  };

  it("SSE keep-alives (comments, empty events, blank lines) do not reset the idle limit", async () => {
    const server = await start("keepalive-sse", { dripMs: 50 });
    const endpoint = new OpenAICompatibleEndpoint({ baseURL: server.baseURL, idleTimeoutMs: 400 });
    const started = Date.now();
    const error = await guarded(5_000, async (signal) => {
      for await (const _ of endpoint.stream({ model: "m", messages: [] }, { signal })) {
        // keep-alives yield no chunks
      }
    });
    assert.ok(error instanceof EndpointError, String(error));
    assert.equal(error.kind, "idle");
    assert.match(error.message, /400 ms/);
    assert.ok(Date.now() - started >= 350, "the keep-alives were waited for");
  });

  it("a non-streamed body of whitespace dripping forever ends with an idle error", async () => {
    const server = await start("blank-json", { dripMs: 50 });
    const endpoint = new OpenAICompatibleEndpoint({ baseURL: server.baseURL, idleTimeoutMs: 400 });
    const error = await guarded(5_000, (signal) => endpoint.call({ model: "m" }, { signal }));
    assert.ok(error instanceof EndpointError, String(error));
    assert.equal(error.kind, "idle");
  });

  it("a stream of useful events dripped byte by byte ends at the overall deadline", async () => {
    // One byte every 10 ms: an event completes about every second, so the idle limit never fires.
    const server = await start("trickle-sse", { dripMs: 10 });
    const endpoint = new OpenAICompatibleEndpoint({
      baseURL: server.baseURL,
      idleTimeoutMs: 3_000,
      timeoutMs: 2_500,
    });
    let chunks = 0;
    const error = await guarded(10_000, async (signal) => {
      for await (const _ of endpoint.stream({ model: "m", messages: [] }, { signal })) chunks++;
    });
    assert.ok(error instanceof EndpointError, String(error));
    assert.equal(error.kind, "timeout");
    assert.ok(chunks >= 1, "some events arrived before the deadline");
  });

  it("an endpoint made with the defaults has an overall deadline of ten minutes", () => {
    const endpoint = new OpenAICompatibleEndpoint({ baseURL: "http://127.0.0.1:1/v1" });
    assert.equal(DEFAULT_TIMEOUT_MS, 600_000);
    assert.equal(endpoint.timeoutMs, DEFAULT_TIMEOUT_MS);
    assert.equal(endpoint.idleTimeoutMs, 60_000);
    const unbounded = new OpenAICompatibleEndpoint({
      baseURL: "http://127.0.0.1:1/v1",
      timeoutMs: Infinity,
    });
    assert.equal(unbounded.timeoutMs, Infinity);
  });

  it("a slow consumer of a busy stream never trips the idle limit", async () => {
    const server = await start("endless-sse");
    const endpoint = new OpenAICompatibleEndpoint({ baseURL: server.baseURL, idleTimeoutMs: 300 });
    const controller = new AbortController();
    let chunks = 0;
    const done = new Error("enough");
    const error = await (async () => {
      for await (const _ of endpoint.stream({ model: "m", messages: [] }, controller)) {
        chunks++;
        if (chunks === 2) await new Promise((resolve) => setTimeout(resolve, 900));
        if (chunks === 5) throw done;
      }
    })().catch((e) => e);
    assert.equal(error, done);
  });

  it("a server that accepts and never answers ends with an idle error (call and stream)", async () => {
    const server = await start("hang");
    const endpoint = new OpenAICompatibleEndpoint({ baseURL: server.baseURL, idleTimeoutMs: 200 });
    const called = await endpoint.call({ model: "m" }, live()).catch((e) => e);
    assert.ok(called instanceof EndpointError, String(called));
    assert.equal(called.kind, "idle");
    const streamed = await streamAll(endpoint).catch((e) => e);
    assert.ok(streamed instanceof EndpointError && streamed.kind === "idle", String(streamed));
  });

  it("the caller's abort still wins over the limits", async () => {
    const server = await start("hang");
    const endpoint = new OpenAICompatibleEndpoint({
      baseURL: server.baseURL,
      idleTimeoutMs: 60_000,
    });
    const controller = new AbortController();
    const reason = new Error("caller gave up");
    setTimeout(() => controller.abort(reason), 100);
    const error = await endpoint.call({ model: "m" }, { signal: controller.signal }).catch((e) =>
      e
    );
    assert.equal(error, reason);
  });

  it("a 400 MB body is cut at maxResponseBytes with bounded memory", async () => {
    const server = await start("huge");
    const small = new OpenAICompatibleEndpoint({
      baseURL: server.baseURL,
      maxResponseBytes: 1024 * 1024,
    });
    const first = await withRss(() => small.call({ model: "m" }, live()).catch((e) => e));
    assert.ok(first.value instanceof EndpointError, String(first.value));
    assert.equal(first.value.kind, "too_large");
    // The default cap (32 MiB) on the same 400 MB body.
    const byDefault = new OpenAICompatibleEndpoint({ baseURL: server.baseURL });
    const second = await withRss(() => byDefault.call({ model: "m" }, live()).catch((e) => e));
    assert.ok(second.value instanceof EndpointError, String(second.value));
    assert.equal(second.value.kind, "too_large");
    assert.match(second.value.message, /33554432/);
    console.log(
      `# rss growth, 400 MB body: ${first.growthMiB.toFixed(1)} MiB at a 1 MiB cap, ${
        second.growthMiB.toFixed(1)
      } MiB at the default 32 MiB cap`,
    );
    assert.ok(second.growthMiB < 300, `rss grew ${second.growthMiB} MiB`);
  });

  it("a 50 MB SSE line fails with a parse error and bounded memory", async () => {
    const server = await start("long-line");
    const endpoint = new OpenAICompatibleEndpoint({ baseURL: server.baseURL });
    const { value: error, growthMiB } = await withRss(() => streamAll(endpoint).catch((e) => e));
    assert.ok(error instanceof EndpointError, String(error));
    assert.equal(error.kind, "parse");
    assert.ok(error.bodyExcerpt.length <= 500);
    console.log(`# rss growth, 50 MB SSE line: ${growthMiB.toFixed(1)} MiB`);
    assert.ok(growthMiB < 300, `rss grew ${growthMiB} MiB`);
  });
});

describe("stream chunk handlers under the hook deadline", () => {
  const never = () => new Promise(() => {});

  it("HookRegistry.call() fails a stream handler that never settles at timeoutMs", async () => {
    const registry = new HookRegistry({ streamHandlers: { text: never } });
    const out = await registry.call(null, {
      chunkType: "text",
      chunk: { type: "text", text: "x" },
      shouldExit: true,
      timeoutMs: 100,
    });
    assert.equal(out.shouldExit, true);
    assert.equal((out.error as Error).name, "TimeoutError");
  });

  it("IModel.stream() errors (exit) or keeps the chunk (no exit) when a handler never settles", async () => {
    // The default deadline is 30 s; the factory shortens every deadline to 50 ms for the test.
    setDeadlineFactory((ms) => {
      const controller = new AbortController();
      let timer: ReturnType<typeof setTimeout> | undefined;
      return {
        signal: controller.signal,
        arm: () => {
          timer = setTimeout(
            () => controller.abort(new DOMException(`timed out (${ms})`, "TimeoutError")),
            50,
          );
        },
        clear: () => clearTimeout(timer),
      };
    });
    try {
      const endpoint = new FunctionEndpoint({
        call: () => "unused",
        stream: function* () {
          yield { type: "text", text: "a" };
          yield { type: "done", finishReason: "stop" };
        },
      });
      const strict = new IModel({
        model: "m",
        endpoint,
        exitHook: true,
        hookRegistry: { streamHandlers: { text: never } },
      });
      const error = await (async () => {
        for await (const _ of strict.stream({ messages: [] })) { /* drain */ }
      })().catch((e) => e);
      assert.equal((error as Error).name, "TimeoutError");
      assert.match((error as Error).message, /30000/);

      const lenient = new IModel({
        model: "m",
        endpoint,
        exitHook: false,
        hookRegistry: { streamHandlers: { text: never } },
      });
      const seen: string[] = [];
      for await (const chunk of lenient.stream({ messages: [] })) seen.push(chunk.type);
      assert.deepEqual(seen, ["text", "done"]);
    } finally {
      setDeadlineFactory(null);
    }
  });
});
