// A worker process of the PostgreSQL multi-process test (not a test file). ROLE picks what it does:
// - agent:      runs SESSIONS scripted agent sessions (messages, tool calls, signals, one approval
//               each, CONCURRENCY at a time) and prints RESULT {reported}
// - subscriber: follows every change from the start; prints READY, then RESULT with every signal
//               seen once EXPECT signals have arrived (and a short grace for extras)
// - approver:   answers every approval as it is requested (every fourth rejected) and races the
//               agent to claim and run it; prints READY, then RESULT after EXPECT answers
// - killable:   writes groups of 20 signals + 5 messages, printing ACK n after each, until killed

import process from "node:process";
import { PostgresStore, type StoreChange } from "../../store/postgres/mod.ts";
import type { RunRecord } from "../../store/mod.ts";

const env = process.env;
const url = env.HOOKSCOPE_PG_URL as string;
const schema = env.SCHEMA as string;
const role = env.ROLE as string;
const worker = Number(env.WORKER ?? 0);

// Never outlive the test: exit when the parent goes away (stdin closes) or after a deadline.
process.stdin.on("end", () => process.exit(3));
process.stdin.on("close", () => process.exit(3));
process.stdin.resume();
setTimeout(() => {
  process.stderr.write(`worker ${role} ${worker} gave up after its deadline\n`);
  process.exit(4);
}, Number(env.WORKER_DEADLINE_MS || 840_000)).unref?.();

let reported = 0;
const store = await PostgresStore.open(url, {
  schema,
  max: 4,
  timeoutMs: 60_000,
  onError: () => {
    reported += 1;
  },
});

function say(line: string): void {
  process.stdout.write(`${line}\n`);
}

function sig(sessionId: string, kind: string, payload: Record<string, unknown>): Promise<void> {
  return store.insertSessionSignal({ sessionId, kind, opId: "", ts: Date.now(), payload });
}

function msg(
  id: string,
  sessionId: string,
  role: "system" | "user" | "assistant" | "action_request" | "action_response",
  content: unknown,
): Promise<void> {
  return store.insertMessage({
    id,
    role,
    content,
    sender: null,
    recipient: null,
    branchId: `${sessionId}-b`,
    sessionId,
    createdAt: Date.now(),
  });
}

/** Runs (or skips, when rejected) an approved call of a claimed run, then completes the run. */
async function finishClaimed(runId: string, runner: string): Promise<void> {
  const run = await store.getRun(runId) as RunRecord;
  const callId = run.pending[0].callId;
  const answer = run.answers[callId];
  const sessionId = run.sessionId as string;
  if (answer?.approve) {
    await sig(sessionId, "ToolRan", { callId, runner, step: 8 });
    await msg(`${callId}-response`, sessionId, "action_response", { ran: true, runner });
  } else {
    await sig(sessionId, "ToolSkipped", { callId, runner, step: 8 });
    await msg(`${callId}-response`, sessionId, "action_response", { ran: false, runner });
  }
  await store.saveRun({ ...run, status: "completed", pending: [], updatedAt: Date.now() });
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function agentSession(i: number): Promise<void> {
  const sid = `w${worker}-s${i}`;
  const me = `worker-${worker}`;
  await store.createSession({ id: sid, status: "running", startedAt: Date.now(), agentName: me });
  await sig(sid, "SessionStart", { step: 1 });
  await Promise.all([
    msg(`${sid}-m1`, sid, "system", "be careful"),
    msg(`${sid}-m2`, sid, "user", "go"),
  ]);
  await sig(sid, "MessageAdded", { step: 2 });
  await sig(sid, "MessageAdded", { step: 3 });
  const c1 = `${sid}-c1`;
  await msg(`${sid}-m3`, sid, "assistant", { toolCalls: [c1] });
  await msg(`${c1}-request`, sid, "action_request", { callId: c1 });
  await sig(sid, "ToolCall", { callId: c1, step: 4 });
  await sig(sid, "ToolRan", { callId: c1, runner: me, step: 5 });
  await msg(`${c1}-response`, sid, "action_response", { ran: true, runner: me });
  const c2 = `${sid}-c2`;
  const runId = `${sid}-run`;
  await msg(`${sid}-m4`, sid, "assistant", { toolCalls: [c2] });
  await msg(`${c2}-request`, sid, "action_request", { callId: c2 });
  // Follow the session from here: the approver's answer arrives as a signal.
  const controller = new AbortController();
  const changes = store.subscribe({ sessionId: sid, signal: controller.signal });
  await changes.ready;
  const now = Date.now();
  await store.saveRun({
    runId,
    sessionId: sid,
    branchId: `${sid}-b`,
    status: "waiting_approval",
    stoppedBy: "approval",
    pending: [{
      runId,
      callId: c2,
      toolName: "bash",
      args: { command: `echo ${i}` },
      requestedAt: now,
    }],
    answers: {},
    state: {
      turn: 2,
      maxTurns: 8,
      toolCalls: [{ id: c2, name: "bash", arguments: "{}" }],
      done: [],
    },
    owner: null,
    claimedAt: null,
    error: null,
    createdAt: now,
    updatedAt: now,
  });
  await sig(sid, "ApprovalRequested", { runId, callId: c2, step: 6 });
  for await (const change of changes) {
    if (change.type === "signal" && change.kind === "ApprovalAnswered") break;
  }
  controller.abort();
  if (await store.claimRun(runId, me)) {
    await finishClaimed(runId, me);
  } else {
    await waitFor("the other claimer to finish", async () => {
      const run = await store.getRun(runId);
      return run?.status === "completed" ? run : undefined;
    });
  }
  await msg(`${sid}-m5`, sid, "assistant", "done");
  await sig(sid, "SessionEnd", { step: 9 });
  await store.updateSession(sid, { status: "completed", endedAt: Date.now() });
}

async function agent(): Promise<void> {
  const sessions = Number(env.SESSIONS);
  const concurrency = Number(env.CONCURRENCY ?? 5);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < sessions) {
        const i = next++;
        await agentSession(i);
      }
    }),
  );
  say(`RESULT ${JSON.stringify({ reported })}`);
}

async function subscriber(): Promise<void> {
  const expect = Number(env.EXPECT);
  const controller = new AbortController();
  const changes = store.subscribe({ afterSeq: 0, signal: controller.signal });
  await changes.ready;
  say("READY");
  const signals: [string, number, string, number][] = [];
  let messages = 0;
  let lastChange = 0;
  let ordered = true;
  let grace: ReturnType<typeof setTimeout> | undefined;
  for await (const change of changes as AsyncIterable<StoreChange>) {
    if (change.changeSeq <= lastChange) ordered = false;
    lastChange = change.changeSeq;
    if (change.type === "message") messages += 1;
    else signals.push([change.sessionId, change.seq, change.kind, change.changeSeq]);
    if (signals.length === expect && grace === undefined) {
      // Wait a little for anything extra (a duplicate would show up here), then stop.
      grace = setTimeout(() => controller.abort(), 1500);
    }
  }
  clearTimeout(grace);
  say(`RESULT ${JSON.stringify({ reported, messages, ordered, signals })}`);
}

async function approver(): Promise<void> {
  const expect = Number(env.EXPECT);
  const controller = new AbortController();
  const changes = store.subscribe({ afterSeq: 0, signal: controller.signal });
  await changes.ready;
  say("READY");
  let answered = 0;
  let claimed = 0;
  const work: Promise<void>[] = [];
  for await (const change of changes) {
    if (change.type !== "signal" || change.kind !== "ApprovalRequested") continue;
    const { runId, callId } = change.payload as { runId: string; callId: string };
    const index = Number(/-s(\d+)$/.exec(change.sessionId)?.[1]);
    const approve = index % 4 !== 3;
    work.push((async () => {
      const ok = await store.answerApproval(
        runId,
        callId,
        approve
          ? { approve: true, by: "approver" }
          : { approve: false, reason: "no", by: "approver" },
      );
      if (!ok) throw new Error(`could not answer ${callId}`);
      await sig(change.sessionId, "ApprovalAnswered", { runId, callId, approve, step: 7 });
      // Race the agent for the run: exactly one of us runs the call.
      if (await store.claimRun(runId, "approver")) {
        claimed += 1;
        await finishClaimed(runId, "approver");
      }
    })());
    answered += 1;
    if (answered === expect) break;
  }
  await Promise.all(work);
  controller.abort();
  say(`RESULT ${JSON.stringify({ reported, answered, claimed })}`);
}

async function killable(): Promise<void> {
  for (let group = 1;; group++) {
    const sid = `k-${group % 3}`;
    const writes: Promise<void>[] = [];
    for (let i = 0; i < 20; i++) writes.push(sig(sid, "K", { group, i }));
    for (let i = 0; i < 5; i++) writes.push(msg(`g${group}-m${i}`, sid, "user", { group, i }));
    await Promise.all(writes);
    say(`ACK ${group}`);
  }
}

try {
  if (role === "agent") await agent();
  else if (role === "subscriber") await subscriber();
  else if (role === "approver") await approver();
  else if (role === "killable") await killable();
  else throw new Error(`unknown ROLE ${role}`);
  await store.close();
  process.exit(0);
} catch (error) {
  process.stderr.write(`worker ${role} ${worker} failed: ${(error as Error).stack}\n`);
  process.exit(1);
}
