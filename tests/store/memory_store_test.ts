import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { MemoryStore } from "../../store/mod.ts";
import { runStoreConformance } from "./conformance.ts";
import { waitingRun } from "./conformance_runs.ts";

runStoreConformance("MemoryStore", () => Promise.resolve(new MemoryStore()));

describe("MemoryStore", () => {
  it("MemoryStore.close() drops the rows and reports closed", async () => {
    const store = new MemoryStore();
    await store.createSession({ id: "s1", status: "created" });
    assert.equal(store.closed, false);
    await store.close();
    assert.equal(store.closed, true);
    await store.close();
    assert.equal(store.closed, true);
  });
});

describe("MemoryStore keepFinishedRuns", () => {
  const finished = (runId: string, status: "completed" | "failed" | "aborted") => ({
    ...waitingRun(runId),
    status,
    stoppedBy: status === "aborted" ? "aborted" as const : "answer" as const,
    pending: [],
  });

  it("drops the oldest finished runs beyond the limit and keeps every waiting run", async () => {
    const store = new MemoryStore({ keepFinishedRuns: 2 });
    await store.saveRun(waitingRun("waiting"));
    await store.saveRun(finished("f1", "completed"));
    await store.saveRun(finished("f2", "failed"));
    await store.saveRun(finished("f3", "aborted"));
    assert.equal(await store.getRun("f1"), undefined);
    assert.equal((await store.getRun("f2"))?.status, "failed");
    assert.equal((await store.getRun("f3"))?.status, "aborted");
    assert.equal((await store.getRun("waiting"))?.status, "waiting_approval");
    // A waiting run that finishes later counts from then on.
    await store.saveRun(finished("waiting", "completed"));
    assert.equal(await store.getRun("f2"), undefined);
    assert.deepEqual(
      [(await store.getRun("f3"))?.status, (await store.getRun("waiting"))?.status],
      ["aborted", "completed"],
    );
  });

  it("keeps every run by default, and refuses a bad limit", async () => {
    const store = new MemoryStore();
    for (let i = 0; i < 100; i++) await store.saveRun(finished(`r${i}`, "completed"));
    assert.equal((await store.getRun("r0"))?.runId, "r0");
    assert.throws(() => new MemoryStore({ keepFinishedRuns: -1 }), TypeError);
    assert.throws(() => new MemoryStore({ keepFinishedRuns: "5" as never }), TypeError);
  });
});

describe("the run store of a session without a store", () => {
  it("keeps the last 64 finished runs and every waiting one", async () => {
    const { runStoreOf } = await import("../../session/_run_store.ts");
    const store = runStoreOf({});
    assert.equal(runStoreOf({}) === store, false);
    await store.saveRun(waitingRun("waiting"));
    for (let i = 0; i < 70; i++) {
      await store.saveRun({ ...waitingRun(`r${i}`), status: "completed", pending: [] });
    }
    assert.equal(await store.getRun("r5"), undefined);
    assert.equal((await store.getRun("r6"))?.status, "completed");
    assert.equal((await store.getRun("waiting"))?.status, "waiting_approval");
  });
});
