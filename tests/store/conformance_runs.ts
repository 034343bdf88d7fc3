// The run/approval conformance suite: every SessionStore implementation runs these same tests
// (saveRun, getRun, claimRun, answerApproval, listPendingApprovals).

import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import type { RunRecord, SessionStore } from "../../store/mod.ts";
import { StoreClosedError } from "../../store/mod.ts";
import { argsHash } from "../../core/approval.ts";
import { ApprovalConflictError } from "../../store/store_errors.ts";

/** Makes a fresh, empty store. */
export type RunStoreFactory = () => Promise<SessionStore>;

/**
 * Opens a second, independent connection to the same database as `first` (another SQLite
 * connection to the file, another pool), so claims can race across connections.
 */
export type SecondConnection = (first: SessionStore) => Promise<SessionStore>;

/** A run record waiting for approval of `calls`, with defaults. */
export function waitingRun(
  runId: string,
  init: Partial<RunRecord> = {},
  calls: readonly string[] = ["c1"],
): RunRecord {
  return {
    runId,
    sessionId: "s1",
    branchId: "b1",
    status: "waiting_approval",
    stoppedBy: "approval",
    pending: calls.map((callId, i) => ({
      runId,
      sessionId: "s1",
      branchId: "b1",
      callId,
      toolName: "bash",
      args: { command: `echo ${i}` },
      reason: "needs a human",
      requestedAt: 1_700_000_000_000 + i,
      argsHash: argsHash({ command: `echo ${i}` }),
    })),
    answers: {},
    state: {
      turn: 1,
      maxTurns: 8,
      request: { temperature: 0 },
      toolCalls: calls.map((id, i) => ({
        id,
        name: "bash",
        arguments: JSON.stringify({ command: `echo ${i}` }),
      })),
      done: [],
      messageId: "m-assistant",
    },
    owner: null,
    claimedAt: null,
    error: null,
    createdAt: 1_700_000_000_000,
    updatedAt: 1_700_000_000_000,
    ...init,
  };
}

/**
 * Registers the run conformance `describe` block for a store. `second` (optional) opens another
 * connection to the same database for the cross-connection claim race; `cleanup` runs once after
 * the block.
 */
export function runRunConformance(
  name: string,
  factory: RunStoreFactory,
  second?: SecondConnection,
  cleanup?: () => Promise<void> | void,
): void {
  describe(`${name} run conformance`, () => {
    const opened: SessionStore[] = [];
    async function open(): Promise<SessionStore> {
      const store = await factory();
      opened.push(store);
      return store;
    }
    after(async () => {
      for (const store of opened) await store.close().catch(() => {});
      await cleanup?.();
    });

    it(`${name}.saveRun() stores a copy that getRun() returns; saving again replaces it`, async () => {
      const store = await open();
      const run = waitingRun("r1");
      await store.saveRun(run);
      assert.deepEqual(await store.getRun("r1"), run);
      assert.equal(await store.getRun("nope"), undefined);
      run.pending[0].args.command = "mutated";
      assert.equal((await store.getRun("r1"))?.pending[0].args.command, "echo 0");
      const got = (await store.getRun("r1"))!;
      got.state.done.push("x");
      assert.deepEqual((await store.getRun("r1"))?.state.done, []);
      await store.saveRun(
        waitingRun("r1", { status: "completed", stoppedBy: "answer", pending: [], updatedAt: 5 }),
      );
      const replaced = await store.getRun("r1");
      assert.equal(replaced?.status, "completed");
      assert.equal(replaced?.stoppedBy, "answer");
      assert.deepEqual(replaced?.pending, []);
      assert.equal(replaced?.updatedAt, 5);
    });

    it(`${name}.saveRun() rejects malformed runs with a TypeError and stores nothing`, async () => {
      const store = await open();
      const bad: unknown[] = [
        null,
        { ...waitingRun("r1"), runId: "" },
        { ...waitingRun("r1"), status: "sleeping" },
        { ...waitingRun("r1"), pending: "none" },
        { ...waitingRun("r1"), pending: [{ callId: "c1" }] },
        { ...waitingRun("r1"), state: { turn: 1 } },
        { ...waitingRun("r1"), state: { ...waitingRun("r1").state, turn: Number.NaN } },
        { ...waitingRun("r1"), answers: { c1: { approve: "yes" } } },
        { ...waitingRun("r1"), createdAt: "now" },
        { ...waitingRun("r1"), owner: 7 },
      ];
      for (const run of bad) await assert.rejects(store.saveRun(run as RunRecord), TypeError);
      assert.equal(await store.getRun("r1"), undefined);
      await assert.rejects(store.getRun(""), TypeError);
      await assert.rejects(store.claimRun("r1", ""), TypeError);
      await assert.rejects(store.answerApproval("r1", "c1", { approve: 1 } as never), TypeError);
      await assert.rejects(store.listPendingApprovals({ runId: "" }), TypeError);
    });

    it(`${name}.saveRun() keeps arbitrary JSON arguments and answers exactly`, async () => {
      const store = await open();
      await fc.assert(
        fc.asyncProperty(
          fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 3 })),
          fc.string({ maxLength: 40 }),
          async (args, reason) => {
            const safe = JSON.parse(JSON.stringify(args)) as Record<string, unknown>;
            const run = waitingRun("prop");
            run.pending[0].args = safe;
            run.pending[0].reason = reason;
            run.answers = { c1: { approve: true, updatedArgs: safe, by: reason, answeredAt: 1 } };
            await store.saveRun(run);
            const got = await store.getRun("prop");
            assert.deepEqual(got?.pending[0].args, safe);
            assert.equal(got?.pending[0].reason, reason);
            assert.deepEqual(got?.answers.c1, run.answers.c1);
          },
        ),
        { numRuns: 60 },
      );
    });

    it(`${name}.claimRun() claims a waiting run once: status running, owner and claimedAt set`, async () => {
      const store = await open();
      await store.saveRun(waitingRun("r1"));
      const before = Date.now();
      assert.equal(await store.claimRun("r1", "worker-a"), true);
      const claimed = await store.getRun("r1");
      assert.equal(claimed?.status, "running");
      assert.equal(claimed?.owner, "worker-a");
      assert.ok((claimed?.claimedAt ?? 0) >= before);
      assert.equal(await store.claimRun("r1", "worker-b"), false);
      assert.equal((await store.getRun("r1"))?.owner, "worker-a");
      assert.equal(await store.claimRun("ghost", "worker-a"), false);
      await store.saveRun(waitingRun("done", { status: "completed", pending: [] }));
      assert.equal(await store.claimRun("done", "worker-a"), false);
      assert.equal((await store.getRun("done"))?.status, "completed");
    });

    it(`${name}.releaseRun() takes back the named owner's claim only; the run can be claimed again`, async () => {
      const store = await open();
      assert.equal(typeof store.releaseRun, "function");
      const release = store.releaseRun!.bind(store);
      const run = waitingRun("rel");
      run.answers = { c1: { approve: true, by: "ana", answeredAt: 5 } };
      await store.saveRun(run);
      // Not claimed yet: nothing to release.
      assert.equal(await release("rel", "worker-a"), false);
      assert.equal(await store.claimRun("rel", "worker-a"), true);
      // Another owner's name, an unknown run: nothing changes.
      assert.equal(await release("rel", "worker-b"), false);
      assert.equal(await release("ghost", "worker-a"), false);
      assert.equal((await store.getRun("rel"))?.owner, "worker-a");
      assert.equal(await release("rel", "worker-a"), true);
      const released = await store.getRun("rel");
      assert.equal(released?.status, "waiting_approval");
      assert.equal(released?.owner, null);
      assert.equal(released?.claimedAt, null);
      assert.deepEqual(released?.pending, run.pending);
      assert.deepEqual(released?.answers, run.answers);
      assert.equal(await release("rel", "worker-a"), false, "released once");
      const listed = await store.listPendingApprovals({ runId: "rel" });
      assert.deepEqual(listed.map((row) => row.callId), run.pending.map((p) => p.callId));
      assert.equal(await store.claimRun("rel", "worker-c"), true);
      assert.equal((await store.getRun("rel"))?.owner, "worker-c");
      // A fresh run (running, never claimed) and a finished one are not released.
      await store.saveRun(waitingRun("fresh", { status: "running", pending: [] }));
      assert.equal(await release("fresh", "worker-a"), false);
      assert.equal((await store.getRun("fresh"))?.status, "running");
      await assert.rejects(release("rel", ""), TypeError);
    });

    it(`${name}.claimRun() lets exactly one of many concurrent claimers win`, async () => {
      const store = await open();
      for (let round = 0; round < 5; round++) {
        const runId = `race-${round}`;
        await store.saveRun(waitingRun(runId));
        const wins = await Promise.all(
          Array.from({ length: 8 }, (_, i) => store.claimRun(runId, `w${i}`)),
        );
        assert.equal(wins.filter(Boolean).length, 1, `round ${round}: ${wins}`);
        const winner = wins.indexOf(true);
        assert.equal((await store.getRun(runId))?.owner, `w${winner}`);
      }
    });

    if (second !== undefined) {
      it(`${name}.claimRun() lets exactly one of two connections win`, async () => {
        const store = await open();
        const other = await second(store);
        opened.push(other);
        for (let round = 0; round < 5; round++) {
          const runId = `cross-${round}`;
          await store.saveRun(waitingRun(runId));
          const wins = await Promise.all([
            store.claimRun(runId, "first"),
            other.claimRun(runId, "second"),
            store.claimRun(runId, "first-again"),
            other.claimRun(runId, "second-again"),
          ]);
          assert.equal(wins.filter(Boolean).length, 1, `round ${round}: ${wins}`);
          const owner = (await other.getRun(runId))?.owner;
          assert.equal(
            owner,
            ["first", "second", "first-again", "second-again"][wins.indexOf(true)],
          );
        }
      });
    }

    it(`${name}.answerApproval() records answers to pending calls until the run is claimed`, async () => {
      const store = await open();
      await store.saveRun(waitingRun("r1", {}, ["c1", "c2"]));
      const before = Date.now();
      assert.equal(
        await store.answerApproval("r1", "c1", {
          approve: true,
          updatedArgs: { command: "echo edited" },
          by: "alice",
        }),
        true,
      );
      assert.equal(
        await store.answerApproval("r1", "c2", { approve: false, reason: "no", by: "bob" }),
        true,
      );
      assert.equal(await store.answerApproval("r1", "c9", { approve: true }), false);
      assert.equal(await store.answerApproval("ghost", "c1", { approve: true }), false);
      const run = await store.getRun("r1");
      assert.deepEqual(run?.answers.c1?.updatedArgs, { command: "echo edited" });
      assert.equal(run?.answers.c1?.by, "alice");
      assert.ok((run?.answers.c1?.answeredAt ?? 0) >= before);
      assert.deepEqual(
        { ...run?.answers.c2, answeredAt: 0 },
        {
          approve: false,
          reason: "no",
          by: "bob",
          answeredAt: 0,
          argsHash: argsHash({ command: "echo 1" }),
        },
      );
      // The first answer wins: a second one is refused and names the first.
      await assert.rejects(
        store.answerApproval("r1", "c2", { approve: true, by: "carol" }),
        (error: unknown) =>
          error instanceof ApprovalConflictError && error.why === "already_answered" &&
          error.answer?.by === "bob" && /rejected \(no\) by bob/.test(error.message),
      );
      assert.equal((await store.getRun("r1"))?.answers.c2?.by, "bob");
      assert.equal(run?.answers.c1?.argsHash, argsHash({ command: "echo 0" }));
      assert.equal(await store.claimRun("r1", "worker"), true);
      await assert.rejects(
        store.answerApproval("r1", "c1", { approve: false }),
        (error: unknown) =>
          error instanceof ApprovalConflictError && error.why === "already_answered",
      );
      assert.equal((await store.getRun("r1"))?.answers.c1?.approve, true);
    });

    it(`${name}.answerApproval() refuses updatedArgs it would have to cut or render, and stores nothing`, async () => {
      const store = await open();
      await store.saveRun(waitingRun("big"));
      const nest = (levels: number): Record<string, unknown> => {
        let value: Record<string, unknown> = {};
        for (let i = 1; i < levels; i++) value = { a: value };
        return value;
      };
      const keys = Object.fromEntries(Array.from({ length: 1200 }, (_, i) => [`k${i}`, i]));
      const cyclic: Record<string, unknown> = {};
      cyclic.self = cyclic;
      const bad: [unknown, RegExp][] = [
        [
          { list: Array.from({ length: 1500 }, (_, i) => i) },
          /updatedArgs\.list is an array of 1500 items \(at most 1000\)/,
        ],
        [nest(70), /nests deeper than 64 levels/],
        [nest(6000), /nests deeper than 64 levels/],
        [keys, /updatedArgs is an object of 1200 keys \(at most 1000\)/],
        [{ n: 1n }, /updatedArgs\.n is a bigint/],
        [{ n: Number.NaN }, /updatedArgs\.n is NaN, not a finite number/],
        [{ when: new Date(0) }, /updatedArgs\.when is .*not a plain object/],
        [{ list: [1, undefined] }, /updatedArgs\.list\[1\] is undefined/],
        [cyclic, /updatedArgs\.self refers to itself/],
      ];
      for (const [updatedArgs, message] of bad) {
        await assert.rejects(
          store.answerApproval("big", "c1", { approve: true, updatedArgs } as never),
          (error: unknown) =>
            error instanceof TypeError &&
            /^Cannot answer approval: an answer's updatedArgs must be plain JSON/.test(
              error.message,
            ) && message.test(error.message),
        );
      }
      assert.deepEqual((await store.getRun("big"))?.answers, {});
      // At the limits exactly: kept as given.
      const edge = {
        deep: nest(63),
        list: Array.from({ length: 1000 }, (_, i) => i),
        keys: Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`k${i}`, i])),
        gone: undefined,
      };
      assert.equal(
        await store.answerApproval("big", "c1", { approve: true, updatedArgs: edge }),
        true,
      );
      const { gone: _gone, ...kept } = edge;
      assert.deepEqual((await store.getRun("big"))?.answers.c1?.updatedArgs, kept);
    });

    it(`${name}.answerApproval() refuses an answer for other arguments, after expiry, or by someone not allowed`, async () => {
      const store = await open();
      const run = waitingRun("terms", {}, ["c1", "c2", "c3"]);
      run.pending[1].expiresAt = Date.now() - 1;
      run.pending[2].answerableBy = ["ana", "bo"];
      await store.saveRun(run);
      const refused = (why: string) => (error: unknown) =>
        error instanceof ApprovalConflictError && error.why === why && error.callId !== "";
      await assert.rejects(
        store.answerApproval("terms", "c1", {
          approve: true,
          argsHash: argsHash({ command: "rm -rf /" }),
        }),
        refused("args_changed"),
      );
      await assert.rejects(
        store.answerApproval("terms", "c2", { approve: true }),
        refused("expired"),
      );
      await assert.rejects(
        store.answerApproval("terms", "c3", { approve: true, by: "mallory" }),
        refused("not_allowed"),
      );
      await assert.rejects(
        store.answerApproval("terms", "c3", { approve: true }),
        refused("not_allowed"),
      );
      assert.deepEqual((await store.getRun("terms"))?.answers, {});
      assert.equal(
        await store.answerApproval("terms", "c1", {
          approve: true,
          argsHash: argsHash({ command: "echo 0" }),
        }),
        true,
      );
      assert.equal(await store.answerApproval("terms", "c3", { approve: false, by: "bo" }), true);
      const listed = await store.listPendingApprovals({ runId: "terms" });
      assert.deepEqual(listed[2].answerableBy, ["ana", "bo"]);
      assert.ok((listed[1].expiresAt ?? Infinity) < Date.now());
    });

    it(`${name}.answerApproval() binds a change-set approval to its change set`, async () => {
      const store = await open();
      const run = waitingRun("effects", {}, ["c1", "c2", "c3"]);
      const hash = "a".repeat(64);
      for (const pending of run.pending) {
        pending.effects = {
          changes: [{ path: "victim/file", kind: "deleted", type: "file", bytesBefore: 9 }],
          count: 1,
          hash,
        };
      }
      await store.saveRun(run);
      const stored = await store.getRun("effects");
      assert.deepEqual(stored?.pending[0].effects, run.pending[0].effects);
      const refused = (error: unknown) =>
        error instanceof ApprovalConflictError && error.why === "args_changed";
      // What a screen that showed only the arguments sends, and an answer for another change set.
      const args = run.pending[0].argsHash!;
      await assert.rejects(
        store.answerApproval("effects", "c1", { approve: true, argsHash: args }),
        refused,
      );
      await assert.rejects(
        store.answerApproval("effects", "c1", { approve: true, effectsHash: "b".repeat(64) }),
        refused,
      );
      assert.deepEqual((await store.getRun("effects"))?.answers, {});
      assert.equal(
        await store.answerApproval("effects", "c1", {
          approve: true,
          argsHash: args,
          effectsHash: hash,
        }),
        true,
      );
      assert.equal(await store.answerApproval("effects", "c2", { approve: false, by: "bo" }), true);
      const answers = (await store.getRun("effects"))?.answers;
      assert.equal(answers?.c1.effectsHash, hash);
      assert.equal(answers?.c2.effectsHash, hash);
      // A retry of the same answer (a lost commit reply) is the stored one, not a conflict.
      const again = { approve: false, by: "bo", answeredAt: answers!.c2.answeredAt };
      assert.equal(await store.answerApproval("effects", "c2", again), true);
      const rows = await store.listPendingApprovals({ runId: "effects" });
      assert.equal(rows[2].effects?.hash, hash);
      await assert.rejects(
        store.saveRun({
          ...run,
          runId: "bad",
          pending: [{ ...run.pending[0], effects: { changes: [], count: 0, hash: "x" } }],
        }),
        TypeError,
      );
    });

    it(`${name}.answerApproval() lets exactly one of many concurrent answers win`, async () => {
      const store = await open();
      for (let round = 0; round < 10; round++) {
        const runId = `answer-race-${round}`;
        await store.saveRun(waitingRun(runId));
        const outcomes = await Promise.allSettled(
          Array.from(
            { length: 6 },
            (_, i) => store.answerApproval(runId, "c1", { approve: i % 2 === 0, by: `p${i}` }),
          ),
        );
        const won = outcomes.filter((o) => o.status === "fulfilled" && o.value === true);
        assert.equal(won.length, 1, `round ${round}`);
        for (const o of outcomes) {
          if (o.status === "rejected") {
            assert.ok(o.reason instanceof ApprovalConflictError, String(o.reason));
            assert.equal(o.reason.why, "already_answered");
          }
        }
        const winner = outcomes.findIndex((o) => o.status === "fulfilled");
        assert.equal((await store.getRun(runId))?.answers.c1?.by, `p${winner}`);
      }
    });

    it(`${name}.answerApproval(): two answerers at once, 100 trials, exactly one wins each`, async () => {
      // Two connections where the store has them (the answer_race test does two processes).
      const store = await open();
      const other = second === undefined ? store : await second(store);
      if (other !== store) opened.push(other);
      {
        for (let trial = 0; trial < 100; trial++) {
          const runId = `two-${trial}`;
          await store.saveRun(waitingRun(runId));
          const outcomes = await Promise.allSettled([
            store.answerApproval(runId, "c1", { approve: true, by: "ana" }),
            other.answerApproval(runId, "c1", { approve: false, reason: "no", by: "bo" }),
          ]);
          const won = outcomes.flatMap((o, i) => o.status === "fulfilled" && o.value ? [i] : []);
          assert.equal(won.length, 1, `trial ${trial}: ${JSON.stringify(outcomes)}`);
          const lost = outcomes[1 - won[0]];
          assert.ok(
            lost.status === "rejected" && lost.reason instanceof ApprovalConflictError &&
              lost.reason.why === "already_answered",
            `trial ${trial}`,
          );
          assert.equal(
            (await store.getRun(runId))?.answers.c1?.by,
            won[0] === 0 ? "ana" : "bo",
          );
        }
      }
    });

    it(`${name}.answerApproval() refuses a replayed answer and a stale one, and changes nothing`, async () => {
      const store = await open();
      await store.saveRun(waitingRun("replay", {}, ["c1", "c2"]));
      const answer = { approve: true, by: "ana", argsHash: argsHash({ command: "echo 0" }) };
      assert.equal(await store.answerApproval("replay", "c1", answer), true);
      const stored = (await store.getRun("replay"))?.answers.c1;
      // The same answer sent again (a replay): refused, naming the one that stands.
      await assert.rejects(
        store.answerApproval("replay", "c1", answer),
        (error: unknown) =>
          error instanceof ApprovalConflictError && error.why === "already_answered" &&
          error.answer?.answeredAt === stored?.answeredAt,
      );
      // A stale answer: for the arguments of another call (what someone saw earlier elsewhere).
      await assert.rejects(
        store.answerApproval("replay", "c2", { approve: true, argsHash: answer.argsHash }),
        (error: unknown) => error instanceof ApprovalConflictError && error.why === "args_changed",
      );
      // Once the run is resumed (claimed), a late answer to a call it did not wait for is not taken.
      assert.equal(await store.claimRun("replay", "resumer"), true);
      assert.equal(await store.answerApproval("replay", "c2", { approve: true }), false);
      assert.deepEqual((await store.getRun("replay"))?.answers, { c1: stored });
    });

    it(`${name}.releaseRun() turns calls the claimer had started into interrupted approvals without their answers`, async () => {
      const store = await open();
      const run = waitingRun("int", {}, ["c1", "c2"]);
      run.answers = {
        c1: { approve: true, by: "ana", answeredAt: 5 },
        c2: { approve: false, reason: "no", by: "ana", answeredAt: 5 },
      };
      await store.saveRun(run);
      assert.equal(await store.claimRun("int", "worker"), true);
      const claimed = (await store.getRun("int"))!;
      claimed.state.started = ["c1"];
      await store.saveRun(claimed);
      assert.equal(await store.releaseRun!("int", "worker"), true);
      const released = (await store.getRun("int"))!;
      assert.equal(released.pending[0].interrupted, true);
      assert.equal(released.pending[1].interrupted, undefined);
      assert.deepEqual(Object.keys(released.answers), ["c2"]);
      assert.equal(released.state.started, undefined);
      assert.equal(await store.answerApproval("int", "c1", { approve: true, by: "bo" }), true);
    });

    it(`${name}.listPendingApprovals() lists waiting runs' calls, oldest first, filtered`, async () => {
      const store = await open();
      await store.saveRun(waitingRun("late", { createdAt: 3000, sessionId: "s2" }, ["l1"]));
      await store.saveRun(waitingRun("early", { createdAt: 1000 }, ["e1", "e2"]));
      await store.saveRun(
        waitingRun("finished", { createdAt: 500, status: "completed" }, ["f1"]),
      );
      await store.saveRun(waitingRun("claimed", { createdAt: 700 }, ["k1"]));
      await store.claimRun("claimed", "w");
      await store.answerApproval("early", "e2", { approve: false, reason: "nope", by: "ann" });
      const all = await store.listPendingApprovals();
      assert.deepEqual(all.map((p) => [p.runId, p.callId]), [
        ["early", "e1"],
        ["early", "e2"],
        ["late", "l1"],
      ]);
      assert.equal(all[0].answer, undefined);
      assert.equal(all[1].answer?.reason, "nope");
      assert.equal(all[1].toolName, "bash");
      assert.deepEqual(all[1].args, { command: "echo 1" });
      assert.deepEqual(
        (await store.listPendingApprovals({ sessionId: "s2" })).map((p) => p.callId),
        ["l1"],
      );
      assert.deepEqual(
        (await store.listPendingApprovals({ runId: "early" })).map((p) => p.callId),
        ["e1", "e2"],
      );
      assert.deepEqual(
        (await store.listPendingApprovals({ callId: "e2" })).map((p) => p.runId),
        ["early"],
      );
      assert.deepEqual(await store.listPendingApprovals({ callId: "k1" }), []);
    });

    it(`${name} run methods reject after close() with StoreClosedError`, async () => {
      const store = await open();
      await store.close();
      await assert.rejects(store.saveRun(waitingRun("r1")), StoreClosedError);
      await assert.rejects(store.getRun("r1"), StoreClosedError);
      await assert.rejects(store.claimRun("r1", "w"), StoreClosedError);
      await assert.rejects(store.answerApproval("r1", "c1", { approve: true }), StoreClosedError);
      await assert.rejects(store.listPendingApprovals(), StoreClosedError);
    });
  });
}
