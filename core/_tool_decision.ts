// Reading what a Tool-scope hook returned (a `Tool` processor, an `AgentSpec` hook): each
// property read once, checked against the decision vocabulary of `tool_hook.ts`, and a return in
// the shape of before 0.3 (arguments or a result returned bare) refused with a
// `ToolHookReturnError` that says what to return instead. Private to the library (the action
// scope uses it).

import { ToolHookReturnError, type ToolHookReturnInit } from "./errors.ts";
import { isPlainObject, plainDataCopy } from "./_freeze.ts";
import { NotPlainDataError } from "./plain_data.ts";

/**
 * Which hook returned the value, for messages: the tool, the phase, what the hook is
 * (`"preprocessor"`, `"pre hook"`, `"security pre hook"`, …) and the hook itself (its name is read
 * only for a message; a name equal to `option`, the `Tool` option an arrow function is named
 * after, says nothing and is left out). Passed as arguments, not an object: a hook that returns a
 * decision costs no allocation for them.
 */
type HookFn = { readonly name: string };

/**
 * A returned pre decision, each property read exactly once. The copy never leaves its reader
 * (nothing else holds it), so it is immutable by type, not by `Object.freeze`, which measured 3–4×
 * the cost of a 20-hook allow chain (`decision-verdicts/20`).
 */
export interface PreDecisionCopy {
  readonly decision: unknown;
  readonly reason: unknown;
  readonly updatedArgs: unknown;
  readonly context: unknown;
  readonly interrupt: unknown;
  /** An ask's terms, checked (read only for asks that carry some). */
  readonly ask: AskTerms | undefined;
}

/**
 * Where {@linkcode readPreDecision} reads a decision to: a reader's own object, which a chain
 * keeps for all its hooks (its run state), so reading a decision allocates nothing. What was read
 * last is valid until the next read into the same slot.
 */
export type PreDecisionSlot = { -readonly [K in keyof PreDecisionCopy]: PreDecisionCopy[K] };

/** Reads a decision once into `into` (a throwing getter throws; bad ask terms throw `AskTermsError`). */
function copyPreDecision(value: object, into: PreDecisionSlot): PreDecisionSlot {
  const v = value as Record<string, unknown>;
  const decision = v.decision;
  into.decision = decision;
  into.reason = v.reason;
  into.updatedArgs = v.updatedArgs;
  into.context = v.context;
  into.interrupt = v.interrupt;
  into.ask = decision === "ask" ? readAskTerms(v) : undefined;
  return into;
}

/**
 * What is wrong with a decision's fields (as read once), or `null`. Takes the fields, not an
 * object, so a reader that keeps them in locals (the session's fold) allocates nothing.
 */
export function preDecisionProblem(
  decision: unknown,
  reason: unknown,
  context: unknown,
  updatedArgs: unknown,
): string | null {
  if (decision !== "allow" && decision !== "ask" && decision !== "deny") {
    return `decision must be "allow", "ask" or "deny"; got ${
      typeof decision === "string" ? JSON.stringify(decision) : typeof decision
    }`;
  }
  if (decision === "deny" && (typeof reason !== "string" || reason === "")) {
    return `a deny needs a non-empty string reason`;
  }
  if (reason !== undefined && typeof reason !== "string") return `reason must be a string`;
  if (context !== undefined && typeof context !== "string") return `context must be a string`;
  if (updatedArgs !== undefined && !isPlainObject(updatedArgs)) {
    return `updatedArgs must be a plain object`;
  }
  return null;
}

/** A Tool-scope pre decision as read and checked: `updatedArgs` is a plain-data copy. */
export interface PreDecisionRead {
  readonly decision: "allow" | "ask" | "deny";
  readonly reason: string | undefined;
  readonly updatedArgs: Record<string, unknown> | undefined;
  readonly context: string | undefined;
  readonly interrupt: unknown;
  /** An ask's expiry and answerers, when it names some. */
  readonly ask: AskTerms | undefined;
}

/**
 * A post or error decision as checked: the returned object itself (its keys are `updatedResult`
 * and `context` only, `context` a string when present), so reading it costs no copy.
 */
export interface ResultDecisionRead {
  /** Replaces the result / recovers, when the key is present. */
  readonly updatedResult?: unknown;
  /** For the model. */
  readonly context?: string;
}

function refuse(
  toolName: string,
  phase: "pre" | "post" | "error",
  label: string,
  fn: HookFn,
  option: string,
  problem: string,
): never {
  const init: ToolHookReturnInit = { toolName, phase, label, problem };
  const name = fn.name;
  if (name !== "" && name !== option) init.hook = name;
  throw new ToolHookReturnError(init);
}

const BEFORE = "as before 0.3?";

/**
 * Reads a pre hook's return: `undefined` for no opinion, else the checked decision. Anything else
 * throws `ToolHookReturnError`; an object without `decision` is named as what it most likely is,
 * the arguments returned bare (the shape before 0.3).
 */
export function readPreDecision(
  value: unknown,
  toolName: string,
  label: string,
  fn: HookFn,
  option = "",
  into?: PreDecisionSlot,
): PreDecisionRead | undefined {
  if (value === undefined) return undefined;
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return refuse(
      toolName,
      "pre",
      label,
      fn,
      option,
      `it returned ${kindOf(value)}; return a decision or nothing`,
    );
  }
  let d: PreDecisionSlot;
  try {
    d = copyPreDecision(
      value,
      into ?? {
        decision: undefined,
        reason: undefined,
        updatedArgs: undefined,
        context: undefined,
        interrupt: undefined,
        ask: undefined,
      },
    );
  } catch (error) {
    return refuse(
      toolName,
      "pre",
      label,
      fn,
      option,
      error instanceof AskTermsError ? error.message : `reading it threw (${String(error)})`,
    );
  }
  if (d.decision === undefined) {
    return refuse(
      toolName,
      "pre",
      label,
      fn,
      option,
      `it returned an object without "decision" (the arguments, ${BEFORE}); return { decision: "allow", updatedArgs } to rewrite them`,
    );
  }
  const problem = preDecisionProblem(d.decision, d.reason, d.context, d.updatedArgs);
  if (problem !== null) return refuse(toolName, "pre", label, fn, option, problem);
  if (d.updatedArgs !== undefined && d.decision !== "deny") {
    // The slot is the reader's own object: the checked arguments replace the returned ones. The
    // error's message is made when there is an error (not a string per decision).
    try {
      d.updatedArgs = plainDataCopy(d.updatedArgs, "", "updatedArgs", false);
    } catch (error) {
      if (!(error instanceof NotPlainDataError)) throw error;
      throw new NotPlainDataError(
        `Cannot apply ${label} of tool "${toolName}"`,
        error.path,
        error.problem,
      );
    }
  }
  return d as PreDecisionRead;
}

function kindOf(value: unknown): string {
  return value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`;
}

/**
 * Checks a post or error hook's return: `undefined` for no opinion, else the decision itself.
 * Anything but `undefined` or an object whose only keys are `updatedResult` and `context` throws
 * `ToolHookReturnError` (a result returned bare, the shape before 0.3).
 */
export function readResultDecision(
  value: unknown,
  toolName: string,
  phase: "post" | "error",
  label: string,
  fn: HookFn,
  option = "",
): ResultDecisionRead | undefined {
  if (value === undefined) return undefined;
  let what: string | undefined;
  if (value === null || typeof value !== "object" || Array.isArray(value)) what = kindOf(value);
  else {
    for (const key in value) {
      if (key !== "updatedResult" && key !== "context") what = `an object with "${key}"`;
    }
  }
  if (what !== undefined) {
    return refuse(
      toolName,
      phase,
      label,
      fn,
      option,
      `it returned ${what} (the result, ${BEFORE}); return { updatedResult }${
        phase === "error" ? " to recover," : ""
      } or nothing`,
    );
  }
  const context = (value as { context?: unknown }).context;
  if (context !== undefined && typeof context !== "string") {
    return refuse(toolName, phase, label, fn, option, `context must be a string`);
  }
  return value as ResultDecisionRead;
}

/** An ask's expiry and answerers, as read and checked once. */
export interface AskTerms {
  readonly expiresInMs: number | undefined;
  readonly expiresAt: number | undefined;
  readonly answerableBy: readonly string[] | undefined;
}

/** Thrown by {@linkcode readAskTerms} for terms that are not what {@linkcode AskTerms} allows. */
export class AskTermsError extends Error {}

/**
 * An ask's terms (`expiresInMs`, `expiresAt`, `answerableBy`), each read once and checked;
 * `undefined` when it carries none. Shared by the session's fold and the Tool scope's reader.
 */
export function readAskTerms(v: Record<string, unknown>): AskTerms | undefined {
  const expiresInMs = v.expiresInMs;
  const expiresAt = v.expiresAt;
  const answerableBy = v.answerableBy;
  if (expiresInMs === undefined && expiresAt === undefined && answerableBy === undefined) {
    return undefined;
  }
  const time = (value: unknown, positive: boolean) =>
    value === undefined ||
    (typeof value === "number" && Number.isFinite(value) && (!positive || value > 0));
  if (!time(expiresInMs, true)) throw new AskTermsError("expiresInMs must be a positive number");
  if (!time(expiresAt, false)) {
    throw new AskTermsError("expiresAt must be a time in ms since the epoch");
  }
  let names: string[] | undefined;
  if (answerableBy !== undefined) {
    if (
      !Array.isArray(answerableBy) || answerableBy.length === 0 ||
      answerableBy.some((name) => typeof name !== "string" || name === "")
    ) {
      throw new AskTermsError("answerableBy must be a non-empty array of non-empty names");
    }
    names = [...new Set(answerableBy as string[])];
  }
  return {
    expiresInMs: expiresInMs as number | undefined,
    expiresAt: expiresAt as number | undefined,
    answerableBy: names,
  };
}

/**
 * The terms of several asks folded into one approval: the earliest expiry (an `expiresInMs` counted
 * from now), and only the names every ask allows. `null` when the asks name no common answerer
 * (nobody could approve the call).
 */
export function foldAskTerms(
  before: {
    readonly expiresAt?: number | undefined;
    readonly answerableBy?: readonly string[] | undefined;
  } | undefined,
  terms: {
    readonly expiresInMs?: number | undefined;
    readonly expiresAt?: number | undefined;
    readonly answerableBy?: readonly string[] | undefined;
  },
): { expiresAt?: number; answerableBy?: readonly string[] } | null {
  const relative = terms.expiresInMs === undefined ? undefined : Date.now() + terms.expiresInMs;
  const times = [terms.expiresAt, relative, before?.expiresAt].filter((t) => t !== undefined);
  const names = terms.answerableBy;
  const kept = before?.answerableBy;
  const both = names === undefined || kept === undefined
    ? names ?? kept
    : kept.filter((name) => names.includes(name));
  if (both !== undefined && both.length === 0) return null;
  const out: { expiresAt?: number; answerableBy?: readonly string[] } = {};
  if (times.length > 0) out.expiresAt = Math.min(...(times as number[]));
  if (both !== undefined) out.answerableBy = both;
  return out;
}
