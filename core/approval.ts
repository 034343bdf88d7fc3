/**
 * Approvals: a tool call a hook asked a person about, the answer, and the handler that answers
 * inline.
 *
 * @module
 */

import { sha256Hex } from "./_sha256.ts";

/**
 * A tool call waiting for a person's answer, because a `tool.pre` handler returned
 * `{ decision: "ask" }`, or a `tool.effects` hook asked about the change set of a staged run
 * (then {@linkcode PendingApproval.effects} is set).
 *
 * @example
 * ```ts
 * import type { PendingApproval } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const pending: PendingApproval = {
 *   runId: "", callId: "c1", toolName: "bash", args: { command: "ls" }, requestedAt: Date.now(),
 *   argsHash: "4cf29611a66934862f29acfcc817e30b905c1ab73d5e65831413eb6b454d49db",
 * };
 * assert.equal(pending.toolName, "bash");
 * ```
 */
export interface PendingApproval {
  /** The agent-loop run that stopped for it; `""` for a direct `act` call without a run id. */
  readonly runId: string;
  /** The session, when the branch belongs to one. */
  readonly sessionId?: string;
  /** The branch the call was made on. */
  readonly branchId?: string;
  /** The tool call's id. */
  readonly callId: string;
  /** The tool's name. */
  readonly toolName: string;
  /** The arguments the tool would receive (after every rewrite), deep-frozen. */
  readonly args: Readonly<Record<string, unknown>>;
  /** Why the hook asked. */
  readonly reason?: string;
  /** When it was asked, in milliseconds since the epoch. */
  readonly requestedAt: number;
  /**
   * {@linkcode argsHash} of `args`: an answer that names another hash is refused
   * (`ApprovalConflictError`, `why: "args_changed"`), and a resumed run runs only these arguments.
   */
  readonly argsHash: string;
  /** The policy (the hook's name) that asked, when it has one. */
  readonly policy?: string;
  /** When it stops waiting, in milliseconds since the epoch: it then resolves as rejected ("expired"). */
  readonly expiresAt?: number;
  /** Who may answer (`by` of the answer); anyone when absent. */
  readonly answerableBy?: readonly string[];
  /**
   * Set when a `tool.effects` hook asked about what a staged run did (coding toolkit): the change
   * set the person approves. Approving commits exactly this change set; the program does not run
   * again while its staged layer is kept (until `expiresAt`).
   */
  readonly effects?: ApprovalEffects;
}

/** One entry of a change set, as an approval shows it (the coding toolkit's `FileChange`). */
export interface ApprovalChange {
  /** Workspace-relative, `"/"`-separated. */
  readonly path: string;
  /** `created`, `modified`, `deleted`, `mode` or `symlink`. */
  readonly kind: string;
  /** `file`, `directory` or `symlink`. */
  readonly type?: string;
  /** The size before, in bytes. */
  readonly bytesBefore?: number;
  /** The size after, in bytes. */
  readonly bytesAfter?: number;
  /** A symlink's target. */
  readonly target?: string;
}

/**
 * The change set of a staged run a person is asked about ({@linkcode PendingApproval.effects}).
 *
 * @example
 * ```ts
 * import type { ApprovalEffects } from "@hookscope/core/session";
 * import assert from "node:assert/strict";
 *
 * const effects: ApprovalEffects = {
 *   changes: [{ path: "src/a.ts", kind: "deleted", type: "file", bytesBefore: 120 }],
 *   count: 1,
 *   hash: "0".repeat(64),
 * };
 * assert.equal(effects.changes[0].kind, "deleted");
 * ```
 */
export interface ApprovalEffects {
  /** The entries in path order: the first {@linkcode MAX_APPROVAL_CHANGES} of them. */
  readonly changes: readonly ApprovalChange[];
  /** How many entries the change set has in all. */
  readonly count: number;
  /**
   * Lowercase hex SHA-256 of exactly what would be committed (every path, kind, mode, new
   * content, symlink target and the state of the workspace entries it replaces): an answer that
   * names another hash is refused (`ApprovalConflictError`, `why: "args_changed"`).
   */
  readonly hash: string;
}

/** The most change-set entries an approval carries ({@linkcode ApprovalEffects.count} has them all). */
export const MAX_APPROVAL_CHANGES = 200;

/**
 * A person's answer to a {@linkcode PendingApproval}.
 *
 * @example
 * ```ts
 * import type { ApprovalAnswer } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const yes: ApprovalAnswer = { approve: true, updatedArgs: { command: "ls -l" }, by: "ana" };
 * const no: ApprovalAnswer = { approve: false, reason: "not today" };
 * assert.equal(yes.approve && !no.approve, true);
 * ```
 */
export type ApprovalAnswer =
  | {
    /** Run the call. */
    readonly approve: true;
    /** Arguments to run it with instead (validated by the tool's schema). */
    readonly updatedArgs?: Record<string, unknown>;
    /** Who answered. */
    readonly by?: string;
    /** The {@linkcode PendingApproval.argsHash} the person saw; refused when it is not the pending one. */
    readonly argsHash?: string;
    /** The {@linkcode ApprovalEffects.hash} of the change set the person saw, for a change-set approval. */
    readonly effectsHash?: string;
  }
  | {
    /** Do not run the call. */
    readonly approve: false;
    /** Why (reaches the model). */
    readonly reason?: string;
    /** In the agent loop: end the run instead of going on. */
    readonly interrupt?: boolean;
    /** Who answered. */
    readonly by?: string;
    /** The {@linkcode PendingApproval.argsHash} the person saw; refused when it is not the pending one. */
    readonly argsHash?: string;
    /** The {@linkcode ApprovalEffects.hash} of the change set the person saw, for a change-set approval. */
    readonly effectsHash?: string;
  };

/**
 * The canonical JSON of a value: object keys sorted (by UTF-16 code units), no spaces; arrays keep
 * their order; `undefined` object members are left out, as `JSON.stringify` does.
 *
 * @example
 * ```ts
 * import { canonicalJson } from "@hookscope/core/session";
 * import assert from "node:assert/strict";
 *
 * assert.equal(canonicalJson({ b: [2, 1], a: "x" }), '{"a":"x","b":[2,1]}');
 * ```
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) {
    return `[${value.map((v) => v === undefined ? "null" : canonicalJson(v)).join(",")}]`;
  }
  const record = value as Record<string, unknown>;
  const parts: string[] = [];
  for (const key of Object.keys(record).sort()) {
    if (record[key] === undefined || typeof record[key] === "function") continue;
    parts.push(`${JSON.stringify(key)}:${canonicalJson(record[key])}`);
  }
  return `{${parts.join(",")}}`;
}

/**
 * The hash that binds an approval to exact arguments: the lowercase hex SHA-256 of their
 * {@linkcode canonicalJson}.
 *
 * @example
 * ```ts
 * import { argsHash } from "@hookscope/core/session";
 * import assert from "node:assert/strict";
 *
 * assert.equal(argsHash({ b: 1, a: 2 }), argsHash({ a: 2, b: 1 }));
 * assert.match(argsHash({}), /^[0-9a-f]{64}$/);
 * ```
 */
export function argsHash(args: Readonly<Record<string, unknown>>): string {
  return sha256Hex(canonicalJson(args));
}

/**
 * Answers an approval inline. `true` approves, `false` rejects; an {@linkcode ApprovalAnswer}
 * says more. It gets the act path's signal, which aborts on the caller's abort or deadline.
 *
 * @example Approve read-only commands
 * ```ts
 * import type { ApprovalHandler } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const approve: ApprovalHandler = (pending) => pending.args.command === "ls";
 * const answer = await approve(
 *   { runId: "", callId: "c", toolName: "bash", args: { command: "ls" }, requestedAt: 0, argsHash: "" },
 *   { signal: new AbortController().signal },
 * );
 * assert.equal(answer, true);
 * ```
 */
export type ApprovalHandler = (
  pending: PendingApproval,
  options: { signal: AbortSignal },
) => boolean | ApprovalAnswer | Promise<boolean | ApprovalAnswer>;
