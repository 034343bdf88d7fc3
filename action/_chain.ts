/**
 * The tool hook chains' runners: synchronous until a hook returns a thenable, then async for the
 * rest (a chain of sync hooks costs no microtask), and the per-tool cache of the hook lists an
 * `AgentSpec` yields (rebuilt only when a list changes).
 *
 * @module
 */

import { PermissionDeniedError, SecurityDeniedError } from "../core/mod.ts";
import { isThenable, messageOf } from "../core/_util.ts";
import { isPlainObject, plainDataCopy, samePlainData } from "../core/_freeze.ts";
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

/** Where the hooks of one call read the call id and the signal (the processors' context). */
export interface CallSource {
  readonly callId: string;
  readonly signal: AbortSignal;
  readonly effects?: ToolEffectsChannel;
}

/**
 * One hook's context, for every phase (`result` is set for post hooks, `error` for error hooks).
 * `callId` is a getter so that a call without a caller-supplied id draws its
 * own id only when a hook reads it; every other field is a plain own property.
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

function denial(step: PreStep, error: unknown): unknown {
  if (!step.gate) return error;
  const reason = isPermissionError(error)
    ? messageOf(error)
    : `evaluator error: ${messageOf(error)}`;
  return new SecurityDeniedError(step.hook.name || "anonymous", reason, { cause: error });
}

/** How many times at most the security pass runs after the steps (see {@linkcode runPre}). */
const SECURITY_SETTLE_PASSES = 2;

/**
 * Runs a pre chain on `args` (which it does not modify; each hook gets its own copy). Returns the
 * final arguments, or `null` when no hook changed them; a promise of that once a hook returned a
 * thenable. A throwing security hook throws `SecurityDeniedError`; a user hook's throw propagates.
 *
 * A hook's object return is copied to plain data once (`NotPlainDataError` otherwise, a
 * `SecurityDeniedError` from a security hook) and counts as a change only when it differs. The
 * security hooks judge the arguments that run: when a security hook of the last security pass
 * changed them after another one of that pass had judged them, that pass runs again on the
 * result until no such change is left (at most
 * {@linkcode SECURITY_SETTLE_PASSES} more times; then `SecurityDeniedError`).
 */
export function runPre(
  toolName: string,
  source: CallSource,
  steps: readonly PreStep[],
  args: Args,
): Args | null | Promise<Args | null> {
  const out = runSteps(toolName, source, steps, args, 0);
  if (isThenable(out)) return out.then((run) => settle(toolName, source, steps, args, run, 0));
  return settle(toolName, source, steps, args, out, 0);
}

/** The outcome of one run of steps: the arguments, and whether the last security pass changed them. */
interface StepsRun {
  readonly args: Args;
  readonly changed: boolean;
  readonly securityChanged: boolean;
  readonly hook: string;
}

/** Index of the first step of the last security pass (`steps.length` when there is none). */
function lastSecurityPass(steps: readonly PreStep[]): number {
  let at = steps.length;
  while (at > 0 && steps[at - 1].gate) at--;
  return at;
}

function settle(
  toolName: string,
  source: CallSource,
  steps: readonly PreStep[],
  original: Args,
  run: StepsRun,
  passes: number,
): Args | null | Promise<Args | null> {
  let current = run;
  let count = passes;
  let security: readonly PreStep[] | null = null;
  while (current.securityChanged) {
    if (count >= SECURITY_SETTLE_PASSES) {
      throw new SecurityDeniedError(
        current.hook || "anonymous",
        `the security hooks did not settle on the arguments (still rewriting after ${
          count + 1
        } passes); a rewrite must be idempotent`,
      );
    }
    count++;
    security ??= steps.slice(lastSecurityPass(steps));
    const again = runSteps(toolName, source, security, current.args, 0);
    const changed = current.changed;
    if (isThenable(again)) {
      const at = count;
      return again.then((next) =>
        settle(toolName, source, steps, original, { ...next, changed: true }, at)
      );
    }
    current = { ...again, changed: changed || again.changed };
  }
  return current.changed ? current.args : null;
}

function step(
  toolName: string,
  source: CallSource,
  entry: PreStep,
  current: Args,
): unknown {
  try {
    return entry.hook(new CallContext(toolName, source, current, undefined, undefined));
  } catch (error) {
    throw denial(entry, error);
  }
}

/** Applies one hook's return; `null` when it changed nothing. */
function apply(entry: PreStep, out: unknown, current: Args): Args | null {
  if (!isPlainObject(out)) return null;
  let copy: Args;
  try {
    copy = plainDataCopy(
      out,
      `Cannot apply pre hook "${entry.hook.name || "anonymous"}"`,
      "args",
      false,
    ) as Args;
  } catch (error) {
    throw denial(entry, error);
  }
  return samePlainData(copy, current) ? null : copy;
}

function runSteps(
  toolName: string,
  source: CallSource,
  steps: readonly PreStep[],
  args: Args,
  from: number,
): StepsRun | Promise<StepsRun> {
  const finalPass = lastSecurityPass(steps);
  let current = args;
  let changed = false;
  let securityChanged = false;
  let hook = "";
  for (let i = from; i < steps.length; i++) {
    const entry = steps[i];
    const out = step(toolName, source, entry, current);
    if (isThenable(out)) {
      return stepsAsync(toolName, source, steps, i, out, {
        args: current,
        changed,
        securityChanged,
        hook,
      });
    }
    const next = apply(entry, out, current);
    if (next !== null) {
      current = next;
      changed = true;
      if (entry.gate && i > finalPass) {
        securityChanged = true;
        hook = entry.hook.name;
      }
    }
  }
  return { args: current, changed, securityChanged, hook };
}

async function stepsAsync(
  toolName: string,
  source: CallSource,
  steps: readonly PreStep[],
  index: number,
  pending: PromiseLike<unknown>,
  before: StepsRun,
): Promise<StepsRun> {
  const finalPass = lastSecurityPass(steps);
  let current = before.args;
  let changed = before.changed;
  let securityChanged = before.securityChanged;
  let hook = before.hook;
  for (let i = index; i < steps.length; i++) {
    const entry = steps[i];
    // A synchronous throw is wrapped by `step`; a rejection here.
    let out: unknown = i === index ? pending : step(toolName, source, entry, current);
    if (isThenable(out)) {
      try {
        out = await out;
      } catch (error) {
        throw denial(entry, error);
      }
    }
    const next = apply(entry, out, current);
    if (next !== null) {
      current = next;
      changed = true;
      if (entry.gate && i > finalPass) {
        securityChanged = true;
        hook = entry.hook.name;
      }
    }
  }
  return { args: current, changed, securityChanged, hook };
}

/** Runs post hooks in order; a non-`undefined` return replaces the result. */
export function runPost(
  toolName: string,
  source: CallSource,
  hooks: readonly PostToolHook[],
  result: unknown,
  args: Args,
): unknown {
  let current = result;
  for (let i = 0; i < hooks.length; i++) {
    const out = hooks[i](new CallContext(toolName, source, args, current, undefined));
    if (isThenable(out)) return postAsync(toolName, source, hooks, i, out, current, args);
    if (out !== undefined) current = out;
  }
  return current;
}

async function postAsync(
  toolName: string,
  source: CallSource,
  hooks: readonly PostToolHook[],
  index: number,
  pending: PromiseLike<unknown>,
  current: unknown,
  args: Args,
): Promise<unknown> {
  for (let i = index; i < hooks.length; i++) {
    let out = i === index
      ? await pending
      : hooks[i](new CallContext(toolName, source, args, current, undefined));
    if (isThenable(out)) out = await out;
    if (out !== undefined) current = out;
  }
  return current;
}

/** Runs error hooks in order until one returns non-`undefined` (the recovery). */
export async function runError(
  toolName: string,
  source: CallSource,
  hooks: readonly ErrorToolHook[],
  error: unknown,
  args: Args,
): Promise<unknown> {
  for (const hook of hooks) {
    const out = await hook(new CallContext(toolName, source, args, undefined, error));
    if (out !== undefined) return out;
  }
  return undefined;
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
