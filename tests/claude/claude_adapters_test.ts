// The same Claude Code hook script governs tools that reach a hookscope session through the
// adapters: AI SDK tools wrapped by wrapTools (the real `ai` package's generateText loop with its
// mock model) and MCP tools from mcpTools (the official SDK's server over its in-memory transport).
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateText, stepCountIs, tool } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { Session, ToolDeniedError } from "../../mod.ts";
import { wrapTools } from "../../ai-sdk/mod.ts";
import { mcpTools } from "../../mcp/mod.ts";
import { claudeCodeHooks } from "../../claude/mod.ts";

// A bash hook that refuses any call whose input names a path under /etc.
const NO_ETC = {
  type: "command" as const,
  command:
    `input=$(cat); case "$input" in *'"/etc'*) echo "paths under /etc are off limits" >&2; exit 2;; esac`,
};

describe("claudeCodeHooks through the adapters", () => {
  // The transcripts the hooks are given go here, not to the default under the temporary directory.
  let transcriptDir: string;
  before(() => {
    transcriptDir = mkdtempSync(join(tmpdir(), "hookscope-claude-adapters-"));
  });
  after(() => rmSync(transcriptDir, { recursive: true, force: true }));

  it("governs AI SDK tools wrapped by wrapTools in a generateText loop", async () => {
    const ran: string[] = [];
    const session = new Session();
    claudeCodeHooks(
      { hooks: { PreToolUse: [{ matcher: "remove|read", hooks: [NO_ETC] }] } },
      { transcriptDir },
    )(session);
    const tools = wrapTools({
      remove: tool({
        inputSchema: z.object({ path: z.string() }),
        execute: ({ path }) => {
          ran.push(path);
          return "removed";
        },
      }),
    }, { session });
    const prompts: unknown[][] = [];
    let turn = 0;
    const model = new MockLanguageModelV3({
      doGenerate: (options) => {
        prompts.push(options.prompt as unknown[]);
        const calls = turn++ === 0;
        return Promise.resolve({
          content: calls
            ? [
              {
                type: "tool-call",
                toolCallId: "c1",
                toolName: "remove",
                input: JSON.stringify({ path: "/etc/passwd" }),
              },
              {
                type: "tool-call",
                toolCallId: "c2",
                toolName: "remove",
                input: JSON.stringify({ path: "tmp/x" }),
              },
            ]
            : [{ type: "text", text: "done" }],
          finishReason: calls
            ? { unified: "tool-calls", raw: "tool_calls" }
            : { unified: "stop", raw: "stop" },
          usage: {
            inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
            outputTokens: { total: 1, text: 1, reasoning: 0 },
          },
          warnings: [],
        } as never);
      },
    });
    const result = await generateText({ model, tools, prompt: "tidy", stopWhen: stepCountIs(3) });
    assert.equal(result.text, "done");
    assert.deepEqual(ran, ["tmp/x"]);
    assert.match(JSON.stringify(prompts[1]), /paths under \/etc are off limits/);
  });

  it("governs MCP tools (Claude's mcp__server__tool names) from mcpTools", async () => {
    const received: string[] = [];
    const server = new McpServer({ name: "files", version: "1.0.0" });
    server.registerTool(
      "delete",
      { inputSchema: { path: z.string() } },
      ({ path }: { path: string }) => {
        received.push(path);
        return { content: [{ type: "text", text: `deleted ${path}` }] };
      },
    );
    const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(clientSide);
    try {
      const session = new Session();
      claudeCodeHooks(
        { hooks: { PreToolUse: [{ matcher: "mcp__files__.*", hooks: [NO_ETC] }] } },
        { transcriptDir },
      )(session);
      await mcpTools(client, { prefix: "mcp__files__", manager: session.defaultBranch.actions });
      await assert.rejects(
        session.defaultBranch.act({
          function: "mcp__files__delete",
          arguments: { path: "/etc/hosts" },
        }),
        (error: unknown) => error instanceof ToolDeniedError && /off limits/.test(error.message),
      );
      const ok = await session.defaultBranch.act({
        function: "mcp__files__delete",
        arguments: { path: "notes/a.md" },
      });
      assert.match(JSON.stringify(ok.output), /deleted notes\/a\.md/);
      assert.deepEqual(received, ["notes/a.md"]);
    } finally {
      await client.close();
    }
  });
});
