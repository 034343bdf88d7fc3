/**
 * The `reader` tool: read a file with line numbers (offset and limit) or list a directory.
 *
 * @module
 */

import { z } from "zod";
import { Tool } from "../tool.ts";
import { type CodingResult, failure, looksBinary, toFailure } from "./_results.ts";
import { digestOf, type Workspace, WorkspaceError } from "./_workspace.ts";

/** The default number of lines `read` returns. */
export const DEFAULT_READ_LIMIT = 2000;
/** The largest file `read` loads, in bytes (larger files are refused, not loaded). */
export const MAX_READ_BYTES = 10_000_000;
/** The most entries `list_dir` returns (the first ones in name order). */
export const MAX_LIST_ENTRIES = 1000;

const request = z.object({
  action: z.enum(["read", "list_dir"]).describe("read a file or list a directory"),
  path: z.string().describe("path relative to the workspace root"),
  offset: z.number().int().min(0).optional().describe("first line to return, 0-based"),
  limit: z.number().int().min(1).optional().describe("how many lines to return (default 2000)"),
});

/** Makes the reader tool over a workspace. */
export function readerTool(workspace: Workspace): Tool {
  return new Tool({
    name: "reader",
    description:
      "Read a text file with line numbers (action read, optional offset and limit) or list a directory (action list_dir). Paths are relative to the workspace root.",
    inputSchema: request,
    execute: async (args): Promise<CodingResult> => {
      const { action, path: raw } = args as z.infer<typeof request>;
      if (raw === "") return failure("'path' is required");
      try {
        const path = await workspace.resolve(raw);
        if (action === "list_dir") {
          const entries = await workspace.readDirectory(path, raw);
          const all = entries
            .map((entry) => entry.isDirectory() ? `${entry.name}/` : entry.name)
            .sort();
          const names = all.length > MAX_LIST_ENTRIES ? all.slice(0, MAX_LIST_ENTRIES) : all;
          return {
            success: true,
            path: workspace.relative(path),
            entries: names,
            content: names.join("\n"),
            ...(names.length < all.length ? { totalEntries: all.length, truncated: true } : {}),
          };
        }
        // Opened without following symlinks and checked by descriptor: a file swapped for a
        // symlink (or a hard link) between the path check and the open is refused, not read.
        const handle = await workspace.openFile(path, raw, "read");
        let bytes: Uint8Array;
        let info;
        try {
          info = await handle.stat();
          if (info.size > MAX_READ_BYTES) {
            return failure(
              `File too large to read: ${raw} (${info.size} bytes; at most ${MAX_READ_BYTES})`,
            );
          }
          bytes = await handle.readFile();
        } finally {
          await handle.close();
        }
        if (looksBinary(bytes)) return failure(`Binary file not supported: ${raw}`);
        // Record the state seen before reading: a change racing the read then counts as a change.
        workspace.reads.set(path, {
          mtimeMs: info.mtimeMs,
          size: info.size,
          digest: await digestOf(bytes),
        });
        const text = new TextDecoder().decode(bytes);
        const lines = text === "" ? [] : text.replace(/\n$/, "").split("\n");
        const offset = args.offset as number | undefined ?? 0;
        const limit = args.limit as number | undefined ?? DEFAULT_READ_LIMIT;
        const shown = lines.slice(offset, offset + limit);
        return {
          success: true,
          path: workspace.relative(path),
          content: shown.map((line, i) => `${offset + i + 1}\t${line}`).join("\n"),
          totalLines: lines.length,
          offset,
          shown: shown.length,
        };
      } catch (error) {
        if (error instanceof WorkspaceError && error.message.startsWith("Is a directory")) {
          return failure(`${error.message} (use list_dir)`);
        }
        return toFailure(error, raw);
      }
    },
  });
}
