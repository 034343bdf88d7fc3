// A tool call's arguments parsed once, where the model's answer enters (an endpoint's answer, a
// streamed tool call, a stored run): the object the act path gets, or why there is none.

import { assertDepth } from "../core/_depth.ts";

/** Parsed arguments, or the reason they are unusable (the model is told it). */
export type ParsedArguments =
  | { readonly args: Record<string, unknown>; readonly error?: undefined }
  | { readonly args: null; readonly error: string };

/**
 * Parses a tool call's arguments: JSON text (empty or absent is `{}`), or an object some servers
 * send instead of text (used as sent). Anything that is not a JSON object nested at most
 * `MAX_PAYLOAD_DEPTH` levels is refused with a reason.
 */
export function parseToolArguments(value: unknown, toolName: string): ParsedArguments {
  try {
    const parsed = typeof value === "string"
      ? JSON.parse(value || "{}")
      : value === undefined || value === null
      ? {}
      : value;
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
      throw new TypeError("arguments must be a JSON object");
    }
    assertDepth(parsed, `tool ${JSON.stringify(toolName)} arguments`);
    return { args: parsed as Record<string, unknown> };
  } catch (error) {
    return { args: null, error: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * Arguments as JSON text for the record of a call (a stored run, a `tool_call` event): text as
 * sent, `{}` when absent, the JSON of anything else.
 */
export function argumentsText(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === undefined || value === null) return "{}";
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
