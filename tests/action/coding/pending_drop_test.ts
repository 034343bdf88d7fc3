// A staged layer kept for a later answer goes as soon as an answer rules it out: a rejection of
// its call, or an approval of another change set (`dropKeptLayers`, used by `hookscope
// approve`/`reject` and the console); an approval of its own change set keeps it.

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { effectsStore } from "../../../action/coding/_commit.ts";
import { findPending, keepPending } from "../../../action/coding/_pending.ts";
import { dropKeptLayers } from "../../../action/coding/_find_checkpoints.ts";

let base: string;
before(() => {
  base = mkdtempSync(join(tmpdir(), "hookscope-pending-drop-"));
});
after(() => rmSync(base, { recursive: true, force: true }));

const call = { callId: "c1", sessionId: "s1", runId: "r1" };

async function kept(ws: string, effectsHash: string) {
  const store = effectsStore(join(base, "effects"), ws);
  mkdirSync(store.dir, { recursive: true });
  const upper = join(store.dir, `upper-${effectsHash}`);
  mkdirSync(upper);
  writeFileSync(join(upper, "file"), "staged\n");
  await keepPending(store, upper, {
    ...call,
    toolName: "bash",
    argsHash: "args",
    effectsHash,
    opaque: [],
    result: {},
    createdAt: Date.now(),
    expiresAt: Date.now() + 60_000,
    bytes: 7,
    pid: 1,
  }, 1 << 20);
  return store;
}

describe("dropping kept layers an answer rules out", () => {
  it("an approval of its change set keeps it; one of another change set or a rejection removes it", async () => {
    const bases = [join(base, "effects")];
    const store = await kept("/ws/a", "hash-a");
    assert.equal(await dropKeptLayers(bases, call, { approve: true, effectsHash: "hash-a" }), 0);
    assert.equal(await dropKeptLayers(bases, call, { approve: true }), 0);
    assert.ok(await findPending(store, call));
    // Another call (or the same id in another run) is not touched.
    assert.equal(await dropKeptLayers(bases, { ...call, runId: "r2" }, { approve: false }), 0);
    assert.ok(await findPending(store, call));
    assert.equal(await dropKeptLayers(bases, call, { approve: true, effectsHash: "hash-b" }), 1);
    assert.equal(await findPending(store, call), undefined);
    const again = await kept("/ws/a", "hash-a");
    assert.equal(await dropKeptLayers(bases, call, { approve: false }), 1);
    assert.equal(await findPending(again, call), undefined);
    assert.equal(existsSync(join(again.dir, "pending")), true);
  });
});
