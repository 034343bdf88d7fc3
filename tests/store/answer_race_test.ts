// Two processes answer the same approvals at once, 100 trials on SQLite and on PostgreSQL: the
// store accepts exactly one answer for each (first wins), the other is refused with
// ApprovalConflictError "already_answered", and the stored answer is the winner's.

import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { SessionStore } from "../../store/mod.ts";
import { SqliteStore } from "../../store/sqlite/mod.ts";
import { PostgresStore } from "../../store/postgres/mod.ts";
import { waitingRun } from "./conformance_runs.ts";
import {
  adminSql,
  assertPostgresAnswers,
  dropSchemas,
  freshSchema,
  PG_URL,
  runnerArgs,
} from "./postgres_fixture.ts";

const TRIALS = 100;
const WORKER = join(dirname(fileURLToPath(import.meta.url)), "_answer_race_worker.ts");
const dir = mkdtempSync(join(tmpdir(), "hookscope-answer-race-"));
const schemas: string[] = [];
after(async () => {
  rmSync(dir, { recursive: true, force: true });
  const admin = adminSql();
  await dropSchemas(admin, schemas).catch(() => {});
  await admin.end();
});

interface Outcome {
  worker: string;
  won: number[];
  refused: Record<string, number>;
}

function runWorker(env: Record<string, string>): Promise<Outcome> {
  const { command, args } = runnerArgs(WORKER);
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      env: { ...process.env, ...env, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk) => (out += chunk));
    child.stderr.on("data", (chunk) => (err += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), 150_000);
    child.once("exit", (code) => {
      clearTimeout(timer);
      if (code !== 0) reject(new Error(`worker ${env.WORKER} exited ${code}: ${err}`));
      else resolve(JSON.parse(out.trim().split("\n").at(-1)!) as Outcome);
    });
  });
}

async function race(store: SessionStore, env: Record<string, string>): Promise<void> {
  for (let i = 0; i < TRIALS; i++) await store.saveRun(waitingRun(`race-${i}`));
  // Both start answering at the same moment, well after both have opened the store.
  const goAt = String(Date.now() + 4000);
  const [a, b] = await Promise.all(
    ["a", "b"].map((worker) =>
      runWorker({ ...env, WORKER: worker, TRIALS: String(TRIALS), GO_AT: goAt })
    ),
  );
  for (const outcome of [a, b]) {
    assert.deepEqual(Object.keys(outcome.refused).filter((k) => k !== "already_answered"), []);
  }
  const winners = new Map<number, string>();
  for (const outcome of [a, b]) {
    for (const i of outcome.won) {
      assert.equal(winners.has(i), false, `trial ${i} was won twice`);
      winners.set(i, outcome.worker);
    }
  }
  assert.equal(winners.size, TRIALS, "every trial has exactly one winner");
  for (let i = 0; i < TRIALS; i++) {
    const run = await store.getRun(`race-${i}`);
    assert.equal(run?.answers.c1?.by, winners.get(i), `trial ${i}`);
    assert.equal(run?.answers.c1?.approve, winners.get(i) === "a");
  }
  // Both won some: the answers really raced (stated, not asserted as a speed).
  console.log(`answer race: a won ${a.won.length}, b won ${b.won.length} of ${TRIALS}`);
}

describe("two processes answering the same approvals at once", () => {
  it(`SQLite: exactly one answer of two wins in each of ${TRIALS} trials`, async () => {
    const file = join(dir, "race.db");
    const store = await SqliteStore.open(file);
    try {
      await race(store, { STORE: file });
    } finally {
      await store.close();
    }
  });

  it(`PostgreSQL: exactly one answer of two wins in each of ${TRIALS} trials`, async () => {
    const admin = adminSql();
    try {
      await assertPostgresAnswers(admin);
    } finally {
      await admin.end();
    }
    const schema = freshSchema("hs_answer_race");
    schemas.push(schema);
    const store = await PostgresStore.open(PG_URL, { schema });
    try {
      await race(store, { STORE: PG_URL, SCHEMA: schema });
    } finally {
      await store.close();
    }
  });
});
