import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  abortable,
  deadline,
  deadlineSignal,
  delay,
  MAX_TIMER_MS,
  retry,
  TIMED_OUT,
} from "../../core/_async.ts";

const never = new Promise<never>(() => {});

describe("core/_async", () => {
  it("deadline() settles like the promise when it settles first", async () => {
    assert.equal(await deadline(Promise.resolve(1), 1_000), 1);
    await assert.rejects(deadline(Promise.reject(new Error("boom")), 1_000), /boom/);
  });

  it("deadline() arms no timer for a promise already settled, and one for a pending promise", async () => {
    const real = globalThis.setTimeout;
    // Timers are counted by their delay: the suite runs many files in one process (Node, Bun), so
    // a timer some other module arms in this window must not count. The delays here are unusual.
    const armed = new Map<number, number>();
    globalThis.setTimeout = ((...args: Parameters<typeof setTimeout>) => {
      const ms = Number(args[1] ?? 0);
      armed.set(ms, (armed.get(ms) ?? 0) + 1);
      return real(...args);
    }) as typeof setTimeout;
    const count = (ms: number) => armed.get(ms) ?? 0;
    try {
      // An `async` function that returns without waiting hands back a settled promise.
      // deno-lint-ignore require-await
      const finished = (async () => "done")();
      assert.equal(await deadline(finished, 1_237), "done");
      await assert.rejects(deadline(Promise.reject(new Error("boom")), 1_237), /boom/);
      assert.equal(count(1_237), 0);
      assert.equal(await deadline(delay(7).then(() => "later"), 1_237), "later");
      assert.equal(count(1_237), 1); // the deadline's timer
      assert.equal(count(7), 1); // delay()'s own
      await assert.rejects(deadline(never, 11), (error) => error === TIMED_OUT);
      assert.equal(count(11), 1);
    } finally {
      globalThis.setTimeout = real;
    }
  });

  it("deadline() rejects with TIMED_OUT, or the caller's reason, when time runs out", async () => {
    await assert.rejects(deadline(never, 5), (error) => error === TIMED_OUT);
    const reason = new Error("too slow");
    await assert.rejects(deadline(never, 5, undefined, () => reason), (error) => error === reason);
  });

  it("deadline() rejects with the signal's reason, at once when already aborted", async () => {
    const controller = new AbortController();
    const waiting = deadline(never, Infinity, controller.signal);
    controller.abort(new Error("stop"));
    await assert.rejects(waiting, /stop/);
    await assert.rejects(deadline(Promise.resolve(1), 1_000, controller.signal), /stop/);
  });

  it("deadline() above the largest timer waits without one (no 1 ms overflow)", async () => {
    const value = await deadline(delay(20).then(() => "late"), MAX_TIMER_MS + 1);
    assert.equal(value, "late");
  });

  it("abortable() is the promise without a signal and rejects on abort with one", async () => {
    assert.equal(await abortable(Promise.resolve(2)), 2);
    const controller = new AbortController();
    const waiting = abortable(never, controller.signal);
    controller.abort("gone");
    await assert.rejects(waiting, (error) => error === "gone");
  });

  it("delay() waits, resolves at once for 0, and rejects on abort", async () => {
    const started = Date.now();
    await delay(15);
    assert.ok(Date.now() - started >= 10);
    await delay(0);
    const controller = new AbortController();
    const waiting = delay(60_000, controller.signal);
    controller.abort(new Error("cancelled"));
    await assert.rejects(waiting, /cancelled/);
    await assert.rejects(delay(1, controller.signal), /cancelled/);
  });

  it("retry() tries again until success, and gives up with the last failure", async () => {
    let calls = 0;
    const value = await retry((n) => {
      calls++;
      return n < 3 ? Promise.reject(new Error(`fail ${n}`)) : Promise.resolve(n);
    }, { attempts: 5, delayMs: 1 });
    assert.equal(value, 3);
    assert.equal(calls, 3);
    await assert.rejects(
      retry(() => Promise.reject(new Error(`always`)), { attempts: 2, delayMs: (n) => n }),
      /always/,
    );
  });

  it("retry() stops on a failure retryIf refuses, and on abort", async () => {
    let calls = 0;
    await assert.rejects(
      retry(() => {
        calls++;
        throw new TypeError("bad input");
      }, { attempts: 5, retryIf: (error) => !(error instanceof TypeError) }),
      TypeError,
    );
    assert.equal(calls, 1);
    const controller = new AbortController();
    const running = retry(() => Promise.reject(new Error("x")), {
      attempts: 10,
      delayMs: 60_000,
      signal: controller.signal,
    });
    controller.abort(new Error("aborted"));
    await assert.rejects(running, /aborted/);
  });

  it("deadline() on an aborted signal leaves the promise it drops handled", async () => {
    const controller = new AbortController();
    controller.abort(new Error("stop"));
    // Rejects after the wait was given up: an unhandled rejection would fail this test.
    const late = delay(5).then(() => Promise.reject(new Error("late")));
    await assert.rejects(deadline(late, 1_000, controller.signal), /stop/);
    await delay(20);
  });

  it("deadlineSignal() aborts with the timeout's reason, or a TimeoutError by default", async () => {
    const given = deadlineSignal(5, undefined, () => new Error("policy too slow"));
    await assert.rejects(abortable(never, given.signal), /policy too slow/);
    const plain = deadlineSignal(5);
    await assert.rejects(
      abortable(never, plain.signal),
      (error) => error instanceof DOMException && error.name === "TimeoutError",
    );
    given.done();
    plain.done();
  });

  it("deadlineSignal() follows the caller's abort, at once when already aborted", async () => {
    const controller = new AbortController();
    const call = deadlineSignal(60_000, controller.signal);
    const waiting = abortable(never, call.signal);
    controller.abort(new Error("caller left"));
    await assert.rejects(waiting, /caller left/);
    call.done();
    const late = deadlineSignal(60_000, controller.signal);
    assert.equal(late.signal.aborted, true);
    assert.match(String(late.signal.reason), /caller left/);
    late.done();
  });

  it("deadlineSignal() after done() neither times out nor follows the caller", async () => {
    const controller = new AbortController();
    const call = deadlineSignal(5, controller.signal, undefined, { unref: true });
    call.done();
    await delay(20);
    controller.abort(new Error("too late"));
    assert.equal(call.signal.aborted, false);
    const endless = deadlineSignal(Infinity);
    await delay(5);
    assert.equal(endless.signal.aborted, false);
    endless.done();
  });

  it("retry() stops waiting for an attempt that never settles when the caller aborts", async () => {
    const controller = new AbortController();
    let calls = 0;
    const running = retry(() => {
      calls++;
      return never;
    }, { attempts: 3, signal: controller.signal });
    await delay(5);
    controller.abort(new Error("gave up"));
    await assert.rejects(running, /gave up/);
    assert.equal(calls, 1);
  });

  it("retry() with attempts Infinity goes on until retryIf refuses", async () => {
    let calls = 0;
    await assert.rejects(
      retry(() => {
        calls++;
        throw new Error(`busy ${calls}`);
      }, { attempts: Infinity, retryIf: (_error, n) => n < 7 }),
      /busy 7/,
    );
    assert.equal(calls, 7);
  });
});
