/**
 * Private keys of the action scope. `START_AT`: `ActionManager.invoke` hands `FunctionCalling`
 * the clock reading it took, which becomes both `createdAt` and the start of the run (one clock
 * read fewer per call; the two happen in the same synchronous step). `NOTE` and `ASKED_BY`: what
 * the spec chains and `FunctionCalling` pass each other besides a decision.
 *
 * @module
 */

import type { ApprovalHandler } from "../core/approval.ts";
import type { ToolEffectsChannel } from "./coding/file_change.ts";

/** Key of the start time (milliseconds, `Date.now()`) on a `FunctionCallingInit`. */
export const START_AT: unique symbol = Symbol("hookscope.startAt");

/** Key of `FunctionCalling`'s run method that resolves to the call itself. */
export const RUN_CALL: unique symbol = Symbol("hookscope.runCall");

/**
 * Key of a call's {@linkcode CallHost} on a `FunctionCallingInit` and on `InvokeOptions` (the act
 * path's), and of `FunctionCalling`'s getter of the effects channel.
 */
export const EFFECTS: unique symbol = Symbol("hookscope.effects");

/**
 * Where a call finds its effects channel and, when it has one, its approval path: the act path
 * hands each call one (its per-call state), which makes the channel only when the tool or a hook
 * first reads it, so a call that stages nothing makes none. `InvokeOptions.effects` is wrapped as
 * one (`{ effects }`).
 */
export interface CallHost {
  /** The channel (read when a staged run or a hook asks for it). */
  readonly effects: ToolEffectsChannel | undefined;
  /** Answers an ask of the tool's hooks, as `InvokeOptions.approve` does (called as a method). */
  readonly approve?: ApprovalHandler;
}

/**
 * Key of a hook context's `(text: string) => void`: adds a `context` string for the model to the
 * call (`FunctionCalling.context`). The contexts `FunctionCalling` hands its processors have it;
 * the spec chains (`_attach.ts`) pass it on to their hooks' contexts. A context without it (a
 * processor called by hand) drops the text.
 */
export const NOTE: unique symbol = Symbol("hookscope.note");

/** Key of the asking hook's name on an ask decision the spec chains return to `FunctionCalling`. */
export const ASKED_BY: unique symbol = Symbol("hookscope.askedBy");

/**
 * Key of `FunctionCalling`'s flag: a hook of the tool (its preprocessor or an approval it asked
 * for) changed the arguments. `Branch.act` then records the arguments that ran in the response.
 */
export const ARGS_REWRITTEN: unique symbol = Symbol("hookscope.argsRewritten");

/**
 * Key of the flag on the processors `attachToolHooks` makes: they return decisions their chains
 * read and checked already (a pre allow, a post or error decision), so `FunctionCalling` applies
 * them without reading them again, and it hands their preprocessor the call's arguments without
 * a copy (the chain copies them for each hook it calls).
 */
export const CHECKED: unique symbol = Symbol("hookscope.checked");
