// A second OS process for the change-set approval test: restores the session from the SQLite
// file DB, binds a toolkit over WORKSPACE (state in STATE) to its branch and resumes RUN with
// ANSWERS (JSON). Prints the result as one JSON line.

import process from "node:process";
import { Session } from "../../../session/mod.ts";
import { SqliteStore } from "../../../store/sqlite/mod.ts";
import { codingSpec } from "../../../action/coding/mod.ts";
import { bashModel, effectsToolkit } from "./_effects_agent.ts";

const env = process.env;
const store = await SqliteStore.open(env.DB!);
try {
  const session = await Session.restore(store, env.SESSION!, {
    branch: () => ({
      spec: codingSpec({ cwd: env.WORKSPACE! }),
      model: bashModel(env.COMMAND!, env.CALL!),
    }),
  });
  for (const branch of session.branches) effectsToolkit(env.WORKSPACE!, env.STATE!).bind(branch);
  const result = await session.resume(env.RUN!, JSON.parse(env.ANSWERS ?? "{}"));
  await session.drainSignals();
  console.log(JSON.stringify({ stoppedBy: result.stoppedBy, actions: result.actions }));
} finally {
  await store.close();
}
