// One team's Claude Code hook configuration (bash, Python and JavaScript scripts using every part
// of the protocol: exit 2 with stderr, JSON deny and ask, updatedInput and additionalContext, a
// script reading transcript_path, a crash, a timeout, PostToolUse context, PostToolUseFailure
// context) governs the same calls in three hosts: a hookscope session with the coding toolkit's
// real bash tool, AI SDK tools under wrapTools, and MCP tools from mcpTools. Each host shows the
// same outcomes for the same commands.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { tool } from "ai";
import { z } from "zod";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { type ActionResult, ApprovalRequiredError, Session, ToolDeniedError } from "../../mod.ts";
import { CodingToolkit } from "../../action/coding/mod.ts";
import { ToolFailedError, wrapTools } from "../../ai-sdk/mod.ts";
import { mcpTools } from "../../mcp/mod.ts";
import { claudeCodeHooks } from "../../claude/mod.ts";

const fixtures = fileURLToPath(new URL("../fixtures/claude_hooks/", import.meta.url));
const script = (name: string) => join(fixtures, name);

/** What a host did with one command. */
type Outcome =
  | { kind: "denied"; reason: string }
  | { kind: "ask"; reason: string }
  | { kind: "ran"; output: string; context: readonly string[] }
  | { kind: "failed"; context: readonly string[] };

interface Host {
  readonly session: Session;
  call(command: string): Promise<Outcome>;
  close(): Promise<void>;
}

const SHELL = "Bash|mcp__shell__bash";

function settings(): Record<string, unknown> {
  return {
    hooks: {
      PreToolUse: [
        {
          matcher: SHELL,
          hooks: [
            { type: "command", command: script("deny_rm.sh") },
            { type: "command", command: script("decide.py") },
            // Long enough for Python to start on a loaded machine (a late start was a deny).
            { type: "command", command: script("crash_or_hang.py"), timeout: 3 },
          ],
        },
        { matcher: "*", hooks: [{ type: "command", command: `node ${script("transcript.mjs")}` }] },
      ],
      PostToolUse: [
        { matcher: SHELL, hooks: [{ type: "command", command: script("post_context.sh") }] },
      ],
      PostToolUseFailure: [
        { matcher: SHELL, hooks: [{ type: "command", command: script("failure.py") }] },
      ],
    },
  };
}

function fromAct(result: ActionResult): Outcome {
  const output = JSON.stringify(result.output);
  if (/"success":false|"error"/.test(output)) {
    return { kind: "failed", context: result.context ?? [] };
  }
  return { kind: "ran", output, context: result.context ?? [] };
}

function fromError(error: unknown): Outcome {
  if (error instanceof ApprovalRequiredError) {
    return { kind: "ask", reason: error.approval.reason ?? "" };
  }
  if (error instanceof ToolDeniedError) return { kind: "denied", reason: error.reason };
  throw error;
}

describe("one Claude Code hook configuration in three hosts", () => {
  let dir: string;
  let settingsFile: string;
  let failureLog: string;
  before(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), "hookscope-claude-hosts-")));
    settingsFile = join(dir, "settings.json");
    writeFileSync(settingsFile, JSON.stringify(settings()));
    failureLog = join(dir, "failures.jsonl");
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const policy = () =>
    claudeCodeHooks(settingsFile, {
      projectDir: dir,
      env: { FAILURE_LOG: failureLog },
      transcriptDir: join(dir, "transcripts"),
    });

  async function codingToolkit(): Promise<Host> {
    const ws = join(dir, "ws");
    mkdirSync(join(ws, "victim"), { recursive: true });
    writeFileSync(join(ws, "victim", "data.txt"), "precious");
    const session = new Session();
    const toolkit = new CodingToolkit({
      workspaceRoot: ws,
      tools: ["bash"],
      sandbox: { kind: "none" },
    });
    for (const t of toolkit.bind()) session.defaultBranch.actions.register(t);
    policy()(session);
    await session.defaultBranch.addMessage({ role: "user", content: "tidy the workspace" });
    return {
      session,
      call: (command) =>
        // As the agent loop runs tools: a failure is told to the model, not thrown.
        session.defaultBranch.act({ function: "bash", arguments: { command } }, {
          suppressErrors: true,
        }).then(fromAct, fromError),
      close: () => {
        assert.equal(readFileSync(join(ws, "victim", "data.txt"), "utf8"), "precious");
        return Promise.resolve();
      },
    };
  }

  async function aiSdk(): Promise<Host> {
    const session = new Session();
    policy()(session);
    await session.defaultBranch.addMessage({ role: "user", content: "tidy the workspace" });
    const branch = session.newBranch({ name: "ai-sdk" });
    const tools = wrapTools({
      bash: tool({
        inputSchema: z.object({ command: z.string() }),
        execute: ({ command }: { command: string }) => {
          if (command.startsWith("cat missing")) throw new Error("Exit code 1: no such file");
          return `ran ${command}`;
        },
      }),
    }, { session, branch });
    let n = 0;
    return {
      session,
      call: async (command) => {
        const toolCallId = `call-${++n}`;
        const needs = tools.bash.needsApproval as (i: unknown, o: unknown) => Promise<boolean>;
        if (await needs({ command }, { toolCallId, messages: [] })) {
          // The AI SDK's approval flow would pause here; without an approval the call refuses.
          try {
            await tools.bash.execute!({ command }, { toolCallId, messages: [] });
          } catch (error) {
            return fromError(error);
          }
          throw new Error("an asked call ran without an approval");
        }
        try {
          const output = await tools.bash.execute!({ command }, { toolCallId, messages: [] });
          if (typeof output === "string" && output.startsWith("Tool call denied: ")) {
            return { kind: "denied", reason: output.slice("Tool call denied: ".length) };
          }
          const response = branch.messages.at(-1)!.content as { context?: string[] };
          return { kind: "ran", output: JSON.stringify(output), context: response.context ?? [] };
        } catch (error) {
          // The AI SDK tells the model a tool-error's message: it carries the hooks' context.
          if (error instanceof ToolFailedError) {
            assert.match(error.message, /^Exit code 1: no such file\n\n/);
            for (const c of error.context) assert.ok(error.message.includes(c));
            return { kind: "failed", context: error.context };
          }
          return fromError(error);
        }
      },
      close: () => Promise.resolve(),
    };
  }

  async function mcp(): Promise<Host> {
    const server = new McpServer({ name: "shell", version: "1.0.0" });
    server.registerTool(
      "bash",
      { inputSchema: { command: z.string() } },
      ({ command }: { command: string }) =>
        command.startsWith("cat missing")
          ? { isError: true, content: [{ type: "text", text: "Exit code 1: no such file" }] }
          : { content: [{ type: "text", text: `ran ${command}` }] },
    );
    const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(clientSide);
    const session = new Session();
    policy()(session);
    await session.defaultBranch.addMessage({ role: "user", content: "tidy the workspace" });
    await mcpTools(client, { prefix: "mcp__shell__", manager: session.defaultBranch.actions });
    return {
      session,
      call: (command) =>
        session.defaultBranch.act({ function: "mcp__shell__bash", arguments: { command } }, {
          suppressErrors: true,
        }).then(fromAct, fromError),
      close: () => client.close(),
    };
  }

  for (
    const [name, make, shellName] of [
      ["the coding toolkit's real bash tool", codingToolkit, "Bash"],
      ["AI SDK tools under wrapTools", aiSdk, "Bash"],
      ["MCP tools from mcpTools", mcp, "mcp__shell__bash"],
    ] as const
  ) {
    it(`governs ${name}`, async () => {
      rmSync(failureLog, { force: true });
      const host = await make();
      try {
        // exit 2 with stderr (bash)
        assert.deepEqual(await host.call("rm -rf victim"), {
          kind: "denied",
          reason: "recursive rm is not allowed here",
        });
        // JSON deny and ask (Python)
        assert.deepEqual(await host.call("curl http://example.test"), {
          kind: "denied",
          reason: "no network from PreToolUse",
        });
        assert.deepEqual(await host.call("git push origin main"), {
          kind: "ask",
          reason: "pushing needs a person",
        });
        // updatedInput and additionalContext (Python), transcript_path (JavaScript), PostToolUse
        const ran = await host.call("ls");
        assert.equal(ran.kind, "ran");
        if (ran.kind !== "ran") return;
        if (shellName === "Bash" && name.includes("toolkit")) {
          assert.match(ran.output, /total \d+/); // `ls -la` ran, not `ls`
        } else {
          assert.match(ran.output, /ran ls -la/);
        }
        assert.ok(
          ran.context.some((c) => /^listing rewritten to ls -la by /.test(c)),
          ran.context.join(),
        );
        assert.ok(
          ran.context.some((c) =>
            /^transcript has \d+ lines; last prompt: tidy the workspace; session true$/.test(c)
          ),
          ran.context.join(),
        );
        assert.ok(ran.context.includes("checked after the call by post_context.sh"));
        // a crash and a timeout deny (fail closed)
        const crashed = await host.call("crash-me");
        assert.equal(crashed.kind, "denied");
        assert.match((crashed as { reason: string }).reason, /crash_or_hang\.py.*failed/);
        const started = Date.now();
        const hung = await host.call("hang-me");
        assert.equal(hung.kind, "denied");
        assert.match((hung as { reason: string }).reason, /timed out after 3000 ms/);
        assert.ok(Date.now() - started < 20_000);
        // PostToolUseFailure: the script gets the failed call; its context reaches the model
        // (under the AI SDK in the tool error's message).
        const failed = await host.call("cat missing.txt");
        assert.equal(failed.kind, "failed", JSON.stringify(failed));
        // A failed call runs the PostToolUseFailure hooks, not the PostToolUse ones.
        assert.ok(
          !(failed as { context: readonly string[] }).context.includes(
            "checked after the call by post_context.sh",
          ),
        );
        const logged = readFileSync(failureLog, "utf8").trim().split("\n").map((l) =>
          JSON.parse(l)
        );
        assert.equal(logged.length, 1);
        assert.equal(logged[0].tool_name, shellName);
        assert.deepEqual(logged[0].tool_input, { command: "cat missing.txt" });
        assert.match(logged[0].error, /Exit code 1/);
        assert.ok(
          (failed as { context: readonly string[] }).context.some((c) =>
            c.startsWith(`failure.py saw ${shellName} \`cat missing.txt\` fail: `) &&
            c.includes("Exit code 1")
          ),
          JSON.stringify(failed),
        );
        assert.ok(existsSync(join(dir, "transcripts", `${host.session.id}.jsonl`)));
      } finally {
        await host.close();
      }
    });
  }
});
