import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { secretsGuardIn } from "../../cli/agent_run.ts";

describe("CLI secrets guard", () => {
  let ws: string;
  before(() => {
    ws = mkdtempSync(join(tmpdir(), "hookscope-secrets-"));
    writeFileSync(join(ws, ".env.local"), "KEY=1\n");
    writeFileSync(join(ws, "README.md"), "# hi\n");
    symlinkSync(join(ws, ".env.local"), join(ws, "notes.txt"));
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

  it("secretsGuard() lets ordinary calls and free text through", async () => {
    for (
      const args of [
        { command: "cat README.md" },
        { command: "ls -la" },
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
