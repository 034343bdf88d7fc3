// What `hookscope serve` stands on, on each runtime: `listen` (Deno.serve on Deno, node:http on
// Node, Bun.serve on Bun) serves a web-standard handler over a real socket on 127.0.0.1, streams a body
// that arrives in parts, answers 500 for a handler that throws, and closes a refused connection;
// `WriteBehind` resolves writes at once, keeps their order, lets reads see them, reports a
// failed write through settled(), and holds callers back once too many writes wait.

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { request } from "node:http";
import { listen } from "../../cli/_http_listen.ts";
import { WriteBehind } from "../../cli/_write_behind.ts";
import { MemoryStore } from "../../store/memory_store.ts";
import type { SessionStore } from "../../store/session_store.ts";

describe("serve plumbing", () => {
  it("listen serves a handler, streams its body, and turns a throw into a 500", async () => {
    const server = await listen(async (req) => {
      const url = new URL(req.url);
      if (url.pathname === "/echo") return new Response(`got ${(await req.text()).length}`);
      if (url.pathname === "/throw") throw new Error("broken handler");
      if (url.pathname === "/stream") {
        let n = 0;
        return new Response(
          new ReadableStream({
            async pull(controller) {
              await new Promise((r) => setTimeout(r, 5));
              if (n === 3) return controller.close();
              controller.enqueue(new TextEncoder().encode(`part${n++}\n`));
            },
          }),
        );
      }
      return new Response("no", { status: 404 });
    }, { host: "127.0.0.1", port: 0 });
    try {
      const base = `http://127.0.0.1:${server.port}`;
      const echo = await fetch(`${base}/echo`, { method: "POST", body: "x".repeat(70_000) });
      assert.equal(await echo.text(), "got 70000");
      const failed = await fetch(`${base}/throw`);
      assert.equal(failed.status, 500);
      assert.match(await failed.text(), /broken handler/);
      const streamed = await fetch(`${base}/stream`);
      assert.equal(await streamed.text(), "part0\npart1\npart2\n");
      const missing = await fetch(`${base}/nothing`);
      assert.equal(missing.status, 404);
      await missing.text();
    } finally {
      await server.close();
    }
  });

  it("a refusal with an unread body ends the connection; close() then resolves", async () => {
    const server = await listen(() => new Response("too big", { status: 413 }), {
      host: "127.0.0.1",
      port: 0,
    });
    const status = await new Promise<number>((resolve, reject) => {
      const req = request({ host: "127.0.0.1", port: server.port, method: "POST", path: "/" });
      req.on("response", (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
      req.write("a".repeat(1 << 16));
      // The body never ends: only the server can end this exchange.
    });
    assert.equal(status, 413);
    const closed = await Promise.race([
      server.close().then(() => "closed"),
      new Promise((r) => setTimeout(() => r("still open"), 10_000)),
    ]);
    assert.equal(closed, "closed");
  });

  it("a client gone before the handler answered: the answer's body is cancelled, nothing waits", async () => {
    const bounded = <T>(promise: Promise<T>, what: string) =>
      Promise.race([
        promise,
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error(`${what} took over 10 s`)), 10_000)
        ),
      ]);
    let cancelled: () => void = () => {};
    const wasCancelled = new Promise<string>((resolve) => cancelled = () => resolve("cancelled"));
    let received: () => void = () => {};
    const wasReceived = new Promise<void>((resolve) => received = resolve);
    let letAnswer: () => void = () => {};
    const answerNow = new Promise<void>((resolve) => letAnswer = resolve);
    const server = await listen(async () => {
      received();
      await answerNow; // the client is gone by now
      // A live feed: it never ends by itself, and has a chunk ready at every pull.
      return new Response(
        new ReadableStream({
          pull(controller) {
            controller.enqueue(new TextEncoder().encode("tick\n"));
            return new Promise((r) => setTimeout(r, 5));
          },
          cancel: () => cancelled(),
        }),
      );
    }, { host: "127.0.0.1", port: 0 });
    try {
      const req = request({ host: "127.0.0.1", port: server.port, path: "/" });
      const closed = new Promise<void>((resolve) => req.on("close", resolve));
      req.on("error", () => {});
      req.end();
      await bounded(wasReceived, "the request reaching the handler");
      req.destroy();
      await bounded(closed, "the client closing");
      await new Promise((r) => setTimeout(r, 100)); // the server sees the close
      letAnswer();
      const outcome = await Promise.race([
        wasCancelled,
        new Promise<string>((r) => setTimeout(() => r("still streaming to nobody"), 5_000)),
      ]);
      assert.equal(outcome, "cancelled");
    } finally {
      letAnswer();
      await server.close();
    }
  });

  it("WriteBehind: writes resolve at once, land in order, and reads see them", async () => {
    const inner = new MemoryStore();
    const order: string[] = [];
    // The store stores no signal until the test opens it: the writes below cannot have been
    // awaited, however slowly this process runs.
    let open!: () => void;
    const opened = new Promise<void>((resolve) => (open = resolve));
    const slow = new Proxy(inner, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver);
        if (typeof value !== "function") return value;
        if (key !== "insertSessionSignal") return value.bind(target);
        return async (row: { kind: string }) => {
          await opened;
          order.push(row.kind);
          return value.call(target, row);
        };
      },
    }) as SessionStore;
    const queue = new WriteBehind(slow);
    const view = queue.view();
    await view.store.createSession({ id: "s1", status: "created" } as never);
    const writing = (async () => {
      for (const id of ["a", "b", "c"]) {
        await view.store.insertSessionSignal({
          sessionId: "s1",
          kind: id,
          opId: "",
          ts: Date.now(),
          payload: {},
        });
      }
    })();
    // A write that waited for the store would wait for good: fail after a while instead.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const stuck = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error("a write waited for the store")), 30_000);
    });
    await Promise.race([writing, stuck]).finally(() => clearTimeout(timer));
    // The three writes resolved while the store held every one of them: queued, not awaited.
    assert.deepEqual(order, [], "the writes resolved before they were stored");
    assert.equal(queue.queued >= 3, true, `${queue.queued} writes queued`);
    open();
    const signals = await view.store.listSessionSignals("s1");
    assert.deepEqual(signals.map((s) => s.kind), ["a", "b", "c"]);
    assert.deepEqual(order, ["a", "b", "c"]);
    await view.settled();
    assert.equal(queue.queued, 0);
  });

  it("WriteBehind: a failed write rejects settled() and later writes still land", async () => {
    const inner = new MemoryStore();
    let fail = true;
    const flaky = new Proxy(inner, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver);
        if (typeof value !== "function") return value;
        if (key !== "updateSession") return value.bind(target);
        return (...args: unknown[]) => {
          if (fail) {
            fail = false;
            return Promise.reject(new Error("store down"));
          }
          return value.apply(target, args);
        };
      },
    }) as SessionStore;
    const queue = new WriteBehind(flaky);
    const first = queue.view();
    await first.store.updateSession("s1", { status: "running" } as never);
    await assert.rejects(first.settled(), /store down/);
    const second = queue.view();
    await second.store.createSession({ id: "s2", status: "created" } as never);
    await second.settled();
    assert.equal((await second.store.getSession("s2"))?.id, "s2");
  });

  it("WriteBehind: past maxQueued waiting writes, a write is awaited by its caller", async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const inner = new MemoryStore();
    const held = new Proxy(inner, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver);
        if (typeof value !== "function") return value;
        if (key !== "touchSessionActivity") return value.bind(target);
        return async (...args: unknown[]) => {
          await gate;
          return value.apply(target, args);
        };
      },
    }) as SessionStore;
    const queue = new WriteBehind(held, 2);
    const view = queue.view();
    await view.store.touchSessionActivity("s1");
    await view.store.touchSessionActivity("s1");
    let third = false;
    const pending = view.store.touchSessionActivity("s1").then(() => (third = true));
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(third, false, "the third write waits for the store");
    release();
    await pending;
    await view.settled();
    assert.equal(third, true);
  });
});
