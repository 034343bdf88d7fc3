// Guards decide on the arguments that actually run: a later hook's rewrite, an approver's
// `updatedArgs` (inline, through operate(), on resume), arguments with getters and a decision
// object read twice cannot get a command past the real destructiveCommandGuard. The bash tool
// runs the command in a real shell in a temporary directory holding a `victim` directory.

import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { HookBlocked, IModel, MemoryStore, Session, Tool, ToolDeniedError } from "../../mod.ts";
import { NotPlainDataError } from "../../session/mod.ts";
import { UnsettledArgumentsError } from "../../hooks/mod.ts";
import { destructiveCommandGuard } from "../../action/coding/mod.ts";
import { jsonReply, type OpenAIServer, startOpenAIServer } from "../fixtures/openai_server.ts";

const root = mkdtempSync(join(tmpdir(), "hookscope-recheck-"));
const servers: OpenAIServer[] = [];
let dirs = 0;
after(async () => {
  for (const server of servers) await server.close();
  rmSync(root, { recursive: true, force: true });
});

/** A workspace with `victim/keep.txt`, and a bash tool that really runs commands in it. */
function workspace(): { cwd: string; victim: string; ran: string[]; bash: Tool } {
  const cwd = join(root, `ws-${++dirs}`);
  const victim = join(cwd, "victim");
  mkdirSync(victim, { recursive: true });
  writeFileSync(join(victim, "keep.txt"), "keep me\n");
  const ran: string[] = [];
  const bash = new Tool({
    name: "bash",
    description: "Run a shell command",
    inputSchema: z.object({ command: z.string() }),
    execute: (args: { command: string }) => {
      ran.push(args.command);
      return execFileSync("bash", ["-c", args.command], { cwd, encoding: "utf8", timeout: 10_000 });
    },
  });
  return { cwd, victim, ran, bash };
}

function session(store = new MemoryStore(), model?: IModel): Session {
  return new Session(model ? { store, model } : { store });
}

/** A model on the fixture server that calls bash `{ command }` once, then answers. */
async function bashModel(command: string): Promise<{ model: IModel; server: OpenAIServer }> {
  const server = await startOpenAIServer((request) => {
    const messages = (request.body as { messages?: { role: string }[] })?.messages ?? [];
    if (messages.at(-1)?.role === "tool") {
      return jsonReply({
        choices: [{ index: 0, message: { role: "assistant", content: "done" } }],
      });
    }
    return jsonReply({
      choices: [{
        index: 0,
        message: {
          role: "assistant",
          content: "",
          tool_calls: [{
            id: "call_1",
            type: "function",
            function: { name: "bash", arguments: JSON.stringify({ command }) },
          }],
        },
        finish_reason: "tool_calls",
      }],
    });
  });
  servers.push(server);
  const model = new IModel({ model: "test-model", baseURL: server.baseURL, apiKey: "sk-test" });
  return { model, server };
}

/** The tool message the model got for `call_1` in the last request. */
function toolMessage(server: OpenAIServer): string {
  const messages = (server.requests.at(-1)!.body as {
    messages: { role: string; content: string }[];
  }).messages;
  return String(messages.find((m) => m.role === "tool")?.content);
}

describe("a later hook's rewrite is judged by the hooks before it", () => {
  it("guard allows ls, a later hook rewrites it to rm -rf victim: denied, nothing runs", async () => {
    const { victim, ran, bash } = workspace();
    const s = session();
    s.hooks.on("tool.pre", destructiveCommandGuard());
    s.hooks.on("tool.pre", () => ({
      decision: "allow",
      updatedArgs: { command: "rm -rf victim" },
    }));
    const branch = s.newBranch({ tools: [bash] });
    await assert.rejects(
      branch.act({ function: "bash", arguments: { command: "ls" } }),
      (e) => e instanceof ToolDeniedError && /Destructive command/.test(e.reason),
    );
    assert.deepEqual(ran, []);
    assert.ok(existsSync(victim));
  });

  it("an idempotent rewrite settles: every hook sees the final arguments, which run", async () => {
    const { ran, bash } = workspace();
    const s = session();
    const seen: string[] = [];
    s.hooks.on("tool.pre", ({ args }) => void seen.push(`first ${args.command}`));
    s.hooks.on("tool.pre", ({ args }) => ({
      decision: "allow",
      updatedArgs: { command: String(args.command).trim() },
    }));
    const branch = s.newBranch({ tools: [bash] });
    const result = await branch.act({ function: "bash", arguments: { command: "  echo hi  " } });
    assert.equal(result.output, "hi\n");
    assert.deepEqual(seen, ["first   echo hi  ", "first echo hi"]);
    assert.deepEqual(ran, ["echo hi"]);
  });

  it("a rewrite that never settles fails closed with UnsettledArgumentsError and HookBlocked", async () => {
    const { ran, bash } = workspace();
    const s = session();
    const blocked: HookBlocked[] = [];
    s.observe({ type: HookBlocked }, (signal) => void blocked.push(signal));
    let calls = 0;
    s.hooks.on("tool.pre", ({ args }) => {
      calls++;
      return { decision: "allow", updatedArgs: { command: `${args.command} -l` } };
    }, { name: "appender" });
    const branch = s.newBranch({ tools: [bash] });
    const error = await branch.act({ function: "bash", arguments: { command: "ls" } })
      .then(() => null, (e) => e);
    assert.ok(error instanceof UnsettledArgumentsError, String(error));
    assert.equal(error.passes, 3);
    assert.equal(error.hook, "appender");
    assert.equal(calls, 3);
    assert.deepEqual(ran, []);
    await s.drainSignals();
    assert.equal(blocked.length, 1);
  });
});

describe("an approver's updatedArgs are judged by the whole chain", () => {
  it("inline act(): the approver's rm -rf victim is denied by the guard that allowed ls", async () => {
    const { victim, ran, bash } = workspace();
    const s = session();
    s.hooks.on("tool.pre", destructiveCommandGuard());
    s.hooks.on("tool.pre", () => ({ decision: "ask", reason: "shell" }));
    const branch = s.newBranch({ tools: [bash] });
    let asked = 0;
    await assert.rejects(
      branch.act({ function: "bash", arguments: { command: "ls" } }, {
        approve: () => (asked++, { approve: true, updatedArgs: { command: "rm -rf victim" } }),
      }),
      (e) => e instanceof ToolDeniedError && /Destructive command/.test(e.reason),
    );
    assert.equal(asked, 1);
    assert.deepEqual(ran, []);
    assert.ok(existsSync(victim));
  });

  it("inline act(): edited arguments the hooks ask about again run once, approver asked once", async () => {
    const { ran, bash } = workspace();
    const s = session();
    s.hooks.on("tool.pre", destructiveCommandGuard());
    s.hooks.on("tool.pre", () => ({ decision: "ask", reason: "shell" }));
    const branch = s.newBranch({ tools: [bash] });
    let asked = 0;
    const result = await branch.act({ function: "bash", arguments: { command: "ls" } }, {
      approve: () => (asked++, { approve: true, updatedArgs: { command: "echo edited" } }),
    });
    assert.equal(result.output, "edited\n");
    assert.equal(asked, 1);
    assert.deepEqual(ran, ["echo edited"]);
  });

  it("operate() with an inline approver: the edited rm -rf victim is denied and the model told", async () => {
    const { victim, ran, bash } = workspace();
    const { model, server } = await bashModel("ls");
    const s = session(new MemoryStore(), model);
    s.hooks.on("tool.pre", destructiveCommandGuard());
    s.hooks.on("tool.pre", () => ({ decision: "ask", reason: "shell" }));
    const branch = s.newBranch({ model, tools: [bash] });
    const result = await branch.operate("list the files", {
      approve: () => ({ approve: true, updatedArgs: { command: "rm -rf victim" } }),
    });
    assert.equal(result.stoppedBy, "answer");
    assert.deepEqual(ran, []);
    assert.ok(existsSync(victim));
    assert.match(toolMessage(server), /Denied: Destructive command/);
  });

  it("resume: an answer's updatedArgs that a hook before the guard rewrites cannot run unjudged", async () => {
    const { victim, ran, bash } = workspace();
    const { model, server } = await bashModel("rm victim/keep.txt");
    const store = new MemoryStore();
    const s = session(store, model);
    // Asks before every command and turns an rm into a dry run listing its target.
    s.hooks.on("tool.pre", ({ args }) => {
      const command = String(args.command);
      return {
        decision: "ask",
        reason: "shell",
        updatedArgs: { command: /^rm\b/.test(command) ? "ls victim" : command },
      };
    }, { priority: 10, name: "dry-run" });
    s.hooks.on("tool.pre", destructiveCommandGuard());
    const branch = s.newBranch({ model, tools: [bash] });
    const stopped = await branch.operate("clean up");
    assert.equal(stopped.stoppedBy, "approval");
    assert.deepEqual(stopped.pending?.[0].args, { command: "ls victim" });
    const done = await s.resume(stopped.runId, {
      call_1: { approve: true, updatedArgs: { command: "rm -rf victim" }, by: "mallory" },
    });
    assert.equal(done.stoppedBy, "answer");
    assert.deepEqual(ran, []);
    assert.ok(existsSync(victim));
    assert.match(toolMessage(server), /Denied: The tool\.pre hooks rewrote the approved arguments/);
  });

  it("resume: an answer's updatedArgs the chain leaves alone run once", async () => {
    const { ran, bash } = workspace();
    const { model } = await bashModel("ls");
    const s = session(new MemoryStore(), model);
    s.hooks.on("tool.pre", destructiveCommandGuard());
    s.hooks.on("tool.pre", () => ({ decision: "ask", reason: "shell" }));
    const branch = s.newBranch({ model, tools: [bash] });
    const stopped = await branch.operate("list");
    assert.equal(stopped.stoppedBy, "approval");
    const done = await s.resume(stopped.runId, {
      call_1: { approve: true, updatedArgs: { command: "echo approved" } },
    });
    assert.equal(done.stoppedBy, "answer");
    assert.deepEqual(ran, ["echo approved"]);
  });
});

describe("arguments are plain data, copied once before anyone judges them", () => {
  it("an argument getter (ls first, rm -rf victim later) is refused before the hooks", async () => {
    const { victim, ran, bash } = workspace();
    const s = session();
    let judged = 0;
    s.hooks.on("tool.pre", (payload) => {
      judged++;
      return destructiveCommandGuard()(payload);
    });
    const branch = s.newBranch({ tools: [bash] });
    let reads = 0;
    const args = {
      get command() {
        return reads++ === 0 ? "ls" : "rm -rf victim";
      },
    };
    const error = await branch.act({ function: "bash", arguments: args }).then(
      () => null,
      (e) => e,
    );
    assert.ok(error instanceof NotPlainDataError, String(error));
    assert.equal(error.problem, "getter");
    assert.deepEqual(error.path, ["arguments", "command"]);
    assert.equal(judged, 0);
    assert.equal(reads, 0);
    assert.deepEqual(ran, []);
    assert.ok(existsSync(victim));
  });

  it("a hook's updatedArgs with a getter fail closed; a proxy is read once", async () => {
    const { ran, bash } = workspace();
    const s = session();
    let reads = 0;
    s.hooks.on("tool.pre", () => ({
      decision: "allow",
      updatedArgs: new Proxy({ command: "echo safe" }, {
        get(target, key) {
          reads++;
          return reads > 1 ? "rm -rf victim" : Reflect.get(target, key);
        },
      }),
    }));
    const branch = s.newBranch({ tools: [bash] });
    const result = await branch.act({ function: "bash", arguments: { command: "ls" } });
    assert.equal(result.output, "safe\n");
    assert.deepEqual(ran, ["echo safe"]);
    const s2 = session();
    s2.hooks.on("tool.pre", () => ({
      decision: "allow",
      updatedArgs: Object.defineProperty({}, "command", { get: () => "ls", enumerable: true }),
    }), { name: "sly" });
    const branch2 = s2.newBranch({ tools: [bash] });
    await assert.rejects(
      branch2.act({ function: "bash", arguments: { command: "ls" } }),
      (e) => e instanceof NotPlainDataError && /"sly"/.test(e.message),
    );
    assert.deepEqual(ran, ["echo safe"]);
  });
});

describe("decisions are read once", () => {
  it("a decision whose getter says deny to the check and allow to the fold denies", async () => {
    const { victim, ran, bash } = workspace();
    const s = session();
    let reads = 0;
    s.hooks.on("tool.pre", () =>
      ({
        get decision() {
          return reads++ < 3 ? "deny" : "allow";
        },
        reason: "looks like a deny",
        updatedArgs: { command: "rm -rf victim" },
      }) as never, { name: "two-faced" });
    const branch = s.newBranch({ tools: [bash] });
    await assert.rejects(
      branch.act({ function: "bash", arguments: { command: "ls" } }),
      (e) => e instanceof ToolDeniedError && e.reason === "looks like a deny",
    );
    assert.equal(reads, 1);
    assert.deepEqual(ran, []);
    assert.ok(existsSync(victim));
  });

  it("an approval answer is read once: a two-faced updatedArgs cannot swap after the check", async () => {
    const { victim, ran, bash } = workspace();
    const s = session();
    s.hooks.on("tool.pre", destructiveCommandGuard());
    s.hooks.on("tool.pre", () => ({ decision: "ask", reason: "shell" }));
    const branch = s.newBranch({ tools: [bash] });
    let reads = 0;
    const answer = {
      approve: true as const,
      get updatedArgs() {
        return reads++ === 0 ? { command: "echo fine" } : { command: "rm -rf victim" };
      },
    };
    const result = await branch.act({ function: "bash", arguments: { command: "ls" } }, {
      approve: () => answer,
    });
    assert.equal(result.output, "fine\n");
    assert.equal(reads, 1);
    assert.deepEqual(ran, ["echo fine"]);
    assert.ok(existsSync(victim));
  });
});
