/**
 * The `editor` tool: write a file or replace one exact occurrence of a string, refusing to
 * overwrite a file that was not read since its last change.
 *
 * @module
 */

import { type FileHandle, lstat, mkdir } from "node:fs/promises";
import { z } from "zod";
import { parentPath } from "../_path.ts";
import { Tool } from "../tool.ts";
import { type CodingResult, failure, toFailure } from "./_results.ts";
import { digestOf, type Workspace } from "./_workspace.ts";

const request = z.object({
  action: z.enum(["write", "edit"]).describe("write a whole file or edit one occurrence"),
  filePath: z.string().describe("path relative to the workspace root"),
  content: z.string().optional().describe("the new file content (write)"),
  oldString: z.string().optional().describe("the exact text to replace (edit)"),
  newString: z.string().optional().describe("the replacement (edit)"),
  replaceAll: z.boolean().optional().describe("replace every occurrence (edit)"),
});

/**
 * The file's current bytes (read through the open descriptor) when it is unchanged since the
 * last read or write, otherwise the refusal. Unchanged means same mtime, size and digest.
 */
async function checkFresh(
  workspace: Workspace,
  path: string,
  raw: string,
  handle: FileHandle,
): Promise<{ error: string } | { bytes: Uint8Array }> {
  const record = workspace.reads.get(path);
  if (!record) return { error: `Must read file before editing: ${raw}` };
  const changed = { error: `File changed since last read: ${raw}. Read it again.` };
  const info = await handle.stat();
  if (info.mtimeMs !== record.mtimeMs || info.size !== record.size) return changed;
  const bytes = await handle.readFile();
  if (await digestOf(bytes) !== record.digest) return changed;
  return { bytes };
}

/** Replaces the whole content of the open file with `bytes`. */
async function overwrite(handle: FileHandle, bytes: Uint8Array): Promise<void> {
  await handle.truncate(0);
  let offset = 0;
  while (offset < bytes.byteLength) {
    const { bytesWritten } = await handle.write(bytes, offset, bytes.byteLength - offset, offset);
    offset += bytesWritten;
  }
}

function countOccurrences(text: string, needle: string): number {
  let count = 0;
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) count++;
  return count;
}

/** Makes the editor tool over a workspace. */
export function editorTool(workspace: Workspace): Tool {
  return new Tool({
    name: "editor",
    description:
      "Write a file (action write, content) or replace an exact string in it (action edit, oldString, newString, replaceAll). An existing file must be read first and unchanged since.",
    inputSchema: request,
    execute: async (args): Promise<CodingResult> => {
      const input = args as z.infer<typeof request>;
      const raw = input.filePath;
      if (raw === "") return failure("'filePath' is required");
      try {
        const path = await workspace.resolve(raw);
        // lstat: the resolved path is symlink-free; whatever is there now is opened below
        // without following symlinks and checked by descriptor.
        const exists = await lstat(path).then((info) => info, () => null);
        if (exists?.isDirectory()) return failure(`Is a directory: ${raw}`);
        // Writing to or reading a FIFO, socket or device would block or never end.
        if (exists && !exists.isFile() && !exists.isSymbolicLink()) {
          return failure(`Not a regular file: ${raw}`);
        }
        // Writing through a hard link would change the same file wherever else it is linked,
        // possibly outside the workspace (`ln ~/.bashrc ws/x`), which no path check can see.
        if (exists && exists.nlink > 1) {
          return failure(`Refusing to modify a hard-linked file: ${raw} (${exists.nlink} links)`);
        }
        if (input.action === "write") {
          if (input.content === undefined) return failure("'content' is required for write");
          const written = new TextEncoder().encode(input.content);
          if (exists) {
            const handle = await workspace.openFile(path, raw, "update");
            try {
              const fresh = await checkFresh(workspace, path, raw, handle);
              if ("error" in fresh) return failure(fresh.error);
              await overwrite(handle, written);
              await workspace.remember(path, written, handle);
            } finally {
              await handle.close();
            }
            return {
              success: true,
              path: workspace.relative(path),
              bytes: written.byteLength,
              created: false,
            };
          }
          await mkdir(parentPath(path), { recursive: true });
          // The parent may only now exist: resolve again so a racing symlink cannot redirect us.
          const again = await workspace.resolve(raw);
          let handle: FileHandle;
          try {
            // A new file is created exclusively and without following a symlink: a file (or
            // symlink) that appeared since the check above is never overwritten or followed.
            handle = await workspace.openFile(again, raw, "create");
          } catch (error) {
            if ((error as { code?: unknown })?.code !== "EEXIST") throw error;
            return failure(`File appeared since it was checked: ${raw}. Read it first.`);
          }
          try {
            await overwrite(handle, written);
            await workspace.remember(again, written, handle);
          } finally {
            await handle.close();
          }
          return {
            success: true,
            path: workspace.relative(again),
            bytes: written.byteLength,
            created: true,
          };
        }
        if (input.oldString === undefined || input.newString === undefined) {
          return failure("'oldString' and 'newString' are required for edit");
        }
        if (input.oldString === "") return failure("'oldString' must not be empty");
        if (!exists) return failure(`File not found: ${raw}`);
        const handle = await workspace.openFile(path, raw, "update");
        try {
          const fresh = await checkFresh(workspace, path, raw, handle);
          if ("error" in fresh) return failure(fresh.error);
          const text = new TextDecoder().decode(fresh.bytes);
          const count = countOccurrences(text, input.oldString);
          if (count === 0) {
            return failure(
              `old_string not found in ${raw}. Check whitespace and line breaks; read the file again and copy the exact text.`,
            );
          }
          if (count > 1 && !input.replaceAll) {
            return failure(
              `old_string appears ${count} times in ${raw}; add surrounding context to make it unique or set replaceAll.`,
            );
          }
          const updated = input.replaceAll
            ? text.split(input.oldString).join(input.newString)
            : text.replace(input.oldString, () => input.newString as string);
          const encoded = new TextEncoder().encode(updated);
          await overwrite(handle, encoded);
          await workspace.remember(path, encoded, handle);
          return {
            success: true,
            path: workspace.relative(path),
            replacements: input.replaceAll ? count : 1,
          };
        } finally {
          await handle.close();
        }
      } catch (error) {
        return toFailure(error, raw);
      }
    },
  });
}
