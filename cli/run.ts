/**
 * `hookscope run`: the demo's coding agent against any OpenAI-compatible server.
 *
 * @module
 */

import { statSync } from "node:fs";
import { resolve } from "node:path";
import { CODING_TOOLS } from "../action/coding/mod.ts";
import { timeoutSignal } from "../core/_abort.ts";
import { flagHelp, type FlagSpec, parseFlags } from "./_args.ts";
import { dbTarget, displayDb } from "./_db.ts";
import { CliError, type CliIO, UsageError } from "./_output.ts";
import { encode, fold } from "./_fold.ts";
import { type ModelServer, modelServer, redactCredentials } from "./_credentials.ts";
import { runCodingAgent } from "./agent_run.ts";
import { optionalString } from "./_approvals.ts";

const FLAGS: Record<string, FlagSpec> = {
  "base-url": { type: "string", help: "the API root, e.g. http://127.0.0.1:8080/v1 (required)" },
  model: { type: "string", help: "the model name (required)" },
  prompt: { type: "string", help: "what to ask (default: summarise the workspace)" },
  workspace: { type: "string", help: "the folder the tools are confined to (default .)" },
  db: {
    type: "string",
    help: "the SQLite file or postgres:// URL to persist to (default ./hookscope-runs.db)",
  },
  "max-turns": { type: "string", help: "at most this many model turns (default 8)" },
  sandbox: {
    type: "string",
    help: "auto (default: bash runs in bubblewrap, refused without it) or none (bash on the host)",
  },
  "idle-timeout": {
    type: "string",
    help: "give up when the server sends nothing for this many ms (default 60000)",
  },
  timeout: { type: "string", help: "give up on a model call after this many ms (default 600000)" },
  "effects-dir": {
    type: "string",
    help: "where the coding toolkit keeps staged layers and checkpoints (default " +
      "$XDG_STATE_HOME/hookscope/effects, else ~/.local/state/hookscope/effects); " +
      "'hookscope resume' uses the same, 'hookscope undo' and 'console' take it too",
  },
  "ask-before": {
    type: "string",
    help: `comma-separated tools (${CODING_TOOLS.join(", ")}) whose calls wait for a person: ` +
      "the run stops, 'hookscope approve'/'reject' answer, 'hookscope resume' goes on",
  },
};

/** Help text for `hookscope run`. */
export const RUN_HELP: string = `Usage: hookscope run --base-url URL --model NAME [options]

Runs the coding agent against an OpenAI-compatible chat-completions server. The API key is read
from HOOKSCOPE_API_KEY or OPENAI_API_KEY (optional for local servers). A user name and password
in --base-url (http://user:pass@host/v1) are sent as Basic auth (an API key replaces them) and
are never printed or stored: pass the same --base-url to 'hookscope resume'. Credentials the
model echoes, and strings shaped like API keys (sk-…), are stored as [redacted]. A server that sends
nothing for --idle-timeout ms (default 60000) ends the run with an error.

${flagHelp(FLAGS)}`;

function env(name: string): string | undefined {
  try {
    return globalThis.process?.env?.[name];
  } catch {
    return undefined;
  }
}

/** Checks a base URL: http(s) only; anything else is a usage error. */
export function checkBaseURL(value: unknown): string {
  if (typeof value !== "string" || value === "") {
    throw new UsageError(`hookscope run: --base-url is required; see 'hookscope run --help'`);
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`hookscope run: --base-url ${JSON.stringify(value)} is not a URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UsageError(`hookscope run: --base-url must be http or https; got ${url.protocol}`);
  }
  return value.replace(/\/+$/, "");
}

async function checkReachable(server: ModelServer, waitMs: number): Promise<void> {
  try {
    const response = await fetch(`${server.url}/models`, {
      signal: timeoutSignal(waitMs),
      ...(server.headers ? { headers: server.headers } : {}),
    });
    await response.body?.cancel();
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const reason = cause?.code ?? cause?.message ?? (error as Error).message;
    // No cause: a runtime's error may quote the URL with its credentials.
    throw new CliError(
      redactCredentials(
        `Cannot reach the model server at ${server.url}: ${reason}`,
        server.secrets,
      ),
    );
  }
}

function positiveMs(value: unknown, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const ms = Number(value);
  if (typeof value !== "string" || !Number.isFinite(ms) || ms <= 0) {
    throw new UsageError(`hookscope run: ${flag} must be a positive number of milliseconds`);
  }
  return ms;
}

/**
 * Reads `--ask-before`: comma-separated tool names, each one of the agent's tools; an empty entry
 * or an unknown name is a usage error (a typo must not silently run a tool without asking).
 */
function askBeforeTools(value: unknown): string[] | undefined {
  if (value === undefined) return undefined;
  const names = typeof value === "string" ? value.split(",").map((name) => name.trim()) : [""];
  for (const name of names) {
    if (!(CODING_TOOLS as readonly string[]).includes(name)) {
      throw new UsageError(
        `hookscope run: --ask-before takes tool names separated by commas; ${
          name === "" ? "got an empty name" : `unknown tool ${JSON.stringify(name)}`
        }; tools: ${CODING_TOOLS.join(", ")}`,
      );
    }
  }
  return [...new Set(names)];
}

/** Runs `hookscope run`; returns the exit code. */
export async function runCommand(
  args: readonly string[],
  io: CliIO,
  write: (text: string) => void,
): Promise<number> {
  const { values, positionals } = parseFlags("run", args, FLAGS);
  if (values.help) {
    io.out(RUN_HELP);
    return 0;
  }
  if (positionals.length > 0) {
    throw new UsageError(
      `hookscope run: unexpected argument "${positionals[0]}"; see 'hookscope run --help'`,
    );
  }
  const baseURL = checkBaseURL(values["base-url"]);
  if (typeof values.model !== "string" || values.model === "") {
    throw new UsageError(`hookscope run: --model is required; see 'hookscope run --help'`);
  }
  const maxTurns = values["max-turns"] === undefined ? 8 : Number(values["max-turns"]);
  if (!Number.isInteger(maxTurns) || maxTurns < 1) {
    throw new UsageError(`hookscope run: --max-turns must be a positive integer`);
  }
  const idleTimeoutMs = positiveMs(values["idle-timeout"], "--idle-timeout");
  const timeoutMs = positiveMs(values.timeout, "--timeout");
  const askBefore = askBeforeTools(values["ask-before"]);
  const workspace = resolve(typeof values.workspace === "string" ? values.workspace : ".");
  try {
    if (!statSync(workspace).isDirectory()) throw new Error("not a directory");
  } catch {
    throw new CliError(`Cannot use workspace ${JSON.stringify(workspace)}: no such directory`);
  }
  const effectsDir = optionalString("run", values["effects-dir"], "effects-dir");
  const sandbox = values.sandbox === undefined ? "auto" : values.sandbox;
  if (sandbox !== "auto" && sandbox !== "none") {
    throw new UsageError(`hookscope run: --sandbox must be "auto" or "none"`);
  }
  const apiKey = env("HOOKSCOPE_API_KEY") ?? env("OPENAI_API_KEY");
  // A user name and password in the URL travel as a Basic header; the URL printed and stored
  // carries neither.
  const server = modelServer(baseURL, apiKey);
  // The reachability check waits at most 5 s, and no longer than the idle timeout (from 1 s on).
  await checkReachable(server, Math.min(5000, Math.max(1000, idleTimeoutMs ?? 5000)));
  const dbPath = dbTarget(typeof values.db === "string" ? values.db : "hookscope-runs.db");
  let summary;
  try {
    summary = await runCodingAgent({
      baseURL: server.url,
      ...(server.headers ? { headers: server.headers } : {}),
      model: values.model,
      ...(apiKey ? { apiKey } : {}),
      dbPath,
      workspace,
      instruction: typeof values.prompt === "string"
        ? values.prompt
        : "Look around this workspace and summarise what it contains.",
      maxTurns,
      ...(idleTimeoutMs !== undefined ? { idleTimeoutMs } : {}),
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      ...(askBefore !== undefined ? { askBefore } : {}),
      io,
      write,
      sandbox: { kind: sandbox },
      ...(effectsDir !== undefined ? { effectsDir: resolve(effectsDir) } : {}),
    });
  } catch (error) {
    if (error instanceof CliError) throw error;
    // Anything unexpected is reported without its stack, and without the key in any encoding.
    throw new CliError(
      redactCredentials(
        `unexpected failure: ${(error as Error)?.message ?? String(error)}`,
        server.secrets,
      ),
    );
  }
  io.out(`\nsession ${summary.sessionId} ${summary.status}: ${summary.turns} turns`);
  const db = displayDb(dbPath);
  if (summary.status === "waiting_approval" && summary.runId !== undefined) {
    io.out(`run ${summary.runId} waits for a person's answer to:`);
    const hint = `hookscope pending ${db} --full`;
    for (const call of summary.pending ?? []) {
      // The whole arguments: folded with a marker (head and tail kept), never cut silently.
      io.out(`  ${call.callId}  ${call.toolName}  ${fold(encode(call.args), { hint })}`);
    }
    io.out(`approve:     hookscope approve ${db} CALL_ID [--args JSON]`);
    io.out(`or reject:   hookscope reject ${db} CALL_ID [--reason TEXT]`);
    io.out(`then:        hookscope resume ${db} ${summary.runId}`);
  }
  io.out(`inspect it:  hookscope show ${db} ${summary.sessionId}`);
  return 0;
}
