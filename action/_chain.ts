/**
 * The tool hook chains' runners: synchronous until a hook returns a thenable, then async for the
 * rest (a chain of sync hooks costs no microtask), and the per-tool cache of the hook lists an
 * `AgentSpec` yields (rebuilt only when a list changes). Every hook returns a decision, read by
 * `core/_tool_decision.ts`: a deny throws, an ask is noted and the chain goes on (a later deny
 * still wins), an allow's `updatedArgs` rewrite the arguments, `context` goes to the call.
 *
 * @module
 */

import {
  PermissionDeniedError,
  SecurityDeniedError,
  ToolDeniedError,
  type ToolSource,
} from "../core/mod.ts";
import { isThenable, messageOf } from "../core/_util.ts";
import { samePlainData } from "../core/_freeze.ts";
import {
  foldAskTerms,
  type PreDecisionRead,
  type PreDecisionSlot,
  readPreDecision,
  readResultDecision,
  type ResultDecisionRead,
} from "../core/_tool_decision.ts";
import { NOTE } from "./_start.ts";
import { SPEC_VERSION } from "./_spec_version.ts";
import type { ToolEffectsChannel } from "./coding/file_change.ts";
import type {
  AgentSpec,
  ErrorToolHook,
  PostToolHook,
  PreToolHook,
  ToolHook,
  ToolHookContext,
  ToolHookPhase,
} from "./spec.ts";

/** Tool arguments. */
export type Args = Record<string, unknown>;

/**
 * Where the hooks of one call read what is not theirs to change: the call id, the signal, the
 * tool's source, and where `context` strings go (the processors' context).
 */
export interface CallSource {
  readonly callId: string;
  readonly signal: AbortSignal;
  readonly effects?: ToolEffectsChannel;
  readonly source: ToolSource;
  readonly [NOTE]?: (text: string) => void;
}

/** Adds a `context` string to the call, when the source takes them. */
export function note(source: CallSource, text: string | undefined): void {
  if (text !== undefined) source[NOTE]?.(text);
}

/**
 * One hook's context, for every phase (`result` is set for post hooks, `error` for error hooks):
 * each hook gets its own copy of the arguments. `callId`, `source` and `effects` are getters read
 * on demand (a call without a caller-supplied id draws its own id only when a hook reads it; the
 * act path makes its effects channel only when something reads it).
 */
class CallContext implements ToolHookContext {
  readonly toolName: string;
  readonly action: string;
  readonly args: Args;
  readonly signal: AbortSignal;
  readonly result: unknown;
  readonly error: unknown;
  readonly #source: CallSource;

  constructor(toolName: string, source: CallSource, args: Args, result: unknown, error: unknown) {
    this.toolName = toolName;
    this.action = actionOf(args);
    this.args = { ...args };
    this.signal = source.signal;
    this.result = result;
    this.error = error;
    this.#source = source;
  }

  get source(): ToolSource {
    return this.#source.source;
  }

  get callId(): string {
    return this.#source.callId;
  }

  get effects(): ToolEffectsChannel | undefined {
    return this.#source.effects;
  }
}

/** One step of a pre chain: a hook and whether it is a security (gate) hook. */
export interface PreStep {
  readonly hook: PreToolHook;
  readonly gate: boolean;
}

/** The steps of a pre chain: security pass, user hooks, and a second security pass when both. */
export function preSteps(
  security: readonly PreToolHook[],
  user: readonly PreToolHook[],
): readonly PreStep[] {
  const steps: PreStep[] = [];
  for (const hook of security) steps.push({ hook, gate: true });
  for (const hook of user) steps.push({ hook, gate: false });
  if (user.length && security.length) {
    for (const hook of security) steps.push({ hook, gate: true });
  }
  return steps;
}

/** The `action` argument when it is a string, else `""`. */
export function actionOf(args: Args): string {
  return typeof args.action === "string" ? args.action : "";
}

const PERMISSION_NAMES = new Set([
  "PermissionError",
  "PermissionDenied",
  "PermissionDeniedError",
  "GateDeniedError",
  "SecurityDeniedError",
  "ToolDeniedError",
]);

function isPermissionError(error: unknown): boolean {
  return error instanceof PermissionDeniedError ||
    (error instanceof Error && PERMISSION_NAMES.has(error.name));
}

/** The names of one call, for denials and messages. */
export interface CallNames {
  /** The tool's name (what a `ToolDeniedError` names). */
  readonly toolName: string;
  /** The name its `AgentSpec` hooks see (a trailing `_tool` dropped). */
  readonly canonical: string;
}

/** What a security hook's throw becomes: a denial by that hook (fail closed). */
function denial(names: CallNames, source: CallSource, step: PreStep, error: unknown): unknown {
  if (!step.gate) return error;
  const reason = isPermissionError(error)
    ? messageOf(error)
    : `evaluator error: ${messageOf(error)}`;
  return new SecurityDeniedError(step.hook.name || "anonymous", reason, {
    cause: error,
    toolName: names.toolName,
    callId: source.callId,
  });
}

/** A deny decision of a hook as the error the call rejects with. */
export function deniedBy(
  names: CallNames,
  source: CallSource,
  hook: string,
  read: PreDecisionRead,
  security: boolean,
): ToolDeniedError {
  const reason = read.reason as string;
  if (security) {
    return new SecurityDeniedError(hook, reason, {
      toolName: names.toolName,
      callId: source.callId,
    });
  }
  return new ToolDeniedError({
    toolName: names.toolName,
    callId: source.callId,
    reason,
    hook,
    interrupt: read.interrupt === true,
    by: "hook",
  });
}

/** How many times at most the security pass runs after the steps (see {@linkcode runPre}). */
const SECURITY_SETTLE_PASSES = 2;

/**
 * An ask a pre chain noted: the first asking hook's reason and name, the earliest expiry and the
 * answerers every asking hook allows.
 */
export interface AskNote {
  readonly reason: string | undefined;
  readonly hook: string;
  readonly expiresAt?: number;
  readonly answerableBy?: readonly string[];
}

/**
 * `ask` folded over `before` (the first ask's reason and hook stay). Several asks name no common
 * answerer: nobody could approve the call, so it is denied (as the session's fold does).
 */
export function noteAsk(
  names: CallNames,
  source: CallSource,
  before: AskNote | null,
  hook: string,
  read: PreDecisionRead,
): AskNote {
  const first = before ?? { reason: read.reason, hook };
  if (read.ask === undefined) return first;
  const terms = foldAskTerms(before ?? undefined, read.ask);
  if (terms === null) {
    throw new ToolDeniedError({
      toolName: names.toolName,
      callId: source.callId,
      reason: `nobody may answer: the asking hooks name no common answerer (${
        JSON.stringify(before?.answerableBy)
      } and ${JSON.stringify(read.ask.answerableBy)})`,
      hook,
    });
  }
  return { reason: first.reason, hook: first.hook, ...terms };
}

/** What a pre chain decided when it did not deny: the arguments (when rewritten) and an ask. */
export interface PreRun {
  /** The rewritten arguments, or `null` when no hook changed them. */
  readonly args: Args | null;
  /** The first ask, or `null`. */
  readonly ask: AskNote | null;
}

/**
 * Runs a pre chain on `args` (which it does not modify; each hook gets its own copy). Returns
 * `null` when no hook changed the arguments or asked, else what they decided; a promise of that
 * once a hook returned a thenable. A deny throws `ToolDeniedError` (`SecurityDeniedError` from a
 * security hook, also for a security hook's throw); a user hook's throw propagates; a return
 * that is not a decision throws `ToolHookReturnError`.
 *
 * A hook's `updatedArgs` are copied to plain data once and count as a change only when they
 * differ. The security hooks judge the arguments that run: when a security hook of the last
 * security pass changed them after another one of that pass had judged them, that pass runs again
 * on the result until no such change is left (at most {@linkcode SECURITY_SETTLE_PASSES} more
 * times; then `SecurityDeniedError`).
 */
export function runPre(
  names: CallNames,
  source: CallSource,
  steps: readonly PreStep[],
  args: Args,
): PreRun | null | Promise<PreRun | null> {
  const out = runSteps(names, source, steps, args, 0);
  if (isThenable(out)) return out.then((run) => settle(names, source, steps, run, 0));
  return settle(names, source, steps, out, 0);
}

/** The outcome of one run of steps: the arguments, and whether the last security pass changed them. */
interface StepsRun {
  readonly args: Args;
  readonly changed: boolean;
  readonly securityChanged: boolean;
  /** The security hook of the last pass that changed them. */
  readonly rewriter: string;
  readonly asked: AskNote | null;
}

/** Index of the first step of the last security pass (`steps.length` when there is none). */
function lastSecurityPass(steps: readonly PreStep[]): number {
  let at = steps.length;
  while (at > 0 && steps[at - 1].gate) at--;
  return at;
}

function settle(
  names: CallNames,
  source: CallSource,
  steps: readonly PreStep[],
  run: StepsRun,
  passes: number,
): PreRun | null | Promise<PreRun | null> {
  let current = run;
  let count = passes;
  let security: readonly PreStep[] | null = null;
  while (current.securityChanged) {
    if (count >= SECURITY_SETTLE_PASSES) {
      throw new SecurityDeniedError(
        current.rewriter || "anonymous",
        `the security hooks did not settle on the arguments (still rewriting after ${
          count + 1
        } passes); a rewrite must be idempotent`,
        { toolName: names.toolName, callId: source.callId },
      );
    }
    count++;
    security ??= steps.slice(lastSecurityPass(steps));
    const again = runSteps(names, source, security, current.args, 0);
    const before = current;
    if (isThenable(again)) {
      const at = count;
      return again.then((next) => settle(names, source, steps, merged(before, next, true), at));
    }
    current = merged(before, again, before.changed || again.changed);
  }
  if (!current.changed && current.asked === null) return null;
  return { args: current.changed ? current.args : null, ask: current.asked };
}

/** A later pass's run over an earlier one: its arguments, the first ask of either. */
function merged(before: StepsRun, next: StepsRun, changed: boolean): StepsRun {
  return {
    args: next.args,
    changed,
    securityChanged: next.securityChanged,
    rewriter: next.rewriter,
    asked: mergedAsk(before.asked, next.asked),
  };
}

/** The asks of two runs of the chain as one: the first's reason, both runs' terms. */
function mergedAsk(before: AskNote | null, next: AskNote | null): AskNote | null {
  if (before === null || next === null) return before ?? next;
  const terms = foldAskTerms(before, next);
  return terms === null ? before : { reason: before.reason, hook: before.hook, ...terms };
}

function step(
  names: CallNames,
  source: CallSource,
  entry: PreStep,
  current: Args,
): unknown {
  try {
    return entry.hook(new CallContext(names.canonical, source, current, undefined, undefined));
  } catch (error) {
    throw denial(names, source, entry, error);
  }
}

/**
 * The state of one run of steps, changed by {@linkcode apply}; also the slot each hook's decision
 * is read into (one object per run, none per decision).
 */
interface StepsState extends PreDecisionSlot {
  args: Args;
  changed: boolean;
  securityChanged: boolean;
  rewriter: string;
  asked: AskNote | null;
}

/** Applies one hook's decision (a deny throws). */
function apply(
  names: CallNames,
  source: CallSource,
  entry: PreStep,
  out: unknown,
  state: StepsState,
  lastPass: boolean,
): void {
  if (out === undefined) return;
  const read = readPreDecision(
    out,
    names.toolName,
    entry.gate ? "security pre hook" : "pre hook",
    entry.hook,
    "",
    state,
  );
  if (read === undefined) return;
  // A function's `name` is read only for a deny or an ask (a native accessor: ~25 ns a read).
  if (read.decision === "deny") {
    throw deniedBy(names, source, entry.hook.name || "anonymous", read, entry.gate);
  }
  if (read.decision === "ask") {
    state.asked = noteAsk(names, source, state.asked, entry.hook.name || "anonymous", read);
  } else note(source, read.context);
  const next = read.updatedArgs;
  if (next === undefined || samePlainData(next, state.args)) return;
  state.args = next;
  state.changed = true;
  if (entry.gate && lastPass) {
    state.securityChanged = true;
    state.rewriter = entry.hook.name;
  }
}

function runSteps(
  names: CallNames,
  source: CallSource,
  steps: readonly PreStep[],
  args: Args,
  from: number,
): StepsRun | Promise<StepsRun> {
  const finalPass = lastSecurityPass(steps);
  const state: StepsState = {
    args,
    changed: false,
    securityChanged: false,
    rewriter: "",
    asked: null,
    decision: undefined,
    reason: undefined,
    updatedArgs: undefined,
    context: undefined,
    interrupt: undefined,
    ask: undefined,
  };
  for (let i = from; i < steps.length; i++) {
    const entry = steps[i];
    const out = step(names, source, entry, state.args);
    if (isThenable(out)) return stepsAsync(names, source, steps, i, out, state);
    apply(names, source, entry, out, state, i > finalPass);
  }
  return state;
}

async function stepsAsync(
  names: CallNames,
  source: CallSource,
  steps: readonly PreStep[],
  index: number,
  pending: PromiseLike<unknown>,
  state: StepsState,
): Promise<StepsRun> {
  const finalPass = lastSecurityPass(steps);
  for (let i = index; i < steps.length; i++) {
    const entry = steps[i];
    // A synchronous throw is wrapped by `step`; a rejection here.
    let out: unknown = i === index ? pending : step(names, source, entry, state.args);
    if (isThenable(out)) {
      try {
        out = await out;
      } catch (error) {
        throw denial(names, source, entry, error);
      }
    }
    apply(names, source, entry, out, state, i > finalPass);
  }
  return state;
}

/** What {@linkcode runPost} returns when no hook replaced the result. */
export const UNCHANGED: unique symbol = Symbol("unchanged");

/**
 * Runs post hooks in order; an `updatedResult` replaces the result for the next ones. Returns the
 * last decision that replaced it (whose `updatedResult` is the final result: the decision the
 * chain returns as a whole, no copy made), or {@linkcode UNCHANGED} when none did (a promise of
 * that once a hook returned a thenable).
 */
export function runPost(
  names: CallNames,
  source: CallSource,
  hooks: readonly PostToolHook[],
  result: unknown,
  args: Args,
): ResultDecisionRead | typeof UNCHANGED | Promise<ResultDecisionRead | typeof UNCHANGED> {
  let current = result;
  let last: ResultDecisionRead | typeof UNCHANGED = UNCHANGED;
  for (let i = 0; i < hooks.length; i++) {
    const hook = hooks[i];
    const out = hook(new CallContext(names.canonical, source, args, current, undefined));
    if (isThenable(out)) return postAsync(names, source, hooks, i, out, current, args, last);
    if (out === undefined) continue;
    const read = readResultDecision(out, names.toolName, "post", "post hook", hook);
    if (read === undefined) continue;
    note(source, read.context);
    if ("updatedResult" in read) {
      current = read.updatedResult;
      last = read;
    }
  }
  return last;
}

async function postAsync(
  names: CallNames,
  source: CallSource,
  hooks: readonly PostToolHook[],
  index: number,
  pending: PromiseLike<unknown>,
  current: unknown,
  args: Args,
  last: ResultDecisionRead | typeof UNCHANGED,
): Promise<ResultDecisionRead | typeof UNCHANGED> {
  for (let i = index; i < hooks.length; i++) {
    const hook = hooks[i];
    let out = i === index
      ? await pending
      : hook(new CallContext(names.canonical, source, args, current, undefined));
    if (isThenable(out)) out = await out;
    const read = readResultDecision(out, names.toolName, "post", "post hook", hook);
    if (read === undefined) continue;
    note(source, read.context);
    if ("updatedResult" in read) {
      current = read.updatedResult;
      last = read;
    }
  }
  return last;
}

/**
 * Runs error hooks in order until one recovers (`updatedResult`); resolves to the recovery, or
 * {@linkcode UNCHANGED} when none did. `context` strings of every hook that ran go to the call.
 */
export async function runError(
  names: CallNames,
  source: CallSource,
  hooks: readonly ErrorToolHook[],
  error: unknown,
  args: Args,
): Promise<unknown> {
  for (const hook of hooks) {
    const out = await hook(new CallContext(names.canonical, source, args, undefined, error));
    const read = readResultDecision(out, names.toolName, "error", "error hook", hook);
    if (read === undefined) continue;
    note(source, read.context);
    if ("updatedResult" in read) return read.updatedResult;
  }
  return UNCHANGED;
}

const EMPTY: readonly ToolHook[] = Object.freeze([]);

/**
 * The hooks of one phase for one tool (`AgentSpec.hooksFor`: `*`, the canonical name,
 * `<name>_tool`), merged again only after a hook was added to the spec (`SPEC_VERSION`). Lists
 * are snapshots: a hook added while a chain runs applies from the next call.
 */
export class PhaseHooks {
  readonly #phase: ToolHookPhase;
  readonly #canonical: string;
  #specVersion = -1;
  #merged: readonly ToolHook[] = EMPTY;
  #version = 0;

  constructor(phase: ToolHookPhase, canonical: string) {
    this.#phase = phase;
    this.#canonical = canonical;
  }

  /** Bumped whenever the merged list is rebuilt. */
  get version(): number {
    return this.#version;
  }

  /** The current merged list (the same array while nothing was added). */
  get(spec: AgentSpec): readonly ToolHook[] {
    if (spec[SPEC_VERSION] === this.#specVersion) return this.#merged;
    this.#specVersion = spec[SPEC_VERSION];
    const merged = spec.hooksFor(this.#phase, this.#canonical);
    this.#merged = merged.length ? merged : EMPTY;
    this.#version++;
    return this.#merged;
  }
}
