/**
 * Built-in Session hook handlers for logging. Each rejects when a required payload key is
 * missing. (The persistence handlers live in `session/`: see `persistMessage`.)
 *
 * @module
 */

import { logger } from "../core/logger.ts";
import type { HookPayloads } from "./hook_point.ts";

function requireString(payload: unknown, key: string, handler: string): string {
  const value = payload !== null && typeof payload === "object"
    ? (payload as Record<string, unknown>)[key]
    : undefined;
  if (typeof value !== "string" || value.length === 0) {
    throw new TypeError(`Cannot run ${handler}: payload needs a non-empty string "${key}"`);
  }
  return value;
}

/**
 * Logs one `api.post_call` line at info level: model, provider, total tokens, latency.
 *
 * @example
 * ```ts
 * import { HookBus } from "@hookscope/core";
 * import { logApiMetrics, logger, type LogRecord } from "@hookscope/core/hooks";
 * import assert from "node:assert/strict";
 *
 * const lines: LogRecord[] = [];
 * logger.configure({ level: "info", sink: (r) => lines.push(r) });
 * const bus = new HookBus();
 * bus.on("api.post_call", logApiMetrics);
 * await bus.emit("api.post_call", { model: "m", provider: "p", status: "completed", latencyMs: 12, tokens: { total: 30 } });
 * logger.configure({ level: "silent", sink: null });
 * assert.equal(lines[0].message, "api.post_call model=m provider=p tokens=30 latency_ms=12");
 * ```
 */
export function logApiMetrics(payload: HookPayloads["api.post_call"]): void {
  const p = (payload ?? {}) as Record<string, unknown>;
  const tokens = p.tokens as { total?: unknown } | null | undefined;
  const parts = [`api.post_call model=${String(p.model)}`, `provider=${String(p.provider)}`];
  if (tokens && tokens.total !== undefined) parts.push(`tokens=${String(tokens.total)}`);
  parts.push(`latency_ms=${String(p.latencyMs)}`);
  logger.info(parts.join(" "), payload);
}

/**
 * Logs a tool call at info level: tool, action, and the argument keys (or the summary).
 *
 * @example
 * ```ts
 * import { HookBus } from "@hookscope/core";
 * import { logToolCall } from "@hookscope/core/hooks";
 * import assert from "node:assert/strict";
 *
 * const bus = new HookBus();
 * bus.on("tool.pre", logToolCall);
 * await bus.emit("tool.pre", {
 *   toolName: "reader", callId: "c1", args: {}, argsSummary: "{}",
 *   signal: new AbortController().signal, source: { kind: "local" },
 * });
 * assert.equal(bus.handlersFor("tool.pre").length, 1);
 * ```
 */
export function logToolCall(payload: Record<string, unknown>): void {
  const toolName = requireString(payload, "toolName", "logToolCall");
  const args = payload.args;
  const action = typeof payload.action === "string"
    ? payload.action
    : args && typeof args === "object" &&
        typeof (args as Record<string, unknown>).action === "string"
    ? (args as Record<string, unknown>).action
    : "";
  const rendered = args && typeof args === "object"
    ? `[${Object.keys(args).join(", ")}]`
    : String(payload.argsSummary ?? "");
  logger.info(`tool.pre tool=${toolName} action=${String(action)} args=${rendered}`, payload);
}
