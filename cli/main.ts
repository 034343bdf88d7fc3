/**
 * The `hookscope` command: a live demo, a runner for any OpenAI-compatible server, and viewers
 * for persisted sessions.
 *
 * ```sh
 * deno run -A jsr:@hookscope/core/cli demo
 * ```
 *
 * @example Run a subcommand in-process and capture its output
 * ```ts
 * import { main } from "@hookscope/core/cli";
 * import assert from "node:assert/strict";
 *
 * const lines: string[] = [];
 * const code = await main(["points", "--json"], { out: (t) => lines.push(t), err: (t) => lines.push(t) });
 * assert.equal(code, 0);
 * assert.equal(JSON.parse(lines.join("\n")).length, 11);
 * ```
 *
 * @module
 */

import { CliError, type CliIO, processIO, safeIO, UsageError, visible } from "./_output.ts";
import { APPROVE_HELP, approveCommand } from "./approve.ts";
import { DEMO_HELP, demoCommand } from "./demo.ts";
import { HOOK_HELP, hookCommand } from "./hook.ts";
import { PENDING_HELP, pendingCommand } from "./pending.ts";
import { REJECT_HELP, rejectCommand } from "./reject.ts";
import { REPLAY_HELP, replayCommand } from "./replay.ts";
import { RELEASE_HELP, releaseCommand } from "./release.ts";
import { RESUME_HELP, resumeCommand } from "./resume.ts";
import { POINTS_HELP, pointsCommand } from "./points.ts";
import { RUN_HELP, runCommand } from "./run.ts";
import { SERVE_HELP, serveCommand } from "./serve.ts";
import { SESSIONS_HELP, sessionsCommand } from "./sessions.ts";
import { SHOW_HELP, showCommand } from "./show.ts";
import { TAIL_HELP, tailCommand } from "./tail.ts";

export type { CliIO } from "./_output.ts";

const HELP = `Usage: hookscope <command> [options]

Commands:
  demo                      a scripted coding-agent session, fully offline
  run --base-url URL --model NAME
                            the same agent against any OpenAI-compatible server
  sessions DB               list the sessions persisted in a SQLite file or postgres:// URL
  show DB SESSION           print one session's timeline (messages and signals)
  pending DB                list the tool calls waiting for approval
  approve DB CALL_ID [--args JSON] [--by NAME]
                            approve a pending call (optionally with edited arguments)
  reject DB CALL_ID [--reason TEXT]
                            reject a pending call; the reason reaches the model
  resume DB RUN_ID          continue a run once its pending calls are answered
  release DB RUN_ID         take back the claim of a resume whose process is gone
  tail URL [SESSION]        follow the signals written to a postgres:// store, live
  points                    the hook point catalogue with wiring status
  hook --policy FILE        answer one Claude Code hook event (JSON on stdin)
  serve --policy FILE       answer Claude Code http hooks at POST /claude/hooks
  replay DB [SESSION…|--all] --policy FILE
                            what a policy would have decided for recorded calls (a CI gate)

Run 'hookscope <command> --help' for a command's options.`;

const HELPS: Record<string, string> = {
  demo: DEMO_HELP,
  run: RUN_HELP,
  sessions: SESSIONS_HELP,
  show: SHOW_HELP,
  pending: PENDING_HELP,
  approve: APPROVE_HELP,
  reject: REJECT_HELP,
  resume: RESUME_HELP,
  release: RELEASE_HELP,
  tail: TAIL_HELP,
  points: POINTS_HELP,
  hook: HOOK_HELP,
  serve: SERVE_HELP,
  replay: REPLAY_HELP,
};

/**
 * Runs the `hookscope` command with `args` (without the program name) and returns the exit
 * code: 0 on success, 1 on a runtime failure (server down, database missing or corrupt), 2 on a
 * usage error (unknown command or flag, missing argument).
 */
export async function main(args: readonly string[], given: CliIO = processIO): Promise<number> {
  const [command, ...rest] = args;
  // Every line any command prints goes through one helper: control characters, terminal escapes
  // and bidirectional overrides from a model or a store are shown escaped, never sent.
  const io = safeIO(given);
  const write = (text: string) => {
    if (given === processIO) globalThis.process?.stdout.write(visible(text));
    else given.out(visible(text));
  };
  try {
    switch (command) {
      case undefined:
      case "help":
      case "--help":
      case "-h":
        if (command === "help" && rest[0] && HELPS[rest[0]]) io.out(HELPS[rest[0]]);
        else io.out(HELP);
        return command === undefined ? 2 : 0;
      case "demo":
        return await demoCommand(rest, io, write);
      case "run":
        return await runCommand(rest, io, write);
      case "sessions":
        return await sessionsCommand(rest, io);
      case "show":
        return await showCommand(rest, io);
      case "pending":
        return await pendingCommand(rest, io);
      case "approve":
        return await approveCommand(rest, io);
      case "reject":
        return await rejectCommand(rest, io);
      case "resume":
        return await resumeCommand(rest, io);
      case "release":
        return await releaseCommand(rest, io);
      case "points":
        return pointsCommand(rest, io);
      case "tail":
        return await tailCommand(rest, io);
      case "hook":
        return await hookCommand(rest, io);
      case "serve":
        return await serveCommand(rest, io);
      case "replay":
        return await replayCommand(rest, io);
      default:
        io.err(`hookscope: unknown command ${JSON.stringify(command)}\n\n${HELP}`);
        return 2;
    }
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(error.message);
      return 2;
    }
    if (error instanceof CliError) {
      io.err(`hookscope ${command}: ${error.message}`);
      return 1;
    }
    io.err(
      `hookscope ${command}: unexpected failure: ${
        error instanceof Error ? error.stack : String(error)
      }`,
    );
    return 1;
  }
}

if (import.meta.main) {
  const code = await main(globalThis.process?.argv.slice(2) ?? []);
  globalThis.process?.exit(code);
}
