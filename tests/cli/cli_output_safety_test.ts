// What the hookscope CLI prints and stores is safe: no credential from the base URL, the API
// key or a model's echo reaches the terminal or the database file, terminal escapes from a model
// are shown escaped (never sent) by run, show and tail --messages, and pending shows the whole
// arguments of a call (head and tail of a padded command). Every command runs as a real
// subprocess against the real OpenAI fixture server and a real SQLite file / PostgreSQL schema.

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import process from "node:process";
import { runCodingAgent } from "../../cli/agent_run.ts";
import {
  jsonReply,
  type OpenAIServer,
  type RecordedRequest,
  type Reply,
  sseReply,
  startOpenAIServer,
  textEvents,
  toolCallEvents,
} from "../fixtures/openai_server.ts";
import { sqliteMissing } from "../fixtures/sqlite_support.ts";
import {
  adminSql,
  assertPostgresAnswers,
  dropSchemas,
  freshSchema,
  PG_URL,
} from "../store/postgres_fixture.ts";

const ROOT = resolve(import.meta.dirname ?? new URL(".", import.meta.url).pathname, "../..");
const DENO = join(ROOT, "node_modules", ".bin", "deno");
const NO_SQLITE = sqliteMissing ? "needs SQLite (node:sqlite from Node 22.5, Deno or Bun)" : false;
const dirs: string[] = [];
const servers: OpenAIServer[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "hookscope-cli-safety-"));
  dirs.push(dir);
  return dir;
}
after(async () => {
  for (const server of servers) await server.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

interface Child {
  code: number | null;
  out: string;
  err: string;
}

/**
 * Runs `hookscope ARGS` in its own process (group, so the guard kills the deno binary too);
 * `until` stops it with SIGINT once its stdout matches.
 */
function hookscope(
  args: string[],
  options: { env?: Record<string, string>; until?: RegExp } = {},
): Promise<Child> {
  return new Promise((resolvePromise, reject) => {
    const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: "1" };
    delete env.HOOKSCOPE_API_KEY;
    delete env.OPENAI_API_KEY;
    const child = spawn(DENO, ["run", "-A", join(ROOT, "cli/main.ts"), ...args], {
      env: { ...env, ...options.env },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let out = "";
    let err = "";
    child.stdout!.on("data", (chunk) => {
      out += String(chunk);
      if (options.until?.test(out)) process.kill(-child.pid!, "SIGINT");
    });
    child.stderr!.on("data", (chunk) => (err += String(chunk)));
    const timer = setTimeout(() => process.kill(-child.pid!, "SIGKILL"), 90_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolvePromise({ code, out, err });
    });
  });
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

/** Every byte of the SQLite database (the file and its -wal / -journal companions). */
function dbBytes(dir: string, name: string): string {
  return readdirSync(dir)
    .filter((file) => file.startsWith(name))
    .map((file) => readFileSync(join(dir, file)).toString("latin1"))
    .join("\n");
}

/** A server that answers GET /models and streams `pieces` as the model's answer. */
async function answering(pieces: readonly string[]): Promise<OpenAIServer> {
  const server = await startOpenAIServer((request) =>
    request.method === "GET" ? jsonReply({ data: [] }) : sseReply(textEvents(pieces))
  );
  servers.push(server);
  return server;
}

/** OSC 52 (write the clipboard), CSI (clear the screen), a C1 CSI, a bidi override, a BEL. */
const HOSTILE = "Done.\x1b]52;c;cm0gLXJmIH4=\x07 \x1b[2J\x1b[31mred \u009b6n \u202eexe.txt\u202c";
// deno-lint-ignore no-control-regex -- the raw control characters must not be printed
const RAW = /[\x07\x1b\u009b\u202e]/;

describe("hookscope CLI output and storage safety (subprocess)", () => {
  it("a password in --base-url is neither printed when the server is down nor stored", async () => {
    const port = await freePort();
    const dir = tempDir();
    const down = await hookscope([
      "run",
      "--base-url",
      `http://agent:Pa55-w0rd-Xy@127.0.0.1:${port}/v1`,
      "--model",
      "m",
      "--workspace",
      dir,
      "--db",
      join(dir, "runs.db"),
    ]);
    assert.equal(down.code, 1, down.err);
    assert.match(
      down.err,
      new RegExp(`Cannot reach the model server at http://127\\.0\\.0\\.1:${port}/v1`),
    );
    assert.equal(`${down.out}${down.err}`.includes("Pa55-w0rd-Xy"), false, down.err);
    assert.equal(`${down.out}${down.err}`.includes(btoa("agent:Pa55-w0rd-Xy")), false);
  });

  it(
    "URL credentials travel as Basic auth; they, the API key and echoed keys are redacted from output and every table",
    {
      skip: NO_SQLITE,
    },
    async () => {
      const password = "Pa55-w0rd-Xy";
      const echoedKey = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx";
      const apiKey = "hs-conf1gured-key-9f8e7d";
      // The model echoes whatever credential it was called with, and a key-shaped string (split
      // across two streamed chunks).
      const server = await startOpenAIServer((request: RecordedRequest): Reply => {
        if (request.method === "GET") return jsonReply({ data: [] });
        const auth = String(request.headers.authorization ?? "");
        return sseReply(textEvents(
          auth.startsWith("Basic ")
            ? [
              `The password is ${password}, base64 ${btoa(`agent:${password}`)}. `,
              `Try ${echoedKey.slice(0, 14)}`,
              `${echoedKey.slice(14)}.`,
            ]
            : [`The configured key is ${apiKey}; `, `base64 ${btoa(apiKey)}.`],
        ));
      });
      servers.push(server);
      const dir = tempDir();
      const db = join(dir, "runs.db");
      const url = server.baseURL.replace("http://", `http://agent:${password}@`);
      const first = await hookscope([
        "run",
        "--base-url",
        url,
        "--model",
        "m",
        "--workspace",
        dir,
        "--db",
        db,
        "--prompt",
        "what is the password?",
      ]);
      assert.equal(first.code, 0, first.err);
      const post = server.requests.find((r: RecordedRequest) => r.method === "POST")!;
      assert.equal(post.headers.authorization, `Basic ${btoa(`agent:${password}`)}`);
      const second = await hookscope(
        ["run", "--base-url", server.baseURL, "--model", "m", "--workspace", dir, "--db", db],
        { env: { HOOKSCOPE_API_KEY: apiKey } },
      );
      assert.equal(second.code, 0, second.err);
      const printed = `${first.out}${first.err}${second.out}${second.err}`;
      const stored = dbBytes(dir, "runs.db");
      assert.match(stored, /The password is \[redacted\]/, "the answer is stored, redacted");
      assert.match(stored, /The configured key is \[redacted\]/);
      assert.equal(printed.includes(echoedKey.slice(0, 14)), false, "a key split across chunks");
      for (const secret of [password, btoa(`agent:${password}`), echoedKey, apiKey, btoa(apiKey)]) {
        assert.equal(printed.includes(secret), false, `${secret} printed:\n${printed}`);
        assert.equal(stored.includes(secret), false, `${secret} in the database file`);
      }
      // Every table, through the CLI's own JSON view.
      const sessions = JSON.parse((await hookscope(["sessions", db, "--json"])).out);
      assert.equal(sessions.length, 2);
      for (const session of sessions) {
        assert.equal(
          session.metadata.hookscope.baseURL,
          server.baseURL,
          "stored without user info",
        );
        const shown = await hookscope(["show", db, session.id, "--json"]);
        for (const secret of [password, echoedKey, apiKey]) {
          assert.equal(shown.out.includes(secret), false, `${secret} in show --json`);
        }
      }
    },
  );

  it(
    "terminal escapes from the model are shown escaped by run and show; show --json keeps the value",
    {
      skip: NO_SQLITE,
    },
    async () => {
      const server = await answering([HOSTILE.slice(0, 12), HOSTILE.slice(12)]);
      const dir = tempDir();
      const db = join(dir, "runs.db");
      const ran = await hookscope([
        "run",
        "--base-url",
        server.baseURL,
        "--model",
        "m",
        "--workspace",
        dir,
        "--db",
        db,
      ]);
      assert.equal(ran.code, 0, ran.err);
      assert.equal(RAW.test(ran.out), false, JSON.stringify(ran.out));
      assert.match(ran.out, /\\u001b\]52;c;cm0gLXJmIH4=\\u0007/);
      assert.match(ran.out, /\\u202eexe\.txt/);
      const sessionId = /session ([0-9a-f-]{36}) completed/.exec(ran.out)![1];
      const shown = await hookscope(["show", db, sessionId]);
      assert.equal(shown.code, 0, shown.err);
      assert.equal(RAW.test(shown.out), false, JSON.stringify(shown.out));
      assert.match(shown.out, /Done\.\\u001b\]52;c;/);
      const json = await hookscope(["show", db, sessionId, "--json"]);
      assert.equal(RAW.test(json.out), false);
      const answer = JSON.parse(json.out).messages.at(-1);
      assert.equal(answer.content, HOSTILE, "the JSON view still decodes to the real text");
    },
  );

  it("pending shows the head and the tail of a padded command, and --full all of it", {
    skip: NO_SQLITE,
  }, async () => {
    const padded = `find victim -name '*.log'${" ".repeat(3000)}-delete # just a listing`;
    const server = await startOpenAIServer((request: RecordedRequest): Reply => {
      const messages = (request.body as { messages: { role: string }[] }).messages;
      if (messages.at(-1)?.role === "tool") return sseReply(textEvents(["ok"]));
      const args = JSON.stringify({ command: padded });
      return sseReply(
        toolCallEvents([{ index: 0, id: "call_pad", name: "bash", argumentPieces: [args] }]),
      );
    });
    servers.push(server);
    const dir = tempDir();
    const workspace = join(dir, "ws");
    mkdirSync(workspace);
    const db = join(dir, "runs.db");
    const summary = await runCodingAgent({
      baseURL: server.baseURL,
      model: "m",
      dbPath: db,
      workspace,
      instruction: "list the logs",
      askBefore: ["bash"],
      io: { out: () => {}, err: () => {} },
      write: () => {},
      sandbox: { kind: "none" },
    });
    assert.equal(summary.status, "waiting_approval");
    const listed = await hookscope(["pending", db]);
    assert.equal(listed.code, 0, listed.err);
    assert.match(listed.out, /arguments of call_pad \(bash, hash [0-9a-f]{12}\):/);
    assert.match(listed.out, /find victim -name '\*\.log'/);
    assert.match(listed.out, /-delete # just a listing/, "the tail is visible");
    assert.match(
      listed.out,
      new RegExp(
        `\n {4}… \\[folded 3000 blank chars; hookscope pending ${
          db.replace(/[.]/g, "\\.")
        } --full\\] …\n`,
      ),
    );
    const full = await hookscope(["pending", db, "--full"]);
    assert.equal(full.code, 0, full.err);
    assert.equal(full.out.replace(/\n {4}/g, "").includes(JSON.stringify(padded)), true);
  });
});

describe("hookscope tail --messages (subprocess, PostgreSQL)", () => {
  const admin = adminSql(1);
  const schemas = new Set<string>();
  before(() => assertPostgresAnswers(admin));
  after(async () => {
    await dropSchemas(admin, schemas).catch(() => {});
    await admin.end({ timeout: 5 });
  });

  it("tail --messages shows terminal escapes from the model escaped", async () => {
    const schema = freshSchema("hs_cli_safety");
    schemas.add(schema);
    const url = `${PG_URL}?schema=${schema}`;
    const server = await answering([HOSTILE]);
    const dir = tempDir();
    const ran = await hookscope([
      "run",
      "--base-url",
      server.baseURL,
      "--model",
      "m",
      "--workspace",
      dir,
      "--db",
      url,
    ]);
    assert.equal(ran.code, 0, ran.err);
    const tailed = await hookscope(["tail", url, "--all", "--messages"], {
      until: /message assistant .*exe\.txt/,
    });
    assert.match(tailed.out, /message assistant .*Done\.\\u001b\]52;c;cm0gLXJmIH4=\\u0007/);
    assert.equal(RAW.test(tailed.out), false, JSON.stringify(tailed.out));
  });
});
