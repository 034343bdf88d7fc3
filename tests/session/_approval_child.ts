// A second OS process for the approval tests: restores the session from the SQLite file and
// resumes the run with the answers given in ANSWERS (JSON). Prints the result as one JSON line;
// exits 3 when the run cannot be resumed (another process claimed it).

import process from "node:process";
import { Session } from "../../mod.ts";
import { RunNotResumableError } from "../../session/mod.ts";
import { SqliteStore } from "../../store/sqlite/mod.ts";
import { ApprovalConflictError } from "../../store/store_errors.ts";
import { approvalTools, askBeforeNotes, modelFor } from "./_approval_agent.ts";

const env = process.env;
const store = await SqliteStore.open(env.DB!);
let code = 0;
try {
  const session = await Session.restore(store, env.SESSION!, {
    model: modelFor(env.BASE_URL!),
    tools: approvalTools(env.LOG!),
  });
  askBeforeNotes(session);
  if (env.HANG_AFTER_NOTE) {
    // Stand in for a process that dies mid-tool: the note is written, its result never stored.
    session.hooks.on("tool.post", async ({ toolName }) => {
      if (toolName === "note") await new Promise(() => {});
    });
  }
  if (env.WAIT_FOR) {
    // Start together: say we are ready, then wait until the file named by WAIT_FOR exists.
    const { existsSync, writeFileSync } = await import("node:fs");
    if (env.READY) writeFileSync(env.READY, "ready");
    const deadline = Date.now() + 30_000;
    while (!existsSync(env.WAIT_FOR) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }
  try {
    const result = await session.resume(env.RUN!, JSON.parse(env.ANSWERS ?? "{}"), {
      owner: env.OWNER ?? `child-${process.pid}`,
    });
    await session.drainSignals();
    console.log(JSON.stringify({
      stoppedBy: result.stoppedBy,
      turns: result.turns,
      actions: result.actions,
      answer: result.message.content,
    }));
  } catch (error) {
    // A second answer (the other process answered first) is refused like a second claim.
    if (error instanceof ApprovalConflictError) {
      console.log(JSON.stringify({ refused: error.why, message: error.message }));
    } else if (error instanceof RunNotResumableError) {
      console.log(JSON.stringify({ refused: error.reason, message: error.message }));
    } else {
      throw error;
    }
    code = 3;
  }
} finally {
  await store.close();
}
process.exit(code);
