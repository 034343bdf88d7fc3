/**
 * `hookscope hook-forwarder --server URL`: writes a POSIX `sh` + `curl` command hook that forwards
 * each Claude Code hook event to a running `hookscope serve` (see `_forwarder_script.ts`), for
 * hosts that only run commands: it starts in the time `sh` and `curl` take, with no JavaScript
 * runtime, and fails closed as `hook --server` does.
 *
 * @module
 */

import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import process from "node:process";
import { flagHelp, type FlagSpec, parseFlags } from "./_args.ts";
import { CliError, type CliIO, UsageError } from "./_output.ts";
import { forwarderScript, forwarderUrl } from "./_forwarder_script.ts";

const FLAGS: Record<string, FlagSpec> = {
  server: { type: "string", help: "the URL of the running hookscope serve" },
  out: {
    type: "string",
    help: "where to write it (default .claude/hookscope-forward.sh in the project; - prints it)",
  },
  "token-env": {
    type: "string",
    help: "the environment variable holding serve's bearer token, read when the hook runs",
  },
  "timeout-ms": { type: "string", help: "longest wait for the server per event (default 20000)" },
};

/** Help text for `hookscope hook-forwarder`. */
export const HOOK_FORWARDER_HELP: string =
  `Usage: hookscope hook-forwarder --server URL [--out FILE] [--token-env NAME] [--timeout-ms N]

Writes a Claude Code command hook in POSIX sh that forwards each hook event to a running
'hookscope serve' with curl (7.84 or later) and prints the answer: the fastest command hook,
since no JavaScript runtime starts. When no answer of serve comes back (the server is down, slow,
answers an HTTP error or anything but serve's answer), a PreToolUse is denied and a
UserPromptSubmit blocked (fail closed); other events exit 1. The project (CLAUDE_PROJECT_DIR, or
the current folder) is where the default file goes. An existing file is replaced only when it is
a forwarder written by this command.

${flagHelp(FLAGS)}`;

const MARK = "written by `hookscope hook-forwarder`";

/** Runs `hookscope hook-forwarder`; returns the exit code. */
export function hookForwarderCommand(args: readonly string[], io: CliIO): number {
  const { values, positionals } = parseFlags("hook-forwarder", args, FLAGS);
  if (values.help) {
    io.out(HOOK_FORWARDER_HELP);
    return 0;
  }
  if (positionals.length > 0) {
    throw new UsageError(
      `hookscope hook-forwarder: unexpected argument ${JSON.stringify(positionals[0])}`,
    );
  }
  const server = values.server as string | undefined;
  if (server === undefined) {
    throw new UsageError(
      "hookscope hook-forwarder: --server URL is required; see 'hookscope hook-forwarder --help'",
    );
  }
  const timeoutMs = Number(values["timeout-ms"] ?? 20_000);
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 600_000) {
    throw new UsageError(
      "hookscope hook-forwarder: --timeout-ms must be an integer from 1 to 600000",
    );
  }
  const tokenEnv = values["token-env"] as string | undefined;
  let script: string;
  try {
    script = forwarderScript({
      url: forwarderUrl(server),
      timeoutMs,
      ...(tokenEnv === undefined ? {} : { tokenEnv }),
    });
  } catch (error) {
    throw new UsageError(`hookscope hook-forwarder: ${(error as Error).message}`);
  }
  const out = values.out as string | undefined;
  if (out === "-") {
    io.out(script.trimEnd());
    return 0;
  }
  const project = process.env.CLAUDE_PROJECT_DIR ?? process.cwd();
  const file = resolve(project, out ?? ".claude/hookscope-forward.sh");
  if (existsSync(file) && !readFileSync(file, "utf8").includes(MARK)) {
    throw new CliError(
      `${file} exists and is not a forwarder this command wrote; give another --out`,
    );
  }
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, script, { mode: 0o755 });
  chmodSync(file, 0o755); // an existing file keeps its mode otherwise
  const inProject = relative(project, file);
  const command = inProject.startsWith("..") || inProject === ""
    ? file
    : `"$CLAUDE_PROJECT_DIR"/${inProject}`;
  io.out(`wrote ${file}`);
  io.out(`a command hook in .claude/settings.json runs it:`);
  io.out(`  { "type": "command", "command": ${JSON.stringify(command)} }`);
  return 0;
}
