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
    requestOptions: request,
    func: async (args, { signal }): Promise<CodingResult> => {
      // Refusals before a run report the declared kind; a run reports the kind it ran under.
      const call = { kind: sandbox.declared === "none" ? "none" : "bubblewrap" };
      const result = await runBash(args as z.infer<typeof request>, signal, call);
      return { ...result, sandbox: call.kind };
    },
  });

  async function runBash(
    input: z.infer<typeof request>,
    signal: AbortSignal,
    call: { kind: string },
  ): Promise<CodingResult> {
    if (typeof input.command !== "string") return refused("Malformed command: not a string");
    // The argv comes from the same parse the command guard judged, so both read one command.
    let argv: string[];
    try {
      const runnable = await parseRunnable(input.command);
      if ("refused" in runnable) {
        return refused(
          `Shell syntax is not supported: ${
            runnable.refused.join("; ")
          }. The bash tool runs one command as argv, without a shell: run each command in its own call and quote words meant literally`,
        );
      }
      argv = [...runnable.argv];
    } catch (error) {
      if (error instanceof ShellParseError) return refused(`Malformed command: ${error.message}`);
      return refused(
        `The shell parser could not be loaded, so no command can be run: ${
          (error as Error)?.message ?? String(error)
        }`,
      );
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
    if (resolved.kind === "bubblewrap") {
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
}
