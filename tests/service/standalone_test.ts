// Loads the service scope alone (no Session, hooks, action or store code): ADR-0047 D1 says an
// IModel works standalone, e.g. in an edge function.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { EventStatus } from "../../core/mod.ts";
import {
  type APICalling,
  type HookedEvent,
  HookRegistry,
  IModel,
  type StreamChunk,
} from "../../service/mod.ts";
import {
  sseReply,
  startOpenAIServer,
  textEvents,
  toolCallEvents,
} from "../fixtures/openai_server.ts";

describe("service scope standalone", () => {
  it("a hooked, streamed model call runs with only @hookscope/core/service loaded", async () => {
    const server = await startOpenAIServer([
      sseReply(textEvents(["Bon", "jour"], { usage: { prompt: 9, completion: 2 } }), { gapMs: 2 }),
      sseReply(
        toolCallEvents([{
          index: 0,
          id: "call_1",
          name: "lookup",
          argumentPieces: ['{"q":', '"x"}'],
        }]),
      ),
    ]);
    try {
      const log: string[] = [];
      const registry = new HookRegistry();
      registry.preInvoke((event) => {
        const payload = (event as APICalling).payload;
        log.push(`pre:${payload.model}`);
      });
      registry.postInvoke((event) =>
        void log.push(`post:${(event as APICalling).id === created?.id}`)
      );
      registry.onChunk("text", (chunk: { text: string }) => {
        log.push(`text:${chunk.text}`);
        return { type: "text", text: `[${chunk.text}]` };
      });
      registry.onChunk(
        "tool_call",
        (chunk: { name: string }) => void log.push(`tool:${chunk.name}`),
      );
      let created: HookedEvent | undefined;
      const model = new IModel({
        model: "edge-model",
        baseURL: server.baseURL,
        apiKey: "edge-key",
        hookRegistry: registry,
      });

      const chunks: StreamChunk[] = [];
      for await (
        const chunk of model.stream(
          { messages: [{ role: "user", content: "salut" }] },
          { onEvent: (e) => (created = e) },
        )
      ) chunks.push(chunk);

      assert.deepEqual(chunks, [
        { type: "text", text: "[Bon]" },
        { type: "text", text: "[jour]" },
        { type: "usage", promptTokens: 9, completionTokens: 2, totalTokens: 11 },
        { type: "done", finishReason: "stop" },
      ]);
      assert.deepEqual(log, ["pre:edge-model", "text:Bon", "text:jour", "post:true"]);
      assert.equal(created?.status, EventStatus.COMPLETED);
      assert.equal(server.requests[0].headers.authorization, "Bearer edge-key");

      const second: StreamChunk[] = [];
      for await (const chunk of model.copy().stream({ messages: [] })) second.push(chunk);
      assert.deepEqual(second.filter((c) => c.type === "tool_call"), [
        { type: "tool_call", index: 0, id: "call_1", name: "lookup", arguments: '{"q":"x"}' },
      ]);
      assert.ok(log.includes("tool:lookup"));
    } finally {
      await server.close();
    }
  });

  it("service/ imports nothing but core/, its own files and eventsource-parser", () => {
    const root = fileURLToPath(new URL("../../service/", import.meta.url));
    const coreRoot = fileURLToPath(new URL("../../core/", import.meta.url));
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const path = `${dir}/${name}`;
        if (statSync(path).isDirectory()) walk(path);
        else if (name.endsWith(".ts")) files.push(path);
      }
    };
    walk(root.replace(/\/$/, ""));
    assert.ok(files.length > 5);
    const offenders: string[] = [];
    for (const file of files) {
      // Drop comments (JSDoc examples import the published names) before reading the imports.
      const text = readFileSync(file, "utf8").replace(/\/\*[\s\S]*?\*\//g, "").replace(
        /^\s*\/\/.*$/gm,
        "",
      );
      for (
        const match of text.matchAll(/^\s*(?:import|export)(?:[^"';]*?from)?\s*["']([^"']+)["']/gm)
      ) {
        const spec = match[1];
        const resolved = spec.startsWith(".") ? fileURLToPath(new URL(spec, `file://${file}`)) : "";
        const ok = spec === "eventsource-parser" || resolved.startsWith(root) ||
          resolved.startsWith(coreRoot);
        if (!ok) offenders.push(`${file}: ${spec}`);
      }
    }
    assert.deepEqual(offenders, []);
  });
});
