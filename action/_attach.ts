/**
 * The one place that attaches an {@linkcode AgentSpec}'s hook chains to a tool (used by
 * `ActionManager`, `CodingToolkit` and `mcpTools`; not exported from the package).
 *
 * @module
 */

import {
  actionOf,
  type Args,
  type CallNames,
  deniedBy,
  note,
  noteAsk,
  PhaseHooks,
  type PreRun,
  type PreStep,
  preSteps,
  runError,
  runPost,
  runPre,
  UNCHANGED,
} from "./_chain.ts";
import { isThenable } from "../core/_util.ts";
import { samePlainData } from "../core/_freeze.ts";
import { readPreDecision, readResultDecision } from "../core/_tool_decision.ts";
import type { ToolPostDecision, ToolPreDecision } from "../core/tool_hook.ts";
import type { ToolSource } from "../core/tool_source.ts";
import type { ToolEffectsChannel } from "./coding/file_change.ts";
import { ASKED_BY, CHECKED, NOTE } from "./_start.ts";
import {
  type AgentSpec,
  canonicalToolName,
  type ErrorToolHook,
  type PostToolHook,
  type PostToolHookContext,
  type PreToolHook,
  type ToolHookContext,
} from "./spec.ts";
import {
  Tool,
  type ToolErrorProcessor,
  type ToolPostprocessor,
  type ToolPreprocessor,
} from "./tool.ts";

const LAYERS = new WeakMap<Tool, { inner: Tool; spec: AgentSpec }>();

/**
 * Returns a copy of `tool` whose processors run the spec's chains for it, looked up as `"*"`,
 * the exact (canonical) name, then `"<name>_tool"`, at each invocation (hooks added later apply
 * too). The tool's own processors still run: its preprocessor after the pre chain (one fold: a
 * deny anywhere wins, the first ask is asked once, after both), its postprocessor before the post
 * chain, its error processor before the error hooks. Attaching a
 * spec the tool already carries replaces that layer; a different spec wraps on top.
 */
export function attachToolHooks<A extends Args, R>(
  tool: Tool<A, R>,
  spec: AgentSpec,
): Tool<A, R> {
  const specs: AgentSpec[] = [];
  let current = tool as Tool;
  for (let layer = LAYERS.get(current); layer; layer = LAYERS.get(current)) {
    specs.unshift(layer.spec);
    current = layer.inner;
  }
  for (const inner of specs) if (inner !== spec) current = wrap(current, inner);
  return wrap(current, spec) as Tool<A, R>;
}

/** The pre steps of one tool under one spec, rebuilt when a hook list changed. */
class PreCache {
  readonly #security: PhaseHooks;
  readonly #user: PhaseHooks;
  #securityVersion = -1;
  #userVersion = -1;
  #steps: readonly PreStep[] = [];

  constructor(canonical: string) {
    this.#security = new PhaseHooks("securityPre", canonical);
    this.#user = new PhaseHooks("pre", canonical);
  }

  steps(spec: AgentSpec): readonly PreStep[] {
    const security = this.#security.get(spec) as readonly PreToolHook[];
    const user = this.#user.get(spec) as readonly PreToolHook[];
    if (
      this.#security.version !== this.#securityVersion || this.#user.version !== this.#userVersion
    ) {
      this.#securityVersion = this.#security.version;
      this.#userVersion = this.#user.version;
      this.#steps = preSteps(security, user);
    }
    return this.#steps;
  }
}

function wrap(base: Tool, spec: AgentSpec): Tool {
  const name = base.name;
  const names: CallNames = { toolName: name, canonical: canonicalToolName(name) };
  const pre = new PreCache(names.canonical);
  const post = new PhaseHooks("post", names.canonical);
  const onError = new PhaseHooks("error", names.canonical);
  const own = base.preprocessor;
  // The spec's pre chain, then the tool's own preprocessor, folded into one decision for
  // `FunctionCalling`: `undefined` when nothing rewrote the arguments or asked (so it can skip
  // validating them again: X14 re-validates only rewritten arguments), an allow with the
  // rewritten arguments, or an ask. A deny throws. Sync hooks run without a microtask.
  const preprocessor: ToolPreprocessor = (context) => {
    const out = runPre(names, context, pre.steps(spec), context.args);
    if (isThenable(out)) return out.then((run) => afterPre(run, context));
    return afterPre(out, context);
  };
  const afterPre = (
    run: PreRun | null,
    context: ToolHookContext,
  ): ToolPreDecision | PromiseLike<ToolPreDecision> => {
    if (own === null) return decisionOf(run);
    // `FunctionCalling` hands this preprocessor the call's own arguments (see `CHECKED`): the
    // tool's preprocessor gets a copy of them, as every hook does.
    const current = run?.args ?? context.args;
    const out = own(new WithArgs(context, current === context.args ? { ...current } : current));
    if (isThenable(out)) {
      return out.then((value) => decisionOf(ownDecision(value, run, current, context)));
    }
    return decisionOf(ownDecision(out, run, current, context));
  };
  // The tool's own preprocessor's decision over the chain's.
  const ownDecision = (
    value: unknown,
    run: PreRun | null,
    current: Args,
    context: ToolHookContext,
  ): PreRun | null => {
    const read = readPreDecision(value, name, "preprocessor", own!, "preprocessor");
    if (read === undefined) return run;
    if (read.decision === "deny") {
      throw deniedBy(names, context, own!.name || "preprocessor", read, false);
    }
    let ask = run?.ask ?? null;
    if (read.decision === "ask") {
      ask = noteAsk(names, context, ask, own!.name || "preprocessor", read);
    } else note(context, read.context);
    let args = run?.args ?? null;
    if (read.updatedArgs !== undefined && !samePlainData(read.updatedArgs, current)) {
      args = read.updatedArgs;
    }
    return args === null && ask === null ? null : { args, ask };
  };
  const postprocessor: ToolPostprocessor = (context) => {
    const ownPost = base.postprocessor;
    if (ownPost !== null) {
      const out = ownPost(context);
      if (isThenable(out)) return out.then((value) => afterOwnPost(value, context));
      return afterOwnPost(out, context);
    }
    return postChain(context, context.result, undefined);
  };
  const afterOwnPost = (value: unknown, context: PostToolHookContext) => {
    const read = readResultDecision(
      value,
      name,
      "post",
      "postprocessor",
      base.postprocessor!,
      "postprocessor",
    );
    if (read === undefined) return postChain(context, context.result, undefined);
    note(context, read.context);
    return "updatedResult" in read
      ? postChain(context, read.updatedResult, read)
      : postChain(context, context.result, undefined);
  };
  // The chain's decision is the last one that replaced the result (the tool's own
  // postprocessor's, then the hooks'), or none.
  const postChain = (
    context: PostToolHookContext,
    result: unknown,
    replaced: ToolPostDecision,
  ): ToolPostDecision | PromiseLike<ToolPostDecision> => {
    const hooks = post.get(spec) as PostToolHook[];
    if (hooks.length === 0) return replaced;
    const out = runPost(names, context, hooks, result, context.args);
    if (isThenable(out)) return out.then((last) => last === UNCHANGED ? replaced : last);
    return out === UNCHANGED ? replaced : out;
  };
  const errorProcessor: ToolErrorProcessor = async (context) => {
    const error = context.error;
    let current = error;
    const ownError = base.errorProcessor;
    if (ownError !== null) {
      try {
        const read = readResultDecision(
          await ownError(context),
          name,
          "error",
          "errorProcessor",
          ownError,
          "errorProcessor",
        );
        if (read !== undefined) {
          note(context, read.context);
          if ("updatedResult" in read) return { updatedResult: read.updatedResult };
        }
      } catch (replaced) {
        current = replaced;
      }
    }
    const hooks = onError.get(spec) as ErrorToolHook[];
    const out = hooks.length
      ? await runError(names, context, hooks, current, context.args)
      : UNCHANGED;
    if (out !== UNCHANGED) return { updatedResult: out };
    if (current !== error) throw current;
    return undefined;
  };
  const attached = new Tool({
    execute: base.execute,
    name,
    description: base.description,
    ...(base.inputSchema ? { inputSchema: base.inputSchema } : {}),
    ...(base.parameters ? { parameters: base.parameters } : {}),
    source: base.source,
    strict: base.strict,
    preprocessor: checked(preprocessor),
    postprocessor: checked(postprocessor),
    errorProcessor,
    metadata: { ...base.metadata },
  });
  LAYERS.set(attached, { inner: base, spec });
  return attached;
}

/** A pre chain's outcome as the decision the attached preprocessor returns. */
function decisionOf(run: PreRun | null): ToolPreDecision {
  if (run === null) return undefined;
  if (run.ask !== null) {
    const noted = run.ask;
    const ask: {
      decision: "ask";
      reason?: string;
      updatedArgs?: Args;
      expiresAt?: number;
      answerableBy?: readonly string[];
      [ASKED_BY]: string;
    } = { decision: "ask", [ASKED_BY]: noted.hook };
    if (noted.reason !== undefined) ask.reason = noted.reason;
    if (run.args !== null) ask.updatedArgs = run.args;
    if (noted.expiresAt !== undefined) ask.expiresAt = noted.expiresAt;
    if (noted.answerableBy !== undefined) ask.answerableBy = noted.answerableBy;
    return ask;
  }
  return run.args === null ? undefined : { decision: "allow", updatedArgs: run.args };
}

/**
 * The processor context with other arguments (the call id and the effects channel stay read on
 * demand; a class, since V8 builds object literals with getters slowly).
 */
class WithArgs implements ToolHookContext {
  readonly toolName: string;
  readonly action: string;
  readonly args: Args;
  readonly signal: AbortSignal;
  readonly source: ToolSource;
  readonly #context: ToolHookContext;

  constructor(context: ToolHookContext, args: Args) {
    this.toolName = context.toolName;
    this.action = actionOf(args);
    this.args = args;
    this.signal = context.signal;
    this.source = context.source;
    this.#context = context;
  }

  /** Read on demand: the act path makes its effects channel only when something reads it. */
  get effects(): ToolEffectsChannel | undefined {
    return this.#context.effects;
  }

  get callId(): string {
    return this.#context.callId;
  }

  [NOTE](text: string): void {
    note(this.#context, text);
  }
}

/** Marks a processor of the chains as returning checked decisions (see `CHECKED`). */
function checked<F extends object>(processor: F): F {
  (processor as { [CHECKED]?: true })[CHECKED] = true;
  return processor;
}
