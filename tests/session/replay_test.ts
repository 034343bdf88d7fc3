// replayDecisions over recorded sessions: a few hundred real act() calls recorded in a store,
// then replayed under the same, a stricter and a broken policy; and a Claude Code session
// recorded through answerClaudeEvent. Nothing is written to the store during a replay.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import {
  type DecisionChange,
  MemoryStore,
  type Policy,
  replayDecisions,
  Session,
  Tool,
} from "../../mod.ts";
import { REPLAY_SESSION_NAME } from "../../session/mod.ts";
import { answerClaudeEvent } from "../../claude/mod.ts";

const noRm: Policy = (session) =>
  session.hooks.on(
    "tool.pre",
    ({ args }) =>
      String(args.command).startsWith("rm ") ? { decision: "deny", reason: "no rm" } : undefined,
    { name: "no-rm" },
  );
const noCurl: Policy = (session) =>
  session.hooks.on(
    "tool.pre",
    ({ args }) =>
      String(args.command).startsWith("curl ")
        ? { decision: "deny", reason: "no network" }
        : undefined,
    { name: "no-curl" },
  );
const both: Policy = (session) => {
  const a = noRm(session);
  const b = noCurl(session);
  return () => {
    if (typeof a === "function") a();
    if (typeof b === "function") b();
  };
};

const COMMANDS = ["ls", "rm -rf build", "curl https://example.test", "git status", "echo hi"];

async function recorded(
  calls: number,
): Promise<{ store: MemoryStore; sessionId: string; ran: string[] }> {
  const store = new MemoryStore();
  const session = new Session({ store });
  await session.start();
  const ran: string[] = [];
  session.defaultBranch.actions.register(
    new Tool({
      name: "bash",
      description: "run",
      inputSchema: z.object({ command: z.string() }),
      execute: ({ command }: { command: string }) => {
        ran.push(command);
        return `ran ${command}`;
      },
    }),
  );
  noRm(session);
  for (let i = 0; i < calls; i++) {
    await session.defaultBranch.act({
      function: "bash",
      arguments: { command: COMMANDS[i % COMMANDS.length] },
    })
      .catch(() => {});
  }
  await session.drainSignals();
  return { store, sessionId: session.id, ran };
}

async function collect(iterable: AsyncIterable<DecisionChange>): Promise<DecisionChange[]> {
  const out: DecisionChange[] = [];
  for await (const change of iterable) out.push(change);
  return out;
}

describe("replayDecisions", () => {
  it("a stricter policy shows exactly the calls it newly denies; the same policy shows none", async () => {
    const { store, sessionId, ran } = await recorded(300);
    assert.equal(ran.length, 240); // every fifth call (rm) was denied then
    const same = await collect(replayDecisions(store, sessionId, noRm));
    assert.deepEqual(same, []);
    const stricter = await collect(replayDecisions(store, sessionId, both));
    assert.equal(stricter.length, 60);
    for (const change of stricter) {
      assert.deepEqual(change.args, { command: "curl https://example.test" });
      assert.equal(change.recorded, "none");
      assert.equal(change.replayed, "deny");
      assert.equal(change.hook, "no-curl");
      assert.equal(change.reason, "no network");
      assert.equal(change.sessionId, sessionId);
    }
    // A laxer policy lets the recorded denials through.
    const laxer = await collect(replayDecisions(store, sessionId, noCurl));
    assert.equal(laxer.filter((c) => c.recorded === "deny" && c.replayed === "none").length, 60);
    assert.equal(laxer.filter((c) => c.replayed === "deny").length, 60);
  });

  it("a policy that throws shows its error per call and the replay goes on; nothing is written", async () => {
    const { store, sessionId } = await recorded(50);
    const before = JSON.stringify(await store.listSessionSignals(sessionId)) +
      JSON.stringify(await store.listMessages({ sessionId }));
    let names: (string | null)[] = [];
    const broken: Policy = (session) => {
      names.push(session.name);
      return session.hooks.on("tool.pre", ({ args }) => {
        if (args.command === "git status") throw new Error("policy bug");
        return undefined;
      }, { name: "buggy" });
    };
    const changes = await collect(
      replayDecisions(store, sessionId, broken, { includeUnchanged: true }),
    );
    assert.equal(changes.length, 50);
    const failed = changes.filter((c) => c.error !== undefined);
    assert.equal(failed.length, 10);
    for (const change of failed) {
      assert.equal(change.replayed, "deny");
      assert.match(change.error ?? "", /policy bug/);
      assert.equal(change.changed, true);
    }
    assert.deepEqual(names, [REPLAY_SESSION_NAME]);
    const after = JSON.stringify(await store.listSessionSignals(sessionId)) +
      JSON.stringify(await store.listMessages({ sessionId }));
    assert.equal(after, before);
    names = [];
  });

  it("a policy that never answers ends at its deadline per call", async () => {
    const { store, sessionId } = await recorded(3);
    const hanging: Policy = (session) =>
      session.hooks.on("tool.pre", () => new Promise(() => {}), {
        name: "hang",
        timeoutMs: 60_000,
      });
    const started = Date.now();
    const changes = await collect(replayDecisions(store, sessionId, hanging, { timeoutMs: 300 }));
    assert.equal(changes.length, 3);
    assert.ok(
      changes.every((c) =>
        c.replayed === "deny" && /did not answer within 300 ms/.test(c.error ?? "")
      ),
    );
    assert.ok(Date.now() - started < 30_000);
  });

  it("an async policy is awaited before the replay: its hooks count; a setup that rejects or hangs denies every call", async () => {
    const { store, sessionId } = await recorded(5);
    let undone = 0;
    const asyncStricter = async (session: Session) => {
      await Promise.resolve();
      const off = session.hooks.on("tool.pre", () => ({ decision: "deny", reason: "no" }), {
        name: "deny-all",
      });
      return () => {
        undone++;
        off();
      };
    };
    const changes = await collect(replayDecisions(store, sessionId, asyncStricter));
    // Every call but the recorded rm denial changes to deny.
    assert.equal(changes.length, 4);
    assert.ok(changes.every((c) => c.replayed === "deny" && c.hook === "deny-all"));
    assert.equal(undone, 1);
    const rejecting = async (): Promise<void> => {
      await Promise.resolve();
      throw new Error("setup broke");
    };
    const failed = await collect(
      replayDecisions(store, sessionId, rejecting, { includeUnchanged: true }),
    );
    assert.equal(failed.length, 5);
    for (const change of failed) {
      assert.equal(change.replayed, "deny");
      assert.match(change.error ?? "", /Cannot apply the policy: its setup rejected: setup broke/);
    }
    const hanging = (): Promise<void> => new Promise(() => {});
    const started = Date.now();
    const timedOut = await collect(replayDecisions(store, sessionId, hanging, { timeoutMs: 300 }));
    assert.equal(timedOut.length, 5); // a failure is reported for every call, as a hook's is
    assert.ok(timedOut.every((c) => /its setup did not finish within 300 ms/.test(c.error ?? "")));
    assert.ok(Date.now() - started < 30_000);
  });

  it("replays the arguments the model sent, not the rewritten ones, and reports a changed rewrite", async () => {
    const store = new MemoryStore();
    const session = new Session({ store });
    await session.start();
    session.defaultBranch.actions.register(
      new Tool({
        name: "bash",
        description: "run",
        inputSchema: z.object({ command: z.string() }),
        execute: ({ command }: { command: string }) => command,
      }),
    );
    session.hooks.on(
      "tool.pre",
      ({ args }) =>
        args.command === "ls"
          ? { decision: "allow", updatedArgs: { command: "ls -la" } }
          : undefined,
    );
    await session.defaultBranch.act({ function: "bash", arguments: { command: "ls" } });
    await session.drainSignals();
    const seen: unknown[] = [];
    const changes = await collect(
      replayDecisions(store, session.id, (s) =>
        s.hooks.on("tool.pre", ({ args }) => {
          seen.push(args);
          return args.command === "ls"
            ? { decision: "allow", updatedArgs: { command: "ls -l" } }
            : undefined;
        })),
    );
    // The policy first sees the model's arguments (a rewrite is then re-checked by the chain).
    assert.deepEqual(seen[0], { command: "ls" });
    assert.equal(changes.length, 1);
    assert.equal(changes[0].recorded, "allow");
    assert.deepEqual(changes[0].updatedArgs, { command: "ls -l" });
  });

  it("replays a Claude Code session recorded by answerClaudeEvent", async () => {
    const store = new MemoryStore();
    const session = new Session({ id: "claude-s1", store });
    await session.start();
    noRm(session);
    for (const [i, command] of ["rm -rf x", "curl https://example.test", "ls"].entries()) {
      await answerClaudeEvent(session, {
        session_id: "claude-s1",
        hook_event_name: "PreToolUse",
        tool_name: "Bash",
        tool_input: { command },
        tool_use_id: `toolu_${i}`,
      });
    }
    const changes = await collect(replayDecisions(store, "claude-s1", noCurl));
    assert.deepEqual(changes.map((c) => [c.callId, c.toolName, c.recorded, c.replayed]), [
      ["toolu_0", "Bash", "deny", "none"],
      ["toolu_1", "Bash", "none", "deny"],
    ]);
  });
});
