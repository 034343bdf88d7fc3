/**
 * The coding agent the `demo` and `run` subcommands drive: a Session persisted to SQLite, the
 * coding toolkit in a workspace with its guards, a `tool.pre` guard on the session bus, the
 * model bridged into the session, and a live timeline of what fired.
 *
 * @module
 */

import { nodeFileSystem } from "../action/coding/mod.ts";
import { CodingToolkit, type SandboxOptions } from "../action/coding/mod.ts";
import { AgentSpec } from "../action/mod.ts";
import { renderJson, summarize } from "../core/json_safe.ts";
import { redactSecrets } from "../core/redact.ts";
import { IModel, OpenAICompatibleEndpoint } from "../service/mod.ts";
import { bridgeModelToSession, createAgent, HookBlocked, Session } from "../session/mod.ts";
import { SqliteStore } from "../store/sqlite/mod.ts";
import { CliError, type CliIO } from "./_output.ts";

/** What the agent run needs. */
export interface AgentRunConfig {
  /** The OpenAI-compatible API root. */
  baseURL: string;
  /** The model name. */
  model: string;
  /** The API key, if the server needs one. */
  apiKey?: string;
  /** The SQLite file sessions are persisted to. */
  dbPath: string;
  /** The folder the coding tools are confined to. */
  workspace: string;
  /** What the agent is asked to do. */
  instruction: string;
  /** At most this many model turns (default 8). */
  maxTurns?: number;
  /** The longest wait for the model server's next byte, in ms (default 60 000). */
  idleTimeoutMs?: number;
  /** The overall deadline of one model call, in ms (default none). */
  timeoutMs?: number;
  /** Where output goes. */
  io: CliIO;
  /** Writes without a newline (streamed text). */
  write: (text: string) => void;
  /** Where the bash tool runs (default: bubblewrap, refusing without it). */
  sandbox?: SandboxOptions;
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
}

const SYSTEM_PROMPT = "You are a careful coding agent. Use the tools to inspect and change the " +
  "workspace. Never run destructive commands and never read secrets.";

/**
 * Blocks any tool call whose arguments mention a secrets file (a session `tool.pre` guard). It
 * reads every string in the real arguments, under any key and at any depth, never the summary.
 */
export function secretsGuard(
  { toolName, args }: { toolName: string; args: Readonly<Record<string, unknown>> },
): void {
  const found = findString(args, (text) => /(^|[^\w.])\.env\b|id_rsa|\.netrc/.test(text));
  if (found !== undefined) {
    throw new Error(`${toolName} may not touch secrets (${JSON.stringify(found.slice(-120))})`);
  }
}

function findString(
  value: unknown,
  test: (text: string) => boolean,
  depth = 0,
): string | undefined {
  if (typeof value === "string") return test(value) ? value : undefined;
  if (value === null || typeof value !== "object" || depth > 64) return undefined;
  for (const item of Array.isArray(value) ? value : Object.values(value)) {
    const found = findString(item, test, depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}

function clock(): string {
  return new Date().toISOString().slice(11, 23);
}

/** Runs the agent once and persists everything; returns a summary. */
export async function runCodingAgent(config: AgentRunConfig): Promise<AgentRunSummary> {
  // Made first: a bad key fails before anything is opened, with a message that does not quote it.
  let endpoint: OpenAICompatibleEndpoint;
  try {
    endpoint = new OpenAICompatibleEndpoint({
      baseURL: config.baseURL,
      ...(config.apiKey ? { apiKey: config.apiKey } : {}),
      ...(config.idleTimeoutMs !== undefined ? { idleTimeoutMs: config.idleTimeoutMs } : {}),
      ...(config.timeoutMs !== undefined ? { timeoutMs: config.timeoutMs } : {}),
    });
  } catch (error) {
    throw new CliError(
      redactSecrets(`Cannot use the model server: ${(error as Error).message}`, [
        config.apiKey ?? "",
      ]),
    );
  }
  // Every line this command prints or stores goes through the endpoint's redaction.
  const clean = (text: string): string => endpoint.redact(text);
  const io: CliIO = {
    out: (text) => config.io.out(clean(text)),
    err: (text) => config.io.err(clean(text)),
  };
  const write = (text: string): void => config.write(clean(text));
  let streaming = false;
  let chunks = 0;
  const endText = () => {
    if (streaming) write(`  [${chunks} text chunks]\n`);
    streaming = false;
    chunks = 0;
  };
  const line = (tag: string, text: string) => {
    endText();
    io.out(`${clock()}  ${tag.padEnd(8)} ${text.replace(/\s+/g, " ")}`);
  };
  let store: SqliteStore;
  try {
    store = await SqliteStore.open(config.dbPath);
  } catch (error) {
    throw new CliError(
      clean(`Cannot open database ${JSON.stringify(config.dbPath)}: ${(error as Error).message}`),
      { cause: error },
    );
  }
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
  bus.on("tool.pre", secretsGuard);
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
    ({ message }) => line("persist", `message ${message.role} → ${config.dbPath}`),
  );
  session.observer.observe({ type: HookBlocked }, (signal) => {
    blocked++;
    line("BLOCKED", `${signal.toolName} by ${signal.point}: ${signal.error.message}`);
  });

  const bridge = bridgeModelToSession(model, session, { chunks: false });

  const spec = AgentSpec.coding({ cwd: config.workspace, secure: true, fs: nodeFileSystem });
  const agent = createAgent(spec, { session, model, system: SYSTEM_PROMPT });
  const toolkit = new CodingToolkit({
    workspaceRoot: config.workspace,
    ...(config.sandbox ? { sandbox: config.sandbox } : {}),
  });
  toolkit.bind(agent.actions);
  const sandbox = await toolkit.sandboxStatus();
  line(
    "sandbox",
    sandbox.kind === "bubblewrap"
      ? `bubblewrap ${sandbox.version ?? ""} (process cap: ${sandbox.processLimit})`
      : sandbox.kind === "none"
      ? `NONE: bash runs on the host without a sandbox (sandbox kind "none")`
      : `unavailable, bash will refuse: ${sandbox.reason}`,
  );

  let status = "completed";
  let turns = 0;
  let error: unknown = null;
  await session.start({
    model: config.model,
    provider: model.endpoint.name,
    agentName: spec.name ?? "coding",
  });
  try {
    for await (
      const event of agent.operateStream(config.instruction, { maxTurns: config.maxTurns ?? 8 })
    ) {
      if (event.type === "text") {
        if (!streaming) write(`${clock()}  ${"model".padEnd(8)} ▸ `);
        streaming = true;
        chunks++;
        write(event.text);
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
      }
    }
  } catch (caught) {
    error = caught;
    status = "failed";
  }
  await bridge.drain();
  await session.end({
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
  return { sessionId: session.id, status, turns, blocked };
}
