import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { createFileHookSink, HookLogger } from "../../service/mod.ts";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

describe("HookLogger", () => {
  it("HookLogger keeps the newest entries in order across any number of wrap-arounds", async () => {
    for (const capacity of [1, 3, 7]) {
      for (const n of [0, 1, 2, 3, 7, 8, 20, 23]) {
        const log = new HookLogger({ capacity });
        for (let i = 0; i < n; i++) log.log({ i });
        const expected = Array.from({ length: n }, (_, i) => ({ i })).slice(
          Math.max(0, n - capacity),
        );
        assert.deepEqual(log.entries, expected, `capacity ${capacity}, ${n} entries`);
        const batches: unknown[][] = [];
        log.setSink((entries) => void batches.push([...entries]));
        await log.flush();
        assert.deepEqual(batches, expected.length ? [expected] : []);
        assert.deepEqual(log.entries, []);
      }
    }
  });

  it("HookLogger holds 100 entries by default and keeps the newest in memory", () => {
    const log = new HookLogger();
    assert.equal(log.capacity, 100);
    for (let i = 0; i < 150; i++) log.log({ i });
    assert.equal(log.entries.length, 100);
    assert.deepEqual(log.entries[0], { i: 50 });
    assert.deepEqual(log.entries[99], { i: 149 });
  });

  it("HookLogger never holds more than its capacity (property)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 20 }), fc.nat({ max: 100 }), (capacity, n) => {
        const batches: number[] = [];
        const withSink = new HookLogger({ capacity, sink: (e) => void batches.push(e.length) });
        const inMemory = new HookLogger({ capacity });
        for (let i = 0; i < n; i++) {
          withSink.log({ i });
          inMemory.log({ i });
          assert.ok(withSink.entries.length <= capacity);
          assert.ok(inMemory.entries.length <= capacity);
        }
        assert.equal(batches.reduce((a, b) => a + b, 0) + withSink.entries.length, n);
      }),
    );
  });

  it("HookLogger hands a full buffer to the sink before adding, and flush() empties it", async () => {
    const batches: unknown[][] = [];
    const log = new HookLogger({ capacity: 2, sink: (e) => void batches.push([...e]) });
    log.log({ n: 1 });
    log.log({ n: 2 });
    assert.equal(batches.length, 0);
    log.log({ n: 3 });
    assert.deepEqual(batches, [[{ n: 1 }, { n: 2 }]]);
    await log.flush();
    assert.deepEqual(batches[1], [{ n: 3 }]);
    assert.equal(log.entries.length, 0);
  });

  it("HookLogger survives a failing sink", async () => {
    const log = new HookLogger({
      capacity: 1,
      sink: () => Promise.reject(new Error("disk full")),
    });
    log.log({ a: 1 });
    log.log({ a: 2 });
    await log.flush();
    assert.equal(log.entries.length, 0);
    const throwing = new HookLogger({
      capacity: 1,
      sink: () => {
        throw new Error("sync failure");
      },
    });
    throwing.log({ a: 1 });
    throwing.log({ a: 2 });
    assert.deepEqual(throwing.entries, [{ a: 2 }]);
  });

  it("HookLogger rejects bad input with a TypeError", () => {
    assert.throws(() => new HookLogger({ capacity: 0 }), TypeError);
    assert.throws(() => new HookLogger({ capacity: 1.5 }), TypeError);
    assert.throws(() => new HookLogger({ sink: 3 as never }), TypeError);
    assert.throws(() => new HookLogger().log(null as never), TypeError);
  });

  it("createFileHookSink writes each batch as a JSON file in a real directory", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hookscope-hooklog-"));
    try {
      const log = new HookLogger({
        capacity: 2,
        sink: createFileHookSink({ directory: dir, writeTextFile: (p, t) => writeFile(p, t) }),
      });
      for (let i = 0; i < 3; i++) log.log({ i });
      await log.flush();
      const files = readdirSync(dir).sort();
      assert.equal(files.length, 2);
      for (const f of files) assert.match(f, /^hook_\d{14}-[0-9a-f]{5}\.json$/);
      const all = files.flatMap((f) => JSON.parse(readFileSync(join(dir, f), "utf8")));
      assert.deepEqual(all.map((e: { i: number }) => e.i).sort(), [0, 1, 2]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
