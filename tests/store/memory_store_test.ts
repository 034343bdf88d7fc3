import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { MemoryStore } from "../../store/mod.ts";
import { runStoreConformance } from "./conformance.ts";

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
