// A change-set approval through the CLI: `hookscope run`'s coding agent (real bubblewrap and
// overlayfs) runs `rm -r victim`, the preset's keepDataPolicy asks and the run stops; `hookscope
// pending` lists the change set, `hookscope approve` answers it (bound to its hash), and
// `hookscope resume` in another process commits the staged layer without running the command
// again. The layer lives in the directory `run --effects-dir` names (not the default one), and
// the resume finds it there from what the run stored.

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import process from "node:process";
import { main } from "../../cli/main.ts";
import { detectSandbox } from "../../action/coding/mod.ts";
import { SqliteStore } from "../../store/sqlite/mod.ts";
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

const ROOT = resolve(import.meta.dirname ?? new URL(".", import.meta.url).pathname, "../..");
const DENO = join(ROOT, "node_modules", ".bin", "deno");

async function cli(args: string[]) {
  const lines: string[] = [];
  const code = await main(args, { out: (t) => lines.push(t), err: (t) => lines.push(t) });
  return { code, text: lines.join("\n") };
}

function hookscope(args: string[], env: Record<string, string>) {
  return new Promise<{ code: number | null; out: string }>((resolvePromise, reject) => {
    const child = spawn(DENO, ["run", "-A", join(ROOT, "cli/main.ts"), ...args], {
      env: { ...process.env, NO_COLOR: "1", ...env },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let out = "";
    child.stdout!.on("data", (chunk) => (out += String(chunk)));
    child.stderr!.on("data", (chunk) => (out += String(chunk)));
    const timer = setTimeout(() => process.kill(-child.pid!, "SIGKILL"), 90_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolvePromise({ code, out });
    });
  });
}

/** One bash call deleting victim/, then an answer quoting the tool. */
function script(request: RecordedRequest): Reply {
  if (request.method === "GET") return jsonReply({ data: [] }); // run's reachability check
  const messages = (request.body as { messages: { role: string; content: unknown }[] }).messages;
  const last = messages.at(-1);
  if (last?.role === "tool") return sseReply(textEvents([`Tool said: ${String(last.content)}`]));
  const args = JSON.stringify({ command: "rm -r victim" });
  return sseReply(
    toolCallEvents([{ index: 0, id: "call_b1", name: "bash", argumentPieces: [args] }]),
  );
}

describe("a change-set approval through hookscope run, pending, approve and resume", () => {
  let dir: string;
  let server: OpenAIServer;
  before(async () => {
    const info = await detectSandbox();
    assert.equal(info.effects, "overlay", `overlayfs must mount: ${info.effectsReason}`);
    dir = realpathSync(mkdtempSync(join(tmpdir(), "hookscope-cli-effects-")));
    server = await startOpenAIServer(script);
  });
  after(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("the run stops on the change set, the CLI shows and approves it, resume commits it", async () => {
    const workspace = join(dir, "ws");
    mkdirSync(join(workspace, "victim"), { recursive: true });
    writeFileSync(join(workspace, "victim", "file"), "precious\n");
    const db = join(dir, "runs.db");
    const effects = join(dir, "effects");
    const ran = await cli([
      "run",
      "--base-url",
      server.baseURL,
      "--model",
      "test-model",
      "--db",
      db,
      "--workspace",
      workspace,
      "--prompt",
      "clean up",
      "--effects-dir",
      effects,
    ]);
    const timeline = ran.text;
    assert.equal(ran.code, 0, timeline);
    const summary = {
      runId: /run ([0-9a-f-]{36}) waits for a person's answer/.exec(timeline)?.[1],
      sessionId: /session ([0-9a-f-]{36}) waiting_approval/.exec(timeline)![1],
    };
    assert.ok(summary.runId, timeline);
    // The kept layer is in the directory the flag named.
    assert.ok(readdirSync(effects).length > 0);
    assert.match(timeline, /effects\s+staged: commands write into a copy-on-write layer/);
    assert.match(timeline, /effects\s+bash ASK \(2 deleted\): The command deletes 1 existing file/);
    assert.equal(existsSync(join(workspace, "victim", "file")), true);

    const pending = await cli(["pending", db]);
    assert.equal(pending.code, 0, pending.text);
    assert.match(
      pending.text,
      /change set of call_b1 \(2 entries, hash [0-9a-f]{12}\): the command has run in a staged copy/,
    );
    assert.match(pending.text, /deleted victim \(directory\)/);
    assert.match(pending.text, /deleted victim\/file \(file, 9 B\)/);
    const approved = await cli(["approve", db, "call_b1", "--by", "ana"]);
    assert.equal(approved.code, 0, approved.text);
    const store = await SqliteStore.open(db);
    try {
      const run = await store.getRun(summary.runId!);
      assert.match(String(run?.answers.call_b1?.effectsHash), /^[0-9a-f]{64}$/);
      assert.equal(run?.answers.call_b1?.effectsHash, run?.pending[0].effects?.hash);
    } finally {
      await store.close();
    }
    // Another process, whose default effects directory is elsewhere: the run's stored one counts.
    const resumed = await hookscope(["resume", db, summary.runId!], {
      XDG_STATE_HOME: join(dir, "elsewhere"),
    });
    assert.equal(resumed.code, 0, resumed.out);
    assert.match(
      resumed.out,
      new RegExp(
        `commit\\s+bash 2 deleted \\(undo: hookscope undo \\S+ call_b1 --effects-dir ${effects}\\)`,
      ),
    );
    assert.equal(existsSync(join(dir, "elsewhere")), false);
    assert.equal(existsSync(join(workspace, "victim")), false);
    // The resume applies ana's answer: it says so, and asks nobody again.
    assert.doesNotMatch(resumed.out, /effects\s+bash ASK/);
    assert.match(
      resumed.out,
      /effects\s+bash APPROVED by ana before the resume \(2 deleted\): committing the change set that was approved/,
    );
    const shown = await cli(["show", db, summary.sessionId]);
    assert.equal(shown.code, 0, shown.text);
    assert.equal(shown.text.match(/ApprovalRequested/g)?.length, 1, shown.text);
    assert.match(shown.text, /APPROVED bash call call_b1 by ana \(the stored answer, on resume\)/);
  });
});
