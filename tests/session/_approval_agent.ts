// The agent the approval tests run in this process and in child processes: a `note` tool that
// appends its arguments to a log file (so runs can be counted across processes), a `look` tool
// that needs no approval, and a tool.pre hook that asks before every `note` call.

import { appendFileSync } from "node:fs";
import { z } from "zod";
import { IModel, type Session, Tool } from "../../mod.ts";
import { jsonReply, type OpenAIServer, type Reply } from "../fixtures/openai_server.ts";

/** The tools, writing to `log`. */
export function approvalTools(log: string): Tool[] {
  return [
    new Tool({
      name: "note",
      description: "Save a note",
      inputSchema: z.object({ text: z.string() }),
      execute: (args: { text: string }) => {
        appendFileSync(log, `${JSON.stringify(args)}\n`);
        return { saved: args.text };
      },
    }),
    new Tool({
      name: "look",
      description: "Look around",
      execute: () => ({ seen: "a tidy room" }),
    }),
  ];
}

/** Registers the hook that asks before every `note` call. */
export function askBeforeNotes(session: Session): void {
  session.hooks.on(
    "tool.pre",
    ({ toolName }) =>
      toolName === "note"
        ? { decision: "ask", reason: "notes need a person's approval" }
        : undefined,
  );
}

/** A model on the fixture server. */
export function modelFor(baseURL: string): IModel {
  return new IModel({ model: "test-model", baseURL, apiKey: "sk-test" });
}

/**
 * The model's script: when the last message is a user message, one turn with text, a `look`
 * call and a `note` call (ids unique per request); after tool results, an answer quoting the
 * tool messages.
 */
export function approvalScript(): (request: { body: unknown }) => Reply {
  let n = 0;
  return (request) => {
    const messages = (request.body as { messages?: { role: string; content: unknown }[] })
      ?.messages ?? [];
    const last = messages.at(-1);
    if (last?.role === "tool") {
      const tools = messages.filter((m) => m.role === "tool").map((m) => String(m.content));
      return jsonReply({
        choices: [{
          index: 0,
          message: { role: "assistant", content: `done: ${tools.join(" | ")}` },
          finish_reason: "stop",
        }],
      });
    }
    n++;
    return jsonReply({
      choices: [{
        index: 0,
        message: {
          role: "assistant",
          content: "Let me look, then note it.",
          tool_calls: [
            { id: `look_${n}`, type: "function", function: { name: "look", arguments: "{}" } },
            {
              id: `note_${n}`,
              type: "function",
              function: { name: "note", arguments: JSON.stringify({ text: `draft ${n}` }) },
            },
          ],
        },
        finish_reason: "tool_calls",
      }],
    });
  };
}

/** The chat messages of a recorded request. */
export function messagesOf(server: OpenAIServer, index: number): Record<string, unknown>[] {
  return (server.requests[index].body as { messages: Record<string, unknown>[] }).messages;
}
