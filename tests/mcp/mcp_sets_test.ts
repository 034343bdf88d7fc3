// mcpTools with several tool sets on one client, progress over a real stdio server, and
// task-only tools.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { ActionManager } from "../../mod.ts";
import { type McpProgressEvent, mcpTools, type McpToolSkippedError } from "../../mcp/mod.ts";

async function until(check: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("several tool sets on one client", () => {
  it("both sets follow list changes and the user's own handler still runs", async () => {
    const server = new McpServer({ name: "mem", version: "1.0.0" });
    server.registerTool("one", { inputSchema: {} }, () => ({ content: [] }));
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(a);
    const client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(b);
    let userSaw = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      userSaw++;
    });
    const first = new ActionManager();
    const second = new ActionManager();
    const setA = await mcpTools(client, { manager: first });
    const setB = await mcpTools(client, { manager: second, prefix: "b_" });
    server.registerTool("two", { inputSchema: {} }, () => ({ content: [] }));
    await until(() => first.has("two") && second.has("b_two") && userSaw > 0, "all three");
    assert.deepEqual(setA.tools.map((t) => t.name), ["one", "two"]);
    assert.deepEqual(setB.tools.map((t) => t.name), ["b_one", "b_two"]);

    // A closed set stops following; the other and the user's handler go on.
    setA.close();
    const seen = userSaw;
    server.registerTool("three", { inputSchema: {} }, () => ({ content: [] }));
    await until(() => second.has("b_three") && userSaw > seen, "the second set and the user");
    assert.equal(first.has("three"), false);
    setB.close();
    await client.close();
  });
});

describe("mcpTools over a real stdio server with progress and task-only tools", () => {
  async function start(): Promise<Client> {
    const transport = new StdioClientTransport({
      command: "node",
      args: [join(import.meta.dirname ?? ".", "../fixtures/mcp_progress_server.mjs")],
      stderr: "pipe",
    });
    const client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(transport);
    return client;
  }

  it("progress notifications arrive as typed events and can extend the deadline", {
    timeout: 30_000,
  }, async () => {
    const client = await start();
    try {
      const events: McpProgressEvent[] = [];
      const manager = new ActionManager();
      await mcpTools(client, {
        manager,
        // Each step comes 1.5 s after the last, 4.5 s in all: only the reset lets the call finish.
        timeoutMs: 4_000,
        resetTimeoutOnProgress: true,
        onProgress: (event) => events.push(event),
      });
      const call = await manager.invoke({ function: "steps", arguments: {} }, { callId: "c1" });
      assert.deepEqual((call.response as { content: unknown }).content, [{
        type: "text",
        text: "done",
      }]);
      assert.deepEqual(events.map((e) => [e.type, e.tool, e.callId, e.progress, e.total]), [
        ["progress", "steps", "c1", 1, 3],
        ["progress", "steps", "c1", 2, 3],
        ["progress", "steps", "c1", 3, 3],
      ]);
      assert.equal(events[2].message, "step 3");
      assert.equal(events[0].server, "fixture-progress");
    } finally {
      await client.close();
    }
  });

  it(
    "without resetTimeoutOnProgress the same call hits its deadline",
    { timeout: 30_000 },
    async () => {
      const client = await start();
      try {
        const manager = new ActionManager();
        await mcpTools(client, { manager, timeoutMs: 2_000, onProgress: () => {} });
        await assert.rejects(
          manager.invoke({ function: "steps", arguments: {} }),
          /timed out|timeout/i,
        );
      } finally {
        await client.close();
      }
    },
  );

  it(
    "a tool that requires task-based execution is not offered, and says why",
    { timeout: 30_000 },
    async () => {
      const client = await start();
      try {
        const manager = new ActionManager();
        const errors: unknown[] = [];
        const set = await mcpTools(client, { manager, onError: (e) => errors.push(e) });
        assert.deepEqual(set.tools.map((t) => t.name), ["steps"]);
        assert.equal(manager.has("batch"), false);
        assert.deepEqual(set.skipped.map((s) => [s.toolName, s.reason]), [[
          "batch",
          "task-required",
        ]]);
        const error = errors[0] as McpToolSkippedError;
        assert.equal(error.name, "McpToolSkippedError");
        assert.match(error.message, /requires task-based execution/);
      } finally {
        await client.close();
      }
    },
  );
});
