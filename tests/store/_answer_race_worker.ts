// A worker of the answer race test (not a test file): opens the store named by STORE (a SQLite
// file or a postgres:// URL with SCHEMA), waits until GO_AT (ms since the epoch), then answers
// call c1 of runs race-0 … race-(TRIALS-1) as WORKER, and prints one JSON line: the runs it won
// and how each other answer was refused.

import process from "node:process";
import type { SessionStore } from "../../store/mod.ts";
import { ApprovalConflictError } from "../../store/store_errors.ts";

const env = process.env;
const target = env.STORE as string;
const worker = env.WORKER as string;
const trials = Number(env.TRIALS);
setTimeout(() => process.exit(4), 120_000).unref?.();

let store: SessionStore;
if (target.startsWith("postgres://")) {
  const { PostgresStore } = await import("../../store/postgres/mod.ts");
  store = await PostgresStore.open(target, { schema: env.SCHEMA as string, max: 2 });
} else {
  const { SqliteStore } = await import("../../store/sqlite/mod.ts");
  store = await SqliteStore.open(target);
}
const wait = Number(env.GO_AT) - Date.now();
if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
const won: number[] = [];
const refused: Record<string, number> = {};
for (let i = 0; i < trials; i++) {
  try {
    const ok = await store.answerApproval(`race-${i}`, "c1", {
      approve: worker === "a",
      by: worker,
    });
    if (ok) won.push(i);
    else refused.not_waiting = (refused.not_waiting ?? 0) + 1;
  } catch (error) {
    const key = error instanceof ApprovalConflictError ? error.why : `other: ${String(error)}`;
    refused[key] = (refused[key] ?? 0) + 1;
  }
}
await store.close();
process.stdout.write(`${JSON.stringify({ worker, won, refused })}\n`);
process.exit(0);
