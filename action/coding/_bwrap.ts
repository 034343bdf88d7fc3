/**
 * Private: runs a program inside bubblewrap (`bwrap`). Builds the bwrap argv (a new user
 * namespace mapped to an unprivileged uid with no capabilities, system read-only, host kernel
 * interfaces read-only or absent, workspace bound, home and secrets absent, sized tmpfs mounts,
 * own PID namespace and `/proc`, no network unless asked), caps processes (pids cgroup or
 * `RLIMIT_NPROC`) and memory (`RLIMIT_DATA`, and a memory cgroup where one can be created) and
 * removes the cgroups afterwards.
 *
 * @module
 */

import { lstat, mkdir, readdir, readFile, readlink, rmdir, writeFile } from "node:fs/promises";
import process from "node:process";
import { retry } from "../../core/_async.ts";
import { isInside } from "../_path.ts";
import { runProcess, type RunProcessOptions, type RunProcessResult } from "./_process.ts";
import type { OverlaySupport } from "./_overlay.ts";
import { FALLBACK_PATH, findSystemProgram } from "./_find_program.ts";
import type { MemoryLimitMode, ProcessLimitMode, SandboxOptions } from "./sandbox.ts";

/** The default cap on memory in one sandboxed run, in bytes (2 GiB). */
export const DEFAULT_MAX_MEMORY_BYTES: number = 2 * 1024 ** 3;

/** The default size of each tmpfs in one sandboxed run, in bytes (512 MiB). */
export const DEFAULT_TMP_SIZE_BYTES: number = 512 * 1024 ** 2;

/** The uid and gid a sandboxed program runs as when the caller is root: `nobody`. */
export const UNPRIVILEGED_ID = 65534;

/**
 * The uid and gid inside the sandbox's user namespace: the caller's own when it is not root,
 * else {@linkcode UNPRIVILEGED_ID}. bubblewrap maps the inside id to the caller's real id
 * outside, so files the program creates in the workspace belong to the caller.
 */
export function sandboxIdentity(): { uid: number; gid: number } {
  const id = (read: (() => number) | undefined): number => {
    try {
      const value = typeof read === "function" ? read() : 0;
      return Number.isInteger(value) && value > 0 ? value : UNPRIVILEGED_ID;
    } catch {
      // Deno without --allow-sys=uid: the unprivileged id, right for root and harmless otherwise
      return UNPRIVILEGED_ID;
    }
  };
  const uid = id(process.getuid?.bind(process));
  // Root's primary group is 0: map it away too, even when the uid is not root.
  const gid = id(process.getgid?.bind(process));
  return { uid, gid };
}

/** The optional bubblewrap flags the sandbox uses where the installed `bwrap` has them. */
export interface BwrapFeatures {
  /** `--disable-userns` (bubblewrap 0.8.0 and later). */
  disableUserns: boolean;
  /** `--size` for a `--tmpfs`. */
  tmpfsSize: boolean;
}

const features = new Map<string, Promise<BwrapFeatures>>();

/** Which optional flags `bwrap` at `path` has, read once from its `--help`. */
export function bwrapFeatures(path: string, timeoutMs = 10_000): Promise<BwrapFeatures> {
  let known = features.get(path);
  if (!known) {
    known = runProcess({
      argv: [path, "--help"],
      timeoutMs,
      maxBytes: 65_536,
      env: { PATH: FALLBACK_PATH },
    }).then((help) => {
      const text = `${help.stdout}\n${help.stderr}`;
      return {
        disableUserns: /^\s*--disable-userns\b/m.test(text),
        tmpfsSize: /^\s*--size\b/m.test(text),
      };
    });
    features.set(path, known);
  }
  return known;
}

/**
 * The arguments of a probe run: the namespaces and identity of every run over a read-only root,
 * with `/proc` and `/dev` (what `detectSandbox` and the overlay check start `true` in).
 */
export function probeArgs(disableUserns: boolean): string[] {
  return [
    ...namespaceArgs(disableUserns),
    "--ro-bind",
    "/",
    "/",
    "--proc",
    "/proc",
    "--dev",
    "/dev",
  ];
}

/** The namespace and identity flags every sandboxed run (and the detection probe) uses. */
export function namespaceArgs(disableUserns: boolean): string[] {
  const { uid, gid } = sandboxIdentity();
  return [
    "--die-with-parent",
    "--new-session",
    "--unshare-user",
    ...(disableUserns ? ["--disable-userns"] : []),
    "--uid",
    String(uid),
    "--gid",
    String(gid),
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--cap-drop",
    "ALL",
  ];
}

type Controller = "pids" | "memory";

interface CgroupBase {
  dir: string;
  /** Whether it is a cgroup v2 root (else a cgroup v1 hierarchy of the one controller). */
  v2: boolean;
}

interface LimitModes {
  mode: ProcessLimitMode;
  pids?: CgroupBase;
  memory: MemoryLimitMode;
  memoryBase?: CgroupBase;
}

let limitModes: Promise<LimitModes> | undefined;
let runCounter = 0;

/** The caller's uid; 0 when it cannot be read (Deno without --allow-sys=uid: assume root). */
function callerUid(): number {
  try {
    return typeof process.getuid === "function" ? process.getuid() ?? 0 : 0;
  } catch {
    return 0;
  }
}

// The limit files of a run cgroup: [file, value, required]. Swap limits may be missing where
// the kernel does not account swap.
function limitFiles(
  controller: Controller,
  v2: boolean,
  value: number,
): [string, string, boolean][] {
  if (controller === "pids") return [["pids.max", String(value), true]];
  return v2 ? [["memory.max", String(value), true], ["memory.swap.max", "0", false]] : [
    ["memory.limit_in_bytes", String(value), true],
    ["memory.memsw.limit_in_bytes", String(value), false],
  ];
}

// Creates a cgroup and writes its limits.
async function makeCgroup(dir: string, files: [string, string, boolean][]): Promise<void> {
  await mkdir(dir);
  try {
    for (const [file, value, required] of files) {
      try {
        await writeFile(`${dir}/${file}`, value);
      } catch (error) {
        if (required) throw error;
      }
    }
  } catch (error) {
    await rmdir(dir).catch(() => {});
    throw error;
  }
}

async function canUseCgroup(base: CgroupBase, controller: Controller): Promise<boolean> {
  const probe = `${base.dir}/hookscope-probe-${process.pid}-${++runCounter}`;
  try {
    await makeCgroup(
      probe,
      limitFiles(controller, base.v2, controller === "pids" ? 8 : 64 * 1024 ** 2),
    );
    await rmdir(probe).catch(() => {});
    return true;
  } catch {
    return false;
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

// The controller's cgroup v1 hierarchy, then a cgroup v2 root that delegates it.
async function findCgroupBase(controller: Controller): Promise<CgroupBase | undefined> {
  const v1: CgroupBase = { dir: `/sys/fs/cgroup/${controller}`, v2: false };
  if (await canUseCgroup(v1, controller)) {
    await removeStale(v1.dir);
    return v1;
  }
  const v2: CgroupBase = { dir: "/sys/fs/cgroup", v2: true };
  try {
    const control = await readFile(`${v2.dir}/cgroup.subtree_control`, "utf8");
    if (control.split(/\s+/).includes(controller) && await canUseCgroup(v2, controller)) {
      await removeStale(v2.dir);
      return v2;
    }
  } catch {
    // no cgroup v2 root here
  }
  return undefined;
}

async function detectLimits(): Promise<LimitModes> {
  const pids = await findCgroupBase("pids");
  const memoryBase = await findCgroupBase("memory");
  const memory: Pick<LimitModes, "memory" | "memoryBase"> = memoryBase
    ? { memory: "cgroup", memoryBase }
    : { memory: "rlimit" };
  if (pids) return { mode: "cgroup", pids, ...memory };
  // RLIMIT_NPROC holds for every user but root: the kernel exempts uid 0 (its real uid outside
  // the sandbox's user namespace), so root without a pids cgroup has no cap.
  if (callerUid() !== 0 && (await findSystemProgram("prlimit")) !== undefined) {
    return { mode: "rlimit", ...memory };
  }
  return { mode: "none", ...memory };
}

/** How this process can cap processes in a sandbox (found once, then cached). */
export async function processLimitMode(): Promise<ProcessLimitMode> {
  limitModes ??= detectLimits();
  return (await limitModes).mode;
}

/** How this process can cap memory in a sandbox (found once, then cached). */
export async function memoryLimitMode(): Promise<MemoryLimitMode> {
  limitModes ??= detectLimits();
  return (await limitModes).memory;
}

interface RunCgroups {
  /** The `cgroup.procs` files the program joins, by controller. */
  procs: Partial<Record<Controller, string>>;
  remove(): Promise<void>;
}

async function removeCgroup(dir: string): Promise<void> {
  // The PID namespace dies with its first process; the kernel may need a moment to free the
  // last tasks before the cgroup can go. Whatever is still listed in it after a while is the
  // run's and is killed (belt and braces: the namespace should have taken it already).
  await retry(async (attempt) => {
    if (attempt === 22) await killMembers(dir);
    try {
      await rmdir(dir);
    } catch (error) {
      if ((error as { code?: string }).code !== "ENOENT") throw error;
    }
  }, { attempts: 60, delayMs: (attempt) => Math.min(50, 2 ** (attempt - 1)) }).catch(() => {});
}

async function killMembers(dir: string): Promise<void> {
  let pids: string;
  try {
    pids = await readFile(`${dir}/cgroup.procs`, "utf8");
  } catch {
    return;
  }
  for (const pid of pids.split("\n")) {
    if (!/^[0-9]+$/.test(pid) || Number(pid) === process.pid) continue;
    try {
      process.kill(Number(pid), "SIGKILL");
    } catch {
      // gone already
    }
  }
}

// The run's cgroups with their limits (pids, memory): one per cgroup v1 hierarchy, one for
// both controllers in a cgroup v2 root (a process is in exactly one v2 cgroup).
async function createCgroups(sandbox: ReadySandbox): Promise<RunCgroups> {
  limitModes ??= detectLimits();
  const modes = await limitModes;
  const wanted: [Controller, CgroupBase | undefined, number][] = [
    ["pids", sandbox.processLimit === "cgroup" ? modes.pids : undefined, sandbox.maxProcesses],
    [
      "memory",
      sandbox.memoryLimit === "cgroup" ? modes.memoryBase : undefined,
      sandbox.maxMemoryBytes,
    ],
  ];
  const byDir = new Map<
    string,
    { controllers: Controller[]; files: [string, string, boolean][] }
  >();
  for (const [controller, base, value] of wanted) {
    if (!base) continue;
    const entry = byDir.get(base.dir) ?? { controllers: [], files: [] };
    entry.controllers.push(controller);
    entry.files.push(...limitFiles(controller, base.v2, value));
    byDir.set(base.dir, entry);
  }
  const made: string[] = [];
  const procs: RunCgroups["procs"] = {};
  const remove = async () => {
    for (const dir of made) await removeCgroup(dir);
  };
  try {
    for (const [baseDir, { controllers, files }] of byDir) {
      const dir = `${baseDir}/hookscope-${process.pid}-${++runCounter}`;
      await makeCgroup(dir, files);
      made.push(dir);
      // In a shared v2 cgroup joining once is enough: the first controller carries the file.
      procs[controllers[0]] = `${dir}/cgroup.procs`;
    }
  } catch (error) {
    await remove();
    throw error;
  }
  return { procs, remove };
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
  if (value.effects !== undefined && value.effects !== "overlay" && value.effects !== "direct") {
    throw new TypeError(
      `${where}: sandbox.effects must be "overlay" or "direct", got ${
        JSON.stringify(String(value.effects))
      }`,
    );
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
  for (const [key, min] of [["maxMemoryBytes", 1024 ** 2], ["tmpSizeBytes", 4096]] as const) {
    const bytes = value[key];
    if (bytes !== undefined && (!Number.isSafeInteger(bytes) || bytes < min)) {
      throw new TypeError(`${where}: sandbox.${key} must be an integer of at least ${min}`);
    }
  }
  return value;
}

/** A sandbox that can run programs. */
export interface ReadySandbox {
  kind: "bubblewrap";
  bwrap: string;
  version?: string;
  processLimit: ProcessLimitMode;
  memoryLimit: MemoryLimitMode;
  network: boolean;
  writable: readonly string[];
  readable: readonly string[];
  maxProcesses: number;
  maxMemoryBytes: number;
  tmpSizeBytes: number;
  /** Whether nested user namespaces are refused (`--disable-userns`, bubblewrap 0.8.0+). */
  disableUserns: boolean;
  /** Whether the tmpfs mounts are sized (`--size`). */
  tmpfsSize: boolean;
  /** Where programs write: staged in an overlay (with its host tools), or directly. */
  effects: OverlaySupport;
}

/** What a {@linkcode SandboxOptions} value resolves to on this machine. */
export type ResolvedSandbox =
  | ReadySandbox
  | { kind: "none" }
  | { kind: "unavailable"; reason: string };

/** The sandbox prefix of the message a sandboxed run prints when its program is missing. */
export const COMMAND_NOT_FOUND_PREFIX = "hookscope-sandbox: command not found: ";

/** Where a run cgroup's `cgroup.procs` is bound inside the sandbox, by controller. */
const CGROUP_PROCS_DIR = "/run/hookscope";

// Runs inside the sandbox as
// `/bin/sh -c WRAPPER hookscope-sandbox CGROUPS NPROC DATA_KIB PWD ARGV...`: joins the run's
// cgroups (CGROUPS: the controllers whose cgroup.procs is bound, or "none"), sets RLIMIT_DATA
// (`ulimit -d`, soft and hard) and, for NPROC other than "none", RLIMIT_NPROC, then replaces
// itself with the program. The program's words are positional parameters, never parsed as
// shell text.
const WRAPPER = [
  'cgroups=$1; nproc=$2; data=$3; pwd=$4; shift 4; if [ "$pwd" = drop ]; then unset PWD OLDPWD; fi',
  `if [ "$cgroups" != none ]; then for c in $cgroups; do echo 0 > ${CGROUP_PROCS_DIR}/$c.procs || { echo "hookscope-sandbox: cannot join the $c cap" >&2; exit 126; }; done; fi`,
  'ulimit -d "$data" || { echo "hookscope-sandbox: cannot set the memory cap" >&2; exit 126; }',
  `command -v "$1" > /dev/null 2>&1 || { printf '${COMMAND_NOT_FOUND_PREFIX}%s\\n' "$1" >&2; exit 127; }`,
  'if [ "$nproc" != none ]; then exec prlimit --nproc="$nproc:$nproc" -- "$@"; fi',
  'exec "$@"',
].join("\n");

/**
 * One entry of the sandbox's mount list, applied in order. `source` is a host path; `dest`
 * the path inside. `optional` binds are skipped when the source does not exist.
 */
export type Mount =
  | { type: "bind" | "ro-bind"; source: string; dest: string; optional?: boolean }
  | { type: "tmpfs"; dest: string; sizeBytes?: number }
  | { type: "proc" | "dev"; dest: string }
  | { type: "symlink"; target: string; dest: string }
  | { type: "remount-ro"; dest: string };

/** The bwrap arguments of a mount list. */
export function mountArgs(mounts: readonly Mount[]): string[] {
  const args: string[] = [];
  for (const mount of mounts) {
    switch (mount.type) {
      case "bind":
      case "ro-bind":
        args.push(`--${mount.type}${mount.optional ? "-try" : ""}`, mount.source, mount.dest);
        break;
      case "tmpfs":
        if (mount.sizeBytes !== undefined) args.push("--size", String(mount.sizeBytes));
        args.push("--tmpfs", mount.dest);
        break;
      case "proc":
      case "dev":
        args.push(`--${mount.type}`, mount.dest);
        break;
      case "symlink":
        args.push("--symlink", mount.target, mount.dest);
        break;
      case "remount-ro":
        args.push("--remount-ro", mount.dest);
        break;
    }
  }
  return args;
}

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

// Host kernel interfaces under /proc that a process whose real uid is root could write with
// file permissions alone (no capability needed): sysctls (`kernel.core_pattern` makes the
// kernel run a program as root outside every namespace), SysRq, IRQ affinity, bus and
// filesystem controls. Bound read-only over the sandbox's own /proc (`/sys` is not mounted).
const PROC_READ_ONLY = ["sys", "sysrq-trigger", "irq", "bus", "fs"];

let systemMounts: Promise<Mount[]> | undefined;

async function buildSystemMounts(): Promise<Mount[]> {
  const mounts: Mount[] = [];
  for (const dir of SYSTEM_DIRS) {
    try {
      const info = await lstat(dir);
      if (info.isSymbolicLink()) {
        mounts.push({ type: "symlink", target: await readlink(dir), dest: dir });
      } else if (info.isDirectory()) mounts.push({ type: "ro-bind", source: dir, dest: dir });
    } catch {
      // not on this system
    }
  }
  for (const name of ETC_FILES) {
    mounts.push({ type: "ro-bind", source: `/etc/${name}`, dest: `/etc/${name}`, optional: true });
  }
  return mounts;
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

/**
 * The sandbox's mounts, in order: the system read-only, a fresh `/proc` with the host kernel
 * interfaces read-only, a minimal `/dev` (read-only but for its sized `/dev/shm`), sized
 * tmpfs on `/tmp`, `/var/tmp` and `$HOME`, the caller's extra paths, the workspace, the run's
 * cgroup files, and last the sandbox's root made read-only (so nothing but the tmpfs mounts
 * and writable binds takes writes).
 */
export async function sandboxMounts(
  sandbox: ReadySandbox,
  place: SandboxPlace,
  cgroupProcs: Readonly<Record<string, string>> = {},
): Promise<Mount[]> {
  systemMounts ??= buildSystemMounts();
  const size = sandbox.tmpfsSize ? sandbox.tmpSizeBytes : undefined;
  const mounts: Mount[] = [...await systemMounts, { type: "proc", dest: "/proc" }];
  for (const name of PROC_READ_ONLY) {
    mounts.push({
      type: "ro-bind",
      source: `/proc/${name}`,
      dest: `/proc/${name}`,
      optional: true,
    });
  }
  mounts.push(
    { type: "dev", dest: "/dev" },
    { type: "tmpfs", dest: "/dev/shm", sizeBytes: size },
    { type: "remount-ro", dest: "/dev" },
    { type: "tmpfs", dest: "/tmp", sizeBytes: size },
    { type: "tmpfs", dest: "/var/tmp", sizeBytes: size },
  );
  const home = place.home;
  if (
    home !== undefined && home.startsWith("/") && home !== "/" &&
    !["/usr", "/etc", "/proc", "/dev", ...SYSTEM_DIRS].some((dir) => isInside(dir, home))
  ) {
    mounts.push({ type: "tmpfs", dest: home, sizeBytes: size });
  }
  for (const path of sandbox.readable) {
    mounts.push({ type: "ro-bind", source: path, dest: path, optional: true });
  }
  for (const path of sandbox.writable) {
    mounts.push({ type: "bind", source: path, dest: path, optional: true });
  }
  mounts.push({
    type: place.workspaceWritable ? "bind" : "ro-bind",
    source: place.workspace,
    dest: place.workspace,
  });
  for (const [controller, file] of Object.entries(cgroupProcs)) {
    mounts.push({ type: "bind", source: file, dest: `${CGROUP_PROCS_DIR}/${controller}.procs` });
  }
  mounts.push({ type: "remount-ro", dest: "/" });
  return mounts;
}

/** The bwrap arguments (without the program path) that run `argv` at `place`. */
export async function bwrapArgs(
  sandbox: ReadySandbox,
  place: SandboxPlace,
  argv: readonly string[],
  cgroupProcs: Readonly<Record<string, string>>,
  env: Readonly<Record<string, string | undefined>>,
): Promise<string[]> {
  const args = namespaceArgs(sandbox.disableUserns);
  if (!sandbox.network) args.push("--unshare-net");
  args.push(...mountArgs(await sandboxMounts(sandbox, place, cgroupProcs)));
  args.push("--chdir", place.cwd, "--", "/bin/sh", "-c", WRAPPER, "hookscope-sandbox");
  const cgroups = Object.keys(cgroupProcs);
  args.push(
    cgroups.length ? cgroups.join(" ") : "none",
    sandbox.processLimit === "rlimit" ? String(sandbox.maxProcesses) : "none",
    String(Math.floor(sandbox.maxMemoryBytes / 1024)),
  );
  // The shell exports PWD; drop it again unless the caller's environment had it.
  args.push(env.PWD === undefined ? "drop" : "keep", ...argv);
  return args;
}

/**
 * Runs `options.argv` inside the sandbox: bwrap is started with exactly `options.env` (so even
 * the sandbox's first process shows no host variables), in a new process group that the
 * deadline kills; with `--die-with-parent` the whole PID namespace goes with it. `run` starts
 * the bwrap argv (default {@linkcode runProcess}; a staged run wraps it in its overlay).
 */
export async function runSandboxed(
  sandbox: ReadySandbox,
  place: SandboxPlace,
  options: RunProcessOptions,
  run: (options: RunProcessOptions) => Promise<RunProcessResult> = runProcess,
): Promise<RunProcessResult> {
  let cgroups: RunCgroups | undefined;
  if (sandbox.processLimit === "cgroup" || sandbox.memoryLimit === "cgroup") {
    try {
      cgroups = await createCgroups(sandbox);
    } catch (error) {
      return {
        stdout: "",
        stderr: "",
        code: null,
        timedOut: false,
        aborted: false,
        spawnError: new Error(
          `Could not create the sandbox's cgroups (process and memory caps): ${
            (error as Error).message
          }`,
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
    const args = await bwrapArgs(sandbox, place, options.argv, cgroups?.procs ?? {}, env);
    return await run({ ...options, argv: [sandbox.bwrap, ...args], env });
  } finally {
    await cgroups?.remove();
  }
}
