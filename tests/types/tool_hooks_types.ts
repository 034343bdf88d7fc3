/**
 * Compile-time checks of the Tool-scope hook types: every `@ts-expect-error` line below is a
 * typo or an old (positional) shape that must NOT compile. CI runs `deno check` on this file.
 * Nothing here runs: the checks live inside a function that is never called.
 *
 * @module
 */

import type { ActionManager, AgentSpec, PreToolHook, ToolHookContext } from "../../action/mod.ts";
import { CodingToolkit, guardDestructive } from "../../action/coding/mod.ts";
import { Branch } from "../../session/mod.ts";

/** Never called: the body only has to type-check. */
export function typeChecks(spec: AgentSpec, manager: ActionManager): void {
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
  spec.post("*", ({ result }) => result);
  spec.onError("*", ({ error }) => String(error));
  spec.securityPre("bash", guardDestructive);

  // @ts-expect-error the positional shape of 0.1 no longer compiles
  spec.pre("bash", (_tool: string, _action: string, args: Record<string, unknown>) => args);
  // @ts-expect-error a misspelt context field does not compile
  spec.pre("bash", ({ toolname }) => void toolname);
  // @ts-expect-error a pre hook has no typed result (unknown at most)
  spec.pre("bash", (context) => context.result.x);
  // @ts-expect-error a post hook's result is unknown, not any
  spec.post("bash", ({ result }) => result.stdout);
  // @ts-expect-error a pre hook returns new arguments (an object) or nothing
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
