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
import { changeLine } from "./_changes.ts";
import { changeSummary } from "../session/_effects_data.ts";

const FLAGS: Record<string, FlagSpec> = { json: { type: "boolean", help: "print JSON" } };

/** Help text for `hookscope show`. */
export const SHOW_HELP: string = `Usage: hookscope show DB SESSION [--json]

Prints one session's timeline from DB (a SQLite file or a postgres:// URL): its messages and
persisted signals, in order of time (signals by sequence number; a stored message is one row, its
MessageAdded signal folded in), then the checkpoints of the
change sets its staged runs committed (each undone with 'hookscope undo DB CALL_ID').

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

/** One signal row as the line `show` and `tail` print for it. */
export function signalDetail(row: Pick<SignalRow, "kind" | "payload">): string {
  const p = row.payload as Record<string, unknown>;
  const decided = decisionDetail(row.kind, p.data);
  if (decided !== null) return decided;
  if (row.kind === "ChangesUndone") {
    // Recorded by `hookscope undo` and the console: the payload is the data itself.
    const count = Array.isArray(p.changes) ? p.changes.length : 0;
    return `UNDONE ${String(p.toolName ?? "?")} call ${
      String(p.callId ?? "?")
    } (${count} path(s) restored)${text(p.by) ? ` by ${p.by}` : ""}${
      p.force === true ? " (forced)" : ""
    }`;
  }
  if (row.kind === "ApprovalAccepted" || row.kind === "ApprovalRefused") {
    // Recorded when a person's answer is stored or refused (CLI, console, session.resume).
    const verdict = p.approve === true ? "approve" : "reject";
    const who = text(p.by) ? ` by ${p.by}` : "";
    const call = `${text(p.toolName) ? `${p.toolName} ` : ""}call ${String(p.callId ?? "?")}`;
    return row.kind === "ApprovalAccepted"
      ? `ANSWER STORED ${verdict} ${call}${who}${text(p.reason) ? `: ${p.reason}` : ""}`
      : `ANSWER REFUSED (${String(p.why ?? "?")}) ${verdict} ${call}${who}`;
  }
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
    case "WouldAsk": {
      // Which point's handler it was: the call (tool.pre) or its change set (tool.effects).
      const at = text(d.point) ? `, ${d.point}` : "";
      const would = kind === "WouldDeny" ? "would deny" : "would ask";
      return `${would} (shadow${at}) ${tool}${call}${hook}${reason}`;
    }
    case "ApprovalRequested": {
      // A change-set approval says so first: its counts by kind (the entries are in `pending`).
      const effects = d.effects as { count?: unknown; changes?: unknown } | undefined;
      const changes = effects && Array.isArray(effects.changes)
        ? ` [change set: ${changeSummary(effects.changes as { kind: string }[])}${
          Number(effects.count) > effects.changes.length ? ", …" : ""
        }]`
        : "";
      return `ASK ${tool}${call}${changes}${reason} args=${summarize(d.args ?? {}, 80)}`;
    }
    case "EffectsDecided": {
      const verdict = String(d.decision ?? "none").toUpperCase();
      const answered = d.answered as { approve?: unknown; by?: unknown } | undefined;
      const stored = answered === undefined
        ? ""
        : `; answered before the resume: ${answered.approve === true ? "approved" : "rejected"}${
          text(answered.by) ? ` by ${answered.by}` : ""
        }`;
      return `EFFECTS ${verdict} ${tool}${call}${hook}${reason} (${
        String(d.summary ?? "")
      })${stored}`;
    }
    case "EffectsCommitted":
      return `COMMITTED ${tool}${call} (${String(d.summary ?? "")}) checkpoint ${
        String(d.checkpoint ?? "-")
      }`;
    case "EffectsDiscarded":
      return `NOT APPLIED ${tool}${call} (${String(d.summary ?? "")})${reason}`;
    case "ApprovalAnswered": {
      const verdict = d.approve === true ? "APPROVED" : "REJECTED";
      const by = text(d.by) ? ` by ${d.by}` : "";
      const edited = d.updatedArgs !== undefined && d.updatedArgs !== null
        ? ` args=${summarize(d.updatedArgs, 80)}`
        : "";
      const resumed = d.resumed === true ? " (the stored answer, on resume)" : "";
      return `${verdict} ${tool}${call}${by}${resumed}${reason}${edited}`;
    }
    case "GateDenied":
      return `GATE DENIED ${tool}`;
    default:
      return null;
  }
}

/**
 * Merges messages and signals into one ordered timeline. A message is one row: the
 * `MessageAdded` signal of a message among `messages` adds nothing to it and is left out (one
 * whose message is not stored keeps its row).
 */
export function buildTimeline(
  messages: readonly MessageRecord[],
  signals: readonly SignalRow[],
): TimelineEntry[] {
  const stored = new Set(messages.map((m) => m.id));
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
  signals.forEach((s) => {
    if (s.kind === "MessageAdded") {
      const ref = (s.payload as { messageRef?: { id?: unknown } } | null)?.messageRef;
      if (typeof ref?.id === "string" && stored.has(ref.id)) return;
    }
    entries.push({
      time: s.ts,
      source: "signal",
      kind: s.kind,
      detail: signalDetail(s),
      order: messages.length + s.seq,
    });
  });
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
    const checkpoints = listCheckpoints(signals);
    if (values.json) {
      io.out(JSON.stringify({ session, messages, signals, checkpoints }, null, 2));
      return 0;
    }
    io.out(`session ${session.id}  status=${session.status}  model=${session.model ?? "-"}`);
    io.out(renderTable(
      ["TIME", "SOURCE", "KIND", "DETAIL"],
      buildTimeline(messages, signals).map((e) => [formatTime(e.time), e.source, e.kind, e.detail]),
      110,
    ));
    if (checkpoints.length > 0) {
      io.out(`\ncheckpoints (undo one with: hookscope undo ${path} CALL_ID):`);
      io.out(renderTable(
        ["CALL", "TOOL", "COMMITTED", "CHANGES", "CHECKPOINT", "STATE"],
        checkpoints.map((c) => [
          c.callId,
          c.toolName,
          formatTime(c.committedAt),
          c.summary,
          c.checkpoint,
          c.undoneAt === undefined ? "committed" : `undone ${formatTime(c.undoneAt)}`,
        ]),
        110,
      ));
      for (const c of checkpoints) {
        io.out(`${c.callId} in ${c.workspace ?? "?"}:`);
        for (const change of c.changes) io.out(`    ${changeLine(change)}`);
        if (c.count > c.changes.length) io.out(`    … ${c.count - c.changes.length} more`);
      }
    }
    return 0;
  } finally {
    await store.close();
  }
}

/** A checkpoint of a session, from its `EffectsCommitted` signals (and `ChangesUndone` rows). */
export interface CheckpointEntry {
  /** The call whose change set it undoes. */
  callId: string;
  /** The tool. */
  toolName: string;
  /** The checkpoint id. */
  checkpoint: string;
  /** The workspace. */
  workspace?: string;
  /** When it was committed (ms since the epoch). */
  committedAt: number;
  /** When it was undone, if it was. */
  undoneAt?: number;
  /** Counts by kind. */
  summary: string;
  /** How many entries the change set has. */
  count: number;
  /** Its first entries. */
  changes: { path: string; kind: string; type?: string; target?: string }[];
}

/** The checkpoints the session's signals name, in commit order. */
export function listCheckpoints(signals: readonly SignalRow[]): CheckpointEntry[] {
  const out: CheckpointEntry[] = [];
  for (const row of signals) {
    if (row.kind === "ChangesUndone") {
      // The latest committed change set of that call that is not undone yet.
      const callId = (row.payload as { callId?: unknown } | null)?.callId;
      const entry = [...out].reverse().find((c) => c.callId === callId && c.undoneAt === undefined);
      if (entry !== undefined) entry.undoneAt = row.ts;
      continue;
    }
    const data = ((row.payload as { data?: unknown } | null)?.data ?? {}) as Record<
      string,
      unknown
    >;
    const checkpoint = text(data.checkpoint);
    if (checkpoint === undefined) continue;
    if (row.kind === "EffectsCommitted") {
      const entry: CheckpointEntry = {
        callId: String(data.callId ?? ""),
        toolName: String(data.toolName ?? ""),
        checkpoint,
        committedAt: row.ts,
        summary: String(data.summary ?? ""),
        count: Number(data.count ?? 0),
        changes: Array.isArray(data.changes) ? data.changes as CheckpointEntry["changes"] : [],
      };
      const workspace = text(data.workspace);
      if (workspace !== undefined) entry.workspace = workspace;
      out.push(entry);
    }
  }
  return out;
}
