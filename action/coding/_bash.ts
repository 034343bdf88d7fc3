/**
 * The `bash` tool: runs one command as argv without a shell — the argv of the same
 * `tree-sitter-bash` parse the command guard judges — refusing every construct only a shell
 * could run (lists, pipelines, redirections, expansions, globs), with a clamped deadline and each output stream capped, inside the OS sandbox (bubblewrap)
 * unless the caller chose `sandbox: { kind: "none" }`.
 *
 * @module
 */

import { stat } from "node:fs/promises";
import process from "node:process";
import { z } from "zod";
import { Tool } from "../tool.ts";
import { parseRunnable, ShellParseError } from "./_shell_parse.ts";
import { runProcess, type RunProcessResult } from "./_process.ts";
import type { CodingResult } from "./_results.ts";
import { COMMAND_NOT_FOUND_PREFIX, type ResolvedSandbox, runSandboxed } from "./_bwrap.ts";
import { SandboxUnavailableError } from "./sandbox.ts";
import { WorkspaceError } from "./_workspace.ts";
import type { Workspace } from "./_workspace.ts";
import { makeStage, removeStage, runStaged, type StagedRunResult } from "./_overlay.ts";
import { lowerState, readChangeSet } from "./_changes.ts";
import type { EffectsStore } from "./_commit.ts";
import type { FileChange, ToolEffectsChannel, ToolEffectsHook } from "./file_change.ts";
import { judgeCommand } from "./command_guard.ts";
import { argsHash } from "../../core/approval.ts";
import { describeChanges, settleChanges } from "./_effects_settle.ts";
import {
  findPending,
  keepPending,
  layerBytes,
  type PendingLayer,
  removePending,
} from "./_pending.ts";

/** The default deadline of a command, in milliseconds. */
export const DEFAULT_BASH_TIMEOUT_MS = 30_000;
/** The largest deadline a command may ask for, in milliseconds. */
export const MAX_BASH_TIMEOUT_MS = 300_000;
/** The cap per output stream, in bytes. */
export const MAX_OUTPUT_BYTES = 100_000;

const request = z.object({
  command: z.string().describe(
    "the command line (the description says whether it runs in bash or as one argv without a shell)",
  ),
  timeoutMs: z.number().optional().describe("deadline in ms (default 30000, at most 300000)"),
  cwd: z.string().optional().describe("working directory relative to the workspace root"),
});

function refused(stderr: string): CodingResult {
  return { success: false, error: stderr, stdout: "", stderr, returnCode: -1, timedOut: false };
}

/** Where bash commands run: the declared kind and how to resolve it on first use. */
export interface BashSandbox {
  /** The kind the caller asked for. */
  declared: "auto" | "bubblewrap" | "none";
  /** Whether the host network is given to commands (only for a sandbox). */
  network: boolean;
  /** Resolves the sandbox (detection runs once per toolkit). */
  resolve(): Promise<ResolvedSandbox>;
  /** The resolved sandbox when detection has finished already (it shapes the description). */
  known?(): ResolvedSandbox | undefined;
  /** Staged runs: where their state lives and who decides on their change sets. */
  effects?: BashEffects;
}

/** What the bash tool needs for staged runs (given by the toolkit). */
export interface BashEffects {
  /** The workspace's effects store (recovered once), or why there is none. */
  store(): Promise<EffectsStore | { unavailable: string }>;
  /** The tool's own `tool.effects` hooks (its specs'). */
  hooks(toolName: string): ToolEffectsHook[];
  /**
   * Where the change set is decided: the session's channel (`given`, from the act path), else
   * the toolkit's own (its hooks, the bound branches' handlers, `approveEffects`).
   */
  channel(given: ToolEffectsChannel | undefined, signal: AbortSignal): ToolEffectsChannel;
  /** How long a staged layer waits for a later answer, in ms. */
  readonly pendingTtlMs: number;
  /** The cap on all staged layers waiting for answers, in bytes. */
  readonly maxPendingBytes: number;
}

const HOST_SANDBOX: BashSandbox = {
  declared: "none",
  network: true,
  resolve: () => Promise.resolve({ kind: "none" }),
};

const ARGV_ONLY =
  "Run one command (argv, no shell) in the workspace. Quote words with ' or \" as in bash; a # word starts a comment. Shell syntax is refused: lists (; && || & newlines), pipes, redirections (< >), $ expansions, substitutions, unquoted globs and ~.";
const RETURNS = " Returns stdout, stderr, returnCode, timedOut, sandbox, effects.";
const STAGED =
  " Changes to the workspace are staged: the command writes into a copy-on-write layer, and its change set is applied only if the workspace's policy allows it (deleting or truncating existing files, .git internals and secret files may need a person's approval first); the result lists the changes and whether they were applied.";

function describeSandbox(sandbox: BashSandbox): string {
  if (sandbox.declared === "none") {
    return `${ARGV_ONLY}${RETURNS} WARNING: sandbox "none": commands run on the host with the full rights of this process (files, network, environment of other processes), and their changes are written directly into the workspace (not staged).`;
  }
  const box =
    ` Commands run in a bubblewrap sandbox: only the workspace is writable, the system is read-only, the home directory and other secrets are not visible${
      sandbox.network ? "" : ", there is no network"
    }, and the whole sandbox is killed at the deadline.`;
  const known = sandbox.known?.();
  if (known?.kind === "bubblewrap" && known.effects.effects === "overlay" && sandbox.effects) {
    return `Run a command in the workspace with bash (/bin/bash -c: pipes, redirections, lists and quoting work as in bash).${RETURNS}${box}${STAGED}`;
  }
  if (known?.kind === "bubblewrap" && known.effects.effects === "direct") {
    return `${ARGV_ONLY}${RETURNS}${box} WARNING: changes are written directly into the workspace, not staged (${known.effects.effectsReason}); destructive commands are refused by a command judge instead.`;
  }
  return `Run a command in the workspace.${RETURNS}${box} Where the workspace is staged (results say effects: "overlay"), the command runs with /bin/bash -c and its changes are decided before they land:${STAGED} Where it is not (effects: "direct"), changes are written directly and only one command runs, as argv without a shell: ${
    ARGV_ONLY.slice(ARGV_ONLY.indexOf("Quote"))
  }`;
}

/** Clamps a requested deadline to 1..300 000 ms (default 30 000). */
export function clampTimeout(value: number | undefined): number {
  if (value === undefined || !Number.isFinite(value)) return DEFAULT_BASH_TIMEOUT_MS;
  return Math.min(MAX_BASH_TIMEOUT_MS, Math.max(1, Math.floor(value)));
}

/**
 * Makes the bash tool over a workspace; commands get exactly `env` as their environment and run
 * in `sandbox` (default: on the host, as `kind: "none"`). Every result carries `sandbox`.
 */
export function bashTool(
  workspace: Workspace,
  env?: Readonly<Record<string, string>>,
  sandbox: BashSandbox = HOST_SANDBOX,
): Tool {
  return new Tool({
    name: "bash",
    description: describeSandbox(sandbox),
    inputSchema: request,
    execute: async (args, { signal, callId, effects }): Promise<CodingResult> => {
      // Refusals before a run report the declared kind; a run reports the kind it ran under.
      const call: BashCall = {
        kind: sandbox.declared === "none" ? "none" : "bubblewrap",
        callId: callId ?? crypto.randomUUID(),
        args: args as Record<string, unknown>,
        ...(effects !== undefined ? { channel: effects } : {}),
      };
      const result = await runBash(args as z.infer<typeof request>, signal, call);
      const out: CodingResult = { ...result, sandbox: call.kind };
      if (out.effects === undefined) {
        // Every result says where the command's changes went (visibly, when not staged).
        out.effects = call.staged ? "overlay" : "direct";
        if (!call.staged) {
          const known = sandbox.known?.();
          out.effectsReason = sandbox.declared === "none" || known?.kind === "none"
            ? 'sandbox "none"'
            : known?.kind === "bubblewrap" && known.effects.effects === "direct"
            ? known.effects.effectsReason
            : "staged runs are not available here";
        }
      }
      return out;
    },
  });

  async function runBash(
    input: z.infer<typeof request>,
    signal: AbortSignal,
    call: BashCall,
  ): Promise<CodingResult> {
    if (typeof input.command !== "string") return refused("Malformed command: not a string");
    // With staged runs, shell syntax runs through a real shell: its effects are decided
    // before they land. Whether they are on is known once the sandbox is resolved.
    const early = sandbox.declared === "none" ? undefined : await sandbox.resolve();
    const staged = early?.kind === "bubblewrap" && early.effects.effects === "overlay" &&
      sandbox.effects !== undefined;
    call.staged = staged;
    // The argv comes from the same parse the command guard judged, so both read one command.
    let argv: string[];
    try {
      const runnable = await parseRunnable(input.command);
      if ("refused" in runnable && staged) {
        argv = ["/bin/bash", "-c", input.command];
      } else if ("refused" in runnable) {
        return refused(
          `Shell syntax is not supported: ${
            runnable.refused.join("; ")
          }. The bash tool runs one command as argv, without a shell: run each command in its own call and quote words meant literally`,
        );
      } else {
        argv = [...runnable.argv];
      }
    } catch (error) {
      if (error instanceof ShellParseError && staged) {
        argv = ["/bin/bash", "-c", input.command];
      } else if (error instanceof ShellParseError) {
        return refused(`Malformed command: ${error.message}`);
      } else {
        return refused(
          `The shell parser could not be loaded, so no command can be run: ${
            (error as Error)?.message ?? String(error)
          }`,
        );
      }
    }
    let cwd: string;
    try {
      cwd = await workspace.realRoot();
    } catch (error) {
      return refused((error as Error).message);
    }
    if (input.cwd !== undefined && input.cwd !== "") {
      try {
        cwd = await workspace.resolve(input.cwd);
        if (!(await stat(cwd)).isDirectory()) return refused(`Not a directory: ${input.cwd}`);
      } catch (error) {
        if (error instanceof WorkspaceError) return refused(error.message);
        return refused(`Not a directory: ${input.cwd}`);
      }
    }
    const timeoutMs = clampTimeout(input.timeoutMs);
    const resolved = await sandbox.resolve();
    if (resolved.kind === "unavailable") {
      throw new SandboxUnavailableError("bash", resolved.reason);
    }
    call.kind = resolved.kind;
    const options = {
      argv,
      cwd,
      timeoutMs,
      maxBytes: MAX_OUTPUT_BYTES,
      signal,
      ...(env ? { env } : {}),
    };
    let run: RunProcessResult;
    if (resolved.kind === "bubblewrap" && staged && resolved.effects.effects === "overlay") {
      const store = await sandbox.effects!.store();
      if ("unavailable" in store) return refused(`Cannot stage the command: ${store.unavailable}`);
      return await runStagedBash(input.command, argv, cwd, timeoutMs, options, store, signal, call);
    } else if (resolved.kind === "bubblewrap") {
      run = await runSandboxed(resolved, {
        workspace: await workspace.realRoot(),
        workspaceWritable: true,
        cwd,
        home: env ? env.HOME : process.env.HOME,
      }, options);
      if (
        run.code === 127 && !run.timedOut && !run.aborted &&
        run.stderr === `${COMMAND_NOT_FOUND_PREFIX}${argv[0]}\n`
      ) {
        return { ...refused(`Command not found: ${argv[0]}`), stdout: run.stdout };
      }
    } else {
      run = await runProcess(options);
    }
    if (run.spawnError) {
      const code = (run.spawnError as { code?: string }).code;
      const message = code === "ENOENT"
        ? `Command not found: ${argv[0]}`
        : `Could not start ${argv[0]}: ${run.spawnError.message}`;
      return { ...refused(message), stdout: run.stdout };
    }
    if (run.aborted) throw signal.reason;
    if (run.timedOut) {
      const note = `Command timed out after ${timeoutMs / 1000}s`;
      const stderr = run.stderr ? `${run.stderr}\n${note}` : note;
      return {
        success: false,
        error: note,
        stdout: run.stdout,
        stderr,
        returnCode: -1,
        timedOut: run.timedOut,
      };
    }
    const returnCode = run.code ?? -1;
    const result: CodingResult = {
      success: returnCode === 0,
      stdout: run.stdout,
      stderr: run.stderr,
      returnCode,
      timedOut: false,
    };
    if (returnCode !== 0) result.error = `Command exited with code ${returnCode}`;
    return result;
  }

  /**
   * One staged run: run (or take the layer a pending approval of this call kept), read the
   * change set, decide, then commit, discard or keep it for a later answer.
   */
  async function runStagedBash(
    command: string,
    argv: readonly string[],
    cwd: string,
    timeoutMs: number,
    options: Parameters<typeof runProcess>[0],
    store: EffectsStore,
    signal: AbortSignal,
    call: BashCall,
  ): Promise<CodingResult> {
    const resolved = await sandbox.resolve();
    if (resolved.kind !== "bubblewrap" || resolved.effects.effects !== "overlay") {
      return refused("The sandbox changed while the command was prepared");
    }
    const effects = sandbox.effects!;
    call.kind = "bubblewrap";
    const hash = argsHash(call.args);
    const channel = effects.channel(call.channel, signal);
    // A layer kept for this call by an earlier stop for approval: its change set is the one a
    // person was asked about, so the command does not run again. Only the same call (id,
    // arguments, session and run) takes it.
    let kept: PendingLayer | undefined = await findPending(store, {
      callId: call.callId,
      ...(channel.sessionId !== undefined ? { sessionId: channel.sessionId } : {}),
      ...(channel.runId !== undefined ? { runId: channel.runId } : {}),
    });
    if (
      kept !== undefined &&
      (kept.manifest.argsHash !== hash || kept.manifest.toolName !== "bash" ||
        kept.manifest.expiresAt <= Date.now())
    ) {
      await removePending(kept);
      kept = undefined;
    }
    let stage: Awaited<ReturnType<typeof makeStage>> | undefined;
    let keptAway = false;
    try {
      let result: CodingResult;
      let upper: string;
      let opaque: ReadonlySet<string>;
      if (kept !== undefined) {
        upper = kept.upper;
        opaque = new Set(kept.manifest.opaque);
        result = {
          ...(kept.manifest.result as CodingResult),
          effects: "overlay",
          stagedAt: kept.manifest.createdAt,
        };
      } else {
        stage = await makeStage(`${store.dir}/stage`);
        const ran = await runInStage(argv, timeoutMs, options, store, signal, stage, cwd);
        if ("refusal" in ran) return ran.refusal;
        result = ran.result;
        upper = stage.upper;
        if (ran.opaque === undefined) {
          return discarded(
            result,
            [],
            "its change set could not be read (the run was killed before it was listed)",
          );
        }
        opaque = ran.opaque;
      }
      const set = await readChangeSet(upper, store.workspace, opaque);
      result.changes = set.changes;
      if (set.skipped.length) result.skipped = set.skipped;
      if (set.plan.length === 0) {
        result.applied = true;
        return result;
      }
      const advice = (await judgeCommand(command).catch(() => undefined))?.reason;
      if (advice) result.advice = advice;
      const lower = await lowerState(store.workspace, set.plan);
      const fresh = stage;
      const outcome = await settleChanges({
        store,
        set,
        lower,
        upper,
        payload: Object.freeze({
          toolName: "bash",
          callId: call.callId,
          args: call.args,
          changes: set.changes,
          ...(advice ? { advice } : {}),
        }),
        channel,
        hooks: effects.hooks("bash"),
        pendingTtlMs: effects.pendingTtlMs,
        maxPendingBytes: effects.maxPendingBytes,
        ...(kept !== undefined ? { expiresAt: kept.manifest.expiresAt } : {}),
        keep: async (expiresAt, effectsHash) => {
          keptAway = true;
          if (fresh === undefined) return; // the layer is kept already
          const { changes: _c, skipped: _s, advice: _a, ...output } = result;
          await keepPending(store, fresh.upper, {
            callId: call.callId,
            toolName: "bash",
            ...(channel.sessionId !== undefined ? { sessionId: channel.sessionId } : {}),
            ...(channel.runId !== undefined ? { runId: channel.runId } : {}),
            argsHash: hash,
            effectsHash,
            opaque: [...opaque],
            result: output,
            createdAt: Date.now(),
            expiresAt,
            bytes: await layerBytes(fresh.upper),
            pid: process.pid,
          }, effects.maxPendingBytes);
        },
      });
      if (outcome.applied) {
        result.applied = true;
        if (outcome.checkpoint !== undefined) result.checkpoint = outcome.checkpoint;
        return result;
      }
      return discarded(result, set.changes, outcome.reason, outcome.decision);
    } finally {
      if (stage !== undefined) await removeStage(stage);
      if (kept !== undefined && !keptAway) await removePending(kept);
    }
  }

  /** Runs the command against an overlay in `stage`; its result, or a refusal. */
  async function runInStage(
    argv: readonly string[],
    timeoutMs: number,
    options: Parameters<typeof runProcess>[0],
    store: EffectsStore,
    signal: AbortSignal,
    stage: Awaited<ReturnType<typeof makeStage>>,
    cwd: string,
  ): Promise<
    { result: CodingResult; opaque?: ReadonlySet<string> } | { refusal: CodingResult }
  > {
    const resolved = await sandbox.resolve();
    if (resolved.kind !== "bubblewrap" || resolved.effects.effects !== "overlay") {
      return { refusal: refused("The sandbox changed while the command was prepared") };
    }
    const tools = resolved.effects.tools;
    let staged: StagedRunResult | undefined;
    const run = await runSandboxed(
      resolved,
      {
        workspace: store.workspace,
        workspaceWritable: true,
        cwd,
        home: env ? env.HOME : process.env.HOME,
      },
      options,
      async (opts) => {
        staged = await runStaged(tools, store.workspace, stage, opts);
        return staged.run;
      },
    );
    if (run.spawnError) {
      return {
        refusal: {
          ...refused(`Could not start ${argv[0]}: ${run.spawnError.message}`),
          stdout: run.stdout,
        },
      };
    }
    if (run.aborted) throw signal.reason;
    if (!staged?.started) {
      return {
        refusal: {
          ...refused(
            `Could not stage the command (overlay): ${
              run.stderr.trim() || `exit code ${run.code}`
            }`,
          ),
          stdout: run.stdout,
        },
      };
    }
    if (
      run.code === 127 && !run.timedOut &&
      run.stderr === `${COMMAND_NOT_FOUND_PREFIX}${argv[0]}\n`
    ) {
      return {
        refusal: {
          ...refused(`Command not found: ${argv[0]}`),
          stdout: run.stdout,
          effects: "overlay",
        },
      };
    }
    const returnCode = run.timedOut ? -1 : run.code ?? -1;
    const note = run.timedOut ? `Command timed out after ${timeoutMs / 1000}s` : undefined;
    const result: CodingResult = {
      success: returnCode === 0,
      stdout: run.stdout,
      stderr: note ? (run.stderr ? `${run.stderr}\n${note}` : note) : run.stderr,
      returnCode,
      timedOut: run.timedOut,
      effects: "overlay",
    };
    if (note) result.error = note;
    else if (returnCode !== 0) result.error = `Command exited with code ${returnCode}`;
    return staged.opaque === undefined ? { result } : { result, opaque: staged.opaque };
  }
}

/** One bash call: where it ran, its id and arguments, and the session's effects channel. */
interface BashCall {
  kind: string;
  callId: string;
  args: Record<string, unknown>;
  channel?: ToolEffectsChannel;
  /** Whether the command runs staged (known once the sandbox is resolved). */
  staged?: boolean;
}

function discarded(
  result: CodingResult,
  changes: readonly FileChange[],
  why: string,
  decision?: string,
): CodingResult {
  const message = `The command's changes were not applied: ${why}. The workspace is unchanged.${
    changes.length ? `\nChanges it made:\n${describeChanges(changes)}` : ""
  }`;
  return {
    ...result,
    success: false,
    error: message,
    stderr: result.stderr ? `${result.stderr}\n${message}` : message,
    applied: false,
    ...(decision ? { decision } : {}),
  };
}
