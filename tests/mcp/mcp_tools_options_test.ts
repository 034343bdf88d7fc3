// mcpTools' options are checked before anything is listed: a bad one is a TypeError that names
// it, never a tool set whose calls all fail (or that silently governs nothing) later.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { ActionManager, AgentSpec, Session } from "../../mod.ts";
import { mcpTools } from "../../mcp/mod.ts";

/** A connected client of an in-memory server with one tool, `shout`. */
async function connected(): Promise<Client> {
  const server = new McpServer({ name: "mem", version: "1.0.0" });
  server.registerTool(
    "shout",
    { inputSchema: { text: z.string() } },
    ({ text }: { text: string }) => ({ content: [{ type: "text", text: text.toUpperCase() }] }),
  );
  const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "test", version: "1.0.0" });
  await client.connect(clientSide);
  return client;
}

describe("mcpTools options", () => {
  it("refuses a timeoutMs above what a timer can hold (every call had timed out at once)", async () => {
    const client = await connected();
    try {
      await assert.rejects(
        mcpTools(client, { timeoutMs: 3e9 }),
        (error: unknown) =>
          error instanceof TypeError &&
          error.message ===
            "Cannot list MCP tools: timeoutMs must be at most 2147483647 (about 24.8 days); got 3000000000",
      );
      // The longest a timer holds works: a call answers.
      const branch = new Session().newBranch();
      const set = await mcpTools(client, { manager: branch.actions, timeoutMs: 2_147_483_647 });
      const result = await branch.act({ function: "shout", arguments: { text: "hi" } });
      assert.deepEqual((result.output as { content: unknown }).content, [
        { type: "text", text: "HI" },
      ]);
      set.close();
    } finally {
      await client.close();
    }
  });

  it("refuses a manager, spec or option key of another kind before listing", async () => {
    const client = await connected();
    const refused = (message: string) => (error: unknown): boolean => {
      assert.ok(error instanceof TypeError, String(error));
      assert.equal(error.message, `Cannot list MCP tools: ${message}`);
      return true;
    };
    try {
      await assert.rejects(
        mcpTools(client, { manager: {} as never }),
        refused("manager must be an ActionManager; got (object)"),
      );
      // A spec-like object had been accepted, and the first call failed on spec.hooksFor.
      await assert.rejects(
        mcpTools(client, { spec: { securityPre: () => {} } as never }),
        refused("spec must be an AgentSpec; got (object)"),
      );
      await assert.rejects(
        mcpTools(client, { manger: new ActionManager() } as never),
        (error: unknown) =>
          error instanceof TypeError &&
          error.message.startsWith(
            'Cannot list MCP tools: unknown option "manger"; valid options: server, prefix, manager, spec, timeoutMs,',
          ),
      );
      await assert.rejects(
        mcpTools(client, null as never),
        refused("options must be an object; got null"),
      );
      await assert.rejects(
        mcpTools(client, { onError: "log" as never }),
        refused('onError must be a function; got "log"'),
      );
      // The real kinds are accepted: the spec's hooks run on a call.
      const seen: string[] = [];
      const spec = new AgentSpec().pre("shout", ({ args }) => {
        seen.push(String(args.text));
        return undefined;
      });
      const branch = new Session().newBranch();
      const set = await mcpTools(client, { manager: branch.actions, spec });
      assert.deepEqual(set.tools.map((t) => t.name), ["shout"]);
      await branch.act({ function: "shout", arguments: { text: "x" } });
      assert.deepEqual(seen, ["x"]);
      set.close();
    } finally {
      await client.close();
    }
  });
});
