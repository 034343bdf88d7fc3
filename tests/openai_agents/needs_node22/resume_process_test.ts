import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import process from "node:process";
import { run } from "@openai/agents";
import { Session } from "../../../mod.ts";
import { SqliteStore } from "../../../store/sqlite/mod.ts";
import { answerApproval, wrapAgentTools } from "../../../openai-agents/mod.ts";
import { askBeforeRemove, makeAgent, ScriptedModel } from "./_agent.ts";

// An ask stops the run in this process; the approved RunState is serialized to a file, and a
// second OS process restores the session from the same SQLite file and the state from the file,
// and runs it: the approved call runs there, once.

const HERE = resolve(import.meta.dirname ?? new URL(".", import.meta.url).pathname);
const CHILD = join(HERE, "_resume_child.ts");
const dir = mkdtempSync(join(tmpdir(), "hookscope-openai-agents-"));
after(() => rmSync(dir, { recursive: true, force: true }));

function childCommand(): string[] {
  if ("Deno" in globalThis) return ["run", "-A", CHILD];
  if ("Bun" in globalThis) return [CHILD];
  return ["--import", "tsx", CHILD];
}

function runChild(env: Record<string, string>): Promise<Record<string, unknown>> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, childCommand(), {
      cwd: resolve(HERE, "../../.."),
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (chunk) => (stdout += String(chunk)));
    child.stderr!.on("data", (chunk) => (stderr += String(chunk)));
    const timer = setTimeout(() => child.kill("SIGKILL"), 90_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      const line = stdout.trim().split("\n").filter((l) => l.startsWith("{")).at(-1);
      if (code !== 0 || !line) {
        reject(new Error(`child exited ${code}: ${stderr}${stdout}`));
      } else resolvePromise(JSON.parse(line));
    });
  });
}

function logLines(path: string): unknown[] {
  let text = "";
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return [];
  }
  return text.split("\n").filter(Boolean).map((l) => JSON.parse(l));
}

describe("a RunState resumed in another process", () => {
  it("runs the approved call exactly once, there, with every decision in the store", {
    timeout: 180_000,
  }, async () => {
    const db = join(dir, "session.db");
    const log = join(dir, "ran.log");
    const stateFile = join(dir, "state.json");
    const store = await SqliteStore.open(db);
    const session = new Session({ store });
    await session.start();
    askBeforeRemove(session);
    const model = new ScriptedModel([
      { calls: [{ id: "c1", name: "remove", args: { path: "old.log" } }] },
    ]);
    const agent = wrapAgentTools(makeAgent(model, log), { session });
    const first = await run(agent, "remove old.log");
    assert.equal(first.interruptions.length, 1);
    await answerApproval(first.state, first.interruptions[0], true);
    writeFileSync(stateFile, first.state.toString());
    await session.drainSignals();
    await store.close();
    assert.deepEqual(logLines(log), []);

    const env = { DB: db, LOG: log, STATE: stateFile, SESSION: session.id };
    const resumed = await runChild(env);
    assert.equal(resumed.finalOutput, "removed it");
    assert.equal(resumed.interruptions, 0);
    assert.deepEqual(resumed.toolOutputs, { c1: "removed old.log" });
    assert.deepEqual(logLines(log), [{ remove: "old.log" }]);

    // The same state resumed once more (another process, the stored session): the call does not
    // run again; the model gets the recorded output.
    const again = await runChild(env);
    assert.deepEqual(again.toolOutputs, { c1: "removed old.log" });
    assert.deepEqual(logLines(log), [{ remove: "old.log" }]);

    const reader = await SqliteStore.open(db, { readOnly: true });
    try {
      const rows = await reader.listSessionSignals(session.id);
      const kinds = rows.map((r) => r.kind).filter((k) =>
        k === "ApprovalRequested" || k === "ApprovalAnswered" || k === "ToolDenied"
      );
      // Asked when the run stopped (first process), asked and answered when it ran (second).
      assert.deepEqual(kinds, ["ApprovalRequested", "ApprovalRequested", "ApprovalAnswered"]);
      const answered = rows.find((r) => r.kind === "ApprovalAnswered")!;
      const data = answered.payload.data as Record<string, unknown>;
      assert.equal(data.approve, true);
      assert.equal(data.by, "second-process");
      assert.equal(answered.opId, "c1");
      const messages = await reader.listMessages({ sessionId: session.id });
      const responses = messages.filter((m) => m.role === "action_response");
      assert.equal(responses.length, 1);
    } finally {
      await reader.close();
    }
  });
});
