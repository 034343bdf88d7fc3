// The default report of isolated failures (store writes, persistence, subscribers): each kind of
// failure is said loudly once, at error level through the library logger, or on the console
// when the logger is quiet; every failure is also logged at warn level. Never silent.

import { logger } from "../core/logger.ts";

/** Kinds already reported loudly in this process (bounded: a flood of new kinds stays quiet). */
const reported = new Set<string>();
const MAX_KINDS = 256;

function kindOf(error: unknown, where: string): string {
  const e = error as { name?: unknown; code?: unknown; cause?: { code?: unknown } } | null;
  const name = typeof e?.name === "string" ? e.name : typeof error;
  const code = e?.cause?.code ?? e?.code;
  if (typeof code === "string" || typeof code === "number") return `${where}|${name}|${code}`;
  const message = error instanceof Error ? error.message : String(error);
  // Numbers and quoted values (ids, paths) vary between failures of one kind.
  return `${where}|${name}|${message.replace(/"[^"]*"|\d+/g, "#").slice(0, 80)}`;
}

/**
 * Reports an isolated failure: loudly the first time its kind is seen, at warn level always.
 * `label` names the reporter ("Session", "Session observer").
 */
export function reportFailure(label: string, error: unknown, where: string): void {
  const kind = kindOf(error, where);
  const text = `${label} ${where} failed`;
  if (!reported.has(kind) && reported.size < MAX_KINDS) {
    reported.add(kind);
    const detail = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    const loud =
      `${text}: ${detail} (reported once per kind; pass onError to handle every failure)`;
    if (logger.enabled("error")) logger.error(loud, error);
    else console.error(`hookscope: ${loud}`);
    return;
  }
  logger.warn(text, error);
}
