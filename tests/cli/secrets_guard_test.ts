import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { linkSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCodingAgent, secretsGuardIn } from "../../cli/agent_run.ts";
import { main } from "../../cli/main.ts";
import {
  type OpenAIServer,
  type RecordedRequest,
  type Reply,
  sseReply,
  startOpenAIServer,
  textEvents,
  toolCallEvents,
} from "../fixtures/openai_server.ts";
import { sqliteMissing } from "../fixtures/sqlite_support.ts";

describe("CLI secrets guard", () => {
  let ws: string;
  before(() => {
    ws = mkdtempSync(join(tmpdir(), "hookscope-secrets-"));
    writeFileSync(join(ws, ".env.local"), "KEY=1\n");
    writeFileSync(join(ws, ".env"), "TOKEN=sk-live\n");
    writeFileSync(join(ws, "README.md"), "# hi\n");
    mkdirSync(join(ws, "src"));
    writeFileSync(join(ws, "src", "main.ts"), "export const foo = 1;\n");
    mkdirSync(join(ws, "config"));
    writeFileSync(join(ws, "config", "id_rsa"), "-----BEGIN OPENSSH PRIVATE KEY-----\n");
    symlinkSync(join(ws, ".env.local"), join(ws, "notes.txt"));
    linkSync(join(ws, "config", "id_rsa"), join(ws, "config", "copy.txt"));
  });
  after(() => rmSync(ws, { recursive: true, force: true }));

  const call = (args: Record<string, unknown>, toolName = "bash") =>
    secretsGuardIn(ws)({ toolName, argsSummary: "(summary)", args });

  it("secretsGuard() refuses secrets named through quoting, globs, wrappers and symlinks", async () => {
    for (
      const args of [
        { command: "cat .env" },
        { command: "cat .e'n'v.production" },
        { command: 'cat ".env.local"' },
        { command: "cat .en?" },
        { command: "sudo -u me cat ~/.ssh/id_rsa" },
        { command: "cp notes.txt /tmp/x" },
        { command: "grep KEY < .env.local" },
        { path: "notes.txt" },
        { filePath: "config/.env.production" },
        { nested: { file: "server.pem" } },
      ]
    ) {
      await assert.rejects(call(args), /may not touch secrets/, JSON.stringify(args));
    }
  });

  // Workspace reads of `.env` / `id_rsa` found by an attacker: the first guard matched patterns
  // on the top-level words, so these got through. Each is now judged from its parse at every
  // nesting level, with the most dangerous reading of globs and computed words.
  const BYPASSES = [
    "sh -c 'cat .e*'",
    "grep -r TOKEN .",
    "tar -cf - .",
    "cat $(ls -a | grep env)",
    "zip -r /tmp/out.zip .",
    "rsync -a . /tmp/copy",
    "cp -r . /tmp/copy",
    "x=.env; cat $x",
    "cat {.e,x}nv",
    "bash -c 'grep -R KEY config'",
    "timeout 5 nice grep -rl BEGIN",
  ];

  it("secretsGuard() refuses every workspace read of a secret, at every nesting level", async () => {
    const cases = [
      // Already refused by the first guard.
      "cat .env",
      "cat .e'n'v.production",
      'cat ".env.local"',
      "cat .en?",
      "cat .[e]nv",
      "cat $'\\x2eenv'",
      "sudo -u me cat ~/.ssh/id_rsa",
      "cp notes.txt /tmp/x",
      "grep KEY < .env.local",
      "find . -name '*.env' -exec cat {} +",
      "cp .env x && cat x",
      "find . -name '*.env' | xargs cat",
      // Got through the first guard.
      ...BYPASSES,
      // More of the same families.
      "find . -type f -exec cat {} +",
      "ls | xargs cat",
      "echo $(cat .env)",
      "python3 -c 'print(open(\".env\").read())'",
      "ssh host 'cat $HOME/.netrc'",
      "cat <<EOF\n$(cat .env)\nEOF",
      "git show HEAD:.env",
      "grep --include=*.env -r TOKEN src",
      "cd config && cat id_rsa",
      "diff -r . /tmp",
      "find . | cpio -o > /tmp/all.cpio",
      "cat config/copy.txt",
      "echo 'unclosed",
    ];
    for (const command of cases) {
      await assert.rejects(call({ command }), /may not touch secrets/, command);
    }
  });

  it("secretsGuard() lets ordinary calls and free text through", async () => {
    for (
      const args of [
        { command: "cat README.md" },
        { command: "ls -la" },
        { command: "grep -r foo src" },
        { command: "grep -rn 'export const' src README.md" },
        { command: "git status && ls -la src" },
        { command: "awk '{print $1}' README.md" },
        { command: "echo $HOME" },
        { command: "tar -cf /tmp/src.tar src" },
        { command: "find src -name '*.ts' -exec wc -l {} +" },
        { path: "README.md" },
        { filePath: "docs/setup.md", content: "Copy .env.example to .env and fill it in.\n" },
      ]
    ) {
      assert.equal(await call(args), undefined, JSON.stringify(args));
    }
  });

  it("secretsGuard() falls back to the summary when the payload carries no args", async () => {
    await assert.rejects(
      secretsGuardIn(ws)({ toolName: "reader", argsSummary: '{"path":".env"}' }),
      /may not touch secrets/,
    );
    assert.equal(
      await secretsGuardIn(ws)({ toolName: "reader", argsSummary: '{"path":"README.md"}' }),
      undefined,
    );
  });
});

describe("hookscope resume's secrets guard", () => {
  const servers: OpenAIServer[] = [];
  const dirs: string[] = [];
  after(async () => {
    for (const server of servers) await server.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it("judges in the run's workspace: a symlink there to .env.local is refused after resume", {
    skip: sqliteMissing ? "needs SQLite (node:sqlite from Node 22.5, Deno or Bun)" : false,
  }, async () => {
    // Turn 1 writes notes.md (asks for approval); after the answer the model runs
    // `cat notes.txt`, whose name is innocent but which resolves to the workspace's .env.local.
    const server = await startOpenAIServer((request: RecordedRequest): Reply => {
      const messages = (request.body as { messages: { role: string; content: unknown }[] })
        .messages;
      const tools = messages.filter((m) => m.role === "tool").length;
      if (tools === 0) {
        const args = JSON.stringify({ action: "write", filePath: "notes.md", content: "x\n" });
        return sseReply(
          toolCallEvents([{ index: 0, id: "call_w1", name: "editor", argumentPieces: [args] }]),
        );
      }
      if (tools === 1) {
        const args = JSON.stringify({ command: "cat notes.txt" });
        return sseReply(
          toolCallEvents([{ index: 0, id: "call_b1", name: "bash", argumentPieces: [args] }]),
        );
      }
      return sseReply(textEvents([`bash said: ${String(messages.at(-1)?.content)}`]));
    });
    servers.push(server);
    const dir = mkdtempSync(join(tmpdir(), "hookscope-resume-secrets-"));
    dirs.push(dir);
    const workspace = join(dir, "ws");
    mkdirSync(workspace);
    writeFileSync(join(workspace, ".env.local"), "KEY=resume-leak-4f3e\n");
    symlinkSync(join(workspace, ".env.local"), join(workspace, "notes.txt"));
    const db = join(dir, "runs.db");
    const summary = await runCodingAgent({
      baseURL: server.baseURL,
      model: "m",
      dbPath: db,
      workspace,
      instruction: "write the notes",
      askBefore: ["editor"],
      io: { out: () => {}, err: () => {} },
      write: () => {},
      sandbox: { kind: "none" },
    });
    assert.equal(summary.status, "waiting_approval");
    const io = (lines: string[]) => ({
      out: (t: string) => lines.push(t),
      err: (t: string) => lines.push(t),
    });
    const approved: string[] = [];
    assert.equal(await main(["approve", db, "call_w1"], io(approved)), 0, approved.join("\n"));
    const resumed: string[] = [];
    const code = await main(["resume", db, summary.runId!, "--json"], io(resumed));
    assert.equal(code, 0, resumed.join("\n"));
    const result = JSON.parse(resumed.filter((l) => l.startsWith("{")).join("\n"));
    assert.match(result.answer, /may not touch secrets \(notes\.txt -> \.env\.local\)/);
    assert.equal(result.answer.includes("resume-leak-4f3e"), false, result.answer);
  });
});
