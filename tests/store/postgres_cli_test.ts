// The hookscope CLI against a PostgreSQL store: sessions, show, pending, approve through a
// postgres:// URL, and `tail`, which follows signals live and exits 0 on SIGINT.

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import process from "node:process";
import { main } from "../../cli/main.ts";
import { tailCommand } from "../../cli/tail.ts";
import { PostgresStore } from "../../store/postgres/mod.ts";
import {
  adminSql,
  assertPostgresAnswers,
  dropSchemas,
  freshSchema,
  PG_URL,
  runnerArgs,
} from "./postgres_fixture.ts";

const CHILD = fileURLToPath(new URL("./postgres_cli_child.ts", import.meta.url));
const admin = adminSql(1);
const schemas = new Set<string>();

function capture(): {
  out: string[];
  err: string[];
  io: { out(t: string): void; err(t: string): void };
} {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { out: (t) => void out.push(t), err: (t) => void err.push(t) } };
}

async function until(what: string, check: () => boolean, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`no ${what} within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function seeded(): Promise<{ url: string; store: PostgresStore }> {
  const schema = freshSchema("hs_cli");
  schemas.add(schema);
  const store = await PostgresStore.open(PG_URL, { schema });
  await store.createSession({ id: "s1", status: "completed", model: "m1", startedAt: 1 });
  await store.insertSessionSignal({
    sessionId: "s1",
    kind: "ToolDenied",
    opId: "",
    ts: 2,
    payload: { toolName: "bash" },
  });
  return { url: `${PG_URL}?schema=${schema}`, store };
}

describe("hookscope CLI on PostgreSQL", () => {
  const stores: PostgresStore[] = [];
  before(() => assertPostgresAnswers(admin));
  after(async () => {
    for (const store of stores) await store.close();
    await dropSchemas(admin, schemas).catch(() => {});
    await admin.end({ timeout: 5 });
  });

  it("hookscope sessions and show read a postgres:// URL", async () => {
    const { url, store } = await seeded();
    stores.push(store);
    const listed = capture();
    assert.equal(await main(["sessions", url, "--json"], listed.io), 0, listed.err.join("\n"));
    assert.deepEqual(JSON.parse(listed.out.join("\n")).map((s: { id: string }) => s.id), ["s1"]);
    const shown = capture();
    assert.equal(await main(["show", url, "s1"], shown.io), 0, shown.err.join("\n"));
    assert.match(shown.out.join("\n"), /ToolDenied/);
  });

  it("hookscope sessions of a schema that does not exist fails without creating it", async () => {
    const schema = freshSchema("hs_cli_missing");
    const failed = capture();
    assert.equal(await main(["sessions", `${PG_URL}?schema=${schema}`], failed.io), 1);
    assert.match(failed.err.join("\n"), /has no hookscope tables yet .*create it/);
    const [row] =
      await admin`SELECT count(*)::int AS n FROM pg_namespace WHERE nspname = ${schema}`;
    assert.equal(row.n, 0);
  });

  it("hookscope pending and approve answer a run stored in PostgreSQL", async () => {
    const { url, store } = await seeded();
    stores.push(store);
    await store.saveRun({
      runId: "r1",
      sessionId: "s1",
      branchId: "b1",
      status: "waiting_approval",
      stoppedBy: "approval",
      pending: [{
        runId: "r1",
        callId: "c1",
        toolName: "bash",
        args: { command: "ls" },
        requestedAt: 1,
      }],
      answers: {},
      state: {
        turn: 1,
        maxTurns: 4,
        toolCalls: [{ id: "c1", name: "bash", arguments: "{}" }],
        done: [],
      },
      owner: null,
      claimedAt: null,
      error: null,
      createdAt: 1,
      updatedAt: 1,
    });
    const pending = capture();
    assert.equal(await main(["pending", url, "--json"], pending.io), 0, pending.err.join("\n"));
    assert.deepEqual(JSON.parse(pending.out.join("\n")).map((p: { callId: string }) => p.callId), [
      "c1",
    ]);
    const approved = capture();
    assert.equal(
      await main(["approve", url, "c1", "--by", "ci"], approved.io),
      0,
      approved.err.join("\n"),
    );
    assert.equal((await store.getRun("r1"))?.answers.c1?.by, "ci");
  });

  it("hookscope tail follows signals written by another store and stops on abort", async () => {
    const { url, store } = await seeded();
    stores.push(store);
    const seen = capture();
    const controller = new AbortController();
    const running = tailCommand([url, "s1"], seen.io, { signal: controller.signal });
    await until("tail to start", () => seen.err.some((l) => l.startsWith("following session s1")));
    await store.insertSessionSignal({
      sessionId: "s2",
      kind: "Other",
      opId: "",
      ts: 3,
      payload: {},
    });
    await store.insertSessionSignal({
      sessionId: "s1",
      kind: "LiveOne",
      opId: "",
      ts: 4,
      payload: { n: 1 },
    });
    await until("the live signal", () => seen.out.some((l) => l.includes("LiveOne")));
    controller.abort();
    assert.equal(await running, 0);
    assert.equal(seen.out.length, 1, seen.out.join("\n"));
    assert.match(seen.out[0], /s1 {2}#2 {2}LiveOne/);
  });

  it("hookscope tail --messages prints a message once (its MessageAdded signal is folded in)", async () => {
    const { url, store } = await seeded();
    stores.push(store);
    const seen = capture();
    const controller = new AbortController();
    const running = tailCommand([url, "s1", "--messages"], seen.io, { signal: controller.signal });
    await until("tail to start", () => seen.err.some((l) => l.startsWith("following session s1")));
    await store.insertMessage({
      id: "m1",
      sessionId: "s1",
      role: "user",
      content: "hello there",
      sender: null,
      recipient: null,
      branchId: null,
      createdAt: 5,
    } as never);
    const added = (id: string, ts: number) =>
      store.insertSessionSignal({
        sessionId: "s1",
        kind: "MessageAdded",
        opId: "",
        ts,
        payload: { messageRef: { id, role: "user" } },
      });
    await added("m1", 6);
    // A message tail never printed keeps its signal's line.
    await added("m9", 7);
    await until("the unprinted message's signal", () => seen.out.some((l) => l.includes("m9")));
    controller.abort();
    assert.equal(await running, 0);
    assert.deepEqual(seen.out.map((l) => l.replace(/^.*? {2}/, "").replace(/#\d+/, "#N")), [
      "s1  message user  hello there",
      "s1  #N  MessageAdded  message user m9",
    ]);
  });

  it("hookscope tail --all in its own process prints history, follows, and exits 0 on SIGINT", async () => {
    const { url, store } = await seeded();
    stores.push(store);
    const { command, args } = runnerArgs(CHILD);
    const child = spawn(command, [...args, "tail", url, "--all", "--json"], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, NO_COLOR: "1" },
    });
    let out = "";
    let err = "";
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => void (out += chunk));
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => void (err += chunk));
    const exited = new Promise<number | null>((resolve) =>
      child.on("exit", (code) => resolve(code))
    );
    try {
      await until("the stored signal", () => out.includes("ToolDenied"), 60_000);
      await store.insertSessionSignal({
        sessionId: "s1",
        kind: "Later",
        opId: "",
        ts: 5,
        payload: {},
      });
      await until("the live signal", () => out.includes('"Later"'));
      child.kill("SIGINT");
      const code = await exited;
      assert.match(err, /hookscope exit code 0\n/);
      // Deno's node:child_process reports a child it sent SIGINT as killed by it even after the
      // child handled the signal and exited 0 (the line above is what the child said).
      if (!("Deno" in globalThis)) assert.equal(code, 0, err);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
    const lines = out.trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(lines.map((l) => [l.type, l.kind, l.seq]), [
      ["signal", "ToolDenied", 1],
      ["signal", "Later", 2],
    ]);
  });

  it("a new schema: show and pending say how it gets created; tail creates it, says so, and follows it", async () => {
    const schema = freshSchema("hs_cli_new");
    schemas.add(schema);
    const url = `${PG_URL}?schema=${schema}`;
    const shown = capture();
    assert.equal(await main(["sessions", url], shown.io), 1);
    assert.match(
      shown.err.join("\n"),
      new RegExp(`schema "${schema}" has no hookscope tables yet .*'hookscope tail URL'`),
    );
    const pending = capture();
    assert.equal(await main(["pending", url], pending.io), 1);
    assert.match(pending.err.join("\n"), /has no hookscope tables yet/);
    const seen = capture();
    const controller = new AbortController();
    const running = tailCommand([url], seen.io, { signal: controller.signal });
    await until("tail to start", () => seen.err.some((l) => l.startsWith("following")));
    assert.match(
      seen.err[0],
      new RegExp(`created schema "${schema}" .*waiting for the first signals`),
    );
    const writer = await PostgresStore.open(PG_URL, { schema, migrate: false });
    stores.push(writer);
    await writer.insertSessionSignal({
      sessionId: "s9",
      kind: "FirstSignal",
      opId: "",
      ts: 3,
      payload: {},
    });
    await until("the first signal", () => seen.out.some((l) => l.includes("FirstSignal")));
    controller.abort();
    assert.equal(await running, 0);
    // Opened again, the schema exists: nothing is said about creating it.
    const again = capture();
    const stop = new AbortController();
    const second = tailCommand([url], again.io, { signal: stop.signal });
    await until("tail to start", () => again.err.some((l) => l.startsWith("following")));
    assert.equal(again.err.some((l) => l.startsWith("created")), false);
    stop.abort();
    assert.equal(await second, 0);
  });

  it("hookscope tail of a file path is a usage error", async () => {
    const failed = capture();
    assert.equal(await main(["tail", "some.db"], failed.io), 2);
    assert.match(failed.err.join("\n"), /not a postgres:\/\/ URL/);
  });
});
