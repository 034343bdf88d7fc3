/**
 * The typed errors hookscope throws. Each sets `name` and extends the closest built-in.
 *
 * @module
 */

import type { PendingApproval } from "./approval.ts";

/**
 * A branch that another session owns was included.
 *
 * @example
 * ```ts
 * import { BranchOwnershipError } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const error = new BranchOwnershipError("b1", "s1");
 * assert.equal(error.branchId, "b1");
 * ```
 */
export class BranchOwnershipError extends Error {
  /** The branch that was refused. */
  readonly branchId: string;
  /** The session that owns it. */
  readonly ownerId: string;
  /** Makes the error. */
  constructor(branchId: string, ownerId: string) {
    super(
      `Branch ${branchId} is already owned by session ${ownerId}; call removeBranch() on the owning session first to reparent it`,
    );
    this.name = "BranchOwnershipError";
    this.branchId = branchId;
    this.ownerId = ownerId;
  }
}

/**
 * An action names a tool that is not registered.
 *
 * @example
 * ```ts
 * import { ToolNotFoundError } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * assert.equal(new ToolNotFoundError("search").toolName, "search");
 * ```
 */
export class ToolNotFoundError extends Error {
  /** The missing tool's name. */
  readonly toolName: string;
  /** Makes the error; `registered` is listed in the message. */
  constructor(toolName: string, registered: readonly string[] = []) {
    super(
      `Function ${describeValue(toolName)} is not registered${
        registered.length ? `; registered: ${registered.map((n) => `"${n}"`).join(", ")}` : ""
      }`,
    );
    this.name = "ToolNotFoundError";
    this.toolName = toolName;
  }
}

/** One problem found while validating tool arguments. */
export interface ArgumentIssue {
  /** Where in the arguments (keys and indexes). */
  readonly path: readonly PropertyKey[];
  /** What is wrong. */
  readonly message: string;
  /** A machine-readable code (zod's issue code when zod found it). */
  readonly code?: string;
}

/**
 * Tool arguments failed the tool's schema.
 *
 * @example
 * ```ts
 * import { ToolArgumentsError } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const error = new ToolArgumentsError("add", [{ path: ["a"], message: "Expected number" }]);
 * assert.ok(error instanceof TypeError);
 * assert.equal(error.issues.length, 1);
 * ```
 */
export class ToolArgumentsError extends TypeError {
  /** The tool whose schema rejected the arguments. */
  readonly toolName: string;
  /** The problems found. */
  readonly issues: readonly ArgumentIssue[];
  /** Makes the error. */
  constructor(toolName: string, issues: readonly ArgumentIssue[], when = "") {
    const detail = issues.slice(0, 5).map((i) =>
      `${i.path.length ? i.path.map(String).join(".") : "(root)"}: ${i.message}`
    ).join("; ");
    super(
      `Invalid arguments for tool ${describeValue(toolName)}${when ? ` ${when}` : ""}: ${detail}${
        issues.length > 5 ? ` (and ${issues.length - 5} more)` : ""
      }`,
    );
    this.name = "ToolArgumentsError";
    this.toolName = toolName;
    this.issues = issues;
  }
}

/**
 * A guard denied a tool call.
 *
 * @example
 * ```ts
 * import { PermissionDeniedError } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * assert.equal(new PermissionDeniedError("no").name, "PermissionDeniedError");
 * ```
 */
export class PermissionDeniedError extends Error {
  /** Makes the error. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "PermissionDeniedError";
  }
}

/** Who denied a tool call: the session gate, a `tool.pre` hook, a person answering an approval, or an `AgentSpec` security hook. */
export type DeniedBy = "gate" | "hook" | "approval" | "security";

/** What a {@linkcode ToolDeniedError} is made from. */
export interface ToolDeniedInit {
  /** The denied tool. */
  toolName: string;
  /** The denied call. */
  callId: string;
  /** Why. */
  reason: string;
  /** The name of the hook (or control) that denied, when known. */
  hook?: string;
  /** The denial asked to end the agent run. */
  interrupt?: boolean;
  /** Who denied (default `"hook"`). */
  by?: DeniedBy;
}

/**
 * A tool call was denied. The one error of every denial on the act path: the session gate
 * (`by: "gate"`), a `tool.pre` deny (`"hook"`), a rejected approval (`"approval"`) and an
 * `AgentSpec` security hook ({@linkcode SecurityDeniedError}, `"security"`). The model is told
 * `Denied: <reason>` for each.
 *
 * @example
 * ```ts
 * import { PermissionDeniedError, ToolDeniedError } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const error = new ToolDeniedError({ toolName: "bash", callId: "c1", reason: "no rm", hook: "guard" });
 * assert.ok(error instanceof PermissionDeniedError);
 * assert.equal(error.message, 'Tool "bash" denied by guard: no rm');
 * assert.equal(error.by, "hook");
 * ```
 */
export class ToolDeniedError extends PermissionDeniedError {
  /** The denied tool. */
  readonly toolName: string;
  /** The denied call (`""` when the denial happened outside the act path). */
  readonly callId: string;
  /** Why. */
  readonly reason: string;
  /** The hook (or control) that denied, when known. */
  readonly hook?: string;
  /** Whether the denial asks the agent loop to end the run. */
  readonly interrupt: boolean;
  /** Who denied. */
  readonly by: DeniedBy;
  /** Makes the error. */
  constructor(init: ToolDeniedInit, options?: ErrorOptions) {
    super(
      `Tool ${describeValue(init.toolName)} denied${
        init.hook !== undefined ? ` by ${init.hook}` : ""
      }: ${init.reason}`,
      options,
    );
    this.name = "ToolDeniedError";
    this.toolName = init.toolName;
    this.callId = init.callId;
    this.reason = init.reason;
    if (init.hook !== undefined) this.hook = init.hook;
    this.interrupt = init.interrupt === true;
    this.by = init.by ?? "hook";
  }
}

/**
 * An `AgentSpec` security hook (`securityPre`, a guard such as `guardPaths`) denied a tool call:
 * a {@linkcode ToolDeniedError} with `by: "security"` and `hook` the control's name. Formerly
 * `GateDeniedError` (it never was the session gate).
 *
 * @example
 * ```ts
 * import { SecurityDeniedError, ToolDeniedError } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const error = new SecurityDeniedError("guardPaths", "Path not in allowed list: /etc");
 * assert.ok(error instanceof ToolDeniedError);
 * assert.equal(error.by, "security");
 * assert.equal(error.message, "guardPaths: Path not in allowed list: /etc");
 * ```
 */
export class SecurityDeniedError extends ToolDeniedError {
  /** The name of the control that denied (also `hook`). */
  readonly control: string;
  /** Makes the error; `toolName` and `callId` are filled in when known. */
  constructor(
    control: string,
    reason: string,
    options?: ErrorOptions & { toolName?: string; callId?: string },
  ) {
    super({
      toolName: options?.toolName ?? "",
      callId: options?.callId ?? "",
      reason,
      hook: control,
      by: "security",
    }, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "SecurityDeniedError";
    this.message = `${control}: ${reason}`;
    this.control = control;
  }
}

/**
 * The former name of {@linkcode SecurityDeniedError}.
 *
 * @deprecated Use {@linkcode SecurityDeniedError} (or catch {@linkcode ToolDeniedError}, every denial).
 *
 * @example
 * ```ts
 * import { GateDeniedError, SecurityDeniedError } from "@hookscope/core/action";
 * import assert from "node:assert/strict";
 *
 * assert.equal(GateDeniedError, SecurityDeniedError);
 * ```
 */
export const GateDeniedError: typeof SecurityDeniedError = SecurityDeniedError;
/** The former name of {@linkcode SecurityDeniedError}. @deprecated */
export type GateDeniedError = SecurityDeniedError;

/**
 * A `tool.pre` handler asked for approval and no `approve` handler was given: the call did not
 * run. `approval` says what to answer (`Session.resume` continues an agent run from it).
 *
 * @example
 * ```ts
 * import { ApprovalRequiredError } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const error = new ApprovalRequiredError({
 *   runId: "", callId: "c1", toolName: "bash", args: { command: "ls" }, requestedAt: 0, argsHash: "",
 * });
 * assert.equal(error.approval.callId, "c1");
 * assert.equal(error.message, 'Tool "bash" needs approval (call c1)');
 * ```
 */
export class ApprovalRequiredError extends Error {
  /** The call waiting for an answer. */
  readonly approval: PendingApproval;
  /** Makes the error. */
  constructor(approval: PendingApproval, options?: ErrorOptions) {
    super(
      `Tool ${describeValue(approval.toolName)} needs approval (call ${approval.callId})${
        approval.reason ? `: ${approval.reason}` : ""
      }`,
      options,
    );
    this.name = "ApprovalRequiredError";
    this.approval = approval;
  }
}

/**
 * A service pre or post hook failed or was cancelled.
 *
 * @example
 * ```ts
 * import { HookPhaseError } from "@hookscope/core/service";
 * import assert from "node:assert/strict";
 *
 * const error = new HookPhaseError("Pre-invoke hook cancelled: boom");
 * assert.equal(error.name, "HookPhaseError");
 * ```
 */
export class HookPhaseError extends Error {
  /** Makes the error. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "HookPhaseError";
  }
}

/** What a {@linkcode ToolHookReturnError} is made from. */
export interface ToolHookReturnInit {
  /** The tool. */
  toolName: string;
  /** The phase the hook ran in. */
  phase: "pre" | "post" | "error";
  /** What the hook is, for the message (`"preprocessor"`, `"pre hook"`, `"security pre hook"`, …). */
  label: string;
  /** The hook's name, when it has one. */
  hook?: string;
  /** What is wrong and how to fix it. */
  problem: string;
}

/**
 * A Tool-scope hook (a `Tool` processor, an `AgentSpec` hook) returned something that is not a
 * decision: tool hooks return the decision vocabulary of the session's `tool.*` hooks
 * (`ToolPreDecision`, `ToolPostDecision`, `ToolErrorDecision`) or nothing. Before 0.3 they
 * returned replacement arguments or results bare; such a return is refused with this error, whose
 * message says what to return instead. The call does not run (pre) or fails (post, error).
 *
 * @example
 * ```ts
 * import { ToolHookReturnError } from "@hookscope/core/action";
 * import assert from "node:assert/strict";
 *
 * const error = new ToolHookReturnError({
 *   toolName: "add", phase: "pre", label: "pre hook", hook: "double",
 *   problem: "it returned an object without \"decision\"",
 * });
 * assert.ok(error instanceof TypeError);
 * assert.equal(error.message, 'Cannot apply pre hook "double" of tool "add": it returned an object without "decision"');
 * ```
 */
export class ToolHookReturnError extends TypeError {
  /** The tool. */
  readonly toolName: string;
  /** The phase the hook ran in. */
  readonly phase: "pre" | "post" | "error";
  /** The hook's name, when it has one. */
  readonly hook?: string;
  /** Makes the error. */
  constructor(init: ToolHookReturnInit) {
    super(
      `Cannot apply ${init.label}${init.hook ? ` ${JSON.stringify(init.hook)}` : ""} of tool ${
        describeValue(init.toolName)
      }: ${init.problem}`,
    );
    this.name = "ToolHookReturnError";
    this.toolName = init.toolName;
    this.phase = init.phase;
    if (init.hook) this.hook = init.hook;
  }
}

/** Quotes strings and names other values' types, for error messages. */
function describeValue(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (value === null) return "null";
  return `(${typeof value})`;
}
