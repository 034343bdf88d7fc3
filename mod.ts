/**
 * hookscope: the hook system LLM-agent frameworks need, in three scopes that each own their
 * control path:
 *
 * - **Session scope** (`./hooks`, `./session`): `HookBus` ordered, awaited dispatch with
 *   `StopHook` and a blocking `tool.pre`, recording `HookSignal`s into a `SessionObserver`.
 * - **Service scope** (`./service`): a per-model `HookRegistry` around each provider call, with
 *   deadlines, exit/cancel status and per-chunk stream handlers. Needs no Session.
 * - **Tool scope** (`./action`): per-Tool preprocessors/postprocessors, `AgentSpec` hook chains
 *   and security guards.
 *
 * This entry uses only web-standard APIs; runtime-specific code lives behind `./coding`,
 * `./store/sqlite` and `./cli`.
 *
 * @example Ordered Session hooks
 * ```ts
 * import { HookBus, StopHook } from "@hookscope/core";
 * import assert from "node:assert/strict";
 *
 * const bus = new HookBus();
 * const seen: string[] = [];
 * bus.on("tool.pre", ({ toolName }) => { seen.push(`guard ${toolName}`); });
 * bus.on("tool.pre", () => { throw new StopHook(); });
 * bus.on("tool.pre", () => { seen.push("never"); });
 * await bus.emit("tool.pre", { toolName: "bash", callId: "c1", args: {}, argsSummary: "{}" });
 * assert.deepEqual(seen, ["guard bash"]);
 * ```
 *
 * @module
 */

export * from "./core/mod.ts";
export * from "./hooks/mod.ts";
export * from "./service/mod.ts";
export * from "./action/mod.ts";
export * from "./store/mod.ts";
export * from "./session/mod.ts";
