/**
 * `autoFormat`: a post hook that pipes a written file through a formatter subprocess (argv, no
 * shell, stdin → stdout, 10 000 ms deadline) and writes the result back.
 *
 * @module
 */

import { lstat, readFile, realpath, stat, writeFile } from "node:fs/promises";
import process from "node:process";
import { isInside, resolvePath } from "../_path.ts";
import type { PostToolHook } from "../spec.ts";
import { runProcess } from "./_process.ts";

/** The default formatter deadline in milliseconds (the reference's 10 s). */
export const DEFAULT_FORMAT_TIMEOUT_MS = 10_000;
const MAX_FORMATTED_BYTES = 20_000_000;

/** Whether the formatter may run, and why not. */
export interface RunPermission {
  /** May the command run. */
  granted: boolean;
  /** Why not (recorded as the skip reason). */
  reason?: string;
}

/** What `autoFormat` records on the result under `autoFormat`. */
export interface AutoFormatRecord {
  /** `formatted` (file rewritten), `unchanged`, `skipped` (not permitted) or `failed`. */
  status: "formatted" | "unchanged" | "skipped" | "failed";
  /** The formatter argv. */
  command: readonly string[];
  /** The file that was formatted (absolute). */
  file: string;
  /** Why it was skipped or failed. */
  reason?: string;
}

/** Options of {@linkcode autoFormat}. */
export interface AutoFormatOptions {
  /** The deadline per run (default 10 000 ms); anything but a positive number throws `TypeError`. */
  timeoutMs?: number;
  /** Extension with its dot (`".py"`) → formatter argv reading stdin and writing stdout. */
  formatters?: Record<string, readonly string[]>;
  /**
   * The directory relative `filePath`s resolve against (use the workspace root); when given,
   * files outside it are skipped. A relative `cwd` resolves against the process's current
   * directory (it used to be taken as relative to `/`, which skipped every file).
   */
  cwd?: string;
  /**
   * Decides whether `command` may run. Default: under Deno, `Deno.permissions.querySync({ name:
   * "run", command })` must be `"granted"` (never prompts); elsewhere always granted.
   */
  canRun?: (command: string) => RunPermission;
}

/** The default formatters: `ruff format -` for Python. */
export const DEFAULT_FORMATTERS: Readonly<Record<string, readonly string[]>> = {
  ".py": ["ruff", "format", "-"],
};

interface DenoPermissions {
  permissions?: {
    querySync?(descriptor: { name: "run"; command: string }): { state: string };
  };
}

/**
 * The default {@linkcode AutoFormatOptions.canRun}: Deno's `run` permission for the command,
 * queried without prompting; always granted on runtimes without a permission system.
 *
 * @example
 * ```ts
 * import { runPermission } from "@hookscope/core/coding";
 * import assert from "node:assert/strict";
 *
 * assert.equal(typeof runPermission("node").granted, "boolean");
 * ```
 */
export function runPermission(command: string): RunPermission {
  const deno = (globalThis as { Deno?: DenoPermissions }).Deno;
  const query = deno?.permissions?.querySync;
  if (!query) return { granted: true };
  try {
    const { state } = query.call(deno.permissions, { name: "run", command });
    if (state === "granted") return { granted: true };
    return {
      granted: false,
      reason: `Deno run permission for ${JSON.stringify(command)} is not granted (state: ${state})`,
    };
  } catch (error) {
    return {
      granted: false,
      reason: `Deno run permission for ${JSON.stringify(command)} could not be checked: ${
        (error as Error).message
      }`,
    };
  }
}

function extensionOf(path: string): string {
  const name = path.slice(path.lastIndexOf("/") + 1);
  const dot = name.lastIndexOf(".");
  return dot > 0 ? name.slice(dot).toLowerCase() : "";
}

/**
 * Makes a post hook that formats the file an editor call wrote. It acts only when the result is
 * an object with `success: true` and `args.filePath` (or `file_path`) has an extension with a
 * formatter; then it runs the formatter's argv (no shell) with the file content on stdin and
 * writes stdout back when the formatter exits 0 and the text changed. It never writes
 * formatter output that went over its 20 000 000-byte cap (that is `failed`), never follows a
 * symlink at the file (`failed`), formats only regular files, skips a file whose real path is
 * outside `cwd`, and does not write when the file changed while the formatter ran (`failed`).
 * It returns the result
 * with an `autoFormat` record ({@linkcode AutoFormatRecord}): `formatted`, `unchanged`,
 * `failed` (with the reason: exit code and stderr, deadline, spawn error) or `skipped` — under
 * Deno without `run` permission for the formatter, with the reason; the file is then untouched.
 * In all other cases it returns `undefined` (the result stays as it is).
 *
 * @example Format with a formatter that is not allowed to run
 * ```ts
 * import { autoFormat } from "@hookscope/core/coding";
 * import assert from "node:assert/strict";
 *
 * const hook = autoFormat({
 *   cwd: "/nonexistent-workspace",
 *   formatters: { ".txt": ["fmt-tool"] },
 *   canRun: () => ({ granted: false, reason: "not in the allow list" }),
 * });
 * const result = await hook("editor", "write", { filePath: "a.txt" }, { success: true });
 * assert.deepEqual((result as { autoFormat: unknown }).autoFormat, {
 *   status: "skipped",
 *   command: ["fmt-tool"],
 *   file: "/nonexistent-workspace/a.txt",
 *   reason: "not in the allow list",
 * });
 * ```
 */
export function autoFormat(options?: AutoFormatOptions): PostToolHook {
  const formatters: Record<string, readonly string[]> = {};
  for (const [ext, argv] of Object.entries(options?.formatters ?? DEFAULT_FORMATTERS)) {
    if (!Array.isArray(argv) || argv.length === 0 || argv.some((a) => typeof a !== "string")) {
      throw new TypeError(
        `Cannot create autoFormat hook: formatter for ${
          JSON.stringify(ext)
        } must be a non-empty argv array`,
      );
    }
    formatters[ext.toLowerCase()] = [...argv];
  }
  const timeoutMs = options?.timeoutMs ?? DEFAULT_FORMAT_TIMEOUT_MS;
  if (typeof timeoutMs !== "number" || !Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new TypeError(
      `Cannot create autoFormat hook: timeoutMs must be a positive number, got ${
        String(timeoutMs)
      }`,
    );
  }
  const cwd = options?.cwd;
  if (cwd !== undefined && (typeof cwd !== "string" || cwd === "" || cwd.includes("\0"))) {
    throw new TypeError(
      `Cannot create autoFormat hook: invalid cwd ${JSON.stringify(String(cwd))}`,
    );
  }
  const canRun = options?.canRun ?? runPermission;
  const named = {
    async autoFormat(
      _toolName: string,
      _action: string,
      args: Record<string, unknown>,
      result: unknown,
    ): Promise<unknown> {
      if (result === null || typeof result !== "object") return undefined;
      if ((result as { success?: unknown }).success !== true) return undefined;
      const raw = args?.filePath ?? args?.file_path;
      if (typeof raw !== "string" || raw === "" || raw.includes("\0")) return undefined;
      const argv = formatters[extensionOf(raw)];
      if (!argv) return undefined;
      // A relative cwd resolves against the process's current directory at each call.
      const root = cwd === undefined ? undefined : resolvePath(process.cwd(), cwd);
      const file = resolvePath(root ?? process.cwd(), raw);
      const record = (status: AutoFormatRecord["status"], reason?: string) => ({
        ...(result as Record<string, unknown>),
        autoFormat: { status, command: argv, file, ...(reason === undefined ? {} : { reason }) },
      });
      if (root !== undefined && !isInside(root, file)) {
        return record("skipped", `File is outside ${cwd}: ${raw}`);
      }
      const permission = canRun(argv[0]);
      if (!permission.granted) {
        return record("skipped", permission.reason ?? `Not permitted to run ${argv[0]}`);
      }
      let original: string;
      let before: { mtimeMs: number; size: number };
      try {
        // Only a regular file inside cwd (after symlinks): a symlink swapped in after the edit
        // must not make the hook read or rewrite a file elsewhere, and a FIFO would hang.
        const info = await lstat(file);
        if (info.isSymbolicLink()) return record("failed", `Refusing to format a symlink: ${raw}`);
        if (!info.isFile()) return record("failed", `Not a regular file: ${raw}`);
        if (info.size > MAX_FORMATTED_BYTES) {
          return record("failed", `File too large to format: ${raw} (${info.size} bytes)`);
        }
        if (root !== undefined) {
          const realRoot = await realpath(root);
          if (!isInside(realRoot, await realpath(file))) {
            return record("skipped", `File is outside ${cwd}: ${raw}`);
          }
        }
        before = info;
        original = await readFile(file, "utf8");
      } catch (error) {
        return record("failed", `Could not read ${file}: ${(error as Error).message}`);
      }
      const run = await runProcess({
        argv,
        input: original,
        timeoutMs,
        maxBytes: MAX_FORMATTED_BYTES,
      });
      if (run.spawnError) {
        return record("failed", `Could not start ${argv[0]}: ${run.spawnError.message}`);
      }
      if (run.timedOut) return record("failed", `Formatter timed out after ${timeoutMs} ms`);
      if (run.code !== 0) {
        return record(
          "failed",
          `Formatter exited with code ${run.code}${
            run.stderr ? `: ${run.stderr.slice(0, 500)}` : ""
          }`,
        );
      }
      if (run.stdoutTruncated) {
        return record("failed", `Formatter output exceeded ${MAX_FORMATTED_BYTES} bytes`);
      }
      if (run.stdout === original) return record("unchanged");
      try {
        // Never overwrite a change made while the formatter ran.
        const now = await stat(file);
        if (now.mtimeMs !== before.mtimeMs || now.size !== before.size) {
          return record("failed", `File changed while formatting: ${raw}`);
        }
        await writeFile(file, run.stdout);
      } catch (error) {
        return record("failed", `Could not write ${file}: ${(error as Error).message}`);
      }
      return record("formatted");
    },
  };
  return named.autoFormat;
}
