/**
 * Compile-time checks of the Tool-scope hook types: every `@ts-expect-error` line below is a
 * typo or an old shape (positional arguments, a bare return instead of a decision) that must NOT
 * compile. CI runs `deno check` on this file.
 * Nothing here runs: the checks live inside a function that is never called.
 *
 * @module
 */

import {
  type ActionManager,
  type AgentSpec,
  type PreToolHook,
  Tool,
  type ToolHookContext,
} from "../../action/mod.ts";
import { CodingToolkit, guardDestructive } from "../../action/coding/mod.ts";
import { Branch } from "../../session/mod.ts";
import type {
  HookBus,
  ToolCallContext,
  ToolErrorContext,
  ToolErrorDecision,
  ToolPostDecision,
  ToolPreDecision,
  ToolResultContext,
} from "../../mod.ts";

/** Never called: the body only has to type-check. */
export function typeChecks(spec: AgentSpec, manager: ActionManager, bus: HookBus): void {
  // The context object is the one shape; its fields are typed.
  spec.pre("bash", ({ toolName, action, args, callId, signal }) => {
    const checks: [string, string, Record<string, unknown>, string, AbortSignal] = [
      toolName,
      action,
      args,
      callId,
      signal,
    ];
    void checks;
  });
  spec.post("*", ({ result }) => ({ updatedResult: result }));
  spec.onError("*", ({ error }) => ({ updatedResult: String(error), context: "recovered" }));
  spec.securityPre("bash", guardDestructive);

  // One hook shape: a function written once against the shared context is a Tool processor, an
  // AgentSpec hook and a session tool.* handler alike.
  const gate = ({ args }: ToolCallContext): ToolPreDecision =>
    args.ok ? undefined : { decision: "deny", reason: "not ok" };
  const shout = ({ result }: ToolResultContext): ToolPostDecision => ({
    updatedResult: String(result).toUpperCase(),
  });
  const fallback = ({ error }: ToolErrorContext): ToolErrorDecision => ({
    updatedResult: String(error),
  });
  void new Tool({
    name: "t",
    execute: () => 1,
    preprocessor: gate,
    postprocessor: shout,
    errorProcessor: fallback,
  });
  spec.pre("t", gate).securityPre("t", gate).post("t", shout).onError("t", fallback);
  bus.on("tool.pre", gate);
  bus.on("tool.post", shout);
  bus.on("tool.error", fallback);

  // @ts-expect-error a pre hook returns a decision, not the arguments bare (the shape before 0.3)
  spec.pre("bash", ({ args }) => ({ ...args, command: "ls" }));
  // @ts-expect-error a post hook returns { updatedResult }, not the result bare
  spec.post("bash", ({ result }) => result);
  // @ts-expect-error an error hook returns { updatedResult }, not the recovery bare
  spec.onError("bash", ({ error }) => String(error));
  // @ts-expect-error a deny needs a reason
  spec.pre("bash", () => ({ decision: "deny" }));
  // @ts-expect-error a misspelt verdict does not compile
  spec.pre("bash", () => ({ decision: "alow" }));
  void new Tool({
    name: "t",
    execute: () => 1,
    // @ts-expect-error a processor takes one context object, not (args, options, context)
    preprocessor: (args: Record<string, unknown>, _options: Record<string, unknown>) => args,
  });
  void new Tool({
    name: "t",
    execute: () => 1,
    // @ts-expect-error an error processor takes one context object, not (error, args, context)
    errorProcessor: (error: unknown, _args: Record<string, unknown>) => String(error),
  });
  void new Tool({
    name: "t",
    execute: () => 1,
    // @ts-expect-error the processor options were removed (close over them instead)
    preprocessorOptions: { step: 1 },
  });

  // @ts-expect-error the positional shape of 0.1 no longer compiles
  spec.pre("bash", (_tool: string, _action: string, _args: Record<string, unknown>) => undefined);
  // @ts-expect-error a misspelt context field does not compile
  spec.pre("bash", ({ toolname }) => void toolname);
  // @ts-expect-error a pre hook has no typed result (unknown at most)
  spec.pre("bash", (context) => context.result.x);
  // @ts-expect-error a post hook's result is unknown, not any
  spec.post("bash", ({ result }) => result.stdout);
  // @ts-expect-error a pre hook returns a decision or nothing
  const wrongReturn: PreToolHook = () => "rewritten";
  void wrongReturn;
  // @ts-expect-error the context is read-only
  spec.pre("bash", (context: ToolHookContext) => void (context.callId = "x"));

  // @ts-expect-error the guard takes the context, not three arguments
  void guardDestructive("bash", "", { command: "ls" });

  // One failure convention: suppressErrors is an option of invoke as of act.
  void manager.invoke({ function: "x" }, { suppressErrors: true });
  // @ts-expect-error a misspelt invoke option does not compile
  void manager.invoke({ function: "x" }, { supressErrors: true });

  // One way to make an agent from a spec.
  void new Branch({ spec });
  // @ts-expect-error the toolkit no longer copies AgentSpec's hook methods
  new CodingToolkit().pre("bash", () => {});
}
