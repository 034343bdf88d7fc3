/**
 * The default effects policy of the coding preset, {@linkcode keepDataPolicy}, and
 * {@linkcode decideEffects}, the fold of `tool.effects` hooks (that of `tool.pre`:
 * deny > ask > allow; a hook that throws or runs past its deadline denies).
 *
 * @module
 */

import { deadline } from "../../core/_async.ts";
import type {
  EffectsVerdict,
  FileChange,
  ToolEffectsDecision,
  ToolEffectsHook,
  ToolEffectsPayload,
} from "./file_change.ts";

/** Options of {@linkcode keepDataPolicy}. */
export interface KeepDataPolicyOptions {
  /** More changed entries than this need a person (default 200). */
  maxChanges?: number;
  /** Basename patterns of protected files, on top of the defaults (`RegExp`s). */
  protect?: readonly RegExp[];
}

/** The basenames the default policy protects: `.env*`, private keys and credential files. */
export const PROTECTED_NAMES: readonly RegExp[] = Object.freeze([
  /^\.env/,
  /^id_(rsa|dsa|ecdsa|ed25519)/,
  /\.(pem|key|p12|pfx|keystore|jks)$/i,
  /^\.(npmrc|netrc|pypirc|git-credentials|pgpass)$/,
  /^credentials(\.json)?$/,
]);

function baseName(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

function escapes(target: string, path: string): boolean {
  if (target.startsWith("/")) return true;
  const parts = path.split("/").slice(0, -1);
  for (const part of target.split("/")) {
    if (part === "..") {
      if (parts.length === 0) return true;
      parts.pop();
    } else if (part !== "." && part !== "") parts.push(part);
  }
  return false;
}

function list(paths: string[]): string {
  const shown = paths.slice(0, 5).join(", ");
  return paths.length > 5 ? `${shown} and ${paths.length - 5} more` : shown;
}

/**
 * Judges one change set for the default policy: the reasons a person must look at it (empty
 * when it may commit).
 *
 * @example
 * ```ts
 * import { keepDataFindings } from "@hookscope/core/coding";
 * import assert from "node:assert/strict";
 *
 * assert.deepEqual(keepDataFindings([{ path: "a.txt", kind: "created", bytesAfter: 1 }]), []);
 * assert.match(keepDataFindings([{ path: ".env", kind: "created" }])[0], /protected files: \.env/);
 * ```
 */
export function keepDataFindings(
  changes: readonly FileChange[],
  options?: KeepDataPolicyOptions,
): string[] {
  const maxChanges = options?.maxChanges ?? 200;
  const protect = [...PROTECTED_NAMES, ...(options?.protect ?? [])];
  const deleted: string[] = [];
  const truncated: string[] = [];
  const replaced: string[] = [];
  const git: string[] = [];
  const secret: string[] = [];
  const outward: string[] = [];
  for (const change of changes) {
    const segments = change.path.split("/");
    const inGit = segments.slice(0, -1).includes(".git");
    if (change.kind === "deleted") {
      if (inGit) git.push(change.path);
      else if (change.type !== "directory") deleted.push(change.path);
    } else if (change.kind === "modified" || change.kind === "symlink") {
      const before = change.bytesBefore ?? 0;
      const after = change.bytesAfter ?? 0;
      if (change.kind === "symlink" && change.bytesBefore !== undefined && change.type) {
        replaced.push(change.path);
      } else if (before > 0 && (after === 0 || (after < before / 2 && before - after >= 64))) {
        truncated.push(change.path);
      }
      if (inGit) git.push(change.path);
    } else if (change.kind === "mode" && inGit) git.push(change.path);
    else if (
      change.kind === "created" && inGit && /(^|\/)\.git\/(hooks\/|config$)/.test(change.path)
    ) {
      git.push(change.path);
    }
    if (protect.some((pattern) => pattern.test(baseName(change.path)))) secret.push(change.path);
    if (
      change.kind === "symlink" && change.target !== undefined &&
      escapes(change.target, change.path)
    ) {
      outward.push(`${change.path} -> ${change.target}`);
    }
  }
  const findings: string[] = [];
  if (deleted.length) findings.push(`deletes ${deleted.length} existing file(s): ${list(deleted)}`);
  if (truncated.length) {
    findings.push(`truncates ${truncated.length} existing file(s): ${list(truncated)}`);
  }
  if (replaced.length) findings.push(`replaces file(s) by symlinks: ${list(replaced)}`);
  if (git.length) findings.push(`changes .git internals: ${list(git)}`);
  if (secret.length) findings.push(`touches protected files: ${list(secret)}`);
  if (outward.length) {
    findings.push(`adds symlinks pointing out of the workspace: ${list(outward)}`);
  }
  if (changes.length > maxChanges) {
    findings.push(`changes ${changes.length} entries (more than ${maxChanges})`);
  }
  return findings;
}

/**
 * The coding preset's default `tool.effects` policy: a change set that deletes or truncates a
 * file that existed before the call (a file shrunk to empty, or to less than half with at least
 * 64 bytes gone), replaces a file by a symlink, changes `.git` internals (anything but new
 * objects: no edits, deletions, hooks or config), touches protected files
 * ({@linkcode PROTECTED_NAMES}), adds a symlink pointing out of the workspace, or changes more
 * than `maxChanges` entries needs a person (`ask`); everything else is allowed.
 *
 * @example
 * ```ts
 * import { keepDataPolicy } from "@hookscope/core/coding";
 * import assert from "node:assert/strict";
 *
 * const policy = keepDataPolicy();
 * const base = { toolName: "bash", callId: "c1", args: {}, signal: new AbortController().signal };
 * const kept = await policy({ ...base, changes: [{ path: "out.txt", kind: "created", bytesAfter: 3 }] });
 * assert.equal(kept?.decision, "allow");
 * const gone = await policy({ ...base, changes: [{ path: "src/a.ts", kind: "deleted", type: "file", bytesBefore: 9 }] });
 * assert.equal(gone?.decision, "ask");
 * assert.match(gone?.reason ?? "", /deletes 1 existing file/);
 * ```
 */
export function keepDataPolicy(options?: KeepDataPolicyOptions): ToolEffectsHook {
  const maxChanges = options?.maxChanges;
  if (maxChanges !== undefined && (!Number.isInteger(maxChanges) || maxChanges < 0)) {
    throw new TypeError("Cannot create keepDataPolicy: maxChanges must be a non-negative integer");
  }
  const named = {
    keepDataPolicy(payload: ToolEffectsPayload): ToolEffectsDecision {
      const findings = keepDataFindings(payload.changes, options);
      if (findings.length === 0) return { decision: "allow" };
      return { decision: "ask", reason: `The command ${findings.join("; ")}` };
    },
  };
  return named.keepDataPolicy;
}

/** The default deadline of one `tool.effects` hook, in milliseconds. */
export const DEFAULT_EFFECTS_HOOK_TIMEOUT_MS = 30_000;

/**
 * Runs `tool.effects` hooks in order and folds their decisions: deny > ask > allow; a hook
 * that throws, returns something else or runs past `timeoutMs` denies (its change set is
 * discarded). The first deny stops the chain.
 *
 * @example
 * ```ts
 * import { decideEffects } from "@hookscope/core/coding";
 * import assert from "node:assert/strict";
 *
 * const payload = { toolName: "bash", callId: "c", args: {}, changes: [] };
 * const verdict = await decideEffects([() => ({ decision: "ask" }), () => { throw new Error("boom"); }], payload);
 * assert.equal(verdict.decision, "deny");
 * assert.match(verdict.reason ?? "", /boom/);
 * ```
 */
export async function decideEffects(
  hooks: readonly ToolEffectsHook[],
  payload: ToolEffectsPayload,
  options?: { timeoutMs?: number; signal?: AbortSignal },
): Promise<EffectsVerdict> {
  const timeoutMs = options?.timeoutMs ?? DEFAULT_EFFECTS_HOOK_TIMEOUT_MS;
  let ask: string | undefined;
  let askedBy: string | undefined;
  let allowedBy: string | undefined;
  for (const [index, hook] of hooks.entries()) {
    const name = hook.name || `#${index + 1}`;
    const controller = new AbortController();
    const onAbort = () => controller.abort(options?.signal?.reason);
    options?.signal?.addEventListener("abort", onAbort, { once: true });
    let decision: unknown;
    try {
      decision = await deadline(
        Promise.resolve().then(() =>
          hook(Object.freeze({ ...payload, signal: controller.signal }))
        ),
        timeoutMs,
        options?.signal,
        () => new Error(`timed out after ${timeoutMs} ms`),
      );
    } catch (error) {
      if (options?.signal?.aborted) throw options.signal.reason;
      return {
        decision: "deny",
        reason: `The tool.effects hook ${name} failed: ${
          (error as Error)?.message ?? String(error)
        }`,
        hook: name,
      };
    } finally {
      controller.abort();
      options?.signal?.removeEventListener("abort", onAbort);
    }
    if (decision === undefined || decision === null) continue;
    const kind = (decision as { decision?: unknown }).decision;
    const reason = (decision as { reason?: unknown }).reason;
    if (kind === "deny") {
      return {
        decision: "deny",
        reason: typeof reason === "string" && reason
          ? reason
          : `denied by the tool.effects hook ${name}`,
        hook: name,
      };
    }
    if (kind === "ask") {
      if (askedBy === undefined) {
        ask = typeof reason === "string" && reason ? reason : `the tool.effects hook ${name} asks`;
        askedBy = name;
      }
    } else if (kind === "allow") allowedBy ??= name;
    else {
      return {
        decision: "deny",
        reason: `The tool.effects hook ${name} returned no valid decision (${
          JSON.stringify(String(kind))
        })`,
        hook: name,
      };
    }
  }
  if (askedBy !== undefined) {
    return { decision: "ask", ...(ask ? { reason: ask } : {}), hook: askedBy };
  }
  return allowedBy !== undefined ? { decision: "allow", hook: allowedBy } : { decision: "none" };
}
