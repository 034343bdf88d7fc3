import { afterEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { anySignal, isAbortSignal, neverAborted, timeoutSignal } from "../../core/_abort.ts";
import { FunctionEndpoint, IModel } from "../../service/mod.ts";

const statics = AbortSignal as unknown as Record<string, unknown>;
const saved = { any: statics.any, timeout: statics.timeout };

/** Removes AbortSignal.any and AbortSignal.timeout, as in edge runtimes that lack them. */
function removeStatics(): void {
  for (const key of ["any", "timeout"]) {
    Object.defineProperty(AbortSignal, key, {
      value: undefined,
      configurable: true,
      writable: true,
    });
  }
}

afterEach(() => {
  for (const [key, value] of Object.entries(saved)) {
    Object.defineProperty(AbortSignal, key, { value, configurable: true, writable: true });
  }
});

describe("core/_abort.ts", () => {
  it("neverAborted() is one shared signal that is not aborted", () => {
    assert.equal(neverAborted(), neverAborted());
    assert.equal(neverAborted().aborted, false);
  });

  it("isAbortSignal() accepts a signal of another realm and rejects look-alikes", () => {
    assert.equal(isAbortSignal(new AbortController().signal), true);
    const foreign = {
      [Symbol.toStringTag]: "AbortSignal",
      aborted: false,
      addEventListener() {},
      removeEventListener() {},
    };
    assert.equal(isAbortSignal(foreign), true);
    assert.equal(isAbortSignal({ aborted: false, addEventListener() {} }), false);
    assert.equal(isAbortSignal({ ...foreign, aborted: "no" }), false);
    assert.equal(isAbortSignal(null), false);
  });

  it("anySignal() without AbortSignal.any aborts with the first source's reason", () => {
    removeStatics();
    const a = new AbortController();
    const b = new AbortController();
    const combined = anySignal([a.signal, b.signal]);
    assert.equal(combined.aborted, false);
    const reason = new Error("b went away");
    b.abort(reason);
    assert.equal(combined.aborted, true);
    assert.equal(combined.reason, reason);
    a.abort(new Error("later"));
    assert.equal(combined.reason, reason);
  });

  it("anySignal() without AbortSignal.any is aborted at once when a source already is", () => {
    removeStatics();
    const a = new AbortController();
    a.abort("gone");
    const combined = anySignal([new AbortController().signal, a.signal]);
    assert.equal(combined.aborted, true);
    assert.equal(combined.reason, "gone");
  });

  it("timeoutSignal() without AbortSignal.timeout aborts with a TimeoutError", async () => {
    removeStatics();
    const signal = timeoutSignal(10);
    await new Promise<void>((resolve, reject) => {
      const deadline = setTimeout(() => reject(new Error("no abort within 10 s")), 10_000);
      signal.addEventListener("abort", () => {
        clearTimeout(deadline);
        resolve();
      }, { once: true });
    });
    assert.equal((signal.reason as DOMException).name, "TimeoutError");
  });

  it("IModel.stream(…, { signal }) works and aborts without AbortSignal.any", async () => {
    removeStatics();
    const model = new IModel({
      model: "m",
      endpoint: new FunctionEndpoint({
        call: () => ({}),
        stream: async function* (_request: unknown, options: { signal: AbortSignal }) {
          yield { type: "text", text: "a" };
          await new Promise((_resolve, reject) => {
            options.signal.addEventListener("abort", () => reject(options.signal.reason), {
              once: true,
            });
          });
        },
      }),
    });
    const controller = new AbortController();
    const reader = model.stream({ messages: [] }, { signal: controller.signal }).getReader();
    const first = await reader.read();
    assert.deepEqual(first.value, { type: "text", text: "a" });
    const reason = new Error("user left");
    const pending = reader.read();
    controller.abort(reason);
    await assert.rejects(pending, (error) => error === reason);
  });
});
