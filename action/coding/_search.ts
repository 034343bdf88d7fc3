/**
 * The `search` tool: grep (RegExp over file lines) and find (by name), walking the workspace in
 * TypeScript — no external grep, symlinks not followed.
 *
 * @module
 */

import { readdir, readFile, stat } from "node:fs/promises";
import { z } from "zod";
import { globMatcher, hasGlobChars } from "../_path.ts";
import { isProtectedBasename } from "../guards.ts";
import { Tool } from "../tool.ts";
import { type CodingResult, failure, looksBinary, toFailure } from "./_results.ts";
import { compileLinearRegex } from "./_linear_regex.ts";
import { unsafeRegexReason } from "./_safe_regex.ts";
import type { Workspace } from "./_workspace.ts";

/** Directories the walk skips. */
export const SKIPPED_DIRECTORIES: readonly string[] = [".git", "node_modules"];
const MAX_FILE_BYTES = 5_000_000;
const MAX_LINE_CHARS = 500;
/**
 * How much of one line grep matches against. Backtracking costs grow with the square (or a
 * higher power) of the line length, so a minified bundle's megabyte-long line would stall the
 * process even for an innocent pattern like `import.*from`.
 */
export const MAX_MATCH_CHARS = 10_000;
/** How long one search may walk and match before it stops with partial results, in ms. */
export const SEARCH_TIME_BUDGET_MS = 20_000;

const request = z.object({
  action: z.enum(["grep", "find"]).describe("grep file contents or find files by name"),
  pattern: z.string().describe(
    "grep: a JavaScript regular expression; find: a name glob or substring",
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

async function* walk(root: string): AsyncGenerator<Entry> {
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
      entries = await readdir(dir, { withFileTypes: true });
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

function nameOf(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

/** Makes the search tool over a workspace. */
export function searchTool(workspace: Workspace): Tool {
  return new Tool({
    name: "search",
    description:
      "Search the workspace: grep (regular expression over lines, optional include glob) or find (files and directories by name glob or substring).",
    requestOptions: request,
    func: async (args): Promise<CodingResult> => {
      const input = args as z.infer<typeof request>;
      const raw = input.path ?? ".";
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
          for await (const entry of walk(base)) {
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
        let matches: (line: string) => boolean;
        let include: ((name: string) => boolean) | null;
        try {
          const regex = new RegExp(input.pattern);
          // A pattern that could backtrack for ages runs on the linear-time matcher; one that
          // matcher cannot run (backreferences, lookaround) is refused.
          const risk = unsafeRegexReason(input.pattern);
          if (risk) {
            const linear = compileLinearRegex(input.pattern);
            if (!linear) {
              return failure(
                `Invalid pattern: it could backtrack too long (${risk}) and uses syntax the linear-time matcher lacks (backreferences, lookaround, named groups)`,
              );
            }
            matches = linear;
          } else {
            matches = (line) => regex.test(line);
          }
          include = input.include ? globMatcher(input.include) : null;
        } catch (error) {
          return failure(`Invalid pattern: ${(error as Error).message}`);
        }
        const limit = input.maxResults ?? 50;
        const lines: string[] = [];
        let total = 0;
        let timedOut = false;
        walking: for await (const entry of walk(base)) {
          if (entry.directory) continue;
          if (include && !include(nameOf(entry.path))) continue;
          // The reader refuses protected files (.env, id_rsa, …); grep must not read them either.
          if (isProtectedBasename(nameOf(entry.path))) continue;
          const info = await stat(entry.path).catch(() => null);
          if (!info || info.size > MAX_FILE_BYTES) continue;
          const bytes = await readFile(entry.path).catch(() => null);
          if (!bytes || looksBinary(bytes)) continue;
          const text = new TextDecoder().decode(bytes).split("\n");
          // A final newline ends the last line; it does not start an empty one (as in grep).
          if (text.length > 1 && text[text.length - 1] === "") text.pop();
          const rel = workspace.relative(entry.path);
          for (let i = 0; i < text.length; i++) {
            if (Date.now() > deadline) {
              timedOut = true;
              break walking;
            }
            const line = text[i];
            if (
              !matches(line.length > MAX_MATCH_CHARS ? line.slice(0, MAX_MATCH_CHARS) : line)
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
