import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { ActionManager, AgentSpec, Session, ToolArgumentsError } from "../../mod.ts";
import { McpSchemaError, McpToolError, mcpTools, McpToolSkippedError } from "../../mcp/mod.ts";

async function until(check: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function inMemory(build: (server: McpServer) => void) {
  const received: { name: string; args: unknown }[] = [];
  const server = new McpServer({ name: "mem", version: "1.0.0" });
  build(server);
  server.registerTool(
    "add",
    { inputSchema: { a: z.number(), b: z.number() } },
    ({ a, b }: { a: number; b: number }) => {
      received.push({ name: "add", args: { a, b } });
      return {
        content: [{ type: "text", text: String(a + b) }],
        structuredContent: { sum: a + b },
      };
    },
  );
  const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "test", version: "1.0.0" });
  await client.connect(clientSide);
  return { server, client, received };
}

describe("mcpTools over the in-memory transport", () => {
  it("mcpTools() returns the server's tools with their JSON Schema and an mcp source", async () => {
    const { client } = await inMemory(() => {});
    const set = await mcpTools(client, { prefix: "m_" });
    assert.equal(set.server, "mem");
    assert.deepEqual(set.tools.map((t) => t.name), ["m_add"]);
    const tool = set.tools[0];
    assert.deepEqual(tool.source, { kind: "mcp", server: "mem" });
    const fn = tool.schema.function as { parameters: { properties: Record<string, unknown> } };
    assert.deepEqual(Object.keys(fn.parameters.properties), ["a", "b"]);
    set.close();
    await client.close();
  });

  it("a call keeps MCP's content blocks and structured content", async () => {
    const { client, received } = await inMemory(() => {});
    const manager = new ActionManager();
    await mcpTools(client, { manager });
    const call = await manager.invoke({ function: "add", arguments: { a: 2, b: 3 } });
    assert.equal(call.status, "completed");
    const response = call.response as { content: unknown[]; structuredContent: unknown };
    assert.deepEqual(response.content, [{ type: "text", text: "5" }]);
    assert.deepEqual(response.structuredContent, { sum: 5 });
    assert.deepEqual(received, [{ name: "add", args: { a: 2, b: 3 } }]);
    await client.close();
  });

  it("arguments that fail the server's schema never reach the server", async () => {
    const { client, received } = await inMemory(() => {});
    const manager = new ActionManager();
    await mcpTools(client, { manager });
    await assert.rejects(
      manager.invoke({ function: "add", arguments: { a: "two", b: 3 } }),
      (error: unknown) => {
        assert.ok(error instanceof ToolArgumentsError);
        assert.deepEqual(error.issues[0].path, ["a"]);
        return true;
      },
    );
    assert.deepEqual(received, []);
    await client.close();
  });

  it("a session tool.pre guard sees the mcp source and a denied call never reaches the server", async () => {
    const { client, received } = await inMemory(() => {});
    const session = new Session();
    const branch = session.newBranch();
    await mcpTools(client, { manager: branch.actions });
    const sources: unknown[] = [];
    session.hooks.on("tool.pre", (payload) => {
      const p = payload as unknown as { source?: unknown; args?: Record<string, unknown> };
      sources.push(p.source);
      if (p.args?.a === 666) throw new Error("no devil's sums");
    });
    await assert.rejects(branch.act({ function: "add", arguments: { a: 666, b: 1 } }), /devil/);
    assert.deepEqual(received, []);
    const ok = await branch.act({ function: "add", arguments: { a: 1, b: 1 } });
    assert.deepEqual((ok.output as { structuredContent: unknown }).structuredContent, { sum: 2 });
    assert.deepEqual(received, [{ name: "add", args: { a: 1, b: 1 } }]);
    for (const source of sources) assert.deepEqual(source, { kind: "mcp", server: "mem" });
    assert.equal(sources.length, 2);
    await client.close();
  });

  it("an isError result goes through tool.error as McpToolError with its content", async () => {
    const { client } = await inMemory((server) => {
      server.registerTool("boom", { inputSchema: {} }, () => ({
        isError: true,
        content: [{ type: "text", text: "disk on fire" }],
      }));
    });
    const session = new Session();
    const branch = session.newBranch();
    await mcpTools(client, { manager: branch.actions });
    const errors: unknown[] = [];
    session.hooks.on("tool.error", ({ error }) => void errors.push(error));
    await assert.rejects(branch.act({ function: "boom", arguments: {} }), /disk on fire/);
    assert.equal(errors.length, 1);
    assert.ok(errors[0] instanceof McpToolError);
    assert.deepEqual((errors[0] as McpToolError).result.content, [
      { type: "text", text: "disk on fire" },
    ]);
    await client.close();
  });

  it("a tool added at run time is registered on the manager and gets the spec's hooks", async () => {
    const { server, client, received } = await inMemory(() => {});
    const spec = new AgentSpec().pre("*", ({ args }) => ({
      decision: "allow",
      updatedArgs: { ...args, n: 21 },
    }));
    const manager = new ActionManager({ spec });
    const set = await mcpTools(client, { manager });
    assert.equal(manager.has("double"), false);
    server.registerTool("double", { inputSchema: { n: z.number() } }, ({ n }: { n: number }) => {
      received.push({ name: "double", args: { n } });
      return { content: [{ type: "text", text: String(n * 2) }] };
    });
    await until(() => manager.has("double"), "the list_changed refresh");
    const call = await manager.invoke({ function: "double", arguments: { n: 1 } });
    assert.deepEqual((call.response as { content: unknown }).content, [{
      type: "text",
      text: "42",
    }]);
    assert.deepEqual(received, [{ name: "double", args: { n: 21 } }]);
    assert.deepEqual(set.tools.map((t) => t.name).sort(), ["add", "double"]);
    set.close();
    await client.close();
  });

  it("a tool removed on the server is unregistered after the list change", async () => {
    let registered: { remove(): void } | undefined;
    const { client } = await inMemory((server) => {
      registered = server.registerTool("temp", { inputSchema: {} }, () => ({ content: [] }));
    });
    const manager = new ActionManager();
    await mcpTools(client, { manager });
    assert.equal(manager.has("temp"), true);
    registered!.remove();
    await until(() => !manager.has("temp"), "the removal");
    assert.equal(manager.has("add"), true);
    await client.close();
  });
});

describe("mcpTools with a malformed server", () => {
  /** A low-level server named `name` whose tools/list answers with `list`, and its client. */
  async function listingServer(
    name: string,
    list: (server: Server) => unknown,
    listChanged = false,
  ): Promise<{ server: Server; client: Client }> {
    const server = new Server({ name, version: "1.0.0" }, {
      capabilities: { tools: listChanged ? { listChanged: true } : {} },
    });
    server.setRequestHandler(ListToolsRequestSchema, () => list(server) as never);
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(a);
    const client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(b);
    return { server, client };
  }

  async function serverListing(tools: unknown[]): Promise<Client> {
    return (await listingServer("bad", () => ({ tools }))).client;
  }

  it("a tool with an unknown JSON Schema type is skipped, its McpSchemaError naming the place; the others are offered", async () => {
    const client = await serverListing([
      { name: "odd", inputSchema: { type: "object", properties: { a: { type: "strng" } } } },
      { name: "fine", inputSchema: { type: "object", properties: { a: { type: "string" } } } },
    ]);
    const seen: unknown[] = [];
    const set = await mcpTools(client, { onError: (e) => seen.push(e) });
    assert.deepEqual(set.tools.map((t) => t.name), ["fine"]);
    const [skipped] = set.skipped;
    assert.ok(skipped instanceof McpToolSkippedError);
    assert.equal(skipped.reason, "invalid-schema");
    assert.equal(skipped.toolName, "odd");
    assert.ok(skipped.cause instanceof McpSchemaError);
    assert.equal(skipped.cause.toolName, "odd");
    assert.match(skipped.message, /#\/properties\/a\/type: "strng" is not a JSON Schema type/);
    assert.deepEqual(seen, [skipped]);
    set.close();
    await client.close();
  });

  it("a tool the SDK's own schema refuses is skipped, not the whole list", async () => {
    const client = await serverListing([
      { name: "odd", inputSchema: { type: "array" } },
      { name: "nameless", inputSchema: { type: "object" } },
      { inputSchema: { type: "object" } },
      { name: "fine", inputSchema: { type: "object" } },
    ]);
    const set = await mcpTools(client);
    assert.deepEqual(set.tools.map((t) => t.name), ["nameless", "fine"]);
    assert.deepEqual(set.skipped.map((e) => [e.toolName, e.reason]), [
      ["odd", "invalid-schema"],
      ["", "invalid-schema"],
    ]);
    set.close();
    await client.close();
  });

  it("a bad tool arriving with a list change is skipped; the refresh still adds the good one", async () => {
    const tools: unknown[] = [{ name: "one", inputSchema: { type: "object" } }];
    const { server, client } = await listingServer("bad", () => ({ tools }), true);
    const manager = new ActionManager();
    const errors: unknown[] = [];
    const set = await mcpTools(client, { manager, onError: (e) => errors.push(e) });
    tools.push(
      { name: "broken", inputSchema: { type: "object", properties: { x: { type: "strng" } } } },
      { name: "refused", inputSchema: { type: "array" } },
      { name: "two", inputSchema: { type: "object" } },
    );
    await server.sendToolListChanged();
    await until(() => manager.has("two"), "the refresh");
    assert.deepEqual(set.tools.map((t) => t.name), ["one", "two"]);
    assert.deepEqual(set.skipped.map((e) => [e.toolName, e.reason]), [
      ["broken", "invalid-schema"],
      ["refused", "invalid-schema"],
    ]);
    assert.equal(manager.has("broken"), false);
    assert.ok(errors.every((e) => e instanceof McpToolSkippedError), String(errors));
    set.close();
    await client.close();
  });

  it("a list change sent while the first list is being answered is not lost", async () => {
    const tools: unknown[] = [{ name: "one", inputSchema: { type: "object" } }];
    let lists = 0;
    const { client } = await listingServer("eager", (server) => {
      const answer = { tools: [...tools] };
      if (lists++ === 0) {
        // A server that registers another tool as soon as a client has looked.
        tools.push({ name: "two", inputSchema: { type: "object" } });
        void server.sendToolListChanged();
      }
      return answer;
    }, true);
    const manager = new ActionManager();
    const set = await mcpTools(client, { manager });
    await until(() => manager.has("two"), "the refresh after the early list change", 3_000);
    assert.deepEqual(set.tools.map((t) => t.name), ["one", "two"]);
    // Refreshes asked for together share one list; one asked for later lists again.
    const [x, y] = await Promise.all([set.refresh(), set.refresh()]);
    assert.equal(x, y);
    const before = lists;
    await set.refresh();
    assert.equal(lists, before + 1);
    set.close();
    await client.close();
  });

  it("a set whose first list failed changes nothing later, though a list change came meanwhile", async () => {
    let lists = 0;
    const { client } = await listingServer("flaky", (server) => {
      if (lists++ === 0) {
        void server.sendToolListChanged();
        throw new Error("not ready");
      }
      return { tools: [{ name: "ghost", inputSchema: { type: "object" } }] };
    }, true);
    const manager = new ActionManager();
    const errors: unknown[] = [];
    await assert.rejects(mcpTools(client, { manager, onError: (e) => errors.push(e) }));
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(manager.has("ghost"), false);
    assert.deepEqual([lists, errors.length], [1, 0]);
    await client.close();
  });

  it("a tool list that is not a list at all is an McpSchemaError naming the server", async () => {
    const client = await serverListing("nope" as never);
    await assert.rejects(mcpTools(client), (error: unknown) => {
      assert.ok(error instanceof McpSchemaError);
      assert.match(error.message, /Cannot list the tools of MCP server "bad"/);
      return true;
    });
    await client.close();
  });

  it("bad options are TypeErrors", async () => {
    await assert.rejects(mcpTools(null as never), TypeError);
    const client = await serverListing([]);
    await assert.rejects(mcpTools(client, { timeoutMs: -1 }), TypeError);
    await client.close();
  });
});

describe("mcpTools over stdio (a real subprocess)", () => {
  it("calls reach the server process, denied ones do not, and a late tool gets the hooks", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hookscope-mcp-"));
    const log = join(dir, "calls.jsonl");
    writeFileSync(log, "");
    const transport = new StdioClientTransport({
      command: "node",
      args: [join(import.meta.dirname ?? ".", "../fixtures/mcp_stdio_server.mjs"), log],
      stderr: "pipe",
    });
    const client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(transport);
    try {
      const session = new Session();
      const spec = new AgentSpec().pre("late", ({ args }) => ({
        decision: "allow",
        updatedArgs: { n: Number(args.n) + 1 },
      }));
      const branch = session.newBranch({ spec });
      const set = await mcpTools(client, { manager: branch.actions });
      assert.equal(set.server, "fixture-stdio");
      session.hooks.on("tool.pre", (payload) => {
        const args = (payload as unknown as { args?: Record<string, unknown> }).args;
        if (String(args?.text ?? "").includes("secret")) throw new Error("denied: secret");
      });
      await assert.rejects(
        branch.act({ function: "echo", arguments: { text: "the secret" } }),
        /denied/,
      );
      const ok = await branch.act({ function: "echo", arguments: { text: "hi" } });
      assert.deepEqual((ok.output as { content: unknown }).content, [{ type: "text", text: "hi" }]);
      await assert.rejects(branch.act({ function: "fail", arguments: { why: "x" } }), McpToolError);
      await until(() => branch.actions.has("late"), "the late tool");
      const late = await branch.act({ function: "late", arguments: { n: 1 } });
      assert.deepEqual((late.output as { content: unknown }).content, [{
        type: "text",
        text: "4",
      }]);
      const lines = readFileSync(log, "utf8").trim().split("\n").map((l) => JSON.parse(l));
      assert.deepEqual(lines, [
        { name: "echo", args: { text: "hi" } },
        { name: "fail", args: { why: "x" } },
        { name: "late", args: { n: 2 } },
      ]);
      set.close();
    } finally {
      await client.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
