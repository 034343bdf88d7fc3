/**
 * `hookscope points`: the hook point catalogue with its wiring status.
 *
 * @module
 */

import { HOOK_POINT_WIRING, HOOK_POINTS } from "../hooks/mod.ts";
import { flagHelp, type FlagSpec, parseFlags } from "./_args.ts";
import type { CliIO } from "./_output.ts";
import { renderTable } from "./_table.ts";

const FLAGS: Record<string, FlagSpec> = { json: { type: "boolean", help: "print JSON" } };

/** Help text for `hookscope points`. */
export const POINTS_HELP: string = `Usage: hookscope points [--json]

Lists the twelve Session hook points, whether production code emits them, whether a throwing
handler blocks the operation, and the emit site.

${flagHelp(FLAGS)}`;

/** Runs `hookscope points`; returns the exit code. */
export function pointsCommand(args: readonly string[], io: CliIO): number {
  const { values, positionals } = parseFlags("points", args, FLAGS);
  if (values.help) {
    io.out(POINTS_HELP);
    return 0;
  }
  if (positionals.length > 0) {
    io.err(`hookscope points: unexpected argument "${positionals[0]}"`);
    return 2;
  }
  const rows = HOOK_POINTS.map((point) => ({ point, ...HOOK_POINT_WIRING[point] }));
  if (values.json) {
    io.out(JSON.stringify(rows, null, 2));
    return 0;
  }
  io.out(renderTable(
    ["POINT", "WIRED", "BLOCKING", "SOURCE"],
    rows.map((r) => [r.point, r.wired ? "yes" : "no", r.blocking ? "yes" : "no", r.source]),
    100,
  ));
  return 0;
}
