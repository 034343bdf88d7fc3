/**
 * The one place that attaches an {@linkcode AgentSpec}'s hook chains to a tool (used by
 * `ActionManager`, `CodingToolkit` and `mcpTools`; not exported from the package).
 *
 * @module
 */

import {
  type Args,
  PhaseHooks,
  type PreStep,
  preSteps,
  runError,
  runPost,
  runPre,
} from "./_chain.ts";
import { isThenable } from "../core/_util.ts";
import {
  type AgentSpec,
  canonicalToolName,
  type ErrorToolHook,
  type PostToolHook,
  type PreToolHook,
} from "./spec.ts";
import {
  type ProcessorContext,
  Tool,
  type ToolErrorProcessor,
  type ToolPostprocessor,
  type ToolPreprocessor,
} from "./tool.ts";

const LAYERS = new WeakMap<Tool, { inner: Tool; spec: AgentSpec }>();

/**
 * Returns a copy of `tool` whose processors run the spec's chains for it, looked up as `"*"`,
 * the exact (canonical) name, then `"<name>_tool"`, at each invocation (hooks added later apply
 * too). The tool's own processors still run: its preprocessor after the pre chain, its
 * postprocessor before the post chain, its error processor before the error hooks. Attaching a
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
  const canonical = canonicalToolName(name);
  const pre = new PreCache(canonical);
  const post = new PhaseHooks("post", canonical);
  const onError = new PhaseHooks("error", canonical);
  // Resolves to `undefined` when neither a hook nor the tool's own preprocessor replaced the
  // arguments, so `FunctionCalling` can skip validating them again (X14 re-validates only
  // rewritten arguments). Sync hooks run without a microtask.
  const preprocessor: ToolPreprocessor = (args, options, context) => {
    const out = runPre(canonical, context, pre.steps(spec), args);
    if (isThenable(out)) return out.then((replaced) => afterPre(replaced, args, options, context));
    return afterPre(out, args, options, context);
  };
  const afterPre = (
    replaced: Args | null,
    args: Args,
    options: Record<string, unknown>,
    context: ProcessorContext,
  ): unknown => {
    if (!base.preprocessor) return replaced ?? undefined;
    const current = replaced ?? args;
    const out = base.preprocessor(current, options, withArgs(context, current));
    if (isThenable(out)) return out.then((value) => value === undefined ? current : value);
    return out === undefined ? current : out;
  };
  const postprocessor: ToolPostprocessor = (result, options, context) => {
    if (base.postprocessor) {
      const out = base.postprocessor(result, options, context);
      if (isThenable(out)) {
        return out.then((value) =>
          runPost(canonical, context, post.get(spec) as PostToolHook[], value, context.args)
        );
      }
      result = out;
    }
    return runPost(canonical, context, post.get(spec) as PostToolHook[], result, context.args);
  };
  const errorProcessor: ToolErrorProcessor = async (
    error,
    args,
    context: ProcessorContext,
  ) => {
    let current = error;
    if (base.errorProcessor) {
      try {
        const out = await base.errorProcessor(error, args, context);
        if (out !== undefined) return out;
      } catch (replaced) {
        current = replaced;
      }
    }
    const hooks = onError.get(spec) as ErrorToolHook[];
    const out = hooks.length ? await runError(canonical, context, hooks, current, args) : undefined;
    if (out !== undefined) return out;
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
    preprocessor,
    preprocessorOptions: base.preprocessorOptions,
    postprocessor,
    postprocessorOptions: base.postprocessorOptions,
    errorProcessor,
    metadata: { ...base.metadata },
  });
  LAYERS.set(attached, { inner: base, spec });
  return attached;
}

/**
 * The processor context with other arguments (the call id stays read on demand; a class, since
 * V8 builds object literals with getters slowly).
 */
class WithArgs implements ProcessorContext {
  readonly signal: AbortSignal;
  readonly toolName: string;
  readonly args: Args;
  readonly #context: ProcessorContext;

  constructor(context: ProcessorContext, args: Args) {
    this.signal = context.signal;
    this.toolName = context.toolName;
    this.args = args;
    this.#context = context;
  }

  get callId(): string {
    return this.#context.callId;
  }
}

function withArgs(context: ProcessorContext, args: Args): ProcessorContext {
  return new WithArgs(context, args);
}
