/**
 * Memory of a long agent session (the second half of the memory check; `bench/memory.ts` is the
 * bus half).
 *
 * 1. Heap per stored message: 20 000 `addMessage` calls on a session's default branch with a
 *    bounded observer (`maxEvents: 1000`), once without a store and once with a `MemoryStore`
 *    (every message also persisted as a row). Heap growth after a full GC, divided by the count.
 * 2. A 10 000-turn scripted agent run: an OpenAI-compatible fixture server on 127.0.0.1 (the one
 *    the tests use) answers every request with a tool call, and every request that carries the
 *    tool's result with a final answer; 5 000 `operate()` runs of two model turns each, each run
 *    on a fresh agent (branch) of one session with `maxEvents: 1000`. Every model call goes over
 *    HTTP through `IModel`, the `api.*` bridge, the tool path and the hook bus. RSS and heap
 *    after a full GC at the start, after 1 000 turns and at the end, in two modes: branches kept
 *    (what a session does: its branches hold their messages) and each branch removed after its
 *    run (the steady state: only the bounded observer remains). The server runs in the same
 *    process (its sockets and buffers are part of the RSS); it is told to forget the requests it
 *    records for tests.
 *
 * ```sh
 * deno run -A --v8-flags=--expose-gc bench/memory_agent.ts
 * node --expose-gc --import tsx bench/memory_agent.ts
 * node_modules/.bin/bun bench/memory_agent.ts
 * ```
 *
 * @module
 */

import { z } from "zod";
import { AgentSpec, IModel, MemoryStore, Session, Tool } from "../mod.ts";
import {
  jsonReply,
  type RecordedRequest,
  startOpenAIServer,
} from "../tests/fixtures/openai_server.ts";
import { collect, mb, runtimeName, usage } from "./_memory.ts";

async function perMessage(store: boolean): Promise<void> {
  const count = 20_000;
  const session = new Session(
    store ? { maxEvents: 1000, store: new MemoryStore() } : {
      maxEvents: 1000,
    },
  );
  if (store) await session.start({});
  const branch = session.defaultBranch;
  for (let i = 0; i < 100; i++) await branch.addMessage({ role: "user", content: `warm ${i}` });
  await session.drainSignals();
  collect();
  const before = usage().heapUsed;
  for (let i = 0; i < count; i++) {
    await branch.addMessage({ role: i % 2 ? "assistant" : "user", content: `message ${i} ok` });
  }
  await session.drainSignals();
  collect();
  const after = usage().heapUsed;
  console.log(
    `per stored message (${
      store ? "MemoryStore + " : ""
    }maxEvents 1000): ${count} messages, heap +${mb(after - before)} = ${
      Math.round((after - before) / count)
    } bytes per message (kept: ${branch.messages.length})`,
  );
}

function toolCall(id: string): Record<string, unknown> {
  return {
    choices: [{
      index: 0,
      message: {
        role: "assistant",
        content: null,
        tool_calls: [{
          id,
          type: "function",
          function: { name: "lookup", arguments: JSON.stringify({ key: id }) },
        }],
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

async function agentRun(removeBranches: boolean): Promise<void> {
  let served = 0;
  // The fixture records every request for tests; this run forgets them (they are not the
  // library's memory).
  const recorded: { requests?: RecordedRequest[] } = {};
  const server = await startOpenAIServer((request: RecordedRequest) => {
    served++;
    recorded.requests?.splice(0);
    const messages = (request.body as { messages: { role: string }[] }).messages;
    return jsonReply(
      messages[messages.length - 1].role === "tool" ? answer("done") : toolCall(`c${served}`),
    );
  });
  recorded.requests = server.requests;
  let toolCalls = 0;
  const session = new Session({ maxEvents: 1000 });
  const model = new IModel({ model: "fixture", baseURL: server.baseURL, apiKey: "sk-fixture" });
  const spec = new AgentSpec({ name: "memory" });
  const tool = new Tool({
    name: "lookup",
    description: "Looks a key up",
    inputSchema: z.object({ key: z.string() }),
    execute: (args: { key: string }) => {
      toolCalls++;
      return { value: args.key.length };
    },
  });
  const runs = 5_000;
  const readings: string[] = [];
  const read = (label: string) => {
    collect();
    const { heapUsed, rss } = usage();
    readings.push(`${label}: rss ${mb(rss)}, heap ${mb(heapUsed)}`);
    return { heapUsed, rss };
  };
  const start = performance.now();
  let first = { heapUsed: 0, rss: 0 };
  for (let run = 0; run < runs; run++) {
    if (run === 50) first = read("after 100 turns");
    if (run === 500) read("after 1 000 turns");
    const agent = session.newBranch({ spec, model, system: "Memory check." });
    agent.actions.register(tool);
    const result = await agent.operate(`question ${run}`, { maxTurns: 4 });
    if (result.turns !== 2 || result.stoppedBy !== "answer") {
      throw new Error(`run ${run} ended ${result.stoppedBy} after ${result.turns} turns`);
    }
    if (removeBranches) session.removeBranch(agent);
  }
  await session.drainSignals();
  const seconds = (performance.now() - start) / 1000;
  const last = read("after 10 000 turns");
  await server.close();
  console.log(
    `10 000-turn agent run (${
      removeBranches ? "each branch removed after its run" : "branches kept"
    }): ${served} model calls over HTTP, ${toolCalls} tool calls in ${seconds.toFixed(1)} s; ${
      readings.join("; ")
    }; growth from 100 to 10 000 turns: rss +${mb(last.rss - first.rss)}, heap +${
      mb(last.heapUsed - first.heapUsed)
    } (${
      Math.round((last.heapUsed - first.heapUsed) / 9_900)
    } bytes per turn); branches ${session.branches.length}, observer events ${session.observer.events.length}`,
  );
}

async function main(): Promise<void> {
  const forced = collect();
  console.log(`# Memory check, agent session (${runtimeName()})`);
  console.log(forced ? "full GC before each reading" : "WARNING: no GC hook; readings are noisy");
  await perMessage(false);
  await perMessage(true);
  await agentRun(true);
  await agentRun(false);
}

await main();
