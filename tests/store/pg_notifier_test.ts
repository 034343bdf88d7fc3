// The PostgreSQL store's notifier (store/postgres/_notifier.ts) without a database: notices are
// merged while one is in flight, and dropped for a moment after one that found no listener.

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Notifier, QUIET_MS } from "../../store/postgres/_notifier.ts";

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

describe("PostgreSQL store notifier", () => {
  it("merges notices that arrive while one is in flight", async () => {
    const sent: string[] = [];
    const notifier = new Notifier(
      async (payload) => {
        sent.push(payload);
        await delay(5);
        return true;
      },
      () => false,
      () => false,
    );
    notifier.notify(10, ["a"]);
    notifier.notify(12, ["b", null]);
    notifier.notify(11, ["a"]);
    await notifier.idle();
    assert.deepEqual(sent, ['{"to":10,"s":["a"]}', '{"to":12,"s":["b","a"]}']);
  });

  it("sends a notice queued in the same tick as the sender finishing (none is left behind)", async () => {
    const sent: string[] = [];
    let answer: (heard: boolean) => void = () => {};
    const notifier = new Notifier(
      (payload) => {
        sent.push(payload);
        return new Promise<boolean>((resolve) => answer = resolve);
      },
      () => false,
      () => true,
    );
    notifier.notify(1, ["a"]);
    // The sender resumes first, finds nothing queued and ends; the notice below comes one
    // microtask later, before any `.finally` of the sender could have run.
    answer(true);
    queueMicrotask(() => notifier.notify(2, ["b"]));
    await delay(1);
    answer(true);
    await notifier.idle();
    assert.deepEqual(sent, ['{"to":1,"s":["a"]}', '{"to":2,"s":["b"]}']);
  });

  it("sends nothing for a moment after a notice that no one heard, unless this process listens", async () => {
    const sent: string[] = [];
    let listening = false;
    const notifier = new Notifier(
      (payload) => {
        sent.push(payload);
        return Promise.resolve(false);
      },
      () => false,
      () => listening,
    );
    notifier.notify(1, ["a"]);
    await notifier.idle();
    notifier.notify(2, ["a"]);
    await notifier.idle();
    assert.deepEqual(sent, ['{"to":1,"s":["a"]}']);
    listening = true;
    notifier.notify(3, ["a"]);
    await notifier.idle();
    assert.equal(sent.length, 2);
    listening = false;
    await delay(QUIET_MS + 20);
    notifier.notify(4, ["a"]);
    await notifier.idle();
    assert.deepEqual(sent.slice(2), ['{"to":4,"s":["a"]}']);
  });

  it("drops queued notices once the store has stopped", async () => {
    const sent: string[] = [];
    const notifier = new Notifier(
      (payload) => {
        sent.push(payload);
        return Promise.resolve(true);
      },
      () => true,
      () => false,
    );
    notifier.notify(1, ["a"]);
    await notifier.idle();
    assert.deepEqual(sent, []);
  });
});
