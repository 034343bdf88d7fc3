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
 * assert.equal(JSON.parse(lines.join("\n")).length, 12);
 * ```
 *
 * @module
 */

import { CliError, type CliIO, processIO, safeIO, UsageError, visible } from "./_output.ts";

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
  hook-forwarder --server URL
                            write a sh + curl command hook that forwards to serve
  console DB                the web console: sessions, live timeline, approvals to answer
  replay DB [SESSION…|--all] --policy FILE
                            what a policy would have decided for recorded calls (a CI gate)
  undo DB CALL_ID [--force] restore the workspace as it was before a staged call committed

Run 'hookscope <command> --help' for a command's options.`;

/** How a subcommand runs: its arguments, the output, and a raw writer for streamed text. */
type Command = (
  args: readonly string[],
  io: CliIO,
  write: (text: string) => void,
) => number | Promise<number>;

/**
 * Each subcommand, loaded on first use: `hookscope hook` (one process per Claude Code event)
 * loads the policy and the store, not the agent runner and its toolkit.
 */
const COMMANDS: Record<string, () => Promise<{ run: Command; help: string }>> = {
  demo: async () => {
    const m = await import("./demo.ts");
    return { run: m.demoCommand, help: m.DEMO_HELP };
  },
  run: async () => {
    const m = await import("./run.ts");
    return { run: m.runCommand, help: m.RUN_HELP };
  },
  sessions: async () => {
    const m = await import("./sessions.ts");
    return { run: m.sessionsCommand, help: m.SESSIONS_HELP };
  },
  show: async () => {
    const m = await import("./show.ts");
    return { run: m.showCommand, help: m.SHOW_HELP };
  },
  pending: async () => {
    const m = await import("./pending.ts");
    return { run: m.pendingCommand, help: m.PENDING_HELP };
  },
  approve: async () => {
    const m = await import("./approve.ts");
    return { run: m.approveCommand, help: m.APPROVE_HELP };
  },
  reject: async () => {
    const m = await import("./reject.ts");
    return { run: m.rejectCommand, help: m.REJECT_HELP };
  },
  resume: async () => {
    const m = await import("./resume.ts");
    return { run: m.resumeCommand, help: m.RESUME_HELP };
  },
  release: async () => {
    const m = await import("./release.ts");
    return { run: m.releaseCommand, help: m.RELEASE_HELP };
  },
  tail: async () => {
    const m = await import("./tail.ts");
    return { run: (args, io) => m.tailCommand(args, io), help: m.TAIL_HELP };
  },
  points: async () => {
    const m = await import("./points.ts");
    return { run: m.pointsCommand, help: m.POINTS_HELP };
  },
  hook: async () => {
    const m = await import("./hook.ts");
    return { run: m.hookCommand, help: m.HOOK_HELP };
  },
  "hook-forwarder": async () => {
    const m = await import("./hook_forwarder.ts");
    return { run: m.hookForwarderCommand, help: m.HOOK_FORWARDER_HELP };
  },
  serve: async () => {
    const m = await import("./serve.ts");
    return { run: m.serveCommand, help: m.SERVE_HELP };
  },
  replay: async () => {
    const m = await import("./replay.ts");
    return { run: m.replayCommand, help: m.REPLAY_HELP };
  },
  console: async () => {
    const m = await import("./console.ts");
    return { run: m.consoleCommand, help: m.CONSOLE_HELP };
  },
  undo: async () => {
    const m = await import("./undo.ts");
    return { run: m.undoCommand, help: m.UNDO_HELP };
  },
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
    if (command === undefined || command === "help" || command === "--help" || command === "-h") {
      const load = command === "help" && rest[0] ? COMMANDS[rest[0]] : undefined;
      io.out(load ? (await load()).help : HELP);
      return command === undefined ? 2 : 0;
    }
    if (command === "hook" && given === processIO && rest.some(isServerFlag)) {
      // A forwarding command hook starts a process per event: it loads the forwarder only.
      const forward = await import("./_hook_forward.ts");
      const options = forward.forwardArgs(rest);
      if (options !== null) {
        return await forward.forwardHook(options, await forward.processForwardIO());
      }
    }
    const load = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
    if (load === undefined) {
      io.err(`hookscope: unknown command ${JSON.stringify(command)}\n\n${HELP}`);
      return 2;
    }
    return await (await load()).run(rest, io, write);
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

function isServerFlag(arg: string): boolean {
  return arg === "--server" || arg.startsWith("--server=");
}

if (import.meta.main) {
  // Deno's own arguments and exit where there are: touching `process` on Deno loads its Node
  // compatibility layer, which a forwarding hook does not need.
  const deno = (globalThis as { Deno?: { args: string[]; exit(code: number): never } }).Deno;
  const code = await main(deno?.args ?? globalThis.process?.argv.slice(2) ?? []);
  if (deno !== undefined) deno.exit(code);
  globalThis.process?.exit(code);
}
