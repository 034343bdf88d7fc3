/**
 * `autoFormat`: a post hook that pipes a written file inside the workspace through a formatter
 * subprocess (argv, no shell, stdin → stdout, 10 000 ms deadline, inside the OS sandbox) and
 * writes the result back.
 *
 * @module
 */

import { constants } from "node:fs";
import { lstat, open, realpath, stat } from "node:fs/promises";
import process from "node:process";
import { isInside, resolvePath } from "../_path.ts";
import type { PostToolHookContext } from "../spec.ts";

import {
  type ResolvedSandbox,
  resolveSandbox,
  runSandboxed,
  validateSandboxOptions,
} from "./_bwrap.ts";
import { runProcess, type RunProcessResult } from "./_process.ts";
import { type SandboxOptions, SandboxUnavailableError } from "./sandbox.ts";

/** What the {@linkcode autoFormat} hook reads of a post hook's context. */
export type AutoFormatInput = Pick<PostToolHookContext, "args" | "result">;

/** The post hook {@linkcode autoFormat} makes (a `PostToolHook`). */
export type AutoFormatHook = (context: AutoFormatInput) => Promise<unknown>;

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
  /** Where the formatter ran (present once it was started). */
  sandbox?: "bubblewrap" | "none";
}

/** Options of {@linkcode autoFormat}. */
export interface AutoFormatOptions {
  /** The deadline per run (default 10 000 ms); anything but a positive number throws `TypeError`. */
  timeoutMs?: number;
  /** Extension with its dot (`".py"`) → formatter argv reading stdin and writing stdout. */
  formatters?: Record<string, readonly string[]>;
  /**
   * The workspace root (required): relative `filePath`s resolve against it and a file whose
   * real path is outside it is never read or written (`skipped`). A relative `cwd` resolves
   * against the process's current directory.
   */
  cwd: string;
  /**
   * Where the formatter runs (default `{ kind: "auto" }`): inside bubblewrap with the workspace
   * read-only, no network and a clean environment; where no sandbox exists the formatter is
   * `skipped` with the {@linkcode SandboxUnavailableError} message, unless `{ kind: "none" }`
   * runs it on the host. A formatter installed outside the system directories (`/usr`, …) needs
   * its directory in `readable`.
   */
  sandbox?: SandboxOptions;
  /**
   * Decides whether `command` may run; asked for the formatter and, when sandboxed, for the
   * bubblewrap program (`"bwrap"` or `sandbox.bwrapPath`). Default: under Deno,
   * `Deno.permissions.querySync({ name: "run", command })` must be `"granted"` (never prompts);
   * elsewhere always granted.
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

/** The host variables the formatter gets (a clean environment, as the bash tool's default). */
const FORMATTER_ENV_KEYS = ["PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ"];

function formatterEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of FORMATTER_ENV_KEYS) {
    const value = process.env[key];
    if (typeof value === "string") env[key] = value;
  }
  return env;
}

/**
 * Makes a post hook that formats the file an editor call wrote, inside the workspace `cwd`
 * only. It acts only when the result is an object with `success: true` and `args.filePath` (or
 * `file_path`) has an extension with a formatter; then it runs the formatter's argv (no shell,
 * inside the sandbox, see {@linkcode AutoFormatOptions.sandbox}) with the file content on stdin
 * and writes stdout back when the formatter exits 0 and the text changed. The file is opened
 * once without following symlinks (a symlink is `failed`), must be a regular file with one
 * link (a hard link may be an outside file's second name: `failed`) whose real path is inside
 * `cwd` and is still the opened file (else `skipped`); it is read and rewritten through that
 * descriptor, so a swap after the check cannot redirect the write. It never writes formatter
 * output over its 20 000 000-byte cap (`failed`) and does not write when the file changed while
 * the formatter ran (`failed`). It returns the result with an `autoFormat` record
 * ({@linkcode AutoFormatRecord}): `formatted`, `unchanged`, `failed` (with the reason: exit
 * code and stderr, deadline, spawn error) or `skipped` (outside `cwd`, no permission to run
 * under Deno, no sandbox), with the reason; the file is then untouched. In all other cases it
 * returns `undefined` (the result stays as it is).
 *
 * @param options The workspace (`cwd`, required), formatters, deadline, sandbox and permission check.
 * @returns The post hook.
 * @throws {TypeError} without a valid `cwd`, with a malformed formatter, deadline or sandbox.
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
 * const result = await hook({ args: { filePath: "a.txt" }, result: { success: true } });
 * assert.deepEqual((result as { autoFormat: unknown }).autoFormat, {
 *   status: "skipped",
 *   command: ["fmt-tool"],
 *   file: "/nonexistent-workspace/a.txt",
 *   reason: "not in the allow list",
 * });
 * assert.throws(() => autoFormat({} as never), TypeError);
 * ```
 */
export function autoFormat(options: AutoFormatOptions): AutoFormatHook {
  const cwd = options?.cwd;
  if (typeof cwd !== "string" || cwd === "" || cwd.includes("\0")) {
    throw new TypeError(
      `Cannot create autoFormat hook: cwd (the workspace root) is required, got ${
        cwd === undefined ? "undefined" : JSON.stringify(String(cwd))
      }`,
    );
  }
  const formatters: Record<string, readonly string[]> = {};
  for (const [ext, argv] of Object.entries(options.formatters ?? DEFAULT_FORMATTERS)) {
    if (!Array.isArray(argv) || argv.length === 0 || argv.some((a) => typeof a !== "string")) {
      throw new TypeError(
        `Cannot create autoFormat hook: formatter for ${
          JSON.stringify(ext)
        } must be a non-empty argv array`,
      );
    }
    formatters[ext.toLowerCase()] = [...argv];
  }
  const timeoutMs = options.timeoutMs ?? DEFAULT_FORMAT_TIMEOUT_MS;
  if (typeof timeoutMs !== "number" || !Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new TypeError(
      `Cannot create autoFormat hook: timeoutMs must be a positive number, got ${
        String(timeoutMs)
      }`,
    );
  }
  const sandboxOptions = Object.freeze({
    ...validateSandboxOptions(options.sandbox, "Cannot create autoFormat hook"),
  });
  const sandboxed = sandboxOptions.kind !== "none";
  const bwrapName = sandboxOptions.bwrapPath ?? "bwrap";
  let resolved: Promise<ResolvedSandbox> | undefined;
  const sandbox = (): Promise<ResolvedSandbox> => {
    const pending = resolved ?? resolveSandbox(sandboxOptions);
    resolved = pending.then((value) => {
      if (value.kind === "unavailable") resolved = undefined;
      return value;
    });
    return resolved;
  };
  const canRun = options.canRun ?? runPermission;
  const named = {
    async autoFormat(
      context: AutoFormatInput,
    ): Promise<unknown> {
      const args = context?.args;
      const result = context?.result;
      if (result === null || typeof result !== "object") return undefined;
      if ((result as { success?: unknown }).success !== true) return undefined;
      const raw = args?.filePath ?? args?.file_path;
      if (typeof raw !== "string" || raw === "" || raw.includes("\0")) return undefined;
      const argv = formatters[extensionOf(raw)];
      if (!argv) return undefined;
      // A relative cwd resolves against the process's current directory at each call.
      const root = resolvePath(process.cwd(), cwd);
      const file = resolvePath(root, raw);
      let ranIn: "bubblewrap" | "none" | undefined;
      const record = (status: AutoFormatRecord["status"], reason?: string) => ({
        ...(result as Record<string, unknown>),
        autoFormat: {
          status,
          command: argv,
          file,
          ...(reason === undefined ? {} : { reason }),
          ...(ranIn === undefined ? {} : { sandbox: ranIn }),
        },
      });
      if (!isInside(root, file)) return record("skipped", `File is outside ${cwd}: ${raw}`);
      for (const command of sandboxed ? [argv[0], bwrapName] : [argv[0]]) {
        const permission = canRun(command);
        if (!permission.granted) {
          return record("skipped", permission.reason ?? `Not permitted to run ${command}`);
        }
      }
      let handle: Awaited<ReturnType<typeof open>> | undefined;
      try {
        // Open once without following a symlink at the file (O_NONBLOCK: a FIFO must not
        // hang), then judge the descriptor: a regular file with one link, whose real path is
        // inside the workspace and still names the opened file.
        try {
          const info = await lstat(file);
          if (info.isSymbolicLink()) {
            return record("failed", `Refusing to format a symlink: ${raw}`);
          }
          handle = await open(
            file,
            constants.O_RDWR | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0),
          );
        } catch (error) {
          if ((error as { code?: string }).code === "ELOOP") {
            return record("failed", `Refusing to format a symlink: ${raw}`);
          }
          return record("failed", `Could not read ${file}: ${(error as Error).message}`);
        }
        let original: string;
        let before: { mtimeMs: number; size: number };
        try {
          const info = await handle.stat();
          if (!info.isFile()) return record("failed", `Not a regular file: ${raw}`);
          if (info.nlink > 1) {
            return record("failed", `Refusing to format a file with more than one link: ${raw}`);
          }
          if (info.size > MAX_FORMATTED_BYTES) {
            return record("failed", `File too large to format: ${raw} (${info.size} bytes)`);
          }
          const realRoot = await realpath(root);
          const realFile = await realpath(file);
          if (!isInside(realRoot, realFile)) {
            return record("skipped", `File is outside ${cwd}: ${raw}`);
          }
          const byName = await stat(realFile);
          if (byName.ino !== info.ino || byName.dev !== info.dev) {
            return record("failed", `File changed while it was checked: ${raw}`);
          }
          before = info;
          original = new TextDecoder().decode(await handle.readFile());
        } catch (error) {
          return record("failed", `Could not read ${file}: ${(error as Error).message}`);
        }
        const where = await sandbox();
        if (where.kind === "unavailable") {
          return record(
            "skipped",
            new SandboxUnavailableError("the formatter", where.reason).message,
          );
        }
        ranIn = where.kind;
        const runOptions = {
          argv,
          input: original,
          timeoutMs,
          maxBytes: MAX_FORMATTED_BYTES,
          env: formatterEnv(),
        };
        let run: RunProcessResult;
        if (where.kind === "bubblewrap") {
          const realRoot = await realpath(root);
          run = await runSandboxed(where, {
            workspace: realRoot,
            workspaceWritable: false,
            cwd: realRoot,
            ...(runOptions.env.HOME ? { home: runOptions.env.HOME } : {}),
          }, { ...runOptions, cwd: realRoot });
        } else {
          run = await runProcess(runOptions);
        }
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
          // Never overwrite a change made while the formatter ran; write through the checked
          // descriptor, never by name.
          const now = await handle.stat();
          if (now.mtimeMs !== before.mtimeMs || now.size !== before.size) {
            return record("failed", `File changed while formatting: ${raw}`);
          }
          const bytes = new TextEncoder().encode(run.stdout);
          await handle.truncate(0);
          let offset = 0;
          while (offset < bytes.byteLength) {
            const { bytesWritten } = await handle.write(
              bytes,
              offset,
              bytes.byteLength - offset,
              offset,
            );
            offset += bytesWritten;
          }
        } catch (error) {
          return record("failed", `Could not write ${file}: ${(error as Error).message}`);
        }
        return record("formatted");
      } finally {
        await handle?.close().catch(() => {});
      }
    },
  };
  return named.autoFormat;
}
