/**
 * An OpenAI-compatible chat-completions server on 127.0.0.1 that plays a fixed script of
 * streamed turns, so the demo runs offline with no API key. Built on `node:http`, which Deno,
 * Bun and Node all provide.
 *
 * @module
 */

import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { delay } from "../core/_async.ts";

/** One scripted model turn: text streamed in pieces, then optional tool calls. */
export interface ScriptedTurn {
  /** Text pieces, streamed one Server-Sent Operation each. */
  text?: readonly string[];
  /** Tool calls the model makes after the text. */
  toolCalls?: readonly { name: string; arguments: Record<string, unknown> }[];
  /** Milliseconds between streamed pieces (default 40). */
  gapMs?: number;
}

/** A running scripted server. */
export interface ScriptedModelServer {
  /** `http://127.0.0.1:<port>/v1` */
  readonly baseURL: string;
  /** How many chat requests it answered. */
  readonly requests: number;
  /** Stops the server and drops open connections. */
  close(): Promise<void>;
}

function chunk(delta: Record<string, unknown>, finishReason: string | null = null): string {
  return `data: ${
    JSON.stringify({
      id: "chatcmpl-demo",
      object: "chat.completion.chunk",
      created: 0,
      model: "hookscope-demo",
      choices: [{ index: 0, delta, finish_reason: finishReason }],
    })
  }\n\n`;
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const parts: Uint8Array[] = [];
  for await (const part of req) parts.push(part as Uint8Array);
  try {
    return JSON.parse(new TextDecoder().decode(Buffer.concat(parts)));
  } catch {
    return null;
  }
}

/**
 * Which turn a request is at: the number of assistant messages since the last user message (the
 * OpenAI format sends one assistant message per turn, carrying that turn's tool calls). Falls
 * back to the request count.
 */
function turnIndex(body: unknown, answered: number): number {
  const messages = (body as { messages?: { role?: string }[] } | null)?.messages;
  if (!Array.isArray(messages)) return answered;
  let turns = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role === "user") return turns;
    if (m?.role === "assistant") turns++;
  }
  return answered;
}

async function stream(res: ServerResponse, turn: ScriptedTurn, closed: () => boolean) {
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  const gap = turn.gapMs ?? 40;
  res.write(chunk({ role: "assistant", content: "" }));
  for (const piece of turn.text ?? []) {
    if (closed()) return;
    await delay(gap);
    res.write(chunk({ content: piece }));
  }
  const calls = turn.toolCalls ?? [];
  calls.forEach((call, index) => {
    const args = JSON.stringify(call.arguments);
    const half = Math.ceil(args.length / 2);
    res.write(chunk({
      tool_calls: [{
        index,
        id: `call_${crypto.randomUUID().slice(0, 8)}`,
        type: "function",
        function: { name: call.name, arguments: args.slice(0, half) },
      }],
    }));
    res.write(chunk({ tool_calls: [{ index, function: { arguments: args.slice(half) } }] }));
  });
  res.write(chunk({}, calls.length ? "tool_calls" : "stop"));
  res.write(
    `data: ${
      JSON.stringify({
        id: "chatcmpl-demo",
        object: "chat.completion.chunk",
        choices: [],
        usage: { prompt_tokens: 40, completion_tokens: 12, total_tokens: 52 },
      })
    }\n\n`,
  );
  res.write("data: [DONE]\n\n");
  res.end();
}

/** Starts the scripted server on 127.0.0.1 with an ephemeral port. */
export async function startScriptedModel(
  script: readonly ScriptedTurn[],
): Promise<ScriptedModelServer> {
  let answered = 0;
  const sockets = new Set<import("node:net").Socket>();
  const server = createServer(async (req, res) => {
    if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }));
      return;
    }
    const body = await readBody(req);
    const index = Math.min(turnIndex(body, answered), script.length - 1);
    answered++;
    let closed = false;
    res.on("close", () => void (closed = true));
    await stream(res, script[index], () => closed);
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    get requests() {
      return answered;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
