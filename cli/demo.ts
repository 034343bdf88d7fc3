/**
 * `hookscope demo`: a scripted coding-agent session that runs fully offline.
 *
 * @module
 */

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { flagHelp, type FlagSpec, parseFlags } from "./_args.ts";
import { dbTarget, displayDb } from "./_db.ts";
import { type CliIO, UsageError } from "./_output.ts";
import { runCodingAgent } from "./agent_run.ts";
import { type ScriptedTurn, startScriptedModel } from "./scripted_model.ts";

const FLAGS: Record<string, FlagSpec> = {
  db: {
    type: "string",
    help: "the SQLite file or postgres:// URL to persist to (default ./hookscope-demo.db)",
  },
  "keep-workspace": { type: "boolean", help: "keep the temporary workspace afterwards" },
};

/** Help text for `hookscope demo`. */
export const DEMO_HELP: string = `Usage: hookscope demo [--db FILE] [--keep-workspace]

Runs a scripted coding-agent session fully offline: a scripted OpenAI-compatible model served on
127.0.0.1 by this command, the coding toolkit in a temporary workspace, guardDestructive blocking
a destructive command, a tool.pre guard blocking a secrets read, and every message and signal
persisted into a SQLite file. Prints a live timeline of what fired.

${flagHelp(FLAGS)}`;

/** The demo model's script: six streamed turns. */
export const DEMO_SCRIPT: readonly ScriptedTurn[] = [
  {
    text: ["Let me ", "look around ", "the workspace ", "first."],
    toolCalls: [{ name: "reader", arguments: { action: "list_dir", path: "." } }],
  },
  {
    text: ["Reading ", "the notes."],
    toolCalls: [{ name: "reader", arguments: { action: "read", path: "notes.md" } }],
  },
  {
    text: ["The notes ", "say to clean ", "the build folder."],
    toolCalls: [{ name: "bash", arguments: { command: "rm -rf build" } }],
  },
  {
    text: ["That was blocked. ", "Let me check ", "the settings instead."],
    toolCalls: [{ name: "reader", arguments: { action: "read", path: ".env" } }],
  },
  {
    text: ["Secrets are off limits. ", "I will write ", "a summary."],
    toolCalls: [
      {
        name: "editor",
        arguments: {
          action: "write",
          filePath: "summary.md",
          content: "# Summary\n\nThe build folder needs cleaning by a human.\n",
        },
      },
      { name: "search", arguments: { action: "grep", pattern: "TODO", path: "." } },
    ],
  },
  {
    text: [
      "Done. ",
      "I listed the workspace, ",
      "read the notes, ",
      "was stopped from deleting the build folder ",
      "and from reading .env, ",
      "and wrote summary.md.",
    ],
    gapMs: 80,
  },
];

/** Runs `hookscope demo`; returns the exit code. */
export async function demoCommand(
  args: readonly string[],
  io: CliIO,
  write: (text: string) => void,
): Promise<number> {
  const { values, positionals } = parseFlags("demo", args, FLAGS);
  if (values.help) {
    io.out(DEMO_HELP);
    return 0;
  }
  if (positionals.length > 0) {
    throw new UsageError(
      `hookscope demo: unexpected argument "${positionals[0]}"; see 'hookscope demo --help'`,
    );
  }
  const dbPath = dbTarget(typeof values.db === "string" ? values.db : "hookscope-demo.db");
  const workspace = mkdtempSync(join(tmpdir(), "hookscope-demo-"));
  writeFileSync(join(workspace, "notes.md"), "# Notes\n\nTODO: clean the build folder.\n");
  writeFileSync(join(workspace, ".env"), "API_KEY=do-not-read\n");
  writeFileSync(join(workspace, "app.py"), "print('hello')  # TODO: greet by name\n");
  const server = await startScriptedModel(DEMO_SCRIPT);
  io.out(`hookscope demo: scripted model at ${server.baseURL}`);
  io.out(`workspace ${workspace}`);
  io.out(`database  ${displayDb(dbPath)}\n`);
  try {
    const summary = await runCodingAgent({
      baseURL: server.baseURL,
      model: "hookscope-demo",
      dbPath,
      workspace,
      instruction: "Tidy up this workspace and summarise what you find.",
      io,
      write,
    });
    io.out(
      `\nsession ${summary.sessionId} ${summary.status}: ${summary.turns} turns, ${summary.blocked} blocked tool calls`,
    );
    io.out(`persisted to ${displayDb(dbPath)}`);
    io.out(`inspect it:  hookscope show ${displayDb(dbPath)} ${summary.sessionId}`);
    io.out(
      `  (in this repository: npm run hookscope -- show ${displayDb(dbPath)} ${summary.sessionId})`,
    );
    return 0;
  } finally {
    await server.close();
    if (!values["keep-workspace"]) rmSync(workspace, { recursive: true, force: true });
  }
}
