/**
 * Result shapes shared by the coding tools.
 *
 * @module
 */

import { WorkspaceError } from "./_workspace.ts";

/** Every coding tool result: `success`, an `error` when it failed, and tool-specific fields. */
export interface CodingResult {
  /** Whether the action succeeded. */
  success: boolean;
  /** Why it failed. */
  error?: string;
  /** Tool-specific fields. */
  [key: string]: unknown;
}

/** A failed result. */
export function failure(error: string, extra?: Record<string, unknown>): CodingResult {
  return { success: false, error, ...extra };
}

/** Turns a workspace refusal or an fs error into a failed result; rethrows anything else. */
export function toFailure(error: unknown, raw: string): CodingResult {
  if (error instanceof WorkspaceError) return failure(error.message);
  const code = (error as { code?: unknown })?.code;
  if (code === "ENOENT") return failure(`File not found: ${raw}`);
  if (code === "EISDIR") return failure(`Is a directory: ${raw}`);
  if (code === "ENOTDIR") return failure(`Not a directory: ${raw}`);
  if (code === "EACCES" || code === "EPERM") return failure(`Permission denied: ${raw}`);
  if (
    error instanceof Error && (error.name === "PermissionDenied" || error.name === "NotCapable")
  ) {
    return failure(`Permission denied: ${raw}`);
  }
  throw error;
}

/** Whether bytes look binary (a NUL in the first 8 000 bytes). */
export function looksBinary(bytes: Uint8Array): boolean {
  const end = Math.min(bytes.byteLength, 8000);
  for (let i = 0; i < end; i++) if (bytes[i] === 0) return true;
  return false;
}
