/**
 * Hook chains built from an {@linkcode AgentSpec} and attached to tools: `chainPreHooks`,
 * `chainPostHooks`, `chainErrorHooks` and `attachToolHooks`.
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

/** Tool arguments. */
export type ToolArgs = Record<string, unknown>;

/**
 * Builds the pre-hook chain of one tool, or `null` when there are no hooks. The chain runs a
 * security pass (each security hook in order: an object return replaces the arguments for
 * later controls; a `PermissionDeniedError`-like throw denies with its message; any other throw
 * denies with `"evaluator error: <message>"` — fail closed; the first denial rejects with
 * `GateDeniedError` naming the hook function, or `"anonymous"`), then the user hooks in order
 * (an object return replaces the arguments, other returns are ignored, throws propagate
 * unchanged), then — only when both kinds exist — a second security pass on the final
 * arguments. Hooks may be sync or async. Resolves to the final arguments.
 *
 * @example Security first, then user hooks, then security again
 * ```ts
 * import { chainPreHooks } from "@hookscope/core/action";
 * import assert from "node:assert/strict";
 *
 * const seen: string[] = [];
 * function noSecrets(_t: string, _a: string, args: Record<string, unknown>): void {
 *   seen.push(`security:${args.path}`);
 *   if (String(args.path).includes("secret")) throw new Error("nope");
 * }
 * const chain = chainPreHooks("reader", [noSecrets], [
 *   (_t, _a, args) => ({ ...args, path: `${args.path}.txt` }),
 * ])!;
 * assert.deepEqual(await chain({ path: "notes" }), { path: "notes.txt" });
 * assert.deepEqual(seen, ["security:notes", "security:notes.txt"]);
 * await assert.rejects(chain({ path: "secret" }), {
 *   name: "GateDeniedError",
 *   message: "noSecrets: evaluator error: nope",
 * });
 * ```
 */
export function chainPreHooks(
  toolName: string,
  securityHooks: readonly PreToolHook[],
  userHooks: readonly PreToolHook[],
): ((args: ToolArgs) => Promise<ToolArgs>) | null {
  if (securityHooks.length === 0 && userHooks.length === 0) return null;
  const steps = preSteps(securityHooks, userHooks);
  return async (args: ToolArgs): Promise<ToolArgs> => {
    let out = runPre(toolName, steps, args);
    if (isThenable(out)) out = await out;
    return out ?? { ...args };
  };
}

/**
 * Builds the post-hook chain of one tool, or `null` when there are none: every hook runs,
 * for any result, with the real `action` and the final arguments; a non-`undefined` return
 * replaces the result.
 *
 * @example Post hooks see the final arguments
 * ```ts
 * import { chainPostHooks } from "@hookscope/core/action";
 * import assert from "node:assert/strict";
 *
 * const chain = chainPostHooks("reader", [
 *   (_tool, action, args, result) => `${action} ${args.path}: ${result}`,
 * ])!;
 * assert.equal(await chain("ok", { action: "read", path: "a.txt" }), "read a.txt: ok");
 * ```
 */
export function chainPostHooks(
  toolName: string,
  hooks: readonly PostToolHook[],
): ((result: unknown, args?: ToolArgs) => Promise<unknown>) | null {
  if (hooks.length === 0) return null;
  const list = [...hooks];
  return async (result: unknown, args: ToolArgs = {}): Promise<unknown> => {
    const out = runPost(toolName, list, result, args);
    return isThenable(out) ? await out : out;
  };
}

/**
 * Builds the error-hook chain of one tool, or `null` when there are none: hooks run in
 * order with `(toolName, action, args, error)`; the first non-`undefined` return is the
 * recovered result (later hooks do not run); resolving to `undefined` means the error stands.
 * A throwing hook rejects with its own error.
 *
 * @example Recover from a failure
 * ```ts
 * import { chainErrorHooks } from "@hookscope/core/action";
 * import assert from "node:assert/strict";
 *
 * const chain = chainErrorHooks("bash", [
 *   () => undefined,
 *   (_tool, _action, _args, error) => ({ recovered: (error as Error).message }),
 * ])!;
 * assert.deepEqual(await chain(new Error("boom"), {}), { recovered: "boom" });
 * ```
 */
export function chainErrorHooks(
  toolName: string,
  hooks: readonly ErrorToolHook[],
): ((error: unknown, args?: ToolArgs) => Promise<unknown>) | null {
  if (hooks.length === 0) return null;
  const list = [...hooks];
  return (error: unknown, args: ToolArgs = {}): Promise<unknown> =>
    runError(toolName, list, error, args);
}

const LAYERS = new WeakMap<Tool, { inner: Tool; spec: AgentSpec }>();

/**
 * The tool `attachToolHooks` started from, with every spec layer removed (the tool itself when
 * it carries no spec chains).
 *
 * @example
 * ```ts
 * import { AgentSpec, attachToolHooks, baseTool, Tool } from "@hookscope/core/action";
 * import assert from "node:assert/strict";
 *
 * const tool = new Tool({ name: "echo", func: (args) => args });
 * assert.equal(baseTool(attachToolHooks(tool, new AgentSpec())), tool);
 * ```
 */
export function baseTool(tool: Tool): Tool {
  let current = tool;
  for (let layer = LAYERS.get(current); layer; layer = LAYERS.get(current)) current = layer.inner;
  return current;
}

/**
 * Returns a copy of `tool` whose processors run the spec's chains for it, looked up as `"*"`,
 * the exact (canonical) name, then `"<name>_tool"`. Lookup happens at each invocation, so
 * hooks added to the spec later apply too. The tool's own processors still run: its
 * preprocessor after the pre chain, its postprocessor before the post chain, its error
 * processor before the error hooks. Attaching a spec the tool already carries replaces that
 * layer, so one spec never wraps a tool twice; a different spec wraps on top (its pre chain runs
 * first, its post chain last).
 *
 * @example Attach a spec's hooks
 * ```ts
 * import { AgentSpec, attachToolHooks, FunctionCalling, Tool } from "@hookscope/core/action";
 * import assert from "node:assert/strict";
 *
 * const spec = new AgentSpec().pre("*", (_t, _a, args) => ({ ...args, n: Number(args.n) + 1 }));
 * const tool = attachToolHooks(new Tool({ name: "show", func: ({ n }) => n }), spec);
 * const again = attachToolHooks(tool, spec);
 * const call = new FunctionCalling({ tool: again, arguments: { n: 1 } });
 * await call.invoke();
 * assert.equal(call.response, 2);
 * ```
 */
export function attachToolHooks<A extends ToolArgs, R>(
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
    const out = runPre(canonical, pre.steps(spec), args);
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
    const out = base.preprocessor(current, options, { ...context, args: current });
    if (isThenable(out)) return out.then((value) => value === undefined ? current : value);
    return out === undefined ? current : out;
  };
  const postprocessor: ToolPostprocessor = (result, options, context) => {
    if (base.postprocessor) {
      const out = base.postprocessor(result, options, context);
      if (isThenable(out)) {
        return out.then((value) =>
          runPost(canonical, post.get(spec) as PostToolHook[], value, context.args)
        );
      }
      result = out;
    }
    return runPost(canonical, post.get(spec) as PostToolHook[], result, context.args);
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
    const out = hooks.length ? await runError(canonical, hooks, current, args) : undefined;
    if (out !== undefined) return out;
    if (current !== error) throw current;
    return undefined;
  };
  const attached = new Tool({
    func: base.func,
    name,
    description: base.description,
    ...(base.requestOptions ? { requestOptions: base.requestOptions } : {}),
    ...(base.parameters ? { parameters: base.parameters } : {}),
    source: base.source,
    strictFuncCall: base.strictFuncCall,
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
