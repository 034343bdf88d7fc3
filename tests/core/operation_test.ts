import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { EventStatus, Signal } from "../../mod.ts";
import { Entity, Operation } from "../../action/mod.ts";

type Work = (signal: AbortSignal) => Promise<unknown>;
type StreamWork = (signal: AbortSignal) => ReadableStream<unknown> | AsyncIterable<unknown>;

class Job extends Operation {
  #work: Work;
  #streamWork: StreamWork | undefined;
  constructor(work: Work, streamWork?: StreamWork) {
    super();
    this.#work = work;
    this.#streamWork = streamWork;
  }
  protected _invoke(signal: AbortSignal): Promise<unknown> {
    return this.#work(signal);
  }
  protected override _stream(
    signal: AbortSignal,
  ): ReadableStream<unknown> | AsyncIterable<unknown> {
    return this.#streamWork ? this.#streamWork(signal) : super._stream(signal);
  }
}

async function readAll(stream: ReadableStream<unknown>): Promise<unknown[]> {
  const out: unknown[] = [];
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return out;
    out.push(value);
  }
}

describe("Entity and Signal", () => {
  it("Entity gets a UUID, a creation time and copied metadata; toJSON names the kind", () => {
    const metadata = { a: 1 };
    const element = new Entity({ metadata });
    metadata.a = 2;
    assert.match(element.id, /^[0-9a-f-]{36}$/);
    assert.equal(element.metadata.a, 1);
    assert.ok(Math.abs(element.createdAt - Date.now()) < 60_000);
    assert.equal(element.toJSON().kind, "Entity");
    assert.throws(() => new Entity({ id: "" }), TypeError);
    assert.throws(() => new Entity({ createdAt: Number.NaN }), TypeError);
  });

  it("Signal defaults data and emitterRole to null and schemaVersion to 1", () => {
    const signal = new Signal();
    assert.equal(signal.data, null);
    assert.equal(signal.emitterRole, null);
    assert.equal(signal.schemaVersion, 1);
    assert.throws(() => new Signal({ emitterRole: 5 as never }), TypeError);
  });
});

describe("Operation.invoke()", () => {
  it("Operation.invoke() completes with the response and a duration", async () => {
    const e = new Job(() => Promise.resolve(42));
    await e.invoke();
    assert.equal(e.status, EventStatus.COMPLETED);
    assert.equal(e.response, 42);
    assert.equal(typeof e.execution.durationMs, "number");
  });

  it("Operation.invoke() records an ordinary failure as FAILED without throwing", async () => {
    const boom = new Error("boom");
    const e = new Job(() => Promise.reject(boom));
    await e.invoke();
    assert.equal(e.status, EventStatus.FAILED);
    assert.equal(e.execution.error, boom);
    assert.equal(e.response, null);
  });

  it("Operation.invoke() ends CANCELLED and rethrows when the caller aborts", async () => {
    const controller = new AbortController();
    const e = new Job((signal) =>
      new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)))
    );
    const running = e.invoke({ signal: controller.signal });
    controller.abort(new Error("stop"));
    await assert.rejects(running, /stop/);
    assert.equal(e.status, EventStatus.CANCELLED);
  });

  it("Operation.invoke() with an already aborted signal is CANCELLED before any work", async () => {
    let ran = false;
    const e = new Job(() => {
      ran = true;
      return Promise.resolve(1);
    });
    await assert.rejects(e.invoke({ signal: AbortSignal.abort() }));
    assert.equal(ran, false);
    assert.equal(e.status, EventStatus.CANCELLED);
  });

  it("Operation.invoke() runs only from PENDING", async () => {
    let runs = 0;
    const e = new Job(() => Promise.resolve(++runs));
    await e.invoke();
    await e.invoke();
    assert.equal(runs, 1);
  });

  it("Operation.status rejects unknown strings with a TypeError", () => {
    const e = new Job(() => Promise.resolve());
    assert.throws(() => (e.status = "done" as never), TypeError);
    e.status = EventStatus.SKIPPED;
    assert.equal(e.status, "skipped");
  });
});

describe("Operation.stream()", () => {
  it("Operation.stream() delivers chunks on demand and completes", async () => {
    const produced: number[] = [];
    const e = new Job(() => Promise.resolve(), () =>
      (async function* () {
        for (let i = 0; i < 3; i++) {
          produced.push(i);
          yield i;
        }
      })());
    const stream = e.stream();
    const reader = stream.getReader();
    assert.deepEqual(await reader.read(), { done: false, value: 0 });
    await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(produced, [0], "no chunk is produced before it is asked for");
    assert.deepEqual(await reader.read(), { done: false, value: 1 });
    assert.deepEqual(await reader.read(), { done: false, value: 2 });
    assert.equal((await reader.read()).done, true);
    assert.equal(e.status, EventStatus.COMPLETED);
  });

  it("Operation.stream() errors reach the consumer and the event ends FAILED (X11)", async () => {
    const boom = new Error("midway");
    const e = new Job(() => Promise.resolve(), () =>
      (async function* () {
        yield "a";
        throw boom;
      })());
    await assert.rejects(readAll(e.stream()), (error) => error === boom);
    assert.equal(e.status, EventStatus.FAILED);
    assert.equal(e.execution.error, boom);
  });

  it("Operation.stream() cancelled by the consumer ends CANCELLED and cancels the source", async () => {
    let sourceCancelled: unknown = null;
    let seenSignal: AbortSignal | null = null;
    const e = new Job(() => Promise.resolve(), (signal) => {
      seenSignal = signal;
      return new ReadableStream({
        pull(c) {
          c.enqueue("tick");
        },
        cancel(reason) {
          sourceCancelled = reason;
        },
      });
    });
    const reader = e.stream().getReader();
    await reader.read();
    await reader.cancel("enough");
    assert.equal(e.status, EventStatus.CANCELLED);
    assert.equal(sourceCancelled, "enough");
    assert.equal(seenSignal!.aborted, true);
  });

  it("Operation.stream() aborted by the caller's signal errors the consumer and ends CANCELLED", async () => {
    const controller = new AbortController();
    const e = new Job(() => Promise.resolve(), () =>
      new ReadableStream({
        pull() {
          return new Promise(() => {});
        },
      }));
    const reader = e.stream({ signal: controller.signal }).getReader();
    const pending = reader.read();
    setTimeout(() => controller.abort(new Error("caller stop")), 5);
    await assert.rejects(pending, /caller stop/);
    assert.equal(e.status, EventStatus.CANCELLED);
  });

  it("Operation.stream() defaults to one chunk from _invoke, and is empty once not PENDING", async () => {
    const e = new Job(() => Promise.resolve("only"));
    assert.deepEqual(await readAll(e.stream()), ["only"]);
    assert.deepEqual(await readAll(e.stream()), []);
  });
});
