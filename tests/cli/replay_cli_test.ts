// `hookscope replay` as CI runs it: a real subprocess over a recorded SQLite file and a
// postgres:// store; exit 0 when nothing changed, 1 when something did, 2 on usage errors; the
// --json shape.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { Session, type SessionStore, Tool } from "../../mod.ts";
import { SqliteStore } from "../../store/sqlite/mod.ts";
import { PostgresStore } from "../../store/postgres/mod.ts";
import { CLI, DENO } from "../claude/_cli.ts";
import { sqliteMissing } from "../fixtures/sqlite_support.ts";
import {
  adminSql,
  assertPostgresAnswers,
  dropSchemas,
  freshSchema,
  PG_URL,
} from "../store/postgres_fixture.ts";

function replay(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const ran = spawnSync(DENO, [...CLI, "replay", ...args], {
    encoding: "utf8",
    timeout: 90_000,
  });
  return { code: ran.status, stdout: ran.stdout, stderr: ran.stderr };
}

async function record(store: SessionStore): Promise<string> {
  const session = new Session({ store });
  await session.start();
  session.defaultBranch.actions.register(
    new Tool({
      name: "bash",
      description: "run",
      inputSchema: z.object({ command: z.string() }),
      execute: ({ command }: { command: string }) => `ran ${command}`,
    }),
  );
  session.hooks.on(
    "tool.pre",
    ({ args }) =>
      String(args.command).startsWith("rm ") ? { decision: "deny", reason: "no rm" } : undefined,
    { name: "no-rm" },
  );
  for (
    const command of [
      "ls",
      "rm -rf build",
      "curl https://example.test",
      "ls",
      "curl https://example.test/2",
    ]
  ) {
    await session.defaultBranch.act({ function: "bash", arguments: { command } }).catch(() => {});
  }
  await session.drainSignals();
  return session.id;
}

describe("hookscope replay", () => {
  let dir: string;
  let same: string;
  let stricter: string;
  const admin = adminSql();
  const schema = freshSchema("hs_replay_cli");
  before(async () => {
    await assertPostgresAnswers(admin);
    dir = realpathSync(mkdtempSync(join(tmpdir(), "hookscope-replay-")));
    same = join(dir, "same.ts");
    writeFileSync(
      same,
      `export const policy = (s) => s.hooks.on("tool.pre", ({ args }) => String(args.command).startsWith("rm ") ? { decision: "deny", reason: "no rm" } : undefined, { name: "no-rm" });`,
    );
    stricter = join(dir, "stricter.ts");
    writeFileSync(
      stricter,
      `export const policy = (s) => s.hooks.on("tool.pre", ({ args }) => /^(rm|curl) /.test(String(args.command)) ? { decision: "deny", reason: "no rm, no network" } : undefined, { name: "stricter" });`,
    );
  });
  after(async () => {
    await dropSchemas(admin, [schema]).catch(() => {});
    await admin.end();
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    "over a SQLite file: exit 0 for the same policy, 1 with the changed calls for a stricter one; the file is unchanged",
    {
      skip: sqliteMissing
        ? "node:sqlite needs Node >= 22.5 to record the session in-process"
        : false,
    },
    async () => {
      const db = join(dir, "sessions.db");
      const store = await SqliteStore.open(db);
      const sessionId = await record(store);
      await store.close();
      const before = readFileSync(db);
      const unchanged = replay([db, sessionId, "--policy", same]);
      assert.equal(unchanged.code, 0, unchanged.stderr);
      assert.match(unchanged.stdout, /5 call\(s\) replayed: 0 changed, 5 unchanged/);
      const changed = replay([db, "--all", "--policy", stricter, "--json"]);
      assert.equal(changed.code, 1, changed.stderr);
      const report = JSON.parse(changed.stdout);
      assert.equal(report.sessions, 1);
      assert.equal(report.replayed, 5);
      assert.equal(report.unchanged, 3);
      assert.deepEqual(
        report.changed.map((
          c: Record<string, unknown>,
        ) => [c.recorded, c.replayed, c.hook, (c.args as { command: string }).command]),
        [
          ["none", "deny", "stricter", "curl https://example.test"],
          ["none", "deny", "stricter", "curl https://example.test/2"],
        ],
      );
      const table = replay([db, sessionId, "--policy", stricter]);
      assert.equal(table.code, 1);
      assert.match(table.stdout, /bash\s+stricter\s+none → deny\s+2/);
      assert.deepEqual(readFileSync(db), before, "a replay writes nothing");
      // --since after every call: nothing to replay, nothing changed.
      const later = replay([
        db,
        sessionId,
        "--policy",
        stricter,
        "--since",
        new Date(Date.now() + 60_000).toISOString(),
      ]);
      assert.equal(later.code, 0);
    },
  );

  it(
    "an async policy is awaited: replay --all counts its denials",
    {
      skip: sqliteMissing
        ? "node:sqlite needs Node >= 22.5 to record the session in-process"
        : false,
    },
    async () => {
      const db = join(dir, "async.db");
      const store = await SqliteStore.open(db);
      await record(store);
      await store.close();
      const asyncDeny = join(dir, "async-deny.ts");
      writeFileSync(
        asyncDeny,
        `export const policy = async (session) => { await Promise.resolve(); session.hooks.on("tool.pre", () => ({ decision: "deny", reason: "no" })); };`,
      );
      const changed = replay([db, "--all", "--policy", asyncDeny, "--json"]);
      assert.equal(changed.code, 1, changed.stderr);
      const report = JSON.parse(changed.stdout);
      assert.equal(report.replayed, 5);
      assert.equal(report.changed.length, 4); // every call but the recorded rm denial
    },
  );

  it("over a postgres:// store the same gate works", async () => {
    const store = await PostgresStore.open(PG_URL, { schema });
    const sessionId = await record(store);
    await store.close();
    const changed = replay([
      `${PG_URL}?schema=${schema}`,
      sessionId,
      "--policy",
      stricter,
      "--json",
    ]);
    assert.equal(changed.code, 1, changed.stderr);
    assert.equal(JSON.parse(changed.stdout).changed.length, 2);
  });

  it("usage errors exit 2", () => {
    assert.equal(replay([]).code, 2);
    assert.equal(replay([join(dir, "x.db"), "--all"]).code, 2); // no --policy
    assert.equal(replay([join(dir, "x.db"), "--policy", same]).code, 2); // neither SESSION nor --all
    const badDate = replay([
      join(dir, "x.db"),
      "--all",
      "--policy",
      same,
      "--since",
      "yesterday-ish",
    ]);
    assert.equal(badDate.code, 2);
    assert.match(badDate.stderr, /--since must be an ISO date/);
  });
});
