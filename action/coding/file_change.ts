/**
 * The effects vocabulary of the coding toolkit: {@linkcode FileChange} (one entry of a change
 * set read from a staged run's copy-on-write layer), {@linkcode ToolEffectsDecision} (what a
 * `tool.effects` hook answers) and {@linkcode ToolEffectsPayload} (what it is given).
 *
 * @module
 */

/** What happened to one path in a change set. */
export type FileChangeKind = "created" | "modified" | "deleted" | "mode" | "symlink";

/**
 * One entry of a change set: a workspace-relative, `"/"`-separated path and what the program
 * did to it. A path whose type changed (a file replaced by a directory) appears twice:
 * `deleted`, then `created`.
 *
 * @example
 * ```ts
 * import type { FileChange } from "@hookscope/core/coding";
 * import assert from "node:assert/strict";
 *
 * const change: FileChange = { path: "src/a.ts", kind: "modified", bytesBefore: 10, bytesAfter: 12 };
 * assert.equal(change.kind, "modified");
 * ```
 */
export interface FileChange {
  /** Workspace-relative, `"/"`-separated (never starts with `/`, never holds `..`). */
  readonly path: string;
  /** What happened to it. */
  readonly kind: FileChangeKind;
  /** The size before (files: bytes; symlinks: the target's length); absent when it was new. */
  readonly bytesBefore?: number;
  /** The size after; absent when it was deleted. */
  readonly bytesAfter?: number;
  /** What the entry is (after the change; before it for `deleted`). */
  readonly type?: "file" | "directory" | "symlink";
  /** A symlink's target (for `symlink` entries). */
  readonly target?: string;
}

/** What a `tool.effects` hook answers; `undefined` is no opinion. */
export type ToolEffectsDecision =
  | undefined
  | { decision: "allow"; reason?: string }
  | { decision: "ask"; reason?: string }
  | { decision: "deny"; reason: string };

/** What a `tool.effects` hook is given. */
export interface ToolEffectsPayload {
  /** The tool (`"bash"`). */
  readonly toolName: string;
  /** The call id. */
  readonly callId: string;
  /** The arguments the tool ran with. */
  readonly args: Readonly<Record<string, unknown>>;
  /** The change set, in path order. */
  readonly changes: readonly FileChange[];
  /** The branch, when the call came through one. */
  readonly branchId?: string;
  /** Where the tool came from. */
  readonly source?: { readonly kind: string };
  /** The command judge's reading of the command (advice only when effects are on). */
  readonly advice?: string;
}

/** A `tool.effects` hook on an `AgentSpec` or a toolkit: decides on a change set. */
export type ToolEffectsHook = (
  payload: ToolEffectsPayload & { readonly signal: AbortSignal },
) => ToolEffectsDecision | Promise<ToolEffectsDecision>;
