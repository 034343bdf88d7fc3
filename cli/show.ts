/**
 * `hookscope show DB SESSION`: one session's timeline, messages and signals in order.
 *
 * @module
 */

import { summarize } from "../core/json_safe.ts";
import type { MessageRecord, SignalRow } from "../store/session_store.ts";
import { flagHelp, type FlagSpec, parseFlags, requirePositionals } from "./_args.ts";
import { formatTime, openExistingDb } from "./_db.ts";
import { CliError, type CliIO } from "./_output.ts";
import { renderTable } from "./_table.ts";

const FLAGS: Record<string, FlagSpec> = { json: { type: "boolean", help: "print JSON" } };

/** Help text for `hookscope show`. */
export const SHOW_HELP: string = `Usage: hookscope show DB SESSION [--json]

Prints one session's timeline from DB (a SQLite file or a postgres:// URL): its messages and
persisted signals, in order of time (signals by sequence number).

${flagHelp(FLAGS)}`;

/** One row of a session timeline. */
export interface TimelineEntry {
  /** Milliseconds since the epoch. */
  time: number;
  /** `message` or `signal`. */
  source: "message" | "signal";
  /** The message role, or the signal kind. */
  kind: string;
  /** A one-line summary. */
  detail: string;
}

function signalDetail(row: SignalRow): string {
  const p = row.payload as Record<string, unknown>;
  const decided = decisionDetail(row.kind, p.data);
  if (decided !== null) return decided;
  if (row.kind === "HookBlocked") {
    const e = p.error as { message?: string } | undefined;
    return `BLOCKED ${String(p.toolName)}: ${e?.message ?? ""}`;
  }
  if (typeof p.point === "string") {
    const payload = (p.payload ?? {}) as Record<string, unknown>;
    const tool = typeof payload.toolName === "string" ? ` ${payload.toolName}` : "";
    return `${p.point}${tool}`;
  }
  if (row.kind === "MessageAdded") {
    const ref = p.messageRef as { role?: string; id?: string } | undefined;
    return `message ${ref?.role ?? ""} ${ref?.id ?? ""}`.trim();
  }
  return summarize(p, 120);
}

function text(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/**
 * The decision signals (denials, asks, answers, shadow verdicts, gate denials) as one line each,
 * with the tool, the call, the reason and who decided; `null` for any other signal.
 */
function decisionDetail(kind: string, data: unknown): string | null {
  const d = (data !== null && typeof data === "object" ? data : {}) as Record<string, unknown>;
  const tool = text(d.toolName) ?? text(d.function) ?? "?";
  const call = text(d.callId) ? ` call ${d.callId}` : "";
  const reason = text(d.reason) ? `: ${d.reason}` : "";
  const hook = text(d.hook) ? ` by ${d.hook}` : "";
  switch (kind) {
    case "ToolDenied":
      return `DENIED ${tool}${call}${hook}${reason}`;
    case "ClaudeHookDecision": {
      const verdict = String(d.verdict ?? "none").toUpperCase();
      const subject = text(d.toolName) ? ` ${d.toolName}${call}` : "";
      const edited = d.updatedInput ? ` input=${summarize(d.updatedInput, 80)}` : "";
      const failed = text(d.error) ? ` (policy failed: ${d.error})` : "";
      return `claude ${
        String(d.event ?? "?")
      } ${verdict}${subject}${hook}${reason}${edited}${failed}`;
    }
    case "WouldDeny":
      return `would deny (shadow) ${tool}${call}${hook}${reason}`;
    case "WouldAsk":
      return `would ask (shadow) ${tool}${call}${hook}${reason}`;
    case "ApprovalRequested":
      return `ASK ${tool}${call}${reason} args=${summarize(d.args ?? {}, 80)}`;
    case "ApprovalAnswered": {
      const verdict = d.approve === true ? "APPROVED" : "REJECTED";
      const by = text(d.by) ? ` by ${d.by}` : "";
      const edited = d.updatedArgs !== undefined && d.updatedArgs !== null
        ? ` args=${summarize(d.updatedArgs, 80)}`
        : "";
      return `${verdict} ${tool}${call}${by}${reason}${edited}`;
    }
    case "GateDenied":
      return `GATE DENIED ${tool}`;
    default:
      return null;
  }
}

/** Merges messages and signals into one ordered timeline. */
export function buildTimeline(
  messages: readonly MessageRecord[],
  signals: readonly SignalRow[],
): TimelineEntry[] {
  const entries: (TimelineEntry & { order: number })[] = [];
  messages.forEach((m, i) =>
    entries.push({
      time: m.createdAt,
      source: "message",
      kind: m.role,
      detail: summarize(m.content, 160),
      order: i,
    })
  );
  signals.forEach((s) =>
    entries.push({
      time: s.ts,
      source: "signal",
      kind: s.kind,
      detail: signalDetail(s),
      order: messages.length + s.seq,
    })
  );
  entries.sort((a, b) => a.time - b.time || a.order - b.order);
  return entries.map(({ order: _order, ...entry }) => entry);
}

/** Runs `hookscope show`; returns the exit code. */
export async function showCommand(args: readonly string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseFlags("show", args, FLAGS);
  if (values.help) {
    io.out(SHOW_HELP);
    return 0;
  }
  const [path, sessionId] = requirePositionals("show", positionals, ["DB", "SESSION"]);
  const store = await openExistingDb(path);
  try {
    const session = await store.getSession(sessionId);
    if (!session) {
      throw new CliError(`No session ${JSON.stringify(sessionId)} in ${JSON.stringify(path)}`);
    }
    const messages = await store.listMessages({ sessionId });
    const signals = await store.listSessionSignals(sessionId);
    if (values.json) {
      io.out(JSON.stringify({ session, messages, signals }, null, 2));
      return 0;
    }
    io.out(`session ${session.id}  status=${session.status}  model=${session.model ?? "-"}`);
    io.out(renderTable(
      ["TIME", "SOURCE", "KIND", "DETAIL"],
      buildTimeline(messages, signals).map((e) => [formatTime(e.time), e.source, e.kind, e.detail]),
      110,
    ));
    return 0;
  } finally {
    await store.close();
  }
}
