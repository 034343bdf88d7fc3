/**
 * Tool-call arguments rendered for a person who decides on them: every argument, whole, wrapped
 * to the terminal width. A long value is folded with an explicit marker that says how much was
 * left out and how to see it all, and always shows its head AND its tail (a trailing
 * `# -delete` after padding stays visible); a long run of blanks is folded the same way.
 *
 * @module
 */

import { cutText, renderJson } from "../core/json_safe.ts";
import { visible } from "./_output.ts";

/** How a rendering is folded. */
export interface FoldOptions {
  /** Show everything, unfolded (still wrapped). */
  full?: boolean;
  /** The command that shows everything, named in each marker (`hookscope pending DB --full`). */
  hint: string;
  /** Wrap at this many columns (default 100). */
  width?: number;
  /** Indent of every line (default four spaces). */
  indent?: string;
}

const MARK = "… [folded";

/** Values longer than this are folded (head and tail kept). */
const FOLD_AT = 1200;
/** Characters kept at each end of a folded value. */
const KEEP = 400;
/** A run of this many blanks (spaces, tabs, escaped line breaks) or more is folded. */
const BLANK_RUN = 16;

/**
 * `text` folded for a person: runs of 16+ blanks and the middle of a text longer than 1200
 * characters replaced by `… [folded N …; hint] …` (head and tail kept); unchanged with `full`.
 */
export function fold(text: string, options: FoldOptions): string {
  if (options.full) return text;
  // Each marker stands on a line of its own (a lone space or tab in a line is still visible).
  const marker = (what: string) => `\n${MARK} ${what}; ${options.hint}] …\n`;
  const out = text.replace(
    new RegExp(`(?:[ \\t]|\\\\[nrt]){${BLANK_RUN},}`, "g"),
    (run) => marker(`${run.length} blank chars`),
  );
  if (out.length <= FOLD_AT) return out;
  // Head and tail never end inside a marker line (JSON text itself has no line breaks).
  let headEnd = cutText(out, KEEP).length;
  if ((out.slice(0, headEnd).split("\n").length - 1) % 2 === 1) {
    headEnd = out.lastIndexOf("\n", headEnd - 1);
  }
  let tailStart = out.length - KEEP;
  if (/[\udc00-\udfff]/.test(out[tailStart] ?? "")) tailStart += 1;
  if ((out.slice(tailStart).split("\n").length - 1) % 2 === 1) {
    tailStart = out.indexOf("\n", tailStart) + 1;
  }
  // What the middle marker stands for, in characters of the value (blank runs folded inside the
  // middle counted at their length).
  const middle = out.slice(headEnd, tailStart);
  let omitted = middle.replace(/\n[^\n]*\n/g, "").length;
  for (const [, n] of middle.matchAll(/\n… \[folded (\d+) blank chars;/g)) omitted += Number(n);
  return `${out.slice(0, headEnd)}${marker(`${omitted} chars`)}${out.slice(tailStart)}`
    .replace(/\n\n/g, "\n");
}

function wrap(text: string, width: number, indent: string): string[] {
  const room = Math.max(20, width - indent.length);
  const lines: string[] = [];
  for (let i = 0; i < text.length; i += room) lines.push(indent + text.slice(i, i + room));
  return lines.length ? lines : [indent];
}

/** A value as compact JSON (a safe rendering when JSON cannot hold it). */
export function encode(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  try {
    const json = JSON.stringify(value);
    if (typeof json === "string") return json;
  } catch {
    // cycles or BigInt: the safe rendering below
  }
  return renderJson(value);
}

/**
 * The lines showing `args`: one `name: value` entry per argument (values JSON-encoded, so line
 * breaks and quotes are visible), each wrapped at `width`, long values folded unless `full`.
 * Control characters and bidirectional overrides are escaped.
 */
export function renderArgs(args: unknown, options: FoldOptions): string[] {
  const width = options.width ?? 100;
  const indent = options.indent ?? "    ";
  const entries: [string, unknown][] = args !== null && typeof args === "object" &&
      !Array.isArray(args)
    ? Object.entries(args)
    : [["(arguments)", args]];
  if (entries.length === 0) return [`${indent}(no arguments)`];
  const lines: string[] = [];
  for (const [name, value] of entries) {
    const text = visible(`${JSON.stringify(name)}: ${fold(encode(value), options)}`);
    for (const part of text.split("\n")) {
      // A marker is never cut; everything else wraps at the width.
      lines.push(...(part.startsWith(MARK) ? [indent + part] : wrap(part, width, indent)));
    }
  }
  return lines;
}
