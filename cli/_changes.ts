/**
 * How the CLI prints a change set (a staged run's effects): one line per entry.
 *
 * @module
 */

import type { ApprovalChange } from "../core/approval.ts";

/** One change-set entry as the CLI reads it from a store row. */
export type ChangeLike = ApprovalChange;

function bytes(value: number | undefined): string | undefined {
  return typeof value === "number" ? `${value} B` : undefined;
}

/** `deleted victim/file (file, 180 B)`, `modified a.ts (10 B → 12 B)`, `symlink l -> /etc`. */
export function changeLine(change: ChangeLike): string {
  const target = change.kind === "symlink" && typeof change.target === "string"
    ? ` -> ${change.target}`
    : "";
  const before = bytes(change.bytesBefore);
  const after = bytes(change.bytesAfter);
  const size = before !== undefined && after !== undefined
    ? `${before} → ${after}`
    : before ?? after;
  const detail = [change.type, size].filter((part) => part !== undefined).join(", ");
  return `${change.kind} ${change.path}${target}${detail ? ` (${detail})` : ""}`;
}

/** The entries as lines, with a line for those not shown (`count` is the total). */
export function changeLines(
  changes: readonly ChangeLike[],
  count: number,
  indent = "    ",
): string[] {
  const lines = changes.map((change) => `${indent}${changeLine(change)}`);
  if (count > changes.length) lines.push(`${indent}… ${count - changes.length} more`);
  return lines;
}
