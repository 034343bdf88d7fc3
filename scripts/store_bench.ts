// Signal write throughput and latency into PostgreSQL vs SQLite vs memory, for 1, 4 and 8 writer
// processes (a benchmark, not a test). Each writer process opens its own store (PostgreSQL: one
// schema shared by all; SQLite: one WAL file shared by all; memory: a store per process, so
// "memory" is the ceiling of one process, not a shared store) and writes signals of its own
// session in two modes:
//   awaited    one insertSessionSignal at a time, each awaited: the per-signal latency
//   pipelined  64 signals in flight per writer: the throughput, batching included
// Writers start together; signals/s is the total over the wall time of the slowest writer. The
// last column is the machine's 1-minute load average when the row started: on a shared machine,
// compare rows taken at a similar load.
//
//   node_modules/.bin/deno run -A scripts/store_bench.ts [--writers 1,4,8] [--stores postgres,sqlite,memory]
//
// BENCH_PG_SYNCHRONOUS_COMMIT=off measures PostgresStore's synchronousCommit: "off" option.
//
// Uses HOOKSCOPE_PG_URL (default postgres://root@127.0.0.1:5432/test) and drops its schema.

import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { MemoryStore, type SessionStore } from "../store/mod.ts";
import { SqliteStore } from "../store/sqlite/mod.ts";
import { PostgresStore } from "../store/postgres/mod.ts";
import {
  adminSql,
  assertPostgresAnswers,
  dropSchemas,
  freshSchema,
  PG_URL,
  runnerArgs,
} from "../tests/store/postgres_fixture.ts";

const AWAITED = 400;
const PIPELINED = 4000;
const WINDOW = 64;

interface ChildResult {
  failed: number;
  firstError: string;
  awaited: { ms: number; p50: number; p99: number };
  pipelined: { ms: number; batches?: number };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
}

async function openStore(kind: string, target: string): Promise<SessionStore> {
  if (kind === "postgres") {
    const synchronousCommit = process.env.BENCH_PG_SYNCHRONOUS_COMMIT as "on" | "off" | undefined;
    return await PostgresStore.open(PG_URL, { schema: target, max: 4, synchronousCommit });
  }
  if (kind === "sqlite") return await SqliteStore.open(target);
  return new MemoryStore();
}

/** One writer: waits for "go" on stdin, writes, prints its timings. */
async function child(kind: string, target: string, writer: number): Promise<void> {
  const store = await openStore(kind, target);
  const sessionId = `bench-${writer}-${process.pid}`;
  let failed = 0;
  let firstError = "";
  const signal = (i: number) =>
    store.insertSessionSignal({
      sessionId,
      kind: "BenchSignal",
      opId: "",
      ts: Date.now(),
      payload: { i, text: "a typical small payload", nested: { ok: true } },
    }).catch((error: Error) => {
      failed += 1;
      firstError ||= error.message;
    });
  process.stdout.write("READY\n");
  await new Promise<void>((resolve) => process.stdin.once("data", () => resolve()));
  const latencies: number[] = [];
  let start = performance.now();
  for (let i = 0; i < AWAITED; i++) {
    const t = performance.now();
    await signal(i);
    latencies.push(performance.now() - t);
  }
  const awaitedMs = performance.now() - start;
  latencies.sort((a, b) => a - b);
  const batchesBefore = store instanceof PostgresStore ? store.info().writeBatches : 0;
  start = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: WINDOW }, async () => {
      while (next < PIPELINED) await signal(AWAITED + next++);
    }),
  );
  const pipelinedMs = performance.now() - start;
  const result: ChildResult = {
    failed,
    firstError,
    awaited: { ms: awaitedMs, p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) },
    pipelined: {
      ms: pipelinedMs,
      ...(store instanceof PostgresStore
        ? { batches: store.info().writeBatches - batchesBefore }
        : {}),
    },
  };
  process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
  await store.close();
  process.exit(0);
}

async function runGroup(kind: string, target: string, writers: number): Promise<ChildResult[]> {
  const { command, args } = runnerArgs(fileURLToPath(import.meta.url));
  const children = Array.from({ length: writers }, (_, w) => {
    const proc = spawn(command, [...args, "--child", kind, target, String(w)], {
      stdio: ["pipe", "pipe", "inherit"],
      env: { ...process.env, NO_COLOR: "1" },
    });
    let out = "";
    const ready = new Promise<void>((resolve) => {
      proc.stdout!.setEncoding("utf8");
      proc.stdout!.on("data", (chunk: string) => {
        out += chunk;
        if (out.includes("READY")) resolve();
      });
    });
    const done = new Promise<ChildResult>((resolve, reject) => {
      proc.on("exit", (code) => {
        const line = out.split("\n").find((l) => l.startsWith("RESULT "));
        if (code !== 0 || line === undefined) reject(new Error(`${kind} writer exited ${code}`));
        else resolve(JSON.parse(line.slice(7)) as ChildResult);
      });
    });
    return { proc, ready, done };
  });
  await Promise.all(children.map((c) => c.ready));
  for (const c of children) c.proc.stdin!.write("go\n");
  return await Promise.all(children.map((c) => c.done));
}

function fmt(n: number, digits = 0): string {
  return n.toLocaleString("en-US", {
    maximumFractionDigits: digits,
    minimumFractionDigits: digits,
  });
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const option = (name: string, fallback: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : fallback;
  };
  const writerCounts = option("writers", "1,4,8").split(",").map(Number);
  const kinds = option("stores", "postgres,sqlite,memory").split(",");
  const admin = adminSql(1);
  await assertPostgresAnswers(admin);
  const [{ version }] = await admin`SELECT current_setting('server_version') AS version`;
  const dir = mkdtempSync(join(tmpdir(), "hookscope-bench-"));
  const schemas: string[] = [];
  const runtime = "Deno" in globalThis
    ? `Deno ${(globalThis as unknown as { Deno: { version: { deno: string } } }).Deno.version.deno}`
    : "Bun" in globalThis
    ? `Bun ${(globalThis as unknown as { Bun: { version: string } }).Bun.version}`
    : `Node ${process.version}`;
  console.log(
    `# store bench: ${runtime}, ${cpus().length} × ${
      cpus()[0]?.model.trim()
    }, PostgreSQL ${version}`,
  );
  console.log(
    `# per writer: ${AWAITED} awaited signals, then ${PIPELINED} with ${WINDOW} in flight\n`,
  );
  console.log(
    "| store | writers | awaited signals/s | awaited p50 ms | awaited p99 ms | pipelined signals/s | rows per batch | failed writes | load |",
  );
  console.log("|---|---:|---:|---:|---:|---:|---:|---|---:|");
  try {
    for (const kind of kinds) {
      for (const writers of writerCounts) {
        let target = "";
        if (kind === "postgres") {
          target = freshSchema("hs_bench");
          schemas.push(target);
          await (await PostgresStore.open(PG_URL, { schema: target })).close(); // migrate once
        } else if (kind === "sqlite") {
          target = join(dir, `bench-${writers}.db`);
          await (await SqliteStore.open(target)).close();
        }
        const load = loadavg()[0];
        const results = await runGroup(kind, target, writers);
        const awaitedWall = Math.max(...results.map((r) => r.awaited.ms));
        const pipelinedWall = Math.max(...results.map((r) => r.pipelined.ms));
        const p50 = results.map((r) => r.awaited.p50).sort((a, b) => a - b);
        const p99 = Math.max(...results.map((r) => r.awaited.p99));
        const batches = results.reduce((n, r) => n + (r.pipelined.batches ?? 0), 0);
        const failed = results.reduce((n, r) => n + r.failed, 0);
        const firstError = results.find((r) => r.firstError)?.firstError;
        console.log(
          `| ${kind} | ${writers} | ${fmt((writers * AWAITED) / (awaitedWall / 1000))} | ${
            fmt(percentile(p50, 0.5), 2)
          } | ${fmt(p99, 2)} | ${fmt((writers * PIPELINED) / (pipelinedWall / 1000))} | ${
            batches > 0 ? fmt((writers * PIPELINED) / batches, 1) : "-"
          } | ${failed === 0 ? "0" : `${failed} (${firstError?.replace(/.*: /, "")})`} | ${
            fmt(load, 1)
          } |`,
        );
      }
    }
  } finally {
    await dropSchemas(admin, schemas).catch(() => {});
    await admin.end({ timeout: 5 });
    rmSync(dir, { recursive: true, force: true });
  }
}

const at = process.argv.indexOf("--child");
if (at >= 0) {
  const [kind, target, writer] = process.argv.slice(at + 1);
  await child(kind, target, Number(writer));
} else {
  await main();
  process.exit(0);
}
