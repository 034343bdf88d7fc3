/**
 * `hookscope resume DB RUN_ID`: continue an agent run that stopped for approval, in this
 * process, once every pending call of it is answered.
 *
 * @module
 */

import { resolve } from "node:path";
import { codingSpec, CodingToolkit, nodeFileSystem } from "../action/coding/mod.ts";
import { summarize } from "../core/json_safe.ts";
import { IModel, OpenAICompatibleEndpoint } from "../service/mod.ts";
import { HookBlocked, RunNotResumableError, Session, ToolDenied } from "../session/mod.ts";
import type { ToolVerdictData } from "../session/mod.ts";
import { responsesAfter } from "../session/_stored_responses.ts";
import { flagHelp, type FlagSpec, parseFlags } from "./_args.ts";
import { optionalString } from "./_approvals.ts";
import { resumeOwner } from "./_claim_owner.ts";
import { displayDb, openWritableDb } from "./_db.ts";
import { CliError, type CliIO, UsageError } from "./_output.ts";
import { askBeforeHook, readResumeInfo } from "./_resume_info.ts";
import { observeEffects, secretsGuardIn } from "./agent_run.ts";
import { modelServer, redactCredentials, redactingStore } from "./_credentials.ts";

/** The data of a ToolDenied signal. */
const verdict = (signal: { data: unknown }): ToolVerdictData => signal.data as ToolVerdictData;

const FLAGS: Record<string, FlagSpec> = {
  "base-url": { type: "string", help: "the model server (default: the one the run used)" },
  model: { type: "string", help: "the model name (default: the one the run used)" },
  workspace: { type: "string", help: "the coding workspace (default: the one the run used)" },
  "effects-dir": {
    type: "string",
    help: "the coding toolkit's effectsDir (default: the one the run used, else its default)",
  },
  json: { type: "boolean", help: "print the result as JSON" },
};

/** Help text for `hookscope resume`. */
export const RESUME_HELP: string =
  `Usage: hookscope resume DB RUN_ID [--base-url URL] [--model NAME] [--workspace DIR]
                        [--effects-dir DIR] [--json]

Continues the agent run RUN_ID stored in the SQLite file DB, exactly where it stopped for
approval: calls approved with 'hookscope approve' run once (with the edited arguments, if
given), rejected ones are answered to the model with the reason, and the agent goes on until it
answers, hits its turn limit or stops for approval again. Two processes resuming the same run
cannot both run it: the second exits with code 1.

Runs started by 'hookscope run' or 'hookscope demo' store their model server, model, workspace
and --effects-dir; the flags override them. The API key comes from HOOKSCOPE_API_KEY or OPENAI_API_KEY.

${flagHelp(FLAGS)}`;

function clock(): string {
  return new Date().toISOString().slice(11, 23);
}

/** Runs `hookscope resume`; returns the exit code. */
export async function resumeCommand(args: readonly string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseFlags("resume", args, FLAGS);
  if (values.help) {
    io.out(RESUME_HELP);
    return 0;
  }
  if (positionals.length !== 2 || positionals.some((p) => p.trim() === "")) {
    throw new UsageError(`hookscope resume: expected DB and RUN_ID; see 'hookscope resume --help'`);
  }
  const [path, runId] = positionals;
  const flagURL = optionalString("resume", values["base-url"], "base-url");
  if (flagURL !== undefined && !/^https?:\/\//.test(flagURL)) {
    throw new UsageError(`hookscope resume: --base-url must be an http(s) URL`);
  }
  const flagModel = optionalString("resume", values.model, "model");
  const flagWorkspace = optionalString("resume", values.workspace, "workspace");
  const flagEffectsDir = optionalString("resume", values["effects-dir"], "effects-dir");
  const json = values.json === true;
  const line = (tag: string, text: string) => {
    if (!json) io.out(`${clock()}  ${tag.padEnd(8)} ${text.replace(/\s+/g, " ")}`);
  };

  // Until the model server is known, only key-shaped strings are redacted from what is stored.
  let redact = (text: string): string => redactCredentials(text, []);
  const store = redactingStore(await openWritableDb(path), (text) => redact(text));
  const failures: string[] = [];
  try {
    const run = await store.getRun(runId);
    if (run === undefined) {
      throw new CliError(`No run ${JSON.stringify(runId)} in ${JSON.stringify(path)}`);
    }
    if (run.sessionId === null) {
      throw new CliError(
        `Run ${JSON.stringify(runId)} belongs to no session; it cannot be resumed`,
      );
    }
    if (run.status !== "waiting_approval") {
      const claimed = run.status === "running" && run.owner !== null;
      throw new CliError(
        `Run ${JSON.stringify(runId)} is not waiting for approval (status ${run.status}${
          run.owner ? `, claimed by ${run.owner}` : ""
        })${
          claimed
            ? `; if that process is gone, 'hookscope release ${
              displayDb(path)
            } ${runId}' takes the claim back`
            : ""
        }`,
      );
    }
    // A call whose result is stored already needs no answer; an expired one resolves rejected.
    const stored = responsesAfter(
      await store.listMessages({ sessionId: run.sessionId }),
      run.state.messageId,
    );
    const unanswered = run.pending.filter((p) =>
      run.answers[p.callId] === undefined && !stored.has(p.callId) &&
      !(p.expiresAt !== undefined && p.expiresAt <= Date.now())
    );
    if (unanswered.length > 0) {
      throw new CliError(
        `Run ${JSON.stringify(runId)} still waits for answers to ${
          unanswered.map((p) => `${p.callId} (${p.toolName})`).join(", ")
        }; use 'hookscope approve' or 'hookscope reject' first`,
      );
    }
    const row = await store.getSession(run.sessionId);
    const info = readResumeInfo(row?.metadata);
    const baseURL = flagURL ?? info?.baseURL;
    const modelName = flagModel ?? info?.model;
    const workspace = flagWorkspace ?? info?.workspace;
    if (baseURL === undefined || modelName === undefined || workspace === undefined) {
      throw new CliError(
        `Run ${JSON.stringify(runId)} was not started by 'hookscope run' or 'hookscope demo': ` +
          `pass --base-url, --model and --workspace, or resume it from your application with ` +
          `Session.resume`,
      );
    }
    const env = globalThis.process?.env ?? {};
    const apiKey = env.HOOKSCOPE_API_KEY || env.OPENAI_API_KEY || undefined;
    // A user name and password in --base-url travel as a Basic header, never printed or stored.
    const server = modelServer(baseURL, apiKey);
    const endpoint = new OpenAICompatibleEndpoint({
      baseURL: server.url,
      ...(apiKey ? { apiKey } : {}),
      ...(server.headers ? { headers: server.headers } : {}),
    });
    redact = (text) => redactCredentials(endpoint.redact(text), []);
    const model = new IModel({ model: modelName, endpoint });
    const spec = codingSpec({ cwd: workspace, secure: true, fs: nodeFileSystem });
    // The toolkit runs the preset's hooks: its effects policy decides on change sets here too.
    const effectsDir = flagEffectsDir !== undefined ? resolve(flagEffectsDir) : info?.effectsDir;
    const tools = new CodingToolkit({
      workspaceRoot: workspace,
      spec,
      ...(effectsDir !== undefined ? { effectsDir } : {}),
    }).bind();
    const session = await Session.restore(store, run.sessionId, {
      model,
      onError: (error, where) => void failures.push(redact(`${where}: ${String(error)}`)),
      branch: (branchId) => (branchId === run.branchId ? { spec, model, tools } : { model }),
    });
    const bus = session.hooks;
    bus.on(
      "tool.pre",
      ({ toolName, argsSummary }) => line("tool.pre", `${toolName} ${argsSummary}`),
    );
    // The same secrets guard as `hookscope run`, given the workspace it protects.
    bus.on("tool.pre", secretsGuardIn(workspace));
    if (info?.askBefore.length) bus.on("tool.pre", askBeforeHook(info.askBefore));
    bus.on(
      "tool.post",
      ({ toolName, resultSummary }) =>
        line("tool.post", `${toolName} ${summarize(resultSummary, 90)}`),
    );
    bus.on(
      "tool.error",
      ({ toolName, error }) =>
        line(
          "tool.err",
          `${toolName} ${summarize(error instanceof Error ? error.message : error, 100)}`,
        ),
    );
    session.observer.observe({ type: HookBlocked }, (signal) => {
      line("BLOCKED", `${signal.toolName} by ${signal.point}: ${signal.error.message}`);
    });
    session.observer.observe({ type: ToolDenied }, (signal) => {
      line(
        "DENIED",
        `${verdict(signal).toolName} by ${verdict(signal).hook ?? "policy"}: ${
          verdict(signal).reason
        }`,
      );
    });
    observeEffects(session, line, path, effectsDir);
    line("resume", `run ${runId} of session ${run.sessionId}`);
    for (const pending of run.pending) {
      const answer = run.answers[pending.callId];
      if (answer === undefined) {
        line(
          "answer",
          `${pending.callId} ${pending.toolName}: ${
            stored.has(pending.callId) ? "ran already (its result is stored)" : "expired (rejected)"
          }`,
        );
        continue;
      }
      line(
        "answer",
        `${pending.callId} ${pending.toolName}: ${answer.approve ? "approved" : "rejected"}${
          answer.by ? ` by ${answer.by}` : ""
        }${answer.reason ? ` (${answer.reason})` : ""}${
          answer.updatedArgs ? ` with ${summarize(answer.updatedArgs, 80)}` : ""
        }`,
      );
    }
    let result;
    try {
      result = await session.resume(runId, {}, {
        owner: resumeOwner(),
      });
    } catch (error) {
      await session.drainSignals();
      if (error instanceof RunNotResumableError) {
        throw new CliError(error.message, { cause: error });
      }
      throw new CliError(
        redact(`The resumed run failed: ${error instanceof Error ? error.message : String(error)}`),
      );
    }
    if (result.stoppedBy !== "approval") {
      await session.end({
        status: result.stoppedBy === "aborted" ? "aborted" : "completed",
        numTurns: result.turns,
      });
    }
    await session.drainSignals();
    const answerText = typeof result.message?.content === "string" ? result.message.content : "";
    if (json) {
      io.out(JSON.stringify(
        {
          runId,
          sessionId: run.sessionId,
          stoppedBy: result.stoppedBy,
          turns: result.turns,
          actions: result.actions,
          answer: answerText,
          pending: result.pending ?? [],
        },
        null,
        2,
      ));
    } else {
      line("model", answerText);
      io.out(`\nrun ${runId} stopped by ${result.stoppedBy} after ${result.turns} turns`);
      for (const p of result.pending ?? []) {
        io.out(`pending again: ${p.callId} (${p.toolName}); see 'hookscope pending ${path}'`);
      }
    }
    return 0;
  } finally {
    await store.close();
    for (const failure of failures) io.err(`warning: ${failure}`);
  }
}
