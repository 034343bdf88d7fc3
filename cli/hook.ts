/**
 * `hookscope hook`: a Claude Code command hook. Reads one event as JSON on stdin, answers it
 * from a policy (or forwards it to a running `hookscope serve`), prints the protocol's JSON.
 *
 * @module
 */

import process from "node:process";
import { flagHelp, type FlagSpec, parseFlags } from "./_args.ts";
import type { CliIO } from "./_output.ts";
import { UsageError } from "./_output.ts";
import { asciiJson, failedAnswer, MAX_EVENT_BYTES, readLimited } from "./_claude_wire.ts";
import { forwardHook, processForwardIO } from "./_hook_forward.ts";
import { abortable, deadlineSignal } from "../core/_async.ts";

const FLAGS: Record<string, FlagSpec> = {
  policy: {
    type: "string",
    help: "a .ts/.js module exporting policy, or a .json Claude settings file",
  },
  db: {
    type: "string",
    help: "SQLite file or postgres:// URL (default .hookscope/sessions.db in the project)",
  },
  server: { type: "string", help: "forward the event to a running hookscope serve at this URL" },
  "token-env": {
    type: "string",
    help: "with --server: the environment variable holding the bearer token",
  },
  "timeout-ms": {
    type: "string",
    help: "longest wait for the policy (load, store, answer) or server (default 20000)",
  },
};

/** Help text for `hookscope hook`. */
export const HOOK_HELP: string = `Usage: hookscope hook --policy FILE [--db URL]
       hookscope hook --server URL [--token-env NAME]

A Claude Code command hook: reads one hook event as JSON on stdin and prints the answer as the
protocol's JSON on stdout (exit 0). The event's session is a hookscope session in the store, so
'hookscope show DB SESSION' shows every decision. When the policy fails, times out or the input
is malformed, a PreToolUse is denied and a UserPromptSubmit blocked (fail closed); other events
exit 1 (a non-blocking error).

${flagHelp(FLAGS)}`;

/** Runs `hookscope hook`; returns the exit code. */
export async function hookCommand(args: readonly string[], io: CliIO): Promise<number> {
  const { values } = parseFlags("hook", args, FLAGS);
  if (values.help) {
    io.out(HOOK_HELP);
    return 0;
  }
  const policyFile = values.policy as string | undefined;
  const server = values.server as string | undefined;
  if ((policyFile === undefined) === (server === undefined)) {
    throw new UsageError(
      "hookscope hook: give exactly one of --policy FILE and --server URL; see 'hookscope hook --help'",
    );
  }
  const timeoutMs = Number(values["timeout-ms"] ?? 20_000);
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 600_000) {
    throw new UsageError("hookscope hook: --timeout-ms must be an integer from 1 to 600000");
  }
  if (server !== undefined) {
    const tokenEnv = values["token-env"] as string | undefined;
    return await forwardHook(
      { server, timeoutMs, ...(tokenEnv === undefined ? {} : { tokenEnv }) },
      await processForwardIO(),
    );
  }
  const print = (value: unknown) => void process.stdout.write(`${asciiJson(value)}\n`);
  let event: unknown = null;
  const fail = (reason: string): number => {
    const { output, blocks } = failedAnswer(event, `hookscope hook: ${reason}`);
    if (blocks && Object.keys(output).length === 0) {
      io.err(`hookscope hook: ${reason}`);
      return 2;
    }
    if (Object.keys(output).length) print(output);
    io.err(`hookscope hook: ${reason}`);
    return blocks ? 0 : 1;
  };
  try {
    const text = await readLimited(
      process.stdin as AsyncIterable<Uint8Array>,
      MAX_EVENT_BYTES,
      timeoutMs,
    );
    event = JSON.parse(text);
  } catch (error) {
    return fail(`cannot read the event: ${(error as Error)?.message ?? error}`);
  }
  let store;
  // One deadline for loading the policy, opening the store and the answer: a policy module whose
  // top-level await never settles, or a store that never opens, fails closed like a slow policy.
  let phase = "the policy did not answer";
  const limit = deadlineSignal(
    timeoutMs,
    undefined,
    () => new Error(`${phase} within ${timeoutMs} ms`),
  );
  try {
    // Loaded here, not at the top: `--server` needs none of it (a forwarding hook starts fast).
    const [{ loadPolicy }, { openOrCreateDb, projectDb }, { answerInStore }] = await abortable(
      Promise.all([
        import("../claude/load_policy.ts"),
        import("./_db.ts"),
        import("./_claude_events.ts"),
      ]),
      limit.signal,
    );
    phase = `loading the policy ${JSON.stringify(policyFile)} did not finish`;
    const policy = await abortable(loadPolicy(policyFile as string), limit.signal);
    phase = "opening the database did not finish";
    const projectDir = process.env.CLAUDE_PROJECT_DIR ?? process.cwd();
    const opening = openOrCreateDb((values.db as string | undefined) ?? projectDb(projectDir));
    try {
      store = await abortable(opening, limit.signal);
    } catch (error) {
      // A store that opens after the deadline is closed when it does.
      opening.then((late) => late.close(), () => {});
      throw error;
    }
    phase = "the policy did not answer";
    const answer = await answerInStore(store, policy, event, Infinity, { signal: limit.signal });
    print(answer.output);
    return 0;
  } catch (error) {
    return fail((error as Error)?.message ?? String(error));
  } finally {
    limit.done();
    await store?.close();
  }
}
