import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { AgentSpec, IModel, type OperateResult, Session, Tool } from "../../mod.ts";
import { guardDestructive } from "../../action/coding/mod.ts";
import { runStoreOf } from "../../session/_run_store.ts";
import {
  jsonReply,
  type OpenAIServer,
  type Reply,
  type Script,
  sseReply,
  startOpenAIServer,
  textEvents,
  toolCallEvents,
} from "../fixtures/openai_server.ts";

function toolCallCompletion(
  calls: { id: string; name: string; args: unknown }[],
): Record<string, unknown> {
  return {
    id: "chatcmpl-tools",
    object: "chat.completion",
    model: "test-model",
    choices: [{
      index: 0,
      message: {
        role: "assistant",
        content: null,
        tool_calls: calls.map((c) => ({
          id: c.id,
          type: "function",
          function: {
            name: c.name,
            arguments: typeof c.args === "string" ? c.args : JSON.stringify(c.args),
          },
        })),
      },
      finish_reason: "tool_calls",
    }],
  };
}

function answer(text: string): Record<string, unknown> {
  return {
    choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
  };
}

const servers: OpenAIServer[] = [];
async function serve(script: Script): Promise<OpenAIServer> {
  const server = await startOpenAIServer(script);
  servers.push(server);
  return server;
}

function agentFor(server: OpenAIServer) {
  const session = new Session();
  const model = new IModel({ model: "test-model", baseURL: server.baseURL, apiKey: "sk-test" });
  const spec = new AgentSpec({ name: "tester" }).securityPre("bash", guardDestructive);
  const agent = session.newBranch({ spec, model, system: "You are a test agent." });
  const commands: string[] = [];
  agent.actions.register(
    new Tool({
      name: "bash",
      description: "Run a command",
      inputSchema: z.object({ command: z.string() }),
      execute: (args: { command: string }) => {
        commands.push(args.command);
        return { stdout: `ran ${args.command}`, returnCode: 0 };
      },
    }),
  );
  return { session, agent, commands };
}

describe("agent loop against a real OpenAI-compatible server", () => {
  before(() => {});
  after(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });

  it("Branch.chat() sends the system prompt and history and adds the answer", async () => {
    const server = await serve([jsonReply(answer("hello back"))]);
    const { agent } = agentFor(server);
    const message = await agent.chat("hello");
    assert.equal(message.role, "assistant");
    assert.equal(message.content, "hello back");
    const body = server.requests[0].body as {
      messages: { role: string; content: string }[];
      model: string;
    };
    assert.deepEqual(body.messages.map((m) => m.role), ["system", "user"]);
    assert.equal(body.messages[0].content, "You are a test agent.");
    assert.equal(body.model, "test-model");
    assert.equal(server.requests[0].headers.authorization, "Bearer sk-test");
  });

  it("Branch.operate() runs a two-turn tool-calling conversation", async () => {
    const server = await serve([
      jsonReply(toolCallCompletion([{ id: "call_1", name: "bash", args: { command: "ls" } }])),
      jsonReply(answer("The folder has files.")),
    ]);
    const { agent, commands } = agentFor(server);
    const result = await agent.operate("what is here?");
    assert.equal(result.turns, 2);
    assert.equal(result.stoppedBy, "answer");
    assert.equal(result.message.content, "The folder has files.");
    assert.deepEqual(commands, ["ls"]);
    const first = server.requests[0].body as { tools: { function: { name: string } }[] };
    assert.equal(first.tools[0].function.name, "bash");
    const second = server.requests[1].body as { messages: Record<string, unknown>[] };
    const tool = second.messages.find((m) => m.role === "tool")!;
    assert.equal(tool.tool_call_id, "call_1");
    assert.match(String(tool.content), /ran ls/);
    const call = second.messages.find((m) => Array.isArray(m.tool_calls))!;
    assert.equal((call.tool_calls as { id: string }[])[0].id, "call_1");
  });

  it("Branch.operate() sends a multi-tool turn in the OpenAI wire format: one assistant message with every tool call, then one tool message per call", async () => {
    const withText = toolCallCompletion([
      { id: "call_a", name: "bash", args: { command: "ls" } },
      { id: "call_b", name: "bash", args: { command: "pwd" } },
    ]);
    (withText.choices as { message: { content: string | null } }[])[0].message.content =
      "Looking around.";
    const server = await serve([
      jsonReply(withText),
      jsonReply(toolCallCompletion([
        { id: "call_c", name: "bash", args: { command: "whoami" } },
        { id: "call_d", name: "bash", args: { command: "date" } },
      ])),
      jsonReply(answer("All done.")),
    ]);
    const { agent } = agentFor(server);
    const result = await agent.operate("inspect", { request: { temperature: 0 } });
    assert.equal(result.stoppedBy, "answer");
    assert.equal(result.turns, 3);
    const tools = (server.requests[0].body as { tools: unknown }).tools;
    const system = { role: "system", content: "You are a test agent." };
    const user = { role: "user", content: "inspect" };
    const call = (id: string, command: string) => ({
      id,
      type: "function",
      function: { name: "bash", arguments: JSON.stringify({ command }) },
    });
    const toolMessage = (id: string, command: string) => ({
      role: "tool",
      tool_call_id: id,
      content: JSON.stringify({ stdout: `ran ${command}`, returnCode: 0 }),
    });
    const turnOne = [
      {
        role: "assistant",
        content: "Looking around.",
        tool_calls: [call("call_a", "ls"), call("call_b", "pwd")],
      },
      toolMessage("call_a", "ls"),
      toolMessage("call_b", "pwd"),
    ];
    assert.deepEqual(server.requests[0].body, {
      temperature: 0,
      messages: [system, user],
      tools,
      model: "test-model",
    });
    assert.deepEqual(server.requests[1].body, {
      temperature: 0,
      messages: [system, user, ...turnOne],
      tools,
      model: "test-model",
    });
    assert.deepEqual(server.requests[2].body, {
      temperature: 0,
      messages: [
        system,
        user,
        ...turnOne,
        {
          role: "assistant",
          content: null,
          tool_calls: [call("call_c", "whoami"), call("call_d", "date")],
        },
        toolMessage("call_c", "whoami"),
        toolMessage("call_d", "date"),
      ],
      tools,
      model: "test-model",
    });
  });

  it("Branch.operate() feeds a guard denial back to the model instead of running the tool", async () => {
    const server = await serve([
      jsonReply(
        toolCallCompletion([{ id: "call_rm", name: "bash", args: { command: "rm -rf /" } }]),
      ),
      jsonReply(answer("I will not do that.")),
    ]);
    const { agent, commands, session } = agentFor(server);
    const errors: unknown[] = [];
    session.hooks.on("tool.error", (p) => void errors.push(p.error));
    const result = await agent.operate("clean up");
    assert.deepEqual(commands, []);
    assert.match(JSON.stringify(result.actions[0].output), /Blocked destructive command/);
    const tool = (server.requests[1].body as { messages: Record<string, unknown>[] }).messages
      .find((m) => m.role === "tool")!;
    assert.match(String(tool.content), /Blocked destructive command/);
    // An AgentSpec security hook denies like any other denial: the model reads "Denied: …",
    // ToolDenied is recorded, and no tool.error fires (the tool never ran).
    assert.match(String(tool.content), /"error":"Denied: /);
    assert.equal(errors.length, 0);
  });

  it("Branch.operate() answers a session tool.pre block and malformed arguments with readable errors", async () => {
    const server = await serve([
      jsonReply(toolCallCompletion([
        { id: "c1", name: "bash", args: { command: "cat .env" } },
        { id: "c2", name: "bash", args: "{not json" },
      ])),
      jsonReply(answer("ok")),
    ]);
    const { agent, commands, session } = agentFor(server);
    session.hooks.on("tool.pre", ({ argsSummary }) => {
      if (argsSummary.includes(".env")) throw new Error("secrets are off limits");
    });
    const result = await agent.operate("read secrets");
    assert.deepEqual(commands, []);
    assert.match(
      JSON.stringify(result.actions[0].output),
      /Blocked by a tool.pre guard: secrets are off limits/,
    );
    assert.match(JSON.stringify(result.actions[1].output), /Invalid tool arguments/);
    const tools = (server.requests[1].body as { messages: Record<string, unknown>[] }).messages
      .filter((m) => m.role === "tool");
    assert.deepEqual(tools.map((m) => m.tool_call_id), ["c1", "c2"]);
  });

  it("Branch.operate() uses object arguments as sent and answers non-object arguments with an error", async () => {
    const raw = (args: unknown[]) => ({
      choices: [{
        index: 0,
        message: {
          role: "assistant",
          content: null,
          tool_calls: args.map((a, i) => ({
            id: `o${i}`,
            type: "function",
            function: { name: "bash", arguments: a },
          })),
        },
        finish_reason: "tool_calls",
      }],
    });
    const server = await serve([
      jsonReply(raw([{ command: "pwd" }, 42, ["ls"]])),
      jsonReply(answer("ok")),
    ]);
    const { agent, commands } = agentFor(server);
    const result = await agent.operate("run");
    assert.deepEqual(
      commands,
      ["pwd"],
      "the object arguments reached the tool; nothing ran with {}",
    );
    assert.deepEqual(result.actions[0].arguments, { command: "pwd" });
    assert.match(JSON.stringify(result.actions[1].output), /Invalid tool arguments/);
    assert.match(JSON.stringify(result.actions[2].output), /Invalid tool arguments/);
  });

  it("Branch.operate() rejects with a failing message callback's error instead of calling it a guard block", async () => {
    const server = await serve([
      jsonReply(toolCallCompletion([{ id: "c1", name: "bash", args: { command: "ls" } }])),
      jsonReply(answer("ok")),
    ]);
    const { agent, commands } = agentFor(server);
    const broken = new Error("audit sink down");
    agent.onMessageAdded((message) => {
      if (message.role === "action_response") throw broken;
    });
    await assert.rejects(agent.operate("list"), (error: unknown) => error === broken);
    assert.deepEqual(commands, ["ls"]);
    const responses = agent.messages.filter((m) => m.role === "action_response");
    assert.equal(responses.length, 1, "no second request/response pair for the same call");
    assert.doesNotMatch(JSON.stringify(responses[0].content), /Blocked by a tool.pre guard/);
  });

  it("Branch.operate() and operateStream() reject a tool call without a function name with a TypeError", async () => {
    const nameless = {
      choices: [{
        index: 0,
        message: {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "n1", type: "function", function: { arguments: "{}" } }],
        },
        finish_reason: "tool_calls",
      }],
    };
    const server = await serve([
      jsonReply(nameless),
      sseReply(toolCallEvents([{ index: 0, id: "n2", name: "", argumentPieces: ["{}"] }])),
    ]);
    const { agent, commands } = agentFor(server);
    await assert.rejects(agent.operate("go"), /tool call "n1": it has no function name/);
    await assert.rejects(
      async () => {
        for await (const _ of agent.operateStream("go")) { /* consume */ }
      },
      (error: unknown) =>
        error instanceof TypeError && /"n2": it has no function name/.test(error.message),
    );
    assert.deepEqual(commands, []);
    assert.equal(agent.messages.filter((m) => m.role === "action_request").length, 0);
  });

  it("Branch.operate() stops after maxTurns", async () => {
    const server = await serve(() =>
      jsonReply(toolCallCompletion([{ id: "c", name: "bash", args: { command: "ls" } }]))
    );
    const { agent } = agentFor(server);
    const result = await agent.operate("loop", { maxTurns: 2 });
    assert.equal(result.stoppedBy, "maxTurns");
    assert.equal(server.requests.length, 2);
    await assert.rejects(agent.operate("x", { maxTurns: 0 }), RangeError);
  });

  it("Branch.operateStream() yields text as it arrives, runs streamed tool calls, and streams the answer", async () => {
    const server = await serve([
      sseReply(
        toolCallEvents([{
          index: 0,
          id: "s1",
          name: "bash",
          argumentPieces: ['{"comm', 'and":"pwd"}'],
        }]),
      ),
      sseReply(textEvents(["Your ", "folder ", "is /ws."]), { gapMs: 5 }),
    ]);
    const { agent, commands } = agentFor(server);
    const seen: string[] = [];
    for await (const event of agent.operateStream("where am I?")) {
      if (event.type === "text") seen.push(`text:${event.text}`);
      else if (event.type === "tool_call") {
        seen.push(`call:${event.call.name}:${event.call.arguments}`);
      } else if (event.type === "tool_result") seen.push(`result:${event.result.function}`);
      else seen.push(`done:${event.result.turns}`);
    }
    assert.deepEqual(seen, [
      'call:bash:{"command":"pwd"}',
      "result:bash",
      "text:Your ",
      "text:folder ",
      "text:is /ws.",
      "done:2",
    ]);
    assert.deepEqual(commands, ["pwd"]);
    assert.equal(agent.messages.at(-1)!.content, "Your folder is /ws.");
  });

  it("cancelling Branch.operateStream() mid-stream aborts the request; the server sees the close", async () => {
    const server = await serve([
      sseReply(textEvents(Array.from({ length: 50 }, (_, i) => `w${i} `)), { gapMs: 20 }),
    ]);
    const { agent } = agentFor(server);
    const reader = agent.operateStream("talk a lot").getReader();
    const first = await reader.read();
    assert.equal(first.done, false);
    await reader.cancel("user stopped");
    await Promise.race([
      server.requests[0].closed,
      new Promise((_, reject) =>
        setTimeout(() => reject(new Error("server never saw the close")), 5000)
      ),
    ]);
    assert.equal(server.requests[0].clientClosed, true);
  });

  it("aborting the signal of Branch.operateStream() ends the stream with stoppedBy aborted and an aborted run", async () => {
    const server = await serve([
      sseReply(textEvents(Array.from({ length: 50 }, (_, i) => `w${i} `)), { gapMs: 20 }),
    ]);
    const { agent, session } = agentFor(server);
    const controller = new AbortController();
    const reader = agent.operateStream("talk", { signal: controller.signal }).getReader();
    await reader.read();
    controller.abort(new Error("stop now"));
    let result: OperateResult | undefined;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (value.type === "done") result = value.result;
    }
    assert.equal(result?.stoppedBy, "aborted");
    await server.requests[0].closed;
    const run = await runStoreOf(agent).getRun(result!.runId);
    assert.equal(run?.status, "aborted");
    assert.equal(run?.sessionId, session.id);
  });

  it("aborting the signal of Branch.operate() resolves with stoppedBy aborted", async () => {
    const server = await serve([{ kind: "hang" }]);
    const { agent } = agentFor(server);
    const controller = new AbortController();
    const pending = agent.operate("wait", { signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 50));
    controller.abort(new Error("stop now"));
    const result = await pending;
    assert.equal(result.stoppedBy, "aborted");
    assert.equal(result.turns, 0);
    assert.equal(result.message.role, "user");
  });

  it("Branch.chat() surfaces an HTTP failure as the endpoint's typed error", async () => {
    const server = await serve([{ kind: "error", status: 500, body: { error: "down" } } as Reply]);
    const { agent } = agentFor(server);
    await assert.rejects(agent.chat("hi"), (error: unknown) => {
      assert.equal((error as { status?: number }).status, 500);
      return true;
    });
  });
});
