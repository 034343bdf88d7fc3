// serve's request deadlines: one timer for all requests, each aborted at its own time.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { RequestDeadlines } from "../../cli/_request_deadlines.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("RequestDeadlines", () => {
  it("aborts each unfinished request past its time, in the order they began, with the reason", async () => {
    const deadlines = new RequestDeadlines(40, () => new Error("too slow"));
    const first = deadlines.start();
    await sleep(25);
    const second = deadlines.start();
    const finished = deadlines.start();
    finished.done();
    await sleep(30); // first is past its time, second is not
    assert.equal(first.signal.aborted, true);
    assert.equal((first.signal.reason as Error).message, "too slow");
    assert.equal(second.signal.aborted, false);
    await sleep(60);
    assert.equal(second.signal.aborted, true);
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
