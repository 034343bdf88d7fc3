/**
 * Private: runs a program inside bubblewrap (`bwrap`). Builds the bwrap argv (system read-only,
 * workspace bound, home and secrets absent, own PID namespace and `/proc`, no network unless
 * asked, capabilities dropped), caps the number of processes (pids cgroup or `RLIMIT_NPROC`)
 * and removes the cgroup afterwards.
 *
 * @module
 */

import {
  lstat,
  mkdir,
  readdir,
  readFile,
  readlink,
  realpath,
  rmdir,
  stat,
  writeFile,
} from "node:fs/promises";
import process from "node:process";
import { isInside } from "../_path.ts";
import { runProcess, type RunProcessOptions, type RunProcessResult } from "./_process.ts";
import {
  DEFAULT_MAX_PROCESSES,
  detectSandbox,
  type ProcessLimitMode,
  type SandboxOptions,
} from "./sandbox.ts";

const FALLBACK_PATH = "/usr/local/bin:/usr/bin:/bin";

function isExecutable(info: { isFile(): boolean; mode: number }): boolean {
  return info.isFile() && (info.mode & 0o111) !== 0;
}

/** Finds a program: a path (made absolute) or a name on `PATH`; `undefined` when missing. */
export async function findProgram(name: string): Promise<string | undefined> {
  const candidates: string[] = [];
  if (name.includes("/")) {
    candidates.push(name.startsWith("/") ? name : `${process.cwd()}/${name}`);
  } else {
    for (const dir of (process.env.PATH || FALLBACK_PATH).split(":")) {
      if (dir.startsWith("/")) candidates.push(`${dir}/${name}`);
    }
  }
  for (const candidate of candidates) {
    try {
      // Mode bits, not access(X_OK): Deno's access() needs --allow-sys=uid.
      if (isExecutable(await stat(candidate))) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

interface CgroupBase {
  dir: string;
}

let limitMode: Promise<{ mode: ProcessLimitMode; base?: CgroupBase }> | undefined;
let runCounter = 0;

async function canUseCgroup(dir: string): Promise<boolean> {
  const probe = `${dir}/hookscope-probe-${process.pid}-${++runCounter}`;
  try {
    await mkdir(probe);
  } catch {
    return false;
  }
  try {
    await writeFile(`${probe}/pids.max`, "8");
    return true;
  } catch {
    return false;
  } finally {
    await rmdir(probe).catch(() => {});
  }
}

// Removes the empty run cgroups a process that died mid-run left behind.
async function removeStale(dir: string): Promise<void> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const match = /^hookscope-([0-9]+)-[0-9]+$/.exec(name);
    if (!match || Number(match[1]) === process.pid) continue;
    try {
      process.kill(Number(match[1]), 0);
      continue; // its process is alive
    } catch (error) {
      if ((error as { code?: string }).code !== "ESRCH") continue;
    }
    await rmdir(`${dir}/${name}`).catch(() => {});
  }
}

async function detectLimit(): Promise<{ mode: ProcessLimitMode; base?: CgroupBase }> {
  // cgroup v1 pids hierarchy, then a cgroup v2 root that delegates the pids controller.
  const v1 = "/sys/fs/cgroup/pids";
  if (await canUseCgroup(v1)) {
    await removeStale(v1);
    return { mode: "cgroup", base: { dir: v1 } };
  }
  try {
    const control = await readFile("/sys/fs/cgroup/cgroup.subtree_control", "utf8");
    if (control.split(/\s+/).includes("pids") && await canUseCgroup("/sys/fs/cgroup")) {
      await removeStale("/sys/fs/cgroup");
      return { mode: "cgroup", base: { dir: "/sys/fs/cgroup" } };
    }
  } catch {
    // no cgroup v2 root here
  }
  // RLIMIT_NPROC holds for every user but root (the kernel exempts uid 0 outside the sandbox).
  let uid = 0;
  try {
    uid = typeof process.getuid === "function" ? process.getuid() ?? 0 : 0;
  } catch {
    // Deno without --allow-sys=uid: assume root, the case where RLIMIT_NPROC does not hold
  }
  if (uid !== 0 && (await findProgramIn("prlimit")) !== undefined) return { mode: "rlimit" };
  return { mode: "none" };
}

async function findProgramIn(name: string): Promise<string | undefined> {
  for (const dir of ["/usr/bin", "/bin"]) {
    try {
      if (isExecutable(await stat(`${dir}/${name}`))) return `${dir}/${name}`;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** How this process can cap processes in a sandbox (found once, then cached). */
export async function processLimitMode(): Promise<ProcessLimitMode> {
  limitMode ??= detectLimit();
  return (await limitMode).mode;
}

interface RunCgroup {
  procs: string;
  remove(): Promise<void>;
}

async function createCgroup(max: number): Promise<RunCgroup | undefined> {
  limitMode ??= detectLimit();
  const { base } = await limitMode;
  if (!base) return undefined;
  const dir = `${base.dir}/hookscope-${process.pid}-${++runCounter}`;
  await mkdir(dir);
  try {
    await writeFile(`${dir}/pids.max`, String(max));
  } catch (error) {
    await rmdir(dir).catch(() => {});
    throw error;
  }
  return {
    procs: `${dir}/cgroup.procs`,
    async remove() {
      // The PID namespace dies with its first process; the kernel may need a moment to free
      // the last tasks before the cgroup can go.
      for (let attempt = 0; attempt < 60; attempt++) {
        try {
          await rmdir(dir);
          return;
        } catch (error) {
          if ((error as { code?: string }).code === "ENOENT") return;
          await new Promise((resolve) => setTimeout(resolve, Math.min(50, 2 ** attempt)));
        }
      }
    },
  };
}

/** Checks a {@linkcode SandboxOptions} value; throws `TypeError` naming the bad field. */
export function validateSandboxOptions(options: unknown, where: string): SandboxOptions {
  if (options === undefined) return {};
  if (options === null || typeof options !== "object" || Array.isArray(options)) {
    throw new TypeError(`${where}: sandbox must be an object`);
  }
  const value = options as SandboxOptions;
  if (value.kind !== undefined && !["auto", "bubblewrap", "none"].includes(value.kind)) {
    throw new TypeError(
      `${where}: sandbox.kind must be "auto", "bubblewrap" or "none", got ${
        JSON.stringify(String(value.kind))
      }`,
    );
  }
  if (value.network !== undefined && typeof value.network !== "boolean") {
    throw new TypeError(`${where}: sandbox.network must be a boolean`);
  }
  for (const key of ["writable", "readable"] as const) {
    const paths = value[key];
    if (paths === undefined) continue;
    if (!Array.isArray(paths)) throw new TypeError(`${where}: sandbox.${key} must be an array`);
    for (const path of paths) {
      if (typeof path !== "string" || !path.startsWith("/") || path.includes("\0")) {
        throw new TypeError(
          `${where}: sandbox.${key} must hold absolute paths, got ${JSON.stringify(String(path))}`,
        );
      }
    }
  }
  if (
    value.bwrapPath !== undefined &&
    (typeof value.bwrapPath !== "string" || value.bwrapPath === "" ||
      value.bwrapPath.includes("\0"))
  ) {
    throw new TypeError(`${where}: sandbox.bwrapPath must be a non-empty string`);
  }
  if (
    value.maxProcesses !== undefined &&
    (!Number.isInteger(value.maxProcesses) || value.maxProcesses < 1)
  ) {
    throw new TypeError(`${where}: sandbox.maxProcesses must be a positive integer`);
  }
  return value;
}

/** A sandbox that can run programs. */
export interface ReadySandbox {
  kind: "bubblewrap";
  bwrap: string;
  version?: string;
  processLimit: ProcessLimitMode;
  network: boolean;
  writable: readonly string[];
  readable: readonly string[];
  maxProcesses: number;
}

/** What a {@linkcode SandboxOptions} value resolves to on this machine. */
export type ResolvedSandbox =
  | ReadySandbox
  | { kind: "none" }
  | { kind: "unavailable"; reason: string };

/** The sandbox prefix of the message a sandboxed run prints when its program is missing. */
export const COMMAND_NOT_FOUND_PREFIX = "hookscope-sandbox: command not found: ";

const CGROUP_PROCS = "/run/hookscope/cgroup.procs";

// Runs inside the sandbox as `/bin/sh -c WRAPPER hookscope-sandbox MODE MAX PWD ARGV...`: joins the
// run's pids cgroup (or sets RLIMIT_NPROC), then replaces itself with the program. The program's
// words are positional parameters, never parsed as shell text.
const WRAPPER = [
  'mode=$1; max=$2; pwd=$3; shift 3; if [ "$pwd" = drop ]; then unset PWD OLDPWD; fi',
  `if [ "$mode" = cgroup ]; then echo 0 > ${CGROUP_PROCS} || { echo "hookscope-sandbox: cannot join the process cap" >&2; exit 126; }; fi`,
  `command -v "$1" > /dev/null 2>&1 || { printf '${COMMAND_NOT_FOUND_PREFIX}%s\\n' "$1" >&2; exit 127; }`,
  `if [ "$mode" = rlimit ]; then exec prlimit --nproc="$max:$max" -- "$@"; fi`,
  'exec "$@"',
].join("\n");

// The system, read-only. Only what programs need: no /home, /root, /srv, /var, /mnt, /media,
// /opt, /sys, /run, and of /etc only the name-service, linker cache, time zone, alternatives,
// CA and git files (no shadow, gshadow, sudoers, ssh keys or /etc/ssl/private). Each bind
// costs time on every call, so the list is short.
const SYSTEM_DIRS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];
const ETC_FILES = [
  "passwd",
  "group",
  "hosts",
  "resolv.conf",
  "nsswitch.conf",
  "host.conf",
  "gai.conf",
  "protocols",
  "services",
  "ld.so.cache",
  "localtime",
  "alternatives",
  "ssl/certs",
  "ssl/openssl.cnf",
  "pki/tls/certs",
  "os-release",
  "gitconfig",
];

let systemMounts: Promise<string[]> | undefined;

async function buildSystemMounts(): Promise<string[]> {
  const args: string[] = [];
  for (const dir of SYSTEM_DIRS) {
    try {
      const info = await lstat(dir);
      if (info.isSymbolicLink()) args.push("--symlink", await readlink(dir), dir);
      else if (info.isDirectory()) args.push("--ro-bind", dir, dir);
    } catch {
      // not on this system
    }
  }
  for (const name of ETC_FILES) args.push("--ro-bind-try", `/etc/${name}`, `/etc/${name}`);
  return args;
}

async function realOrSame(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch {
    return path;
  }
}

/** Resolves sandbox options: the explicit `none`, a ready bubblewrap, or why there is none. */
export async function resolveSandbox(options: SandboxOptions): Promise<ResolvedSandbox> {
  if (options.kind === "none") return { kind: "none" };
  const info = await detectSandbox(options.bwrapPath ? { bwrapPath: options.bwrapPath } : {});
  if (info.kind !== "bubblewrap" || info.path === undefined) {
    return { kind: "unavailable", reason: info.reason ?? "no sandbox found" };
  }
  return {
    kind: "bubblewrap",
    bwrap: info.path,
    ...(info.version ? { version: info.version } : {}),
    processLimit: info.processLimit ?? "none",
    network: options.network === true,
    writable: await Promise.all((options.writable ?? []).map(realOrSame)),
    readable: await Promise.all((options.readable ?? []).map(realOrSame)),
    maxProcesses: options.maxProcesses ?? DEFAULT_MAX_PROCESSES,
  };
}

/** Where a sandboxed program runs. */
export interface SandboxPlace {
  /** The real workspace root, bound at the same path. */
  workspace: string;
  /** Whether the workspace is bound read-write (bash) or read-only (a formatter). */
  workspaceWritable: boolean;
  /** The working directory (inside the workspace). */
  cwd: string;
  /** The program's `HOME`: an empty tmpfs is mounted there. */
  home?: string;
}

/** The bwrap arguments (without the program path) that run `argv` at `place`. */
export async function bwrapArgs(
  sandbox: ReadySandbox,
  place: SandboxPlace,
  argv: readonly string[],
  cgroupProcs: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): Promise<string[]> {
  systemMounts ??= buildSystemMounts();
  const args = [
    "--die-with-parent",
    "--new-session",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--cap-drop",
    "ALL",
  ];
  if (!sandbox.network) args.push("--unshare-net");
  args.push(...await systemMounts);
  args.push("--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/var/tmp");
  const home = place.home;
  if (
    home !== undefined && home.startsWith("/") && home !== "/" &&
    !["/usr", "/etc", "/proc", "/dev", ...SYSTEM_DIRS].some((dir) => isInside(dir, home))
  ) {
    args.push("--tmpfs", home);
  }
  for (const path of sandbox.readable) args.push("--ro-bind-try", path, path);
  for (const path of sandbox.writable) args.push("--bind-try", path, path);
  args.push(place.workspaceWritable ? "--bind" : "--ro-bind", place.workspace, place.workspace);
  if (cgroupProcs !== undefined) args.push("--bind", cgroupProcs, CGROUP_PROCS);
  args.push("--chdir", place.cwd, "--", "/bin/sh", "-c", WRAPPER, "hookscope-sandbox");
  args.push(
    cgroupProcs !== undefined ? "cgroup" : sandbox.processLimit === "rlimit" ? "rlimit" : "none",
  );
  // The shell exports PWD; drop it again unless the caller's environment had it.
  args.push(String(sandbox.maxProcesses), env.PWD === undefined ? "drop" : "keep", ...argv);
  return args;
}

/**
 * Runs `options.argv` inside the sandbox: bwrap is started with exactly `options.env` (so even
 * the sandbox's first process shows no host variables), in a new process group that the
 * deadline kills; with `--die-with-parent` the whole PID namespace goes with it.
 */
export async function runSandboxed(
  sandbox: ReadySandbox,
  place: SandboxPlace,
  options: RunProcessOptions,
): Promise<RunProcessResult> {
  let cgroup: RunCgroup | undefined;
  if (sandbox.processLimit === "cgroup") {
    try {
      cgroup = await createCgroup(sandbox.maxProcesses);
    } catch (error) {
      return {
        stdout: "",
        stderr: "",
        code: null,
        timedOut: false,
        aborted: false,
        spawnError: new Error(
          `Could not create the process cap (pids cgroup): ${(error as Error).message}`,
        ),
        stdoutTruncated: false,
      };
    }
  }
  try {
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(options.env ?? process.env)) {
      if (typeof value === "string") env[key] = value;
    }
    if (!env.PATH) env.PATH = FALLBACK_PATH;
    // A host TMPDIR the sandbox cannot see would break mktemp and friends: use its /tmp.
    const visible = [place.workspace, ...sandbox.writable, "/tmp", "/var/tmp"];
    if (env.TMPDIR !== undefined && !visible.some((dir) => isInside(dir, env.TMPDIR))) {
      env.TMPDIR = "/tmp";
    }
    const args = await bwrapArgs(sandbox, place, options.argv, cgroup?.procs, env);
    return await runProcess({ ...options, argv: [sandbox.bwrap, ...args], env });
  } finally {
    await cgroup?.remove();
  }
}
