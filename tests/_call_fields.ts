// The fields every `tool.*` payload carries besides the call: the call's signal and the tool's
// source. Tests that emit a `tool.*` point by hand spread them in: `{ ...CALL, toolName, … }`.

import type { ToolSource } from "../core/tool_source.ts";

/** A never-aborted signal and a local source. */
export const CALL: { readonly signal: AbortSignal; readonly source: ToolSource } = {
  signal: new AbortController().signal,
  source: { kind: "local" },
};
