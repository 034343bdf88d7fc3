/**
 * `createAgent`: a branch wired from an `AgentSpec`, a model and tools, optionally in a session.
 *
 * @module
 */

import { AgentSpec, type Tool } from "../action/mod.ts";
import type { IModel } from "../service/mod.ts";
import { Branch } from "./branch.ts";
import type { Session } from "./session.ts";

/** Options for {@linkcode createAgent}. */
export interface CreateAgentOptions {
  /** The model the agent talks to. */
  model?: IModel;
  /** The session that owns the agent's branch (it emits `branch.create`). */
  session?: Session;
  /** Tools to register; each gets the spec's hook chains. */
  tools?: readonly Tool[];
  /** A system prompt. */
  system?: string;
}

/**
 * Builds a branch for an agent: its `ActionManager` carries the spec, so every tool registered
 * now or later gets the spec's security pre-hooks, pre/post hooks and error hooks. With a
 * session, the branch is created through `session.newBranch()` (which emits `branch.create`
 * with the spec's name as `agentName`).
 *
 * @example
 * ```ts
 * import { createAgent, Session } from "@hookscope/core/session";
 * import { AgentSpec, Tool } from "@hookscope/core/action";
 * import assert from "node:assert/strict";
 *
 * const spec = new AgentSpec({ name: "adder" }).post("add", (_t, _a, _args, result) => Number(result) * 10);
 * const session = new Session();
 * const agent = createAgent(spec, { session });
 * agent.actions.register(new Tool({ name: "add", func: (a: Record<string, unknown>) => Number(a.x) + 1 }));
 * const result = await agent.act({ function: "add", arguments: { x: 1 } });
 * assert.equal(result.output, 20);
 * assert.equal(agent.session, session);
 * ```
 */
export function createAgent(spec: AgentSpec, options?: CreateAgentOptions): Branch {
  if (!(spec instanceof AgentSpec)) {
    throw new TypeError(`Cannot create agent: spec must be an AgentSpec`);
  }
  const init: ConstructorParameters<typeof Branch>[0] = { spec };
  if (options?.model) init.model = options.model;
  if (options?.tools) init.tools = options.tools;
  if (options?.system !== undefined) init.system = options.system;
  if (spec.name !== undefined) init.name = spec.name;
  return options?.session ? options.session.newBranch(init) : new Branch(init);
}
