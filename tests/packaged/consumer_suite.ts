// The packaged-consumer suite: what a user who installed @hookscope/core sees. It imports only the
// public names (`@hookscope/core`, `@hookscope/core/coding`, …), which the consumer folder maps to
// the staged package: over http from a local static server for Deno (the file set JSR serves),
// through an installed `npm pack` tarball for Node 20, Node 24 and Bun. scripts/packaged/run.ts
// copies it (and the README's examples, into examples/) to a folder outside the repository and
// runs it there; it is not a `*_test.ts` file, so the main suite does not pick it up.

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Session, Tool, ToolDeniedError, type ToolPreDecision } from "@hookscope/core";
import { HookBus } from "@hookscope/core/hooks";
import { IModel } from "@hookscope/core/service";
import { ActionManager, AgentSpec, GateDeniedError } from "@hookscope/core/action";
import {
  codingSpec,
  CodingToolkit,
  destructiveCommandGuard,
  guardDestructive,
  judgeCommand,
} from "@hookscope/core/coding";
import { z } from "zod";

declare const Deno: unknown;
declare const Bun: unknown;

/** Which runtime runs the suite. */
const RUNTIME = typeof Deno !== "undefined" ? "deno" : typeof Bun !== "undefined" ? "bun" : "node";
const nodeMajor = Number(
  (globalThis as { process?: { versions?: { node?: string } } }).process?.versions?.node?.split(
    ".",
  )[0] ?? 0,
);
const [nodeMinor] = ((globalThis as { process?: { versions?: { node?: string } } }).process
  ?.versions?.node?.split(".").slice(1, 2) ?? ["0"]).map(Number);
/** `node:sqlite` without a flag: Node ≥ 22.13 (Deno and Bun have their own). */
const HAS_SQLITE = RUNTIME !== "node" || nodeMajor > 22 || (nodeMajor === 22 && nodeMinor >= 13);

/** One README example, extracted by scripts/packaged/run.ts into examples/. */
interface Example {
  readonly file: string;
  readonly heading: string;
  readonly imports: readonly string[];
}

const examples = JSON.parse(
  readFileSync(new URL("./examples/index.json", import.meta.url), "utf8"),
) as Example[];

function deadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`Timed out after ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

describe(`packaged @hookscope/core on ${RUNTIME}`, () => {
  it("loads every public entry by its package name", async () => {
    const entries: [string, string][] = [
      ["@hookscope/core", "Session"],
      ["@hookscope/core/hooks", "HookBus"],
      ["@hookscope/core/session", "Session"],
      ["@hookscope/core/service", "IModel"],
      ["@hookscope/core/action", "ActionManager"],
      ["@hookscope/core/coding", "CodingToolkit"],
      ["@hookscope/core/store/sqlite", "SqliteStore"],
      ["@hookscope/core/store/postgres", "PostgresStore"],
      ["@hookscope/core/mcp", "mcpTools"],
      ["@hookscope/core/ai-sdk", "hookscopeMiddleware"],
      ["@hookscope/core/otel", "instrument"],
    ];
    if (RUNTIME === "deno") entries.push(["@hookscope/core/cli", "main"]);
    for (const [entry, name] of entries) {
      const mod = (await deadline(import(entry), 60_000, entry)) as Record<string, unknown>;
      assert.equal(typeof mod[name], "function", `${entry} exports ${name}`);
    }
  });

  it("the shell guard parses from the package: judgeCommand allows ls -la, denies rm -rf /", async () => {
    assert.equal(await deadline(judgeCommand("ls -la"), 60_000, "judgeCommand"), undefined);
    const verdict = await judgeCommand("rm -rf /");
    assert.equal(verdict?.decision, "deny");
    assert.match(verdict?.reason ?? "", /rm/);
    // Parsed, not pattern-matched: the delete hides inside a nested shell string.
    assert.equal((await judgeCommand("timeout 5 sh -c 'find . -delete'"))?.decision, "deny");
  });

  it("destructiveCommandGuard as a session tool.pre hook: ls -la runs, rm -rf / is denied", async () => {
    const session = new Session();
    const ran: string[] = [];
    session.defaultBranch.actions.register(
      new Tool({
        name: "bash",
        inputSchema: z.object({ command: z.string() }),
        execute: ({ command }: { command: string }) => void ran.push(command),
      }),
    );
    session.hooks.on("tool.pre", destructiveCommandGuard());
    await session.defaultBranch.act({ function: "bash", arguments: { command: "ls -la" } });
    await assert.rejects(
      session.defaultBranch.act({ function: "bash", arguments: { command: "rm -rf /" } }),
      ToolDeniedError,
    );
    assert.deepEqual(ran, ["ls -la"]);
  });

  it("codingSpec() guards bash on an ActionManager: ls -la runs, rm -rf / is refused", async () => {
    const manager = new ActionManager({ spec: codingSpec({ cwd: tmpdir() }) });
    manager.register(
      new Tool({
        name: "bash",
        inputSchema: z.object({ command: z.string() }),
        execute: ({ command }: { command: string }) => `ran ${command}`,
      }),
    );
    const ok = await manager.invoke({ function: "bash", arguments: { command: "ls -la" } });
    assert.equal(ok.response, "ran ls -la");
    await assert.rejects(
      manager.invoke({ function: "bash", arguments: { command: "rm -rf /" } }),
      (error: GateDeniedError) =>
        error instanceof GateDeniedError && /Destructive/.test(error.reason),
    );
  });

  it("the coding toolkit's guard: a harmless command runs, a destructive one never starts", async () => {
    const root = realpathSync(mkdtempSync(join(tmpdir(), "hookscope-consumer-")));
    try {
      writeFileSync(join(root, "keep.txt"), "kept\n");
      const session = new Session();
      const toolkit = new CodingToolkit({
        workspaceRoot: root,
        spec: codingSpec({ cwd: root }),
        sandbox: { kind: "none" },
      });
      toolkit.bind(session.defaultBranch);
      const listed = await session.defaultBranch.act(
        { function: "bash", arguments: { command: "ls" } },
        { timeoutMs: 60_000 },
      );
      assert.match(JSON.stringify(listed.output), /keep\.txt/);
      await assert.rejects(
        session.defaultBranch.act({ function: "bash", arguments: { command: "rm -rf ." } }),
        /Destructive command/,
      );
      assert.equal(readFileSync(join(root, "keep.txt"), "utf8"), "kept\n");
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("the tool-scope guard from the README: guardDestructive as an AgentSpec security hook", async () => {
    const manager = new ActionManager({
      spec: new AgentSpec({ name: "coder" }).securityPre("bash", guardDestructive),
    });
    manager.register(new Tool({ name: "bash", execute: () => "ran" }));
    assert.equal(
      (await manager.invoke({ function: "bash", arguments: { command: "git status" } })).response,
      "ran",
    );
    await assert.rejects(
      manager.invoke({ function: "bash", arguments: { command: "git push --force" } }),
      GateDeniedError,
    );
  });

  it("a session with a tool.pre hook decides on the real arguments", async () => {
    const session = new Session();
    session.defaultBranch.actions.register(
      new Tool({ name: "echo", execute: (a: { text: string }) => a.text }),
    );
    session.hooks.on(
      "tool.pre",
      ({ args }): ToolPreDecision =>
        String(args.text).includes("secret")
          ? { decision: "deny", reason: "no secrets" }
          : { decision: "allow", updatedArgs: { text: String(args.text).toUpperCase() } },
    );
    const ok = await session.defaultBranch.act({ function: "echo", arguments: { text: "hi" } });
    assert.equal(ok.output, "HI");
    await assert.rejects(
      session.defaultBranch.act({ function: "echo", arguments: { text: "a secret" } }),
      (error: Error) => error instanceof ToolDeniedError && /no secrets/.test(error.message),
    );
    const bus = new HookBus();
    const seen: string[] = [];
    bus.on("tool.pre", ({ toolName }) => void seen.push(toolName));
    await bus.emit("tool.pre", {
      toolName: "x",
      args: {},
      callId: "c",
      argsSummary: "",
      signal: new AbortController().signal,
      source: { kind: "local" },
    });
    assert.deepEqual(seen, ["x"]);
  });

  it("service scope: an IModel calls and streams from an OpenAI-compatible server on 127.0.0.1", async () => {
    const requests: { auth: string | undefined; body: Record<string, unknown> }[] = [];
    const server = createServer((request: IncomingMessage, response: ServerResponse) => {
      let text = "";
      request.on("data", (chunk: Uint8Array) => (text += new TextDecoder().decode(chunk)));
      request.on("end", () => {
        const body = JSON.parse(text) as Record<string, unknown>;
        requests.push({ auth: request.headers.authorization, body });
        if (!body.stream) {
          response.writeHead(200, { "content-type": "application/json" });
          response.end(JSON.stringify({
            choices: [{ message: { role: "assistant", content: "pong" }, finish_reason: "stop" }],
          }));
          return;
        }
        response.writeHead(200, { "content-type": "text/event-stream" });
        for (const piece of ["Hel", "lo"]) {
          response.write(
            `data: ${JSON.stringify({ choices: [{ delta: { content: piece } }] })}\n\n`,
          );
        }
        response.write(
          `data: ${JSON.stringify({ choices: [{ delta: {}, finish_reason: "stop" }] })}\n\n`,
        );
        response.end("data: [DONE]\n\n");
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const port = (server.address() as { port: number }).port;
      const phases: string[] = [];
      const model = new IModel({
        model: "fixture",
        baseURL: `http://127.0.0.1:${port}/v1`,
        apiKey: "consumer-key",
        hookRegistry: {
          hooks: {
            preInvoke: () => void phases.push("pre"),
            postInvoke: () => void phases.push("post"),
          },
          streamHandlers: {
            text: (chunk) => ({ ...chunk, text: chunk.text.toUpperCase() }),
          },
        },
      });
      const event = await deadline(
        model.invoke({ messages: [{ role: "user", content: "ping" }] }),
        30_000,
        "invoke",
      );
      assert.equal(event.status, "completed");
      assert.match(JSON.stringify(event.execution.response), /pong/);
      const text: string[] = [];
      for await (const chunk of model.stream({ messages: [{ role: "user", content: "hi" }] })) {
        if (chunk.type === "text") text.push(chunk.text);
      }
      assert.deepEqual(text, ["HEL", "LO"]);
      assert.deepEqual(phases, ["pre", "post", "pre", "post"]);
      assert.equal(requests.length, 2);
      assert.equal(requests[0].auth, "Bearer consumer-key");
      assert.equal(requests[1].body.stream, true);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  describe("the README's examples", () => {
    it("were all extracted", () => {
      assert.ok(examples.length >= 8, `only ${examples.length} README examples`);
    });
    for (const example of examples) {
      const needsSqlite = example.imports.includes("@hookscope/core/store/sqlite");
      it(
        `README: ${example.heading} (${example.file})`,
        needsSqlite && !HAS_SQLITE ? { skip: "node:sqlite needs Node ≥ 22.13 here" } : {},
        async () => {
          await deadline(import(`./examples/${example.file}`), 120_000, example.file);
        },
      );
    }
  });
});
