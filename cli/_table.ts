/**
 * Plain-text tables for the terminal.
 *
 * @module
 */

import { visible } from "./_output.ts";

/**
 * Renders rows as left-aligned columns under a header; cells are cut to `maxWidth`. Control
 * characters and bidirectional overrides in a cell are shown escaped ({@linkcode visible}).
 */
export function renderTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  maxWidth = 80,
): string {
  const cut = (cell: string) => {
    const flat = visible(cell.replace(/[ \t\n]+/g, " ")).replace(/\s+/g, " ");
    return flat.length > maxWidth ? `${flat.slice(0, maxWidth - 1)}…` : flat;
  };
  const cells = [header.map(cut), ...rows.map((row) => row.map(cut))];
  const widths = header.map((_, i) => Math.max(...cells.map((row) => (row[i] ?? "").length)));
  return cells
    .map((row) => row.map((cell, i) => cell.padEnd(widths[i])).join("  ").trimEnd())
    .join("\n");
}
