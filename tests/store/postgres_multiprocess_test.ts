// Many processes on one PostgreSQL schema: 8 agent workers × 25 scripted sessions (messages, tool
// calls, signals, one approval each), a subscriber following everything and an approver answering
// every approval as it appears, while the test terminates their database connections three times.
// Then a writer killed with SIGKILL mid-run. Each process runs tests/store/postgres_mp_worker.ts
// on the runtime running this test.

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import process from "node:process";
import { PostgresStore } from "../../store/postgres/mod.ts";
import {
  adminSql,
  assertPostgresAnswers,
  dropSchemas,
  freshSchema,
  PG_URL,
  runnerArgs,
} from "./postgres_fixture.ts";

const WORKER_FILE = fileURLToPath(new URL("./postgres_mp_worker.ts", import.meta.url));
const WORKERS = 8;
const SESSIONS = Number(process.env.HOOKSCOPE_MP_SESSIONS || 25);
const SIGNALS_PER_SESSION = 9;
const MESSAGES_PER_SESSION = 9;

const admin = adminSql(2);
const schemas = new Set<string>();

interface Worker {
  readonly child: ChildProcess;
  readonly lines: string[];
  readonly stderr: string[];
  /** Resolves with the first line that starts with `prefix`. */
  line(prefix: string, ms?: number): Promise<string>;
  /** Resolves with the exit code. */
  readonly exited: Promise<number | null>;
}

function startWorker(env: Record<string, string>): Worker {
  const { command, args } = runnerArgs(WORKER_FILE);
  const child = spawn(command, args, {
    env: { ...process.env, HOOKSCOPE_PG_URL: PG_URL, NO_COLOR: "1", ...env },
    // stdin stays open while this process lives: the worker exits when it closes.
    stdio: ["pipe", "pipe", "pipe"],
  });
  const lines: string[] = [];
  const stderr: string[] = [];
  const waiters: Array<() => void> = [];
  let buffered = "";
  child.stdout!.setEncoding("utf8");
  child.stdout!.on("data", (chunk: string) => {
    buffered += chunk;
    const parts = buffered.split("\n");
    buffered = parts.pop() ?? "";
    lines.push(...parts);
    for (const wake of waiters.splice(0)) wake();
  });
  child.stderr!.setEncoding("utf8");
  child.stderr!.on("data", (chunk: string) => void stderr.push(chunk));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const line = async (prefix: string, ms = 600_000): Promise<string> => {
    const deadline = Date.now() + ms;
    for (;;) {
      const found = lines.find((l) => l.startsWith(prefix));
      if (found !== undefined) return found;
      if (child.exitCode !== null || child.signalCode !== null) {
        // Let the last output arrive.
        await new Promise((resolve) => setTimeout(resolve, 100));
        const late = lines.find((l) => l.startsWith(prefix));
        if (late !== undefined) return late;
        throw new Error(
          `${env.ROLE} ${env.WORKER ?? ""} exited (${child.exitCode}) before "${prefix}": ${
            stderr.join("").slice(-2000)
          }`,
        );
      }
      if (Date.now() > deadline) {
        throw new Error(`${env.ROLE} ${env.WORKER ?? ""} printed no "${prefix}" within ${ms} ms`);
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 200);
        waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  };
  return { child, lines, stderr, line, exited };
}

function result<T>(line: string): T {
  return JSON.parse(line.slice("RESULT ".length)) as T;
}

async function terminateBackends(schema: string): Promise<number> {
  const rows = await admin`SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity
    WHERE datname = current_database() AND pid <> pg_backend_pid()
      AND query LIKE ${`%${schema}%`}`;
  return rows.length;
}

describe("PostgresStore across processes", () => {
  const started: Worker[] = [];
  before(() => assertPostgresAnswers(admin));
  after(async () => {
    for (const worker of started) {
      if (worker.child.exitCode === null && worker.child.signalCode === null) {
        worker.child.kill("SIGKILL");
      }
    }
    await dropSchemas(admin, schemas).catch(() => {});
    await admin.end({ timeout: 5 });
  });

  it(
    `${WORKERS} agent processes × ${SESSIONS} sessions, a subscriber and an approver lose, repeat and reorder nothing, with connections terminated mid-run`,
    // Ten processes share two cores here: on a loaded machine this takes minutes, not seconds.
    // Every wait below has its own deadline; this one only bounds the whole.
    { timeout: 900_000 },
    async () => {
      const schema = freshSchema("hs_mp");
      schemas.add(schema);
      const store = await PostgresStore.open(PG_URL, { schema });
      const total = WORKERS * SESSIONS;
      const subscriber = startWorker({
        ROLE: "subscriber",
        SCHEMA: schema,
        EXPECT: String(total * SIGNALS_PER_SESSION),
      });
      const approver = startWorker({ ROLE: "approver", SCHEMA: schema, EXPECT: String(total) });
      started.push(subscriber, approver);
      await Promise.all([subscriber.line("READY", 300_000), approver.line("READY", 300_000)]);
      const agents = Array.from({ length: WORKERS }, (_, w) =>
        startWorker({
          ROLE: "agent",
          SCHEMA: schema,
          WORKER: String(w),
          SESSIONS: String(SESSIONS),
        }));
      started.push(...agents);

      // Terminate every connection of the schema three times while the agents work.
      let terminated = 0;
      for (let round = 0; round < 3; round++) {
        const deadline = Date.now() + 60_000;
        const target = Math.ceil(((round + 1) * total) / 4);
        while (Date.now() < deadline) {
          const [{ n }] = await admin.unsafe(
            `SELECT count(*)::int AS n FROM "${schema}".sessions`,
          );
          if (n >= target || agents.every((a) => a.child.exitCode !== null)) break;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        terminated += await terminateBackends(schema);
      }

      const agentResults = await Promise.all(
        agents.map(async (a) => result<{ reported: number }>(await a.line("RESULT"))),
      );
      const approverResult = result<{ answered: number; claimed: number }>(
        await approver.line("RESULT"),
      );
      const seen = result<{
        messages: number;
        ordered: boolean;
        signals: [string, number, string, number][];
      }>(await subscriber.line("RESULT"));
      for (const worker of [...agents, approver, subscriber]) {
        assert.equal(await worker.exited, 0, worker.stderr.join(""));
      }
      // postgres.js 3.4.9 can throw an uncatchable TypeError from a write scheduled on a connection
      // the server has just closed (porsager/postgres#1154, #1208); the store's guard
      // (store/postgres/_client_guard.ts) keeps it from ending the worker on every runtime.
      assert.ok(terminated > 0, "no connection was terminated");
      process.stderr.write(
        `# ${terminated} connections terminated; ${
          agentResults.reduce((n, r) => n + r.reported, 0)
        } retries reported by agents; approver claimed ${approverResult.claimed} of ${total}\n`,
      );

      // Everything stored once, every session's sequence contiguous and in script order.
      const sessions = await store.listSessions();
      assert.equal(sessions.length, total);
      assert.ok(sessions.every((s) => s.status === "completed"));
      const stored = new Set<string>();
      for (let w = 0; w < WORKERS; w++) {
        for (let i = 0; i < SESSIONS; i++) {
          const sid = `w${w}-s${i}`;
          const signals = await store.listSessionSignals(sid);
          assert.deepEqual(
            signals.map((s) => s.seq),
            Array.from({ length: SIGNALS_PER_SESSION }, (_, k) => k + 1),
            sid,
          );
          assert.deepEqual(
            signals.map((s) => s.payload.step),
            Array.from({ length: SIGNALS_PER_SESSION }, (_, k) => k + 1),
            `${sid} steps in seq order`,
          );
          for (const s of signals) stored.add(`${sid}#${s.seq}`);
          const messages = await store.listMessages({ sessionId: sid });
          assert.equal(new Set(messages.map((m) => m.id)).size, MESSAGES_PER_SESSION, sid);
          assert.equal(messages.length, MESSAGES_PER_SESSION, sid);
          // The approved call ran exactly once (by whichever process claimed the run); a rejected
          // one never ran.
          const approved = i % 4 !== 3;
          const c2 = signals.filter((s) => s.payload.callId === `${sid}-c2`);
          assert.equal(c2.filter((s) => s.kind === "ToolRan").length, approved ? 1 : 0, sid);
          assert.equal(c2.filter((s) => s.kind === "ToolSkipped").length, approved ? 0 : 1, sid);
          const run = await store.getRun(`${sid}-run`);
          assert.equal(run?.status, "completed", sid);
          assert.equal(run?.answers[`${sid}-c2`]?.approve, approved, sid);
        }
      }
      assert.equal(approverResult.answered, total);

      // The subscriber saw every signal exactly once, in commit order.
      assert.equal(seen.ordered, true);
      const keys = seen.signals.map(([sid, seq]) => `${sid}#${seq}`);
      assert.equal(keys.length, total * SIGNALS_PER_SESSION);
      assert.equal(new Set(keys).size, keys.length);
      assert.deepEqual(new Set(keys), stored);
      assert.equal(seen.messages, total * MESSAGES_PER_SESSION);
      await store.close();
    },
  );

  it(
    "a writer killed with SIGKILL mid-run leaves no partial batch and loses nothing acknowledged",
    {
      timeout: 600_000,
    },
    async () => {
      const schema = freshSchema("hs_kill");
      schemas.add(schema);
      const store = await PostgresStore.open(PG_URL, { schema });
      const writer = startWorker({ ROLE: "killable", SCHEMA: schema });
      started.push(writer);
      await writer.line("ACK 15", 300_000);
      writer.child.kill("SIGKILL");
      await writer.exited;
      const acked = writer.lines.filter((l) => l.startsWith("ACK ")).map((l) => Number(l.slice(4)));
      // Let the server finish whatever the killed process had sent.
      const deadline = Date.now() + 20_000;
      while (Date.now() < deadline) {
        const [{ n }] = await admin`SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'active'
          AND query LIKE ${`%${schema}%`}`;
        if (n === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const groups = new Map<number, { signals: number; messages: number }>();
      for (const sid of ["k-0", "k-1", "k-2"]) {
        const signals = await store.listSessionSignals(sid);
        assert.deepEqual(signals.map((s) => s.seq), signals.map((_, k) => k + 1), sid);
        for (const s of signals) {
          const g = groups.get(s.payload.group as number) ?? { signals: 0, messages: 0 };
          g.signals += 1;
          groups.set(s.payload.group as number, g);
        }
        for (const m of await store.listMessages({ sessionId: sid })) {
          const group = (m.content as { group: number }).group;
          const g = groups.get(group) ?? { signals: 0, messages: 0 };
          g.messages += 1;
          groups.set(group, g);
        }
      }
      for (const group of acked) assert.ok(groups.has(group), `acknowledged group ${group} lost`);
      for (const [group, counts] of groups) {
        assert.deepEqual(counts, { signals: 20, messages: 5 }, `group ${group} is partial`);
      }
      // At most the one group in flight when the process died is stored without an ACK.
      assert.ok(groups.size - acked.length <= 1, `${groups.size} groups, ${acked.length} acked`);
      await store.close();
    },
  );
});
