// A second OS process for the resume test: restores the session from the SQLite file, wraps the
// same agent, restores the serialized RunState (file STATE) and runs it. Prints one JSON line.

import process from "node:process";
import { readFileSync } from "node:fs";
import { run, RunState } from "@openai/agents";
import { Session } from "../../../mod.ts";
import { SqliteStore } from "../../../store/sqlite/mod.ts";
import { wrapAgentTools } from "../../../openai-agents/mod.ts";
import { askBeforeRemove, makeAgent, ScriptedModel, toolOutputs } from "./_agent.ts";

const env = process.env;
const store = await SqliteStore.open(env.DB!);
try {
  const session = await Session.restore(store, env.SESSION!);
  askBeforeRemove(session);
  const model = new ScriptedModel([{ text: "removed it" }]);
  const agent = wrapAgentTools(makeAgent(model, env.LOG!), {
    session,
    approvedBy: "second-process",
  });
  const state = await RunState.fromString(agent, readFileSync(env.STATE!, "utf8"));
  const result = await run(agent, state);
  await session.drainSignals();
  console.log(JSON.stringify({
    finalOutput: result.finalOutput,
    interruptions: result.interruptions.length,
    toolOutputs: toolOutputs(model),
  }));
} catch (error) {
  console.error("resume failed:", error, JSON.stringify(error));
  process.exitCode = 1;
} finally {
  await store.close();
}
process.exit(process.exitCode ?? 0);
