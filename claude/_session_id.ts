/**
 * Which Claude Code `session_id`s hookscope takes: a session's id names its transcript file
 * (`TRANSCRIPT_DIR/ID.jsonl`) and its row in the store, so it must be a plain file name.
 *
 * @module
 */

/** Letters, digits, `.`, `_` and `-` (a Claude Code session id is a UUID). */
const SAFE_ID = /^[A-Za-z0-9._-]+$/;

/** The longest session id taken. */
export const MAX_SESSION_ID_LENGTH = 200;

/**
 * Why `id` cannot be a session id, or `undefined` when it can: it must be a non-empty string of
 * at most {@linkcode MAX_SESSION_ID_LENGTH} letters, digits, `.`, `_` and `-`, and not `.` or
 * `..` (so it never names a path outside its folder, nor holds a control character).
 */
export function sessionIdProblem(id: unknown): string | undefined {
  if (typeof id !== "string" || id === "" || id.length > MAX_SESSION_ID_LENGTH) {
    return `session_id must be a non-empty string of at most ${MAX_SESSION_ID_LENGTH} characters`;
  }
  if (!SAFE_ID.test(id) || id === "." || id === "..") {
    return `session_id must hold only letters, digits, ".", "_" and "-" (and not be "." or ".."); got ${
      JSON.stringify(id.slice(0, 80))
    }`;
  }
  return undefined;
}
