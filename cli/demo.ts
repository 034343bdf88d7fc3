/**
 * `hookscope demo`: a scripted coding-agent session that runs fully offline.
 *
 * @module
 */

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { flagHelp, type FlagSpec, parseFlags } from "./_args.ts";
import { dbTarget, displayDb, openExistingDb } from "./_db.ts";
import { CliError, type CliIO, UsageError } from "./_output.ts";
import { invocation, runSelf } from "./_self.ts";
import { type AgentRunSummary, runCodingAgent } from "./agent_run.ts";
import { type ScriptedTurn, startScriptedModel } from "./scripted_model.ts";

const FLAGS: Record<string, FlagSpec> = {
  db: {
    type: "string",
    help: "the SQLite file or postgres:// URL to persist to (default ./hookscope-demo.db)",
  },
  "keep-workspace": { type: "boolean", help: "keep the temporary workspace afterwards" },
  answer: {
    type: "string",
    help: "how the reviewer answers the approval: edit (default), approve or reject",
  },
};

/** Help text for `hookscope demo`. */
export const DEMO_HELP: string =
  `Usage: hookscope demo [--db FILE] [--keep-workspace] [--answer edit|approve|reject]

Runs a scripted coding-agent session fully offline: a scripted OpenAI-compatible model served on
127.0.0.1 by this command, the coding toolkit in a temporary workspace, guardDestructive blocking
a destructive command, a tool.pre guard blocking a secrets read, and every message and signal
persisted into a SQLite file. Prints a live timeline of what fired.

Writing a file needs approval: the run stops on that call and is saved. A second hookscope
process answers it ('hookscope approve' with edited arguments by default), and a third one
('hookscope resume') finishes the run, all without any prompt.

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
  const choice = values.answer ?? "edit";
  if (choice !== "edit" && choice !== "approve" && choice !== "reject") {
    throw new UsageError(
      `hookscope demo: --answer must be edit, approve or reject; got ${JSON.stringify(choice)}`,
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
    let summary: AgentRunSummary = await runCodingAgent({
      baseURL: server.baseURL,
      model: "hookscope-demo",
      dbPath,
      workspace,
      instruction: "Tidy up this workspace and summarise what you find.",
      askBefore: ["editor"],
      // The demo shows the command judge at work: bash writes directly (no staged runs), so the
      // judge blocks rm -rf build as before.
      sandbox: { effects: "direct" },
      io,
      write,
    });
    if (summary.status === "waiting_approval" && summary.runId !== undefined) {
      summary = await approvalRound(summary, summary.runId, dbPath, choice, io);
    }
    io.out(
      `\nsession ${summary.sessionId} ${summary.status}: ${summary.turns} turns, ${summary.blocked} blocked tool calls`,
    );
    io.out(`persisted to ${displayDb(dbPath)}`);
    io.out(`inspect it:  hookscope show ${displayDb(dbPath)} ${summary.sessionId}`);
    const command = invocation();
    io.out(
      command === null
        ? `  (in this repository: npm run hookscope -- show ${
          displayDb(dbPath)
        } ${summary.sessionId})`
        : `  (hookscope is ${command}${
          command.startsWith("deno run -A ")
            ? `; 'deno install -g -A -n hookscope ${
              command.slice("deno run -A ".length)
            }' installs it as hookscope`
            : ""
        })`,
    );
    return 0;
  } finally {
    await server.close();
    if (!values["keep-workspace"]) rmSync(workspace, { recursive: true, force: true });
  }
}

/**
 * The approval round: the run stopped on a call that needs approval; a second `hookscope`
 * process lists and answers it, a third resumes the run. This process keeps serving the
 * scripted model meanwhile.
 */
async function approvalRound(
  summary: AgentRunSummary,
  runId: string,
  dbPath: string,
  choice: "edit" | "approve" | "reject",
  io: CliIO,
): Promise<AgentRunSummary> {
  const show = (tag: string, text: string) => io.out(`${"".padEnd(14)}${tag.padEnd(8)} ${text}`);
  io.out(`\n── approval: run ${runId} stopped, waiting for a person ──`);
  const child = async (args: string[], prefix: string) => {
    show("$", `hookscope ${args.map((a) => (/[\s"{}]/.test(a) ? `'${a}'` : a)).join(" ")}`);
    const result = await runSelf(args, { onLine: (line) => io.out(`${prefix}${line}`) });
    if (result.code !== 0) {
      throw new CliError(
        `hookscope ${args[0]} (a second process) exited ${result.code}: ${result.stderr.trim()}`,
      );
    }
    return result;
  };
  await child(["pending", dbPath], "    │ ");
  for (const pending of summary.pending ?? []) {
    const args = ["approve", dbPath, pending.callId, "--by", "demo-reviewer"];
    if (choice === "reject") {
      args.splice(0, 1, "reject");
      args.push("--reason", "the reviewer wants to write the summary by hand");
    } else if (choice === "edit") {
      const edited: Record<string, unknown> = { ...pending.args };
      if (typeof edited.content === "string") {
        edited.content = `${edited.content}\nReviewed by demo-reviewer before writing.\n`;
      }
      args.push("--args", JSON.stringify(edited));
    }
    await child(args, "    │ ");
  }
  await child(["resume", dbPath, runId], "    │ ");
  io.out(`── approval round done ──`);
  const store = await openExistingDb(dbPath);
  try {
    const row = await store.getSession(summary.sessionId);
    const run = await store.getRun(runId);
    return {
      ...summary,
      status: row?.status ?? summary.status,
      turns: run?.state.turn ?? summary.turns,
      runId,
    };
  } finally {
    await store.close();
  }
}
