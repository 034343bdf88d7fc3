/**
 * `autoFormat`: a post hook that pipes a written file inside the workspace through a formatter
 * subprocess (argv, no shell, stdin → stdout, 10 000 ms deadline, inside the OS sandbox) and
 * writes the result back: staged where the sandbox stages (its change set decided and committed
 * like a bash run's), else directly.
 *
 * @module
 */

import { constants } from "node:fs";
import { chmod, lstat, mkdir, open, realpath, rm, stat } from "node:fs/promises";
import process from "node:process";
import { isInside, resolvePath } from "../_path.ts";
import type { PostToolHookContext } from "../spec.ts";
import type { ToolPostDecision } from "../../core/tool_hook.ts";

import { type ResolvedSandbox, runSandboxed, validateSandboxOptions } from "./_bwrap.ts";
import { resolveSandbox } from "./_resolve_sandbox.ts";
import { runProcess, type RunProcessResult } from "./_process.ts";
import { MAX_TIMER_MS } from "../../core/_async.ts";
import { type SandboxOptions, SandboxUnavailableError } from "./sandbox.ts";
import { makeStage, removeStage, runStaged, type StagedRunResult } from "./_overlay.ts";
import { lowerState, readChangeSet } from "./_changes.ts";
import type { EffectsStore } from "./_commit.ts";
import { openEffectsStore } from "./_effects_home.ts";
import { settleChanges } from "./_effects_settle.ts";
import { decideEffects } from "./effects_policy.ts";
import type { FileChange, ToolEffectsChannel } from "./file_change.ts";

/**
 * What the {@linkcode autoFormat} hook reads of a post hook's context: the arguments and result,
 * and (when given) the call id, signal and the session's effects channel its staged run is
 * decided through.
 */
export type AutoFormatInput =
  & Pick<PostToolHookContext, "args" | "result">
  & Partial<Pick<PostToolHookContext, "callId" | "signal" | "effects">>;

/**
 * The post hook {@linkcode autoFormat} makes (a `PostToolHook`): it resolves to
 * `{ updatedResult }` — the result with its `autoFormat` record — or to nothing when it does not
 * apply.
 */
export type AutoFormatHook = (context: AutoFormatInput) => Promise<ToolPostDecision>;

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
  /**
   * Where its changes went (present once it was started): `"overlay"`, staged and decided (then
   * `changes` and, when committed, `checkpoint`), or `"direct"`, written into the file.
   */
  effects?: "overlay" | "direct";
  /** The change set of a staged run. */
  changes?: readonly FileChange[];
  /** The checkpoint that undoes a committed staged run (`hookscope undo DB CALL_ID`). */
  checkpoint?: string;
}

/** Options of {@linkcode autoFormat}. */
export interface AutoFormatOptions {
  /** The deadline per run (default 10 000 ms); anything but a positive number up to 2^31 − 1 throws `TypeError`. */
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
  /**
   * Where the staged runs' state lives (as the toolkit's `effectsDir`; default the same default,
   * so `hookscope undo` and the toolkit's `undo` find the formatter's checkpoints).
   */
  effectsDir?: string;
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
 * the formatter ran (`failed`).
 *
 * Where the sandbox stages runs (`effects: "overlay"`, the default where overlayfs mounts) the
 * formatter runs against a copy-on-write view of the workspace (writable there, so whatever it
 * writes besides its output is seen too), its output is written into that view, and the change
 * set (tool `"autoFormat"`, the call's id, arguments `{ filePath, command }`) goes to the
 * `tool.effects` hooks through the call's effects channel (`context.effects`: the session's
 * handlers and audit signals under `Branch.act`; outside a session no hooks, so it commits) and
 * is committed journaled with a checkpoint (`hookscope undo DB CALL_ID`, `toolkit.undo`). A deny
 * leaves the file as the editor wrote it (`skipped`, with the reason); an ask is answered only
 * inline (`act()`'s `approve`): the editor's write has landed already, so the call cannot wait
 * for a later answer, and without an inline answer the formatting is not applied. The record
 * then carries `effects: "overlay"`, `changes` and `checkpoint`; unstaged it says
 * `effects: "direct"`. It returns `{ updatedResult }`, the result with an `autoFormat` record
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
 * const decision = await hook({ args: { filePath: "a.txt" }, result: { success: true } });
 * assert.deepEqual((decision?.updatedResult as { autoFormat: unknown }).autoFormat, {
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
  if (timeoutMs > MAX_TIMER_MS) {
    // The formatter's timer would fire at once.
    throw new TypeError(
      `Cannot create autoFormat hook: timeoutMs must be at most ${MAX_TIMER_MS} (about 24.8 days), got ${timeoutMs}`,
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
  const effectsDir = options.effectsDir;
  if (
    effectsDir !== undefined &&
    (typeof effectsDir !== "string" || !effectsDir.startsWith("/") || effectsDir.includes("\0"))
  ) {
    throw new TypeError("Cannot create autoFormat hook: effectsDir must be an absolute path");
  }
  const stores = new Map<string, Promise<EffectsStore | { unavailable: string }>>();
  const storeFor = (root: string): Promise<EffectsStore | { unavailable: string }> => {
    let store = stores.get(root);
    if (store === undefined) {
      store = openEffectsStore(effectsDir, root);
      stores.set(root, store);
      store.then((s) => {
        if ("unavailable" in s) stores.delete(root);
      }, () => stores.delete(root));
    }
    return store;
  };
  // Why a formatter run failed (spawn, deadline, exit code, output cap), or `undefined`.
  const ranFailed = (run: RunProcessResult, program: string): string | undefined => {
    if (run.spawnError) return `Could not start ${program}: ${run.spawnError.message}`;
    if (run.timedOut) return `Formatter timed out after ${timeoutMs} ms`;
    if (run.code !== 0) {
      return `Formatter exited with code ${run.code}${
        run.stderr ? `: ${run.stderr.slice(0, 500)}` : ""
      }`;
    }
    if (run.stdoutTruncated) return `Formatter output exceeded ${MAX_FORMATTED_BYTES} bytes`;
    return undefined;
  };
  const named = {
    async autoFormat(
      context: AutoFormatInput,
    ): Promise<ToolPostDecision> {
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
      let staged: Pick<AutoFormatRecord, "effects" | "changes" | "checkpoint"> = {};
      const record = (status: AutoFormatRecord["status"], reason?: string) => ({
        updatedResult: {
          ...(result as Record<string, unknown>),
          autoFormat: {
            status,
            command: argv,
            file,
            ...(reason === undefined ? {} : { reason }),
            ...(ranIn === undefined ? {} : { sandbox: ranIn }),
            ...staged,
          },
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
        let realFileOf = "";
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
          realFileOf = realFile;
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
        if (where.kind === "bubblewrap" && where.effects.effects === "overlay") {
          // Staged: the formatter runs against a copy-on-write view of the workspace (writable
          // there), its output is written into that view, and the change set is decided and
          // committed like a bash run's.
          staged = { effects: "overlay" };
          const realRoot = await realpath(root);
          const store = await storeFor(realRoot);
          if ("unavailable" in store) {
            return record("failed", `Cannot stage the formatter: ${store.unavailable}`);
          }
          const tools = where.effects.tools;
          const stage = await makeStage(`${store.dir}/stage`);
          try {
            let layer: StagedRunResult | undefined;
            const run = await runSandboxed(
              where,
              {
                workspace: realRoot,
                workspaceWritable: true,
                cwd: realRoot,
                ...(runOptions.env.HOME ? { home: runOptions.env.HOME } : {}),
              },
              { ...runOptions, cwd: realRoot },
              async (opts) => {
                layer = await runStaged(tools, realRoot, stage, opts);
                return layer.run;
              },
            );
            const failed = ranFailed(run, argv[0]);
            if (failed !== undefined) return record("failed", failed);
            if (!layer?.started) {
              return record(
                "failed",
                `Could not stage the formatter (overlay): ${
                  run.stderr.trim() || `exit code ${run.code}`
                }`,
              );
            }
            if (run.stdout === original) return record("unchanged");
            if (layer.opaque === undefined) {
              return record("failed", "The formatter's change set could not be read");
            }
            const now = await handle.stat();
            if (now.mtimeMs !== before.mtimeMs || now.size !== before.size) {
              return record("failed", `File changed while formatting: ${raw}`);
            }
            const rel = realFileOf.slice(realRoot.length + 1);
            try {
              await writeIntoLayer(
                stage.upper,
                realRoot,
                rel,
                run.stdout,
                Number(now.mode) & 0o7777,
              );
            } catch (error) {
              return record(
                "failed",
                `Could not stage the formatted file: ${(error as Error).message}`,
              );
            }
            const set = await readChangeSet(stage.upper, realRoot, layer.opaque);
            staged = { effects: "overlay", changes: set.changes };
            const signal = context.signal ?? new AbortController().signal;
            const outcome = await settleChanges({
              store,
              set,
              lower: await lowerState(realRoot, set.plan),
              upper: stage.upper,
              payload: Object.freeze({
                toolName: "autoFormat",
                callId: context.callId ?? crypto.randomUUID(),
                args: Object.freeze({ filePath: raw, command: [...argv] }),
                changes: set.changes,
              }),
              channel: context.effects ?? standaloneChannel(signal),
              hooks: [],
              pendingTtlMs: 0,
              maxPendingBytes: 0,
            });
            if (!outcome.applied) {
              return record(
                "skipped",
                `The formatter's changes were not applied: ${outcome.reason}`,
              );
            }
            if (outcome.checkpoint !== undefined) {
              staged = { ...staged, checkpoint: outcome.checkpoint };
            }
            return record("formatted");
          } finally {
            await removeStage(stage);
          }
        }
        staged = { effects: "direct" };
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
        const failed = ranFailed(run, argv[0]);
        if (failed !== undefined) return record("failed", failed);
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

/**
 * The channel of a formatter run outside a session's act path: no hooks (its change set commits,
 * as a call without opinions runs), nobody to ask, nothing recorded.
 */
function standaloneChannel(signal: AbortSignal): ToolEffectsChannel {
  return {
    decide: (payload, hooks) => decideEffects(hooks, payload, { signal }),
    approve: () =>
      Promise.resolve({
        approve: false,
        reason: "a person must approve them and nobody can answer here",
      }),
    settled: () => Promise.resolve(),
  };
}

/**
 * Writes `text` as `rel` into a stage's upper layer (mode `mode`), making the parent directories
 * the upper layer lacks with their workspace modes. Nothing the formatter left in the layer is
 * followed: an upper parent that is not a real directory, or a lower one that is not, is refused,
 * and the file is created anew (`wx`) after whatever was there is removed.
 */
async function writeIntoLayer(
  upper: string,
  lower: string,
  rel: string,
  text: string,
  mode: number,
): Promise<void> {
  const parts = rel.split("/");
  let at = "";
  for (const part of parts.slice(0, -1)) {
    at = at === "" ? part : `${at}/${part}`;
    const inUpper = await lstat(`${upper}/${at}`).catch(() => null);
    if (inUpper !== null) {
      if (!inUpper.isDirectory()) throw new Error(`${at} is not a directory in the staged layer`);
      continue;
    }
    const inLower = await lstat(`${lower}/${at}`);
    if (!inLower.isDirectory()) throw new Error(`${at} is not a directory`);
    await mkdir(`${upper}/${at}`);
    await chmod(`${upper}/${at}`, Number(inLower.mode) & 0o7777);
  }
  const path = `${upper}/${rel}`;
  await rm(path, { recursive: true, force: true });
  const out = await open(path, "wx", 0o600);
  try {
    await out.writeFile(text);
  } finally {
    await out.close();
  }
  await chmod(path, mode);
}
