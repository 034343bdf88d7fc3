/**
 * The coding agent the `demo` and `run` subcommands drive: a Session persisted to SQLite, the
 * coding toolkit in a workspace with its guards, a `tool.pre` guard on the session bus, the
 * model bridged into the session, and a live timeline of what fired.
 *
 * @module
 */

import { codingSpec, nodeFileSystem } from "../action/coding/mod.ts";
import { CodingToolkit, type SandboxOptions } from "../action/coding/mod.ts";
import { renderJson, summarize } from "../core/json_safe.ts";
import { modelServer, redactCredentials, redactingStore } from "./_credentials.ts";
import { IModel, OpenAICompatibleEndpoint } from "../service/mod.ts";
import {
  bridgeModelToSession,
  EffectsCommitted,
  EffectsDecided,
  EffectsDiscarded,
  HookBlocked,
  Session,
  ToolDenied,
} from "../session/mod.ts";
import type { ToolVerdictData } from "../session/mod.ts";
import { displayDb, openOrCreateDb } from "./_db.ts";
import { CliError, type CliIO, visible } from "./_output.ts";
import type { PendingApproval } from "../core/approval.ts";
import { askBeforeHook, saveResumeInfo } from "./_resume_info.ts";
import { secretsGuardIn } from "./_secrets_guard.ts";

/** The data of a ToolDenied signal. */
const verdict = (signal: { data: unknown }): ToolVerdictData => signal.data as ToolVerdictData;

/** What the agent run needs. */
export interface AgentRunConfig {
  /** The OpenAI-compatible API root. */
  baseURL: string;
  /** The model name. */
  model: string;
  /** The API key, if the server needs one. */
  apiKey?: string;
  /** Extra request headers (credentials: redacted from everything printed and stored). */
  headers?: Record<string, string>;
  /** The SQLite file sessions are persisted to. */
  dbPath: string;
  /** The folder the coding tools are confined to. */
  workspace: string;
  /**
   * Tools whose calls need a person's approval: a `tool.pre` hook asks, the run stops and is
   * saved, and `hookscope approve`/`reject` + `hookscope resume` continue it.
   */
  askBefore?: readonly string[];
  /** What the agent is asked to do. */
  instruction: string;
  /** At most this many model turns (default 8). */
  maxTurns?: number;
  /** The longest wait for the model server's next byte, in ms (default 60 000). */
  idleTimeoutMs?: number;
  /** The overall deadline of one model call, in ms (default 600 000, the endpoint's). */
  timeoutMs?: number;
  /** Where output goes. */
  io: CliIO;
  /** Writes without a newline (streamed text). */
  write: (text: string) => void;
  /** Where the bash tool runs (default: bubblewrap, refusing without it). */
  sandbox?: SandboxOptions;
  /**
   * Where the coding toolkit keeps staged layers and checkpoints (its `effectsDir`; default
   * `defaultEffectsDir()`). Stored for `hookscope resume`.
   */
  effectsDir?: string;
}

/** What the run produced. */
export interface AgentRunSummary {
  /** The persisted session's id. */
  sessionId: string;
  /** How the session ended. */
  status: string;
  /** Model turns taken. */
  turns: number;
  /** Tool calls blocked by a guard. */
  blocked: number;
  /** The agent run's id. */
  runId?: string;
  /** With status `waiting_approval`: the calls waiting for an answer. */
  pending?: readonly PendingApproval[];
}

const SYSTEM_PROMPT = "You are a careful coding agent. Use the tools to inspect and change the " +
  "workspace. Never run destructive commands and never read secrets.";

export { secretsGuard, secretsGuardIn, type SecretsGuardPayload } from "./_secrets_guard.ts";

function clock(): string {
  return new Date().toISOString().slice(11, 23);
}

/** Runs the agent once and persists everything; returns a summary. */
export async function runCodingAgent(config: AgentRunConfig): Promise<AgentRunSummary> {
  // Made first: a bad key fails before anything is opened, with a message that does not quote it.
  let endpoint: OpenAICompatibleEndpoint;
  // Credentials in the URL leave it (they travel as a header): the URL is printed and stored.
  const server = modelServer(config.baseURL, config.apiKey);
  const headers = { ...server.headers, ...config.headers };
  try {
    endpoint = new OpenAICompatibleEndpoint({
      baseURL: server.url,
      ...(config.apiKey ? { apiKey: config.apiKey } : {}),
      ...(Object.keys(headers).length ? { headers } : {}),
      ...(config.idleTimeoutMs !== undefined ? { idleTimeoutMs: config.idleTimeoutMs } : {}),
      ...(config.timeoutMs !== undefined ? { timeoutMs: config.timeoutMs } : {}),
    });
  } catch (error) {
    throw new CliError(
      redactCredentials(`Cannot use the model server: ${(error as Error).message}`, [
        ...server.secrets,
        ...Object.values(config.headers ?? {}),
      ]),
    );
  }
  // Every line this command prints or stores goes through the endpoint's redaction (the key, the
  // headers, the URL's credentials, in any encoding) and loses key-shaped strings; printed lines
  // also show control characters and terminal escapes escaped.
  const redact = (text: string): string => redactCredentials(endpoint.redact(text), []);
  const clean = (text: string): string => visible(redact(text));
  const io: CliIO = {
    out: (text) => config.io.out(clean(text)),
    err: (text) => config.io.err(clean(text)),
  };
  const write = (text: string): void => config.write(clean(text));
  let streaming = false;
  let chunks = 0;
  // Streamed text is printed a line at a time (or up to the last blank of a long line), so a
  // credential split across chunks is redacted whole.
  let pending = "";
  const flushText = (all: boolean): void => {
    let cut = all ? pending.length : pending.lastIndexOf("\n") + 1;
    if (cut === 0 && pending.length > 4096) cut = pending.search(/\s\S*$/) + 1;
    if (cut <= 0) return;
    write(pending.slice(0, cut));
    pending = pending.slice(cut);
  };
  const endText = () => {
    flushText(true);
    if (streaming) write(`  [${chunks} text chunks]\n`);
    streaming = false;
    chunks = 0;
  };
  const line = (tag: string, text: string) => {
    endText();
    io.out(`${clock()}  ${tag.padEnd(8)} ${text.replace(/\s+/g, " ")}`);
  };
  const store = redactingStore(await openOrCreateDb(config.dbPath), redact);
  const failures: string[] = [];
  const session = new Session({
    store,
    name: "hookscope agent",
    onError: (error, where) => void failures.push(clean(`${where}: ${String(error)}`)),
  });
  const model = new IModel({ model: config.model, endpoint });
  const bus = session.hooks;
  let blocked = 0;

  bus.on("session.start", ({ sessionId }) => line("session", `start ${sessionId}`));
  bus.on("session.end", ({ status }) => line("session", `end (${status ?? "completed"})`));
  bus.on(
    "branch.create",
    ({ branchId, agentName }) => line("branch", `create ${branchId} agent=${agentName ?? "-"}`),
  );
  bus.on(
    "api.pre_call",
    ({ eventId }) => line("api", `pre_call ${config.model} event=${String(eventId).slice(0, 8)}`),
  );
  bus.on(
    "api.post_call",
    ({ status, latencyMs, tokens }) =>
      line(
        "api",
        `post_call ${status} ${Math.round(Number(latencyMs))} ms tokens=${tokens?.total ?? "-"}`,
      ),
  );
  bus.on("tool.pre", ({ toolName, argsSummary }) => line("tool.pre", `${toolName} ${argsSummary}`));
  bus.on("tool.pre", secretsGuardIn(config.workspace));
  if (config.askBefore?.length) bus.on("tool.pre", askBeforeHook(config.askBefore));
  bus.on(
    "tool.post",
    ({ toolName, resultSummary, durationMs }) =>
      line(
        "tool.post",
        `${toolName} ${Math.round(Number(durationMs))} ms ${summarize(resultSummary, 90)}`,
      ),
  );
  bus.on("tool.error", ({ toolName, error }) => {
    blocked += error instanceof Error && /Blocked|denied/i.test(error.message) ? 1 : 0;
    line(
      "tool.err",
      `${toolName} ${summarize(error instanceof Error ? error.message : error, 100)}`,
    );
  });
  bus.on(
    "message.add",
    ({ message }) => line("persist", `message ${message.role} → ${displayDb(config.dbPath)}`),
  );
  session.observer.observe({ type: HookBlocked }, (signal) => {
    blocked++;
    line("BLOCKED", `${signal.toolName} by ${signal.point}: ${signal.error.message}`);
  });
  session.observer.observe({ type: ToolDenied }, (signal) => {
    blocked++;
    line(
      "DENIED",
      `${verdict(signal).toolName} by ${verdict(signal).hook ?? "policy"}: ${
        verdict(signal).reason
      }`,
    );
  });

  observeEffects(session, line, config.dbPath, config.effectsDir);

  const bridge = bridgeModelToSession(model, session, { chunks: false });

  const spec = codingSpec({ cwd: config.workspace, secure: true, fs: nodeFileSystem });
  const agent = session.newBranch({ spec, model, system: SYSTEM_PROMPT });
  const toolkit = new CodingToolkit({
    workspaceRoot: config.workspace,
    ...(config.sandbox ? { sandbox: config.sandbox } : {}),
    ...(config.effectsDir !== undefined ? { effectsDir: config.effectsDir } : {}),
  });
  // Detection first, so the bash tool's description states where commands run and whether
  // their changes are staged.
  const sandbox = await toolkit.sandboxStatus();
  toolkit.bind(agent.actions);
  line(
    "sandbox",
    sandbox.kind === "bubblewrap"
      ? `bubblewrap ${sandbox.version ?? ""} (process cap: ${sandbox.processLimit})`
      : sandbox.kind === "none"
      ? `NONE: bash runs on the host without a sandbox (sandbox kind "none")`
      : `unavailable, bash will refuse: ${sandbox.reason}`,
  );
  line(
    "effects",
    sandbox.kind === "bubblewrap" && sandbox.effects === "overlay"
      ? "staged: commands write into a copy-on-write layer; the effects policy decides what is applied"
      : `DIRECT: commands write straight into the workspace, the command judge blocks (${
        sandbox.kind === "bubblewrap"
          ? sandbox.effectsReason
          : sandbox.kind === "none"
          ? 'sandbox "none"'
          : sandbox.reason
      })`,
  );

  let status = "completed";
  let turns = 0;
  let error: unknown = null;
  let stopped: { runId: string; stoppedBy: string; pending?: readonly PendingApproval[] } | null =
    null;
  await session.start({
    model: config.model,
    provider: model.endpoint.name,
    agentName: spec.name ?? "coding",
  });
  await saveResumeInfo(store, session.id, { ...config, baseURL: server.url });
  try {
    for await (
      const event of agent.operateStream(config.instruction, { maxTurns: config.maxTurns ?? 8 })
    ) {
      if (event.type === "text") {
        if (!streaming) write(`${clock()}  ${"model".padEnd(8)} ▸ `);
        streaming = true;
        chunks++;
        pending += event.text;
        flushText(false);
      } else if (event.type === "tool_call") {
        line("call", `${event.call.name} ${event.call.arguments}`);
      } else if (event.type === "tool_result") {
        const output = event.result.output as { success?: boolean; error?: string } | null;
        const verdict = event.blocked
          ? "blocked"
          : output && typeof output === "object" && "error" in output && output.error
          ? `error: ${summarize(output.error, 80)}`
          : "ok";
        line("result", `${event.result.function} ${verdict}`);
      } else {
        endText();
        turns = event.result.turns;
        stopped = event.result;
      }
    }
  } catch (caught) {
    error = caught;
    status = "failed";
  }
  endText();
  await bridge.drain();
  const waiting = stopped?.stoppedBy === "approval";
  if (waiting) status = "waiting_approval";
  // A run waiting for approval leaves the session open: `hookscope resume` ends it.
  const end: Session["end"] = waiting ? () => Promise.resolve() : (r) => session.end(r);
  await end({
    status,
    numTurns: turns,
    ...(error ? { error: clean(error instanceof Error ? error.message : String(error)) } : {}),
  });
  await session.drainSignals();
  for (const branch of session.branches) await branch.drainSignals();
  bridge();
  await store.close();
  for (const failure of failures) io.err(`warning: ${failure}`);
  if (error) {
    const reason = clean(error instanceof Error ? error.message : renderJson(error));
    // No cause: a runtime's error may quote a credential that the message no longer carries.
    throw new CliError(`The agent run failed: ${reason}`);
  }
  const summary: AgentRunSummary = { sessionId: session.id, status, turns, blocked };
  if (stopped !== null) summary.runId = stopped.runId;
  if (waiting && stopped?.pending) summary.pending = stopped.pending;
  return summary;
}

/** Prints the effects decisions of staged runs on the live timeline (`run`, `resume`). */
export function observeEffects(
  session: Session,
  line: (tag: string, text: string) => void,
  dbPath: string,
  effectsDir?: string,
): void {
  const undoFlags = effectsDir === undefined ? "" : ` --effects-dir ${effectsDir}`;
  session.observer.observe({ type: EffectsDecided }, (signal) => {
    const d = signal.data as {
      toolName: string;
      decision: string;
      summary: string;
      reason?: string;
      answered?: { approve: boolean; by?: string };
    };
    if (d.decision === "allow" || d.decision === "none") return;
    if (d.answered !== undefined) {
      // A resumed run: the answer given while it waited applies to this very change set.
      const by = d.answered.by ? ` by ${d.answered.by}` : "";
      line(
        "effects",
        d.answered.approve
          ? `${d.toolName} APPROVED${by} before the resume (${d.summary}): committing the change set that was approved`
          : `${d.toolName} REJECTED${by} before the resume (${d.summary}): not applied`,
      );
      return;
    }
    line(
      "effects",
      `${d.toolName} ${d.decision.toUpperCase()} (${d.summary})${d.reason ? `: ${d.reason}` : ""}`,
    );
  });
  session.observer.observe({ type: EffectsCommitted }, (signal) => {
    const d = signal.data as {
      toolName: string;
      summary: string;
      checkpoint: string;
      callId: string;
    };
    line(
      "commit",
      `${d.toolName} ${d.summary} (undo: hookscope undo ${
        displayDb(dbPath)
      } ${d.callId}${undoFlags})`,
    );
  });
  session.observer.observe({ type: EffectsDiscarded }, (signal) => {
    const d = signal.data as { toolName: string; summary: string; reason?: string };
    line("discard", `${d.toolName} ${d.summary} not applied: ${d.reason ?? ""}`);
  });
}
