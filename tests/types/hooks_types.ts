/**
 * Compile-time checks of the Session hook types: every `@ts-expect-error` line below is a typo
 * or a wrong shape that must NOT compile. CI runs `deno check` on this file; if a line starts to
 * compile (a regression that loosens a type), `deno check` fails with "Unused '@ts-expect-error'
 * directive". Nothing here runs: the checks live inside a function that is never called.
 *
 * @module
 */

import {
  type HookBus,
  type HookOptions,
  type HookPayloads,
  toHookPoint,
  type ToolPostDecision,
  type ToolPreDecision,
} from "../../hooks/mod.ts";
import type { ActOptions, Branch } from "../../session/mod.ts";
import { CALL } from "../_call_fields.ts";

/** Never called: the body only has to type-check. */
export function typeChecks(bus: HookBus, branch: Branch): void {
  // Hook points are literal types.
  // @ts-expect-error a misspelt point does not compile
  bus.on("tool.prre", () => {});
  // @ts-expect-error an upper-case name is not a point value
  bus.on("TOOL_PRE", () => {});
  // @ts-expect-error emit checks the point too
  void bus.emit("session.strat", { sessionId: "s" });
  // @ts-expect-error off checks the point too
  bus.off("message.ad", () => {});
  // @ts-expect-error an arbitrary string is not a point: go through toHookPoint()
  bus.on("tool." + "pre", () => {});
  // Strings from a config file go through the validated path.
  bus.on(toHookPoint("tool.pre"), () => {});

  // Payload fields are closed: a misspelt field does not compile.
  // @ts-expect-error toolname (lower-case n) is not a tool.pre field
  bus.on("tool.pre", ({ toolname }) => void toolname);
  // @ts-expect-error argSummary is not a field (argsSummary is)
  bus.on("tool.pre", ({ argSummary }) => void argSummary);
  // @ts-expect-error tool.post has result, not results
  bus.on("tool.post", ({ results }) => void results);
  // @ts-expect-error session.start has sessionId, not sessionID
  bus.on("session.start", ({ sessionID }) => void sessionID);
  // @ts-expect-error message.add has message, not msg
  bus.on("message.add", ({ msg }) => void msg);
  bus.on("tool.pre", ({ toolName, args, argsSummary, callId }) => {
    void [toolName, args.command, argsSummary, callId];
  });

  // Emitted payloads must be complete.
  // @ts-expect-error callId, args and argsSummary are missing
  void bus.emit("tool.pre", { ...CALL, toolName: "x" });
  // @ts-expect-error result is missing from tool.post
  void bus.emit("tool.post", {
    ...CALL,
    toolName: "x",
    callId: "c",
    args: {},
    resultSummary: "",
    durationMs: 1,
  });
  // @ts-expect-error an extra misspelt key in a literal payload
  void bus.emit("session.end", { sessionId: "s", stauts: "done" });

  // Decisions are typed.
  // @ts-expect-error "block" is not a decision
  const wrongDecision: ToolPreDecision = { decision: "block", reason: "no" };
  // @ts-expect-error a deny needs a reason
  const denyWithoutReason: ToolPreDecision = { decision: "deny" };
  // @ts-expect-error updatedArgs must be an object
  const badArgs: ToolPreDecision = { decision: "allow", updatedArgs: "x" };
  // @ts-expect-error ask has no context field
  const askContext: ToolPreDecision = { decision: "ask", context: "c" };
  // @ts-expect-error updatedResults is not a tool.post decision field
  const postTypo: ToolPostDecision = { updatedResults: 1 };
  void [wrongDecision, denyWithoutReason, badArgs, askContext, postTypo];

  // Hook options are typed.
  // @ts-expect-error priorty is misspelt
  bus.on("tool.pre", () => {}, { priorty: 1 });
  // @ts-expect-error onFailure is "continue" or "block"
  const badFailure: HookOptions = { onFailure: "ignore" };
  // @ts-expect-error mode is "enforce" or "shadow"
  const badMode: HookOptions = { mode: "dry-run" };
  void [badFailure, badMode];

  // act options are typed.
  // @ts-expect-error timeout is misspelt (timeoutMs)
  const badAct: ActOptions = { timeout: 5 };
  void badAct;
  void branch.act({ function: "t", arguments: {} }, { timeoutMs: 5, approve: () => true });

  // Payload type of one point, by name.
  // @ts-expect-error not a point of HookPayloads
  type Nope = HookPayloads["tool.prre"];
  const nope: Nope | undefined = undefined;
  void nope;
}
