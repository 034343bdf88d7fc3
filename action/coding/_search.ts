/**
 * The `search` tool: grep (a linear-time RE2 regular expression over file lines, from the
 * `re2js` package) and find (by name), walking the workspace in TypeScript — no external grep,
 * symlinks not followed, every file and directory opened race-free and checked by descriptor,
 * hard-linked and protected files skipped.
 *
 * @module
 */

import { RE2JS } from "re2js";
import { z } from "zod";
import { globMatcher, hasGlobChars } from "../_path.ts";
import { isProtectedBasename } from "../guards.ts";
import { Tool } from "../tool.ts";
import { type CodingResult, failure, looksBinary, toFailure } from "./_results.ts";
import { type Workspace, WorkspaceError } from "./_workspace.ts";
import { stat } from "node:fs/promises";

/** Directories the walk skips. */
export const SKIPPED_DIRECTORIES: readonly string[] = [".git", "node_modules"];
const MAX_FILE_BYTES = 5_000_000;
const MAX_LINE_CHARS = 500;
/**
 * How much of one line grep matches against. The RE2 engine is linear in the line length, but
 * with a factor that grows with the pattern's size, so one megabyte-long minified line would
 * still take long between two checks of the time budget.
 */
export const MAX_MATCH_CHARS = 10_000;
/**
 * The largest compiled pattern (RE2 program instructions) grep runs: matching costs at most
 * about this many steps per character, so a pattern like `(?:a?){1000}a{1000}` is refused
 * instead of taking seconds per line.
 */
export const MAX_PATTERN_PROGRAM = 2_500;
/**
 * The matching work one line may cost, in program instructions times characters: a pattern
 * larger than 200 instructions matches a correspondingly shorter prefix of each line (at least
 * 1 000 characters), so no single line blocks the process for long.
 */
export const MATCH_STEP_BUDGET = 2_000_000;
/** How long grep matches before it lets other work run (a macrotask turn), in ms. */
const YIELD_EVERY_MS = 25;

/** Why a grep pattern was refused: RE2 syntax error, unsupported JS syntax, or too large. */
export type PatternErrorKind = "syntax" | "unsupported" | "too_complex";

/** A compiled grep pattern, or why it cannot run. */
export function compileGrepPattern(
  pattern: string,
):
  | { test: (line: string) => boolean; maxChars: number }
  | { kind: PatternErrorKind; error: string } {
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(pattern);
  } catch (error) {
    const message = (error as Error)?.message ?? String(error);
    const unsupported = /\\[1-9]|\\k<|\(\?<?[=!]/.test(pattern) ||
      /invalid escape sequence: `\\[1-9k]|unsupported Perl syntax|invalid or unsupported/.test(
        message,
      );
    return unsupported
      ? {
        kind: "unsupported",
        error:
          `Unsupported pattern: ${message}. grep uses RE2 syntax (linear time): no backreferences (\\1, \\k<name>) and no lookaround ((?=…), (?!…), (?<=…), (?<!…))`,
      }
      : { kind: "syntax", error: `Invalid pattern: ${message}` };
  }
  const size = compiled.programSize();
  if (size > MAX_PATTERN_PROGRAM) {
    return {
      kind: "too_complex",
      error:
        `Pattern too complex: it compiles to ${size} instructions (at most ${MAX_PATTERN_PROGRAM}); use smaller repeat counts`,
    };
  }
  const maxChars = Math.max(1000, Math.min(MAX_MATCH_CHARS, Math.floor(MATCH_STEP_BUDGET / size)));
  return { test: (line) => compiled.test(line), maxChars };
}
/** How long one search may walk and match before it stops with partial results, in ms. */
export const SEARCH_TIME_BUDGET_MS = 20_000;

const request = z.object({
  action: z.enum(["grep", "find"]).describe("grep file contents or find files by name"),
  pattern: z.string().describe(
    "grep: a regular expression in RE2 syntax (no backreferences or lookaround); find: a name glob or substring",
  ),
  path: z.string().optional().describe(
    "where to search, relative to the workspace root (default .)",
  ),
  include: z.string().optional().describe("grep: only files whose name matches this glob"),
  maxResults: z.number().int().min(1).optional().describe("grep default 50, find default 100"),
});

interface Entry {
  path: string;
  directory: boolean;
}

async function* walk(workspace: Workspace, root: string): AsyncGenerator<Entry> {
  const info = await stat(root);
  if (!info.isDirectory()) {
    // Only a regular file: reading a FIFO or a device would block or never end.
    if (info.isFile()) yield { path: root, directory: false };
    return;
  }
  const stack = [root];
  while (stack.length) {
    const dir = stack.pop() as string;
    let entries;
    try {
      // Opened without following symlinks and checked by descriptor: a directory swapped for
      // a symlink after it was listed is never entered.
      entries = await workspace.readDirectory(dir, workspace.relative(dir));
    } catch {
      continue;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const subdirs: string[] = [];
    for (const entry of entries) {
      const path = `${dir === "/" ? "" : dir}/${entry.name}`;
      if (entry.isSymbolicLink()) continue;
      if (entry.isDirectory()) {
        if (SKIPPED_DIRECTORIES.includes(entry.name)) continue;
        yield { path, directory: true };
        subdirs.push(path);
      } else if (entry.isFile()) {
        yield { path, directory: false };
      }
    }
    for (let i = subdirs.length - 1; i >= 0; i--) stack.push(subdirs[i]);
  }
}

/** The file's bytes, or `null` when it is skipped (protected, hard-linked, swapped, too big). */
async function readForGrep(workspace: Workspace, path: string): Promise<Uint8Array | null> {
  // The reader refuses protected files (.env, .env.local, id_rsa, *.pem, …); grep must not read
  // them either, under the name listed or the name the file really has.
  if (isProtectedBasename(nameOf(path))) return null;
  let handle;
  try {
    handle = await workspace.openFile(path, workspace.relative(path), "read");
  } catch (error) {
    if (error instanceof WorkspaceError) return null;
    const code = (error as { code?: unknown })?.code;
    if (typeof code === "string") return null;
    throw error;
  }
  try {
    const info = await handle.stat();
    if (info.size > MAX_FILE_BYTES) return null;
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

function nameOf(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

/** Makes the search tool over a workspace. */
export function searchTool(workspace: Workspace): Tool {
  return new Tool({
    name: "search",
    description:
      "Search the workspace: grep (regular expression over lines, optional include glob) or find (files and directories by name glob or substring).",
    inputSchema: request,
    execute: async (args, context?: { signal?: AbortSignal }): Promise<CodingResult> => {
      const input = args as z.infer<typeof request>;
      const raw = input.path ?? ".";
      const signal = context?.signal;
      if (input.pattern === "") return failure("'pattern' is required");
      const deadline = Date.now() + SEARCH_TIME_BUDGET_MS;
      try {
        const base = await workspace.resolve(raw === "" ? "." : raw);
        if (input.action === "find") {
          const limit = input.maxResults ?? 100;
          let glob: ((name: string) => boolean) | null;
          try {
            glob = hasGlobChars(input.pattern) ? globMatcher(input.pattern) : null;
          } catch (error) {
            return failure(`Invalid pattern: ${(error as Error).message}`);
          }
          const match = (name: string) => glob ? glob(name) : name.includes(input.pattern);
          const found: string[] = [];
          let total = 0;
          let timedOut = false;
          for await (const entry of walk(workspace, base)) {
            if (Date.now() > deadline) {
              timedOut = true;
              break;
            }
            if (entry.path === base || !match(nameOf(entry.path))) continue;
            total++;
            if (found.length < limit) {
              found.push(workspace.relative(entry.path) + (entry.directory ? "/" : ""));
            }
          }
          return {
            success: true,
            content: found.join("\n"),
            totalFound: total,
            shown: found.length,
            ...(timedOut ? { timedOut: true } : {}),
          };
        }

        let include: ((name: string) => boolean) | null;
        // RE2 (linear time): no pattern can stall the process the way a backtracking RegExp
        // can; JavaScript-only syntax (backreferences, lookaround) is refused with its kind.
        const compiled = compileGrepPattern(input.pattern);
        if ("error" in compiled) return failure(compiled.error, { patternError: compiled.kind });
        const matches = compiled.test;
        const maxChars = compiled.maxChars;
        let lastYield = Date.now();
        try {
          include = input.include ? globMatcher(input.include) : null;
        } catch (error) {
          return failure(`Invalid pattern: ${(error as Error).message}`);
        }
        const limit = input.maxResults ?? 50;
        const lines: string[] = [];
        let total = 0;
        let timedOut = false;
        walking: for await (const entry of walk(workspace, base)) {
          if (entry.directory) continue;
          if (include && !include(nameOf(entry.path))) continue;
          const bytes = await readForGrep(workspace, entry.path);
          if (!bytes || looksBinary(bytes)) continue;
          const text = new TextDecoder().decode(bytes).split("\n");
          // A final newline ends the last line; it does not start an empty one (as in grep).
          if (text.length > 1 && text[text.length - 1] === "") text.pop();
          const rel = workspace.relative(entry.path);
          for (let i = 0; i < text.length; i++) {
            const now = Date.now();
            if (now > deadline || signal?.aborted) {
              timedOut = true;
              break walking;
            }
            if (now - lastYield > YIELD_EVERY_MS) {
              // Let timers, I/O and aborts run: one search never holds the process.
              await new Promise((resolve) => setTimeout(resolve, 0));
              lastYield = Date.now();
            }
            const line = text[i];
            if (
              !matches(line.length > maxChars ? line.slice(0, maxChars) : line)
            ) {
              continue;
            }
            total++;
            if (lines.length < limit) {
              const shown = line.length > MAX_LINE_CHARS
                ? `${line.slice(0, MAX_LINE_CHARS)}…`
                : line;
              lines.push(`${rel}:${i + 1}:${shown}`);
            }
          }
        }
        return {
          success: true,
          content: lines.join("\n"),
          totalMatches: total,
          shown: lines.length,
          ...(timedOut ? { timedOut: true } : {}),
        };
      } catch (error) {
        return toFailure(error, raw);
      }
    },
  });
}
