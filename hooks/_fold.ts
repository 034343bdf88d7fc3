// The decision fold: what the handlers of a folding point return, read once, checked and folded
// (deny > ask > allow > none for `tool.pre` and `tool.effects`; result replacements and context
// for `tool.post`;
// the first recovery and context for `tool.error`).
// Private to the hooks folder; the dispatch loops (`_dispatch.ts`) drive it.

import { deepFrozenCopy, plainDataCopy, samePlainData } from "../core/_freeze.ts";
import type { Entry } from "./_entry.ts";
import { messageOf } from "../core/_util.ts";
import {
  type AskTerms,
  AskTermsError,
  foldAskTerms,
  preDecisionProblem,
  readAskTerms,
} from "../core/_tool_decision.ts";

/** One shadow-mode verdict that was recorded, not applied. */
export interface ShadowVerdict {
  /** `"deny"` or `"ask"` (a shadow throw or timeout counts as a deny). */
  readonly decision: "deny" | "ask";
  /** Why. */
  readonly reason?: string;
  /** The handler's name, when known. */
  readonly hook?: string;
}

/** The folded outcome of one `tool.pre` chain (see `HookBus.decide`). */
export interface ToolPreFold {
  /** deny > ask > allow > none (no handler had an opinion). */
  readonly verdict: "none" | "allow" | "ask" | "deny";
  /** The arguments after every applied rewrite (deep-frozen), or `undefined` when none. */
  readonly updatedArgs: Readonly<Record<string, unknown>> | undefined;
  /** The deny or ask reason. */
  readonly reason?: string;
  /** The handler that denied or asked, when named. */
  readonly hook?: string;
  /**
   * With an ask: when the approval stops waiting (the earliest `expiresAt`, or ask time plus
   * `expiresInMs`, of every asking handler), in milliseconds since the epoch.
   */
  readonly expiresAt?: number;
  /** With an ask: who may answer (the names every asking handler that named some allows). */
  readonly answerableBy?: readonly string[];
  /** A deny asked to end the agent run. */
  readonly interrupt: boolean;
  /** `context` strings of the allow decisions, in chain order. */
  readonly context: readonly string[];
  /** Shadow-mode verdicts, in chain order. */
  readonly shadow: readonly ShadowVerdict[];
  /**
   * What a blocking handler threw (or the `HookTimeoutError` of one that did not settle): the
   * act path rejects with it. `undefined` when nothing failed.
   */
  readonly error?: unknown;
  /** The name of the handler that failed, when `error` is set. */
  readonly errorHook?: string;
}

/** The folded outcome of one `tool.post` chain (see `HookBus.decide`). */
export interface ToolPostFold {
  /** Whether a handler replaced the result. */
  readonly replaced: boolean;
  /** The result after every replacement (the original when none). */
  readonly result: unknown;
  /** `context` strings, in chain order. */
  readonly context: readonly string[];
}

/** The folded outcome of one `tool.error` chain (see `HookBus.decide`). */
export interface ToolErrorFold {
  /** Whether a handler recovered the call (returned `updatedResult`). */
  readonly recovered: boolean;
  /** The first handler's `updatedResult` (`undefined` when none recovered). */
  readonly result: unknown;
  /** `context` strings, in chain order. */
  readonly context: readonly string[];
}

/** A gate fold: allow / ask / deny decisions with argument rewrites (`tool.pre`'s). */
export const GATE = 1;
/** A result fold: result replacements and context (`tool.post`'s). */
export const RESULT = 2;
/** A recovery fold: the first `updatedResult` recovers, context is collected (`tool.error`'s). */
export const RECOVER = 3;
/** Which fold a point's decisions go through. */
export type FoldKind = typeof GATE | typeof RESULT | typeof RECOVER;

/**
 * The fold of `point`'s decisions, or `undefined` when its handlers' results are ignored. A gate
 * point is also blocking: a failing handler rejects `emit` and fails the fold closed. A new
 * folding point is one `case` line here (and its payload type in `hook_point.ts`). A `switch`
 * on constant strings, not a table: the emission paths ask this per call.
 */
export function foldOf(point: string): FoldKind | undefined {
  switch (point) {
    case "tool.pre":
    case "tool.effects":
      return GATE;
    case "tool.post":
      return RESULT;
    case "tool.error":
      return RECOVER;
  }
  return undefined;
}

/** What `Fold.pre` returns when the chain ends at this handler. */
export const STOP: unique symbol = Symbol("stop");

const NO_STRINGS: readonly string[] = Object.freeze([]);
const NO_SHADOW: readonly ShadowVerdict[] = Object.freeze([]);

/** The fold of a gate chain in which no handler had an opinion. */
export const NO_PRE_DECISION: ToolPreFold = Object.freeze({
  verdict: "none",
  updatedArgs: undefined,
  interrupt: false,
  context: NO_STRINGS,
  shadow: NO_SHADOW,
});

/** The fold of a result chain in which no handler had an opinion. */
export function postFold(result: unknown): ToolPostFold {
  return { replaced: false, result, context: NO_STRINGS };
}

/** The fold of a recovery chain in which no handler had an opinion. */
export const NO_ERROR_DECISION: ToolErrorFold = Object.freeze({
  recovered: false,
  result: undefined,
  context: NO_STRINGS,
});

/** The state of one decision fold. */
export class Fold {
  verdict = 0; // 0 none, 1 allow, 2 ask, 3 deny
  args: Readonly<Record<string, unknown>> | undefined = undefined;
  reason: string | undefined = undefined;
  hook: string | undefined = undefined;
  expiresAt: number | undefined = undefined;
  answerableBy: readonly string[] | undefined = undefined;
  interrupt = false;
  context: string[] | null = null;
  shadow: ShadowVerdict[] | null = null;
  error: unknown = undefined;
  errorHook: string | undefined = undefined;
  result: unknown;
  replaced = false;
  readonly payload: Record<string, unknown>;
  /** The point, for messages. */
  readonly point: string;
  /** A recovery fold (`tool.error`): the first `updatedResult` counts, the payload stays. */
  readonly recover: boolean;
  /** Which pass of the chain runs (1 first; see TOOL_PRE_PASSES). */
  pass = 1;
  /** Whether a hook of this pass changed the arguments it received. */
  rewrote = false;
  /** The last hook that changed them, when named. */
  rewriter: string | undefined = undefined;
  /** The arguments the next hook receives. */
  seen: unknown;

  constructor(payload: Record<string, unknown>, point: string) {
    this.payload = payload;
    this.point = point;
    this.recover = point === "tool.error";
    this.result = payload.result;
    this.seen = payload.args;
  }

  /** Starts the next pass on the rewritten arguments; returns its payload. */
  nextPass(): Record<string, unknown> {
    this.pass++;
    this.rewrote = false;
    this.seen = this.args;
    return { ...this.payload, args: this.args };
  }

  fail(error: unknown, hook: string | undefined): void {
    this.error = error === undefined ? new Error(`${this.point} hook threw undefined`) : error;
    this.errorHook = hook;
  }

  shadowed(decision: "deny" | "ask", reason: string | undefined, hook: string | undefined): void {
    if (
      this.pass > 1 && this.shadow !== null &&
      this.shadow.some((v) => v.decision === decision && v.reason === reason && v.hook === hook)
    ) return; // the same verdict of a later pass is recorded once
    const verdict: { decision: "deny" | "ask"; reason?: string; hook?: string } = { decision };
    if (reason !== undefined) verdict.reason = reason;
    if (hook !== undefined) verdict.hook = hook;
    (this.shadow ??= []).push(Object.freeze(verdict));
  }

  addContext(text: string): void {
    const list = this.context ??= [];
    if (this.pass > 1 && list.includes(text)) return; // said again on a later pass
    list.push(text);
  }

  /** The start of an error message about `entry`'s decision (made only when one is needed). */
  #action(entry: Entry): string {
    return `Cannot apply ${this.point} decision${entry.name ? ` of "${entry.name}"` : ""}`;
  }

  /** Applies one gate result; returns the next payload, `null` (unchanged) or STOP. */
  pre(value: unknown, entry: Entry): Record<string, unknown> | null | typeof STOP {
    if (value === null || typeof value !== "object" || !("decision" in value)) return null;
    // Each property read once, into locals: what is validated is what is applied (a getter or a
    // proxy cannot say "deny" to the check and "allow" to the fold), and no copy is made.
    const v = value as Record<string, unknown>;
    let decision: unknown = undefined;
    let reason: unknown = undefined;
    let updatedArgs: unknown = undefined;
    let context: unknown = undefined;
    let interrupt: unknown = undefined;
    let ask: AskTerms | undefined = undefined;
    let problem: string | null;
    try {
      decision = v.decision;
      reason = v.reason;
      updatedArgs = v.updatedArgs;
      context = v.context;
      interrupt = v.interrupt;
      if (decision === "ask") ask = readAskTerms(v);
      problem = preDecisionProblem(decision, reason, context, updatedArgs);
    } catch (error) {
      problem = error instanceof AskTermsError
        ? error.message
        : `reading it threw (${messageOf(error)})`;
    }
    if (problem !== null) {
      const error = new TypeError(`${this.#action(entry)}: ${problem}`);
      if (entry.shadow) {
        this.shadowed("deny", error.message, entry.name);
        return null;
      }
      this.fail(error, entry.name);
      return STOP;
    }
    const why = typeof reason === "string" ? reason : undefined;
    if (entry.shadow) {
      if (decision === "deny" || decision === "ask") this.shadowed(decision, why, entry.name);
      return null;
    }
    if (decision === "deny") {
      this.verdict = 3;
      this.reason = why;
      this.hook = entry.name;
      this.interrupt = interrupt === true;
      return STOP;
    }
    if (decision === "ask") {
      if (this.verdict < 2) {
        this.verdict = 2;
        this.reason = why;
        this.hook = entry.name;
      }
      if (ask !== undefined && this.#foldAsk(ask, entry) === STOP) return STOP;
    } else {
      if (this.verdict < 1) this.verdict = 1;
      if (typeof context === "string") this.addContext(context);
    }
    if (updatedArgs === undefined) return null;
    let args: Readonly<Record<string, unknown>>;
    try {
      args = plainDataCopy(updatedArgs, this.#action(entry), "updatedArgs", true) as Record<
        string,
        unknown
      >;
    } catch (error) {
      this.fail(error, entry.name);
      return STOP;
    }
    if (!samePlainData(args, this.seen)) {
      this.rewrote = true;
      this.rewriter = entry.name;
    }
    this.args = args;
    this.seen = args;
    return { ...this.payload, args };
  }

  /**
   * Folds one ask's terms: the earliest expiry, the intersection of who may answer. An empty
   * intersection denies the call (nobody could approve it) and ends the chain.
   */
  #foldAsk(ask: AskTerms, entry: Entry): typeof STOP | null {
    const terms = foldAskTerms(this, ask);
    if (terms !== null) {
      this.expiresAt = terms.expiresAt;
      this.answerableBy = terms.answerableBy;
      return null;
    }
    this.verdict = 3;
    this.reason = `nobody may answer: the asking hooks name no common answerer (${
      JSON.stringify(this.answerableBy)
    } and ${JSON.stringify(ask.answerableBy)})`;
    this.hook = entry.name;
    this.interrupt = false;
    return STOP;
  }

  /** Applies one result-fold result; returns the next payload or `null` (unchanged). */
  post(value: unknown, entry: Entry): Record<string, unknown> | null {
    if (value === null || typeof value !== "object" || entry.shadow) return null;
    // Each property is read once.
    const v = value as { updatedResult?: unknown; context?: unknown };
    const context = v.context;
    if (typeof context === "string") (this.context ??= []).push(context);
    if (!("updatedResult" in v)) return null;
    if (this.recover) {
      // The first recovery counts; the next handlers still see the failure.
      if (!this.replaced) {
        this.result = deepFrozenCopy(v.updatedResult);
        this.replaced = true;
      }
      return null;
    }
    this.result = deepFrozenCopy(v.updatedResult);
    this.replaced = true;
    return { ...this.payload, result: this.result };
  }

  toPre(): ToolPreFold {
    const fold: {
      -readonly [K in keyof ToolPreFold]: ToolPreFold[K];
    } = {
      verdict: VERDICTS[this.verdict],
      updatedArgs: this.args,
      interrupt: this.interrupt,
      context: this.context ?? NO_STRINGS,
      shadow: this.shadow ?? NO_SHADOW,
    };
    if (this.reason !== undefined) fold.reason = this.reason;
    if (this.hook !== undefined) fold.hook = this.hook;
    if (this.verdict === 2) {
      if (this.expiresAt !== undefined) fold.expiresAt = this.expiresAt;
      if (this.answerableBy !== undefined) {
        fold.answerableBy = Object.freeze([...this.answerableBy]);
      }
    }
    if (this.error !== undefined) {
      fold.error = this.error;
      if (this.errorHook !== undefined) fold.errorHook = this.errorHook;
    }
    return fold;
  }

  toPost(): ToolPostFold {
    return { replaced: this.replaced, result: this.result, context: this.context ?? NO_STRINGS };
  }

  toError(): ToolErrorFold {
    return {
      recovered: this.replaced,
      result: this.replaced ? this.result : undefined,
      context: this.context ?? NO_STRINGS,
    };
  }
}

const VERDICTS = ["none", "allow", "ask", "deny"] as const;
