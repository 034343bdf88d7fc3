/**
 * The OS sandbox the coding toolkit runs programs in: {@linkcode detectSandbox},
 * {@linkcode SandboxOptions} and {@linkcode SandboxUnavailableError}. On Linux the sandbox is
 * bubblewrap (`bwrap`); elsewhere there is none and programs run only when the caller opts out
 * with `sandbox: { kind: "none" }`.
 *
 * @module
 */

import process from "node:process";
import { bwrapFeatures, memoryLimitMode, probeArgs, processLimitMode } from "./_bwrap.ts";
import { findProgram } from "./_find_program.ts";
import { runProcess } from "./_process.ts";
import { overlaySupport } from "./_overlay.ts";

/** The sandbox kinds a program can run under. */
export type SandboxKind = "bubblewrap" | "none";

/**
 * What caps the number of processes in a sandboxed run: a pids `"cgroup"`, `RLIMIT_NPROC`
 * (`"rlimit"`) or nothing (`"none"`).
 */
export type ProcessLimitMode = "cgroup" | "rlimit" | "none";

/**
 * What caps memory in a sandboxed run: a memory `"cgroup"` for the whole run (plus
 * `RLIMIT_DATA` per process) or `RLIMIT_DATA` per process only (`"rlimit"`).
 */
export type MemoryLimitMode = "cgroup" | "rlimit";

/** How the coding tools sandbox the programs they run (bash, formatters). */
export interface SandboxOptions {
  /**
   * `"auto"` (default): bubblewrap where it is installed and works; where it is not, programs are
   * refused with {@linkcode SandboxUnavailableError}. `"bubblewrap"`: the same, named. `"none"`:
   * no sandbox, programs run on the host with the caller's rights (visible in the bash tool's
   * description and in every result as `sandbox: "none"`).
   */
  kind?: "auto" | "bubblewrap" | "none";
  /** Give programs the host's network (default `false`: a new, empty network namespace). */
  network?: boolean;
  /** More host paths bound read-write at the same place (default none). Absolute paths. */
  writable?: readonly string[];
  /** More host paths bound read-only at the same place (default none). Absolute paths. */
  readable?: readonly string[];
  /** The bubblewrap program: a name looked up on `PATH` or a path (default `"bwrap"`). */
  bwrapPath?: string;
  /**
   * The cap on processes and threads inside one sandboxed run (default 512); a fork bomb stops
   * there. Enforced by a pids cgroup where one can be created, else by `RLIMIT_NPROC` for a
   * non-root user (see `processLimit` in {@linkcode SandboxInfo}).
   */
  maxProcesses?: number;
  /**
   * The cap on memory, in bytes (default 2 GiB, at least 1 MiB): every process in a sandboxed
   * run gets it as `RLIMIT_DATA` (heap, anonymous mappings; V8's large reserved address space is
   * not counted, so `node` runs), for root and other users alike; an allocation past it fails.
   * Where a memory cgroup can be created (root with a writable cgroup v1 `memory` hierarchy or
   * a cgroup v2 root that delegates `memory`), the whole run, processes and their tmpfs pages
   * together, is also held to it (see `memoryLimit` in {@linkcode SandboxInfo}).
   */
  maxMemoryBytes?: number;
  /**
   * The size of each tmpfs in a sandboxed run, in bytes (default 512 MiB, at least 4096):
   * `/tmp`, `/var/tmp`, `/dev/shm` and the empty `$HOME` are each full at this size
   * (`ENOSPC`).
   */
  tmpSizeBytes?: number;
  /**
   * Where programs write (default `"overlay"` where {@linkcode detectSandbox} reports it, else
   * `"direct"`, visibly). `"overlay"`: every run writes into a copy-on-write layer over the
   * workspace; its change set goes to the `tool.effects` hooks and only an allow (or no
   * opinion) commits it, with a checkpoint for undo. Asked for explicitly where it cannot
   * work, bash refuses to run. `"direct"`: programs write into the workspace as they run (the
   * command judge is then the only guard against destructive commands).
   */
  effects?: "overlay" | "direct";
}

/** Where sandboxed programs write: a staged copy-on-write layer, or the workspace itself. */
export type EffectsMode = "overlay" | "direct";

/** What {@linkcode detectSandbox} found. */
export interface SandboxInfo {
  /** `"bubblewrap"` when it is installed and can create its namespaces, else `"none"`. */
  kind: SandboxKind;
  /** The bubblewrap version (`"0.8.0"`). */
  version?: string;
  /** Why there is no sandbox. */
  reason?: string;
  /** The absolute path of the `bwrap` program that was found. */
  path?: string;
  /**
   * What caps the number of processes: a pids `"cgroup"` (root with a writable pids
   * controller), `"rlimit"` (`RLIMIT_NPROC`, non-root users) or `"none"` (root without a
   * writable pids cgroup: only the deadline ends a fork bomb).
   */
  processLimit?: ProcessLimitMode;
  /**
   * What caps memory: `"cgroup"` (a memory cgroup for the whole run, and `RLIMIT_DATA` per
   * process) or `"rlimit"` (`RLIMIT_DATA` per process only).
   */
  memoryLimit?: MemoryLimitMode;
  /**
   * `"overlay"` when staged runs work here (overlayfs mounts in a new mount namespace and
   * bubblewrap sees it), else `"direct"` with {@linkcode SandboxInfo.effectsReason}.
   */
  effects: EffectsMode;
  /** Why there are no staged runs (`effects: "direct"`). */
  effectsReason?: string;
}

/** Options of {@linkcode detectSandbox}. */
export interface DetectSandboxOptions {
  /** The bubblewrap program to look for (default `"bwrap"` on `PATH`). */
  bwrapPath?: string;
  /** The deadline of each probe run in milliseconds (default 10 000). */
  timeoutMs?: number;
}

/** The default cap on processes inside one sandboxed run. */
export const DEFAULT_MAX_PROCESSES = 512;

/** How to get a sandbox, appended to every {@linkcode SandboxUnavailableError} message. */
export const SANDBOX_HINT =
  'install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap; Arch: pacman -S bubblewrap) or opt out explicitly with sandbox: { kind: "none" }';

/**
 * Thrown when a program must run in a sandbox and none is available. The message names the
 * reason, how to install bubblewrap and how to opt out with `sandbox: { kind: "none" }`.
 *
 * @example
 * ```ts
 * import { SandboxUnavailableError } from "@hookscope/core/coding";
 * import assert from "node:assert/strict";
 *
 * const error = new SandboxUnavailableError("bash", "bwrap not found");
 * assert.match(error.message, /apt-get install bubblewrap/);
 * assert.match(error.message, /kind: "none"/);
 * ```
 */
export class SandboxUnavailableError extends Error {
  /** Why no sandbox is available. */
  readonly reason: string;
  /** Builds the message from what was to run and why no sandbox is available. */
  constructor(what: string, reason: string) {
    super(`Cannot run ${what} without a sandbox: ${reason}; ${SANDBOX_HINT}`);
    this.name = "SandboxUnavailableError";
    this.reason = reason;
  }
}

/**
 * Finds out whether programs can run in a bubblewrap sandbox here: Linux, a `bwrap` program
 * (on `PATH` or at `bwrapPath`) whose `--version` answers, and a probe run that creates the PID
 * namespace and `/proc` the sandbox uses, then whether staged runs work (`effects`: an overlay
 * mounted in a new mount namespace and written through inside bubblewrap). Never rejects: everything that is missing is reported
 * as `{ kind: "none", reason }`. Under Deno it needs `run` permission for `bwrap`.
 *
 * @example Point detection at a program that does not exist
 * ```ts
 * import { detectSandbox } from "@hookscope/core/coding";
 * import assert from "node:assert/strict";
 *
 * const info = await detectSandbox({ bwrapPath: "/nonexistent/bwrap" });
 * assert.equal(info.kind, "none");
 * assert.equal(typeof info.reason, "string");
 * ```
 */
export async function detectSandbox(options?: DetectSandboxOptions): Promise<SandboxInfo> {
  const requested = options?.bwrapPath ?? "bwrap";
  if (typeof requested !== "string" || requested === "" || requested.includes("\0")) {
    throw new TypeError("Cannot detect sandbox: bwrapPath must be a non-empty string");
  }
  const timeoutMs = options?.timeoutMs ?? 10_000;
  if (process.platform !== "linux") {
    const reason = `bubblewrap runs only on Linux (this is ${process.platform})`;
    return { kind: "none", reason, effects: "direct", effectsReason: reason };
  }
  const path = await findProgram(requested);
  if (path === undefined) {
    const reason = `bwrap not found: ${requested}`;
    return { kind: "none", reason, effects: "direct", effectsReason: `no sandbox: ${reason}` };
  }
  const env = { PATH: "/usr/local/bin:/usr/bin:/bin" };
  const version = await runProcess({ argv: [path, "--version"], timeoutMs, maxBytes: 4096, env });
  if (version.spawnError || version.code !== 0) {
    const why = version.spawnError?.message ?? (version.stderr.trim() ||
      `exit code ${version.code}`);
    const reason = `${path} --version failed: ${why}`;
    return {
      kind: "none",
      reason,
      path,
      effects: "direct",
      effectsReason: `no sandbox: ${reason}`,
    };
  }
  const match = /([0-9]+(?:\.[0-9]+)+)/.exec(version.stdout);
  // The same namespaces and identity as every run: a machine that cannot create the user
  // namespace (or mount /proc in it) has no sandbox rather than failing each call.
  const bareArgs = probeArgs((await bwrapFeatures(path, timeoutMs)).disableUserns);
  const probe = await runProcess({
    argv: [path, ...bareArgs, "true"],
    timeoutMs,
    maxBytes: 4096,
    env,
  });
  if (probe.spawnError || probe.code !== 0) {
    const why = probe.spawnError?.message ?? (probe.stderr.trim() || `exit code ${probe.code}`);
    const reason = `${path} cannot create its namespaces: ${why}`;
    return {
      kind: "none",
      reason,
      path,
      effects: "direct",
      effectsReason: `no sandbox: ${reason}`,
    };
  }
  const overlay = await overlaySupport(path, bareArgs);
  return {
    kind: "bubblewrap",
    ...(match ? { version: match[1] } : {}),
    path,
    processLimit: await processLimitMode(),
    memoryLimit: await memoryLimitMode(),
    ...(overlay.effects === "overlay"
      ? { effects: "overlay" as const }
      : { effects: "direct" as const, effectsReason: overlay.effectsReason }),
  };
}
