// serve's request deadlines: one timer for all requests, each aborted at its own time.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { RequestDeadlines } from "../../cli/_request_deadlines.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves when `signal` aborts; rejects after a generous wait (a deadline never fired). */
function aborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  let timer: ReturnType<typeof setTimeout> | undefined;
  return new Promise<void>((resolve, reject) => {
    timer = setTimeout(() => reject(new Error("not aborted within 10 s")), 10_000);
    signal.addEventListener("abort", () => resolve(), { once: true });
  }).finally(() => clearTimeout(timer));
}

describe("RequestDeadlines", () => {
  it("aborts each unfinished request past its time, in the order they began, with the reason", async () => {
    // The second request begins 200 ms after the first, both with 400 ms: when the timer fires
    // for the first, the second is not due for another 200 ms, however late the timer fires up to
    // that (a fixed sleep between the two deadlines left 10 ms, which a loaded machine misses).
    const deadlines = new RequestDeadlines(400, () => new Error("too slow"));
    const first = deadlines.start();
    await sleep(200);
    const second = deadlines.start();
    const finished = deadlines.start();
    finished.done();
    await aborted(first.signal);
    assert.equal((first.signal.reason as Error).message, "too slow");
    assert.equal(second.signal.aborted, false, "the second is not past its time yet");
    await aborted(second.signal);
    assert.equal(finished.signal.aborted, false);
    assert.equal(deadlines.size, 0);
    deadlines.close();
  });

  it("a request finished in time is never aborted, and finished requests are dropped", async () => {
    const deadlines = new RequestDeadlines(30, () => new Error("late"));
    const signals = [];
    for (let i = 0; i < 3000; i++) {
      const request = deadlines.start();
      signals.push(request.signal);
      request.done();
    }
    assert.equal(deadlines.size, 0);
    await sleep(60);
    assert.ok(signals.every((signal) => !signal.aborted));
    deadlines.close();
  });

  it("an abort listener that finishes other requests does not disturb the sweep", async () => {
    const deadlines = new RequestDeadlines(20, () => new Error("late"));
    const a = deadlines.start();
    const b = deadlines.start();
    const c = deadlines.start();
    a.signal.addEventListener("abort", () => {
      a.done();
      b.done();
    });
    await sleep(60);
    assert.equal(a.signal.aborted, true);
    assert.equal(b.signal.aborted, false);
    assert.equal(c.signal.aborted, true);
    c.done();
    assert.equal(deadlines.size, 0);
    // It works again after going idle.
    const d = deadlines.start();
    await sleep(50);
    assert.equal(d.signal.aborted, true);
    deadlines.close();
  });

  it("close() stops the timer: nothing is aborted after it", async () => {
    const deadlines = new RequestDeadlines(20, () => new Error("late"));
    const request = deadlines.start();
    deadlines.close();
    await sleep(50);
    assert.equal(request.signal.aborted, false);
  });
});
