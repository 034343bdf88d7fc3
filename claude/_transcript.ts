/**
 * Writes a session's messages as a Claude Code JSONL transcript (one JSON object a line:
 * `type`, `message` with `role` and `content`, `uuid`, `sessionId`, `timestamp`), so hook
 * scripts that read `transcript_path` find what they expect.
 *
 * @module
 */

import { lstat, mkdir, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, resolve } from "node:path";
import process from "node:process";
import type { Session } from "../session/session.ts";
import { sessionIdProblem } from "./_session_id.ts";

/** A session whose id cannot name a transcript file in its folder (it would leave the folder). */
export class ClaudeTranscriptPathError extends TypeError {
  /** Makes the error. */
  constructor(reason: string) {
    super(`Cannot write the Claude transcript: ${reason}`);
    this.name = "ClaudeTranscriptPathError";
  }
}

/**
 * The transcript file of session `id` in `dir` (`dir/ID.jsonl`); throws a
 * {@linkcode ClaudeTranscriptPathError} for an id that is not a plain file name, or a path that
 * would not be directly inside `dir`.
 */
export function transcriptPath(dir: string, id: string): string {
  const problem = sessionIdProblem(id);
  if (problem !== undefined) throw new ClaudeTranscriptPathError(problem);
  const path = `${dir}/${id}.jsonl`;
  if (dirname(resolve(path)) !== resolve(dir)) {
    throw new ClaudeTranscriptPathError(
      `${JSON.stringify(path)} is not inside ${JSON.stringify(dir)}`,
    );
  }
  return path;
}

function text(content: unknown): string {
  return typeof content === "string" ? content : JSON.stringify(content) ?? "";
}

/** One transcript line of a message. */
function line(
  message: { id: string; role: string; content: unknown; createdAt: number },
  sessionId: string,
  cwd: string,
): Record<string, unknown> {
  const base = {
    uuid: message.id,
    sessionId,
    cwd,
    timestamp: new Date(message.createdAt).toISOString(),
  };
  const content = message.content as Record<string, unknown> | null;
  switch (message.role) {
    case "assistant":
      return {
        ...base,
        type: "assistant",
        message: { role: "assistant", content: [{ type: "text", text: text(message.content) }] },
      };
    case "action_request":
      return {
        ...base,
        type: "assistant",
        message: {
          role: "assistant",
          content: [{
            type: "tool_use",
            id: String(content?.callId ?? content?.id ?? message.id),
            name: String(content?.function ?? content?.name ?? ""),
            input: content?.arguments ?? {},
          }],
        },
      };
    case "action_response":
      return {
        ...base,
        type: "user",
        message: {
          role: "user",
          content: [{
            type: "tool_result",
            tool_use_id: String(content?.callId ?? content?.id ?? message.id),
            content: text(content?.output ?? content),
          }],
        },
      };
    case "system":
      return { ...base, type: "system", content: text(message.content) };
    default:
      return { ...base, type: "user", message: { role: "user", content: text(message.content) } };
  }
}

/**
 * The default transcript folder: one of this user's own under the OS temp folder
 * (`TMPDIR/hookscope-claude-UID`, or `TMPDIR/hookscope-claude` where there are no user ids).
 */
export function defaultTranscriptDir(): string {
  const uid = typeof process.getuid === "function" ? process.getuid() : undefined;
  return uid === undefined ? `${tmpdir()}/hookscope-claude` : `${tmpdir()}/hookscope-claude-${uid}`;
}

/**
 * Checks that the default folder, which sits in a folder every user can write to, is this
 * user's own real folder that nobody else can write to: else another user could have made it
 * first and put a link where a transcript goes.
 */
async function checkOwnFolder(dir: string): Promise<void> {
  const info = await lstat(dir);
  const uid = typeof process.getuid === "function" ? process.getuid() : undefined;
  if (!info.isDirectory()) {
    throw new ClaudeTranscriptPathError(`${JSON.stringify(dir)} is not a folder (a link?)`);
  }
  if (uid !== undefined && (info.uid !== uid || (info.mode & 0o022) !== 0)) {
    throw new ClaudeTranscriptPathError(
      `${
        JSON.stringify(dir)
      } belongs to another user or others may write to it; pass transcriptDir (a folder of your own)`,
    );
  }
}

/**
 * Rewrites the session's transcript in `dir` ({@linkcode transcriptPath}: refused when it would
 * leave `dir`) with every message of the session's branches, oldest first; returns its path.
 * The default folder must be this user's own ({@linkcode defaultTranscriptDir}); the file is
 * written beside its place and renamed over it, so a link put where it goes is replaced, never
 * followed.
 */
export async function writeTranscript(
  session: Session,
  dir: string | undefined,
  cwd: string,
): Promise<string> {
  const folder = dir ?? defaultTranscriptDir();
  const path = transcriptPath(folder, session.id);
  const messages = session.branches.flatMap((branch) => branch.messages).sort((a, b) =>
    a.createdAt - b.createdAt
  );
  const body = messages.map((m) => JSON.stringify(line(m, session.id, cwd))).join("\n");
  await mkdir(folder, { recursive: true, mode: 0o700 });
  if (dir === undefined) await checkOwnFolder(folder);
  const temp = `${path}.${crypto.randomUUID()}.tmp`;
  try {
    await writeFile(temp, body === "" ? "" : body + "\n", { mode: 0o600, flag: "wx" });
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true }).catch(() => {});
    throw error;
  }
  return path;
}
