// Server-initiated requests over a real stdio server built on the official SDK: sampling goes
// through the model's service hooks (a policy can refuse it), elicitation through the session's
// tool.pre decisions and the approval path (a hook or a person answers).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  ApprovalAnswered,
  ApprovalRequested,
  FunctionEndpoint,
  IModel,
  Session,
  ToolDenied,
} from "../../mod.ts";
import {
  mcpElicitation,
  mcpSampling,
  McpSamplingError,
  McpToolError,
  mcpTools,
} from "../../mcp/mod.ts";

async function start(): Promise<Client> {
  const transport = new StdioClientTransport({
    command: "node",
    args: [join(import.meta.dirname ?? ".", "../fixtures/mcp_interactive_server.mjs")],
    stderr: "pipe",
  });
  const client = new Client({ name: "test", version: "1.0.0" }, {
    capabilities: { sampling: {}, elicitation: {} },
  });
  await client.connect(transport);
  return client;
}

function textOf(output: unknown): unknown {
  const content = (output as { content: { text: string }[] }).content;
  return JSON.parse(content[0].text);
}

describe("sampling requests of a real stdio server go through the model's service hooks", () => {
  it("answered by the user's IModel with maxTokens capped; a policy refuses another server's", {
    timeout: 60_000,
  }, async () => {
    const client = await start();
    try {
      const payloads: Record<string, unknown>[] = [];
      const seen: unknown[] = [];
      let refuse = false;
      const model = new IModel({
        model: "local-model",
        endpoint: new FunctionEndpoint({
          call: (payload) => {
            payloads.push(payload);
            return {
              model: "local-model-2026",
              choices: [{ message: { content: "A short summary." }, finish_reason: "length" }],
            };
          },
        }),
        hookRegistry: {
          hooks: {
            preInvoke: (_event, params) => {
              seen.push(params.mcp);
              if (refuse) throw new Error("no server-initiated model calls");
            },
          },
        },
      });
      const sampling = mcpSampling(client, { model, maxTokens: 256 });
      const session = new Session();
      const branch = session.defaultBranch;
      const set = await mcpTools(client, { manager: branch.actions });

      const ok = await branch.act({ function: "summarize", arguments: { text: "a long text" } });
      assert.deepEqual(textOf(ok.output), {
        role: "assistant",
        content: { type: "text", text: "A short summary." },
        model: "local-model-2026",
        stopReason: "maxTokens",
      });
      assert.equal(payloads.length, 1);
      assert.equal(payloads[0].max_tokens, 256, "the server asked for 100 000");
      assert.equal(payloads[0].temperature, 0.3);
      assert.deepEqual(payloads[0].messages, [
        { role: "system", content: "You summarize in one line." },
        { role: "user", content: "Summarize: a long text" },
      ]);
      assert.deepEqual(seen[0], {
        kind: "sampling",
        server: "fixture-interactive",
        requestedMaxTokens: 100_000,
        systemPrompt: "You summarize in one line.",
      });

      refuse = true;
      await assert.rejects(
        branch.act({ function: "summarize", arguments: { text: "again" } }),
        (error: unknown) => {
          assert.ok(error instanceof McpToolError);
          assert.match(
            error.message,
            /refused by a service hook: .*no server-initiated model calls/,
          );
          return true;
        },
      );
      assert.equal(payloads.length, 1, "the refused call never reached the endpoint");

      // Without the handler the client refuses sampling (the SDK's own answer).
      sampling.close();
      await assert.rejects(branch.act({ function: "summarize", arguments: { text: "x" } }));
      set.close();
    } finally {
      await client.close();
    }
  });

  it("bad options and a client without the capability are TypeErrors", () => {
    const model = new IModel({ model: "m", endpoint: new FunctionEndpoint({ call: () => ({}) }) });
    const bare = new Client({ name: "test", version: "1.0.0" });
    assert.throws(() => mcpSampling(bare, { model }), /capabilities: \{ sampling: \{\} \}/);
    const able = new Client({ name: "t", version: "1" }, { capabilities: { sampling: {} } });
    assert.throws(() => mcpSampling(able, {} as never), TypeError);
    assert.throws(() => mcpSampling(able, { model, maxTokens: 0 }), TypeError);
    assert.equal(new McpSamplingError("s", "refused", "m").reason, "refused");
  });
});

describe("elicitation requests of a real stdio server take the approval path", () => {
  it(
    "a hook declines, a person accepts with content, content off the schema declines, no person cancels",
    {
      timeout: 60_000,
    },
    async () => {
      const client = await start();
      try {
        const session = new Session();
        const branch = session.defaultBranch;
        session.hooks.on(
          "tool.pre",
          ({ args, source }) =>
            source?.kind === "mcp" && String(args.message).includes("/etc")
              ? { decision: "deny", reason: "never under /etc" }
              : undefined,
          { match: "mcp_elicitation", name: "no-etc" },
        );
        const recorded: string[] = [];
        for (const type of [ApprovalRequested, ApprovalAnswered, ToolDenied]) {
          session.observe({ type }, (signal) => {
            recorded.push(
              `${signal.constructor.name}:${(signal.data as { toolName: string }).toolName}`,
            );
          });
        }
        let answer: unknown = {
          approve: true,
          by: "alice",
          updatedArgs: { content: { confirm: true } },
        };
        const asked: unknown[] = [];
        const elicitation = mcpElicitation(client, {
          branch,
          approve: (pending) => {
            asked.push(pending.args);
            return answer as never;
          },
        });
        const set = await mcpTools(client, { manager: branch.actions });
        const call = (path: string) =>
          branch.act({ function: "confirm_delete", arguments: { path } });

        assert.deepEqual(textOf((await call("/etc/passwd")).output), { action: "decline" });
        assert.equal(asked.length, 0, "the hook answered; nobody was asked");
        assert.deepEqual(recorded, ["ToolDenied:mcp_elicitation"]);

        recorded.length = 0;
        assert.deepEqual(textOf((await call("notes.txt")).output), {
          action: "accept",
          content: { confirm: true },
        });
        assert.deepEqual(asked[0], {
          server: "fixture-interactive",
          message: "Delete notes.txt?",
          requestedSchema: {
            type: "object",
            properties: { confirm: { type: "boolean", description: "Delete it" } },
            required: ["confirm"],
          },
        });
        assert.deepEqual(recorded, [
          "ApprovalRequested:mcp_elicitation",
          "ApprovalAnswered:mcp_elicitation",
        ]);

        answer = { approve: true, updatedArgs: { content: { confirm: "yes" } } };
        assert.deepEqual(textOf((await call("a.txt")).output), { action: "decline" });
        answer = { approve: false, reason: "not now" };
        assert.deepEqual(textOf((await call("a.txt")).output), { action: "decline" });
        answer = { approve: false, interrupt: true };
        assert.deepEqual(textOf((await call("a.txt")).output), { action: "cancel" });

        // A hook may answer the form itself.
        const off = session.hooks.on("tool.pre", ({ args }) => ({
          decision: "allow",
          updatedArgs: { ...args, content: { confirm: false } },
        }), { match: "mcp_elicitation" });
        asked.length = 0;
        assert.deepEqual(textOf((await call("b.txt")).output), {
          action: "accept",
          content: { confirm: false },
        });
        assert.equal(asked.length, 0);
        off();

        // A hook's ask sets the terms: only ana may answer, within a short time.
        const terms = session.hooks.on(
          "tool.pre",
          () => ({ decision: "ask", answerableBy: ["ana"], expiresInMs: 300 }),
          { match: "mcp_elicitation" },
        );
        const answered: Record<string, unknown>[] = [];
        const stopWatching = session.observe(
          { type: ApprovalAnswered },
          (s) => void answered.push(s.data as Record<string, unknown>),
        );
        const pendings: Record<string, unknown>[] = [];
        elicitation.close();
        const termed = mcpElicitation(client, {
          branch,
          approve: (pending, { signal }) => {
            pendings.push(pending as unknown as Record<string, unknown>);
            if (answer === "never") {
              return new Promise((_, reject) =>
                signal.addEventListener("abort", () => reject(signal.reason))
              );
            }
            return answer as never;
          },
        });
        answer = { approve: true, by: "bo", updatedArgs: { content: { confirm: true } } };
        assert.deepEqual(textOf((await call("d.txt")).output), { action: "decline" });
        assert.deepEqual(pendings[0].answerableBy, ["ana"]);
        assert.equal(typeof pendings[0].expiresAt, "number");
        assert.match(String(answered.at(-1)?.reason), /"bo" may not answer it/);
        answer = { approve: true, by: "ana", updatedArgs: { content: { confirm: true } } };
        assert.deepEqual(textOf((await call("d.txt")).output), {
          action: "accept",
          content: { confirm: true },
        });
        answer = "never";
        assert.deepEqual(textOf((await call("d.txt")).output), { action: "decline" });
        assert.deepEqual(
          { approve: answered.at(-1)?.approve, reason: answered.at(-1)?.reason },
          { approve: false, reason: "expired" },
        );
        stopWatching();
        terms();
        termed.close();

        const nobody = mcpElicitation(client, { branch });
        assert.deepEqual(textOf((await call("c.txt")).output), { action: "cancel" });
        nobody.close();
        set.close();
      } finally {
        await client.close();
      }
    },
  );
});
