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
import { readChangeSet } from "./_changes.ts";
import { commitChanges, EffectsCommitError, type EffectsStore } from "./_commit.ts";
import type { FileChange, ToolEffectsPayload } from "./file_change.ts";
import type { EffectsVerdict } from "./effects_policy.ts";
import { judgeCommand } from "./command_guard.ts";

/** The default deadline of a command, in milliseconds. */
export const DEFAULT_BASH_TIMEOUT_MS = 30_000;
/** The largest deadline a command may ask for, in milliseconds. */
export const MAX_BASH_TIMEOUT_MS = 300_000;
/** The cap per output stream, in bytes. */
export const MAX_OUTPUT_BYTES = 100_000;

const request = z.object({
  command: z.string().describe(
    "one command; no pipes, redirections, ; && || &, $ expansions, substitutions or unquoted globs",
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
  /** Staged runs: where their state lives and who decides on their change sets. */
  effects?: BashEffects;
}

/** What the bash tool needs for staged runs (given by the toolkit). */
export interface BashEffects {
  /** The workspace's effects store (recovered once), or why there is none. */
  store(): Promise<EffectsStore | { unavailable: string }>;
  /** Runs the `tool.effects` hooks (and an approval for an ask). */
  decide(payload: ToolEffectsPayload, signal: AbortSignal): Promise<EffectsVerdict>;
}

/** The change-set entries shown in a refusal (at most this many). */
const SHOWN_CHANGES = 20;

function describeChanges(changes: readonly FileChange[]): string {
  const lines = changes.slice(0, SHOWN_CHANGES).map((c) =>
    `${c.kind} ${c.path}${c.kind === "symlink" && c.target !== undefined ? ` -> ${c.target}` : ""}`
  );
  if (changes.length > SHOWN_CHANGES) lines.push(`… ${changes.length - SHOWN_CHANGES} more`);
  return lines.join("\n");
}

const HOST_SANDBOX: BashSandbox = {
  declared: "none",
  network: true,
  resolve: () => Promise.resolve({ kind: "none" }),
};

function describeSandbox(sandbox: BashSandbox): string {
  if (sandbox.declared === "none") {
    return ' WARNING: sandbox "none": commands run on the host with the full rights of this process (files, network, environment of other processes).';
  }
  return ` Commands run in a bubblewrap sandbox: only the workspace is writable, the system is read-only, the home directory and other secrets are not visible${
    sandbox.network ? "" : ", there is no network"
  }, and the whole sandbox is killed at the deadline.`;
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
    description:
      "Run one command (argv, no shell) in the workspace. Quote words with ' or \" as in bash; a # word starts a comment. Shell syntax is refused: lists (; && || & newlines), pipes, redirections (< >), $ expansions, substitutions, unquoted globs and ~. Returns stdout, stderr, returnCode, timedOut, sandbox." +
      describeSandbox(sandbox),
    inputSchema: request,
    execute: async (args, { signal, callId }): Promise<CodingResult> => {
      // Refusals before a run report the declared kind; a run reports the kind it ran under.
      const call = {
        kind: sandbox.declared === "none" ? "none" : "bubblewrap",
        callId: callId ?? crypto.randomUUID(),
        args: args as Record<string, unknown>,
      };
      const result = await runBash(args as z.infer<typeof request>, signal, call);
      return { ...result, sandbox: call.kind };
    },
  });

  async function runBash(
    input: z.infer<typeof request>,
    signal: AbortSignal,
    call: { kind: string; callId: string; args: Record<string, unknown> },
  ): Promise<CodingResult> {
    if (typeof input.command !== "string") return refused("Malformed command: not a string");
    // With staged runs, shell syntax runs through a real shell: its effects are decided
    // before they land. Whether they are on is known once the sandbox is resolved.
    const early = sandbox.declared === "none" ? undefined : await sandbox.resolve();
    const staged = early?.kind === "bubblewrap" && early.effects.effects === "overlay" &&
      sandbox.effects !== undefined;
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

  /** One staged run: run, read the change set, decide, commit or discard. */
  async function runStagedBash(
    command: string,
    argv: readonly string[],
    cwd: string,
    timeoutMs: number,
    options: Parameters<typeof runProcess>[0],
    store: EffectsStore,
    signal: AbortSignal,
    call: { kind: string; callId: string; args: Record<string, unknown> },
  ): Promise<CodingResult> {
    const resolved = await sandbox.resolve();
    if (resolved.kind !== "bubblewrap" || resolved.effects.effects !== "overlay") {
      return refused("The sandbox changed while the command was prepared");
    }
    const tools = resolved.effects.tools;
    call.kind = "bubblewrap";
    const stage = await makeStage(`${store.dir}/stage`);
    try {
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
          ...refused(`Could not start ${argv[0]}: ${run.spawnError.message}`),
          stdout: run.stdout,
        };
      }
      if (run.aborted) throw signal.reason;
      if (!staged?.started) {
        return {
          ...refused(
            `Could not stage the command (overlay): ${
              run.stderr.trim() || `exit code ${run.code}`
            }`,
          ),
          stdout: run.stdout,
        };
      }
      if (
        run.code === 127 && !run.timedOut &&
        run.stderr === `${COMMAND_NOT_FOUND_PREFIX}${argv[0]}\n`
      ) {
        return {
          ...refused(`Command not found: ${argv[0]}`),
          stdout: run.stdout,
          effects: "overlay",
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
      if (staged.opaque === undefined) {
        return discarded(
          result,
          [],
          "its change set could not be read (the run was killed before it was listed)",
        );
      }
      const set = await readChangeSet(stage.upper, store.workspace, staged.opaque);
      result.changes = set.changes;
      if (set.skipped.length) result.skipped = set.skipped;
      if (set.plan.length === 0) {
        result.applied = true;
        return result;
      }
      const advice = (await judgeCommand(command).catch(() => undefined))?.reason;
      if (advice) result.advice = advice;
      const verdict = await sandbox.effects!.decide(
        Object.freeze({
          toolName: "bash",
          callId: call.callId,
          args: call.args,
          changes: set.changes,
          ...(advice ? { advice } : {}),
        }),
        signal,
      );
      if (verdict.decision === "deny" || verdict.decision === "ask") {
        const why = verdict.decision === "ask"
          ? `a person must approve them and nobody did${
            verdict.reason ? ` (${verdict.reason})` : ""
          }`
          : verdict.reason ?? "a tool.effects hook denied them";
        return discarded(result, set.changes, why, verdict.decision);
      }
      try {
        result.checkpoint = await commitChanges(store, {
          callId: call.callId,
          toolName: "bash",
          changes: set.changes,
          plan: set.plan,
        });
        result.applied = true;
        return result;
      } catch (error) {
        if (!(error instanceof EffectsCommitError)) throw error;
        return discarded(result, set.changes, error.message);
      }
    } finally {
      await removeStage(stage);
    }
  }
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
