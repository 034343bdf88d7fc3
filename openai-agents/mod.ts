/**
 * OpenAI Agents JS adapter: {@linkcode wrapAgentTools} puts the function tools of an
 * `@openai/agents` `Agent` under hookscope's session decisions (deny as the tool output, rewritten
 * arguments, ask as the SDK's `needsApproval` interruption, resumable from a serialized
 * `RunState` in another process), and {@linkcode answerApproval} answers an interruption and
 * records the answer. Needs the `@openai/agents` package (an optional peer; Node >= 22).
 *
 * @example
 * ```ts
 * import { wrapAgentTools } from "@hookscope/core/openai-agents";
 * import { Session } from "@hookscope/core";
 * import { Agent } from "@openai/agents";
 * import assert from "node:assert/strict";
 *
 * const agent = wrapAgentTools(new Agent({ name: "helper" }), { session: new Session() });
 * assert.equal(agent.name, "helper");
 * ```
 *
 * @module
 */

export {
  type AgentLike,
  answerApproval,
  type ApprovalItemLike,
  type RunStateLike,
  wrapAgentTools,
  type WrapAgentToolsOptions,
} from "./wrap_agent_tools.ts";
