// Committed change sets for the console's undo tests, made by the coding toolkit's own commit
// (a kept checkpoint, a journaled apply) without running a sandbox: a workspace, an effects
// directory beside it, and a session whose messages name the calls.

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { commitChanges, effectsStore } from "../../action/coding/_commit.ts";
import type { SessionStore } from "../../store/mod.ts";

/** A workspace with `notes.md`, and its effects directory. */
export interface UndoFixture {
  readonly workspace: string;
  readonly effectsDir: string;
  /** The text of `notes.md` now. */
  notes(): string;
  /** Commits a call that writes `text` to `notes.md`; records its messages in `session`. */
  write(store: SessionStore, session: string, callId: string, text: string): Promise<void>;
}

/** Makes a fixture under `dir` (a fresh temporary directory). */
export function undoFixture(dir: string): UndoFixture {
  const workspace = join(dir, "workspace");
  const effectsDir = join(dir, "effects");
  const staging = join(dir, "staging");
  mkdirSync(workspace, { recursive: true });
  mkdirSync(staging, { recursive: true });
  writeFileSync(join(workspace, "notes.md"), "original\n");
  const effects = effectsStore(effectsDir, workspace);
  let n = 0;
  return {
    workspace,
    effectsDir,
    notes: () => readFileSync(join(workspace, "notes.md"), "utf8"),
    async write(store, session, callId, text) {
      const source = join(staging, `notes-${++n}`);
      writeFileSync(source, text);
      const checkpoint = await commitChanges(effects, {
        callId,
        toolName: "bash",
        sessionId: session,
        changes: [{ path: "notes.md", kind: "modified" }],
        plan: [{ kind: "put", path: "notes.md", source }],
      });
      const now = Date.now();
      const command = `echo ${JSON.stringify(text)} > notes.md`;
      await store.insertMessage({
        id: `${callId}-request`,
        role: "action_request",
        content: { function: "bash", arguments: { command }, callId },
        sender: "b1",
        recipient: "bash",
        branchId: "b1",
        sessionId: session,
        createdAt: now,
      });
      await store.insertMessage({
        id: `${callId}-response`,
        role: "action_response",
        content: {
          function: "bash",
          arguments: { command },
          output: { success: true, applied: true, checkpoint },
          callId,
        },
        sender: "bash",
        recipient: "b1",
        branchId: "b1",
        sessionId: session,
        createdAt: now + 1,
      });
    },
  };
}
