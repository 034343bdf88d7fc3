import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Event, EventStatus } from "../../core/mod.ts";

class Value extends Event {
  #work: (signal: AbortSignal) => Promise<unknown>;
  constructor(work: (signal: AbortSignal) => Promise<unknown>) {
    super();
    this.#work = work;
  }
  protected _invoke(signal: AbortSignal): Promise<unknown> {
    return this.#work(signal);
  }
}

describe("Event", () => {
  it("Event.invoke() completes with the response", async () => {
    const e = new Value(() => Promise.resolve(42));
    await e.invoke();
    assert.equal(e.status, EventStatus.COMPLETED);
    assert.equal(e.response, 42);
  });
});
