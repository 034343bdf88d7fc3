/**
 * Private: staged runs. A program runs against a copy-on-write view of the workspace: in a new
 * mount namespace (`unshare`, with a user namespace for a non-root caller) the real workspace
 * is bound to `STAGE/lower`, an overlay (lower = that bind, upper and work dirs in the stage
 * directory, outside the workspace) is mounted over the workspace path, and bubblewrap binds
 * that path into the sandbox as usual. Every write lands in `STAGE/upper`; the workspace is
 * not touched. When the program ends, the wrapper lists the upper directories that hide a
 * lower directory completely (overlayfs marks them opaque with an extended attribute this
 * runtime cannot read): for each, whether a lower entry it does not name is still visible.
 *
 * @module
 */

import { chmod, lstat, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import process from "node:process";
import { isInside } from "../_path.ts";
import { findProgram } from "./_find_program.ts";
import { runProcess, type RunProcessOptions, type RunProcessResult } from "./_process.ts";

/** Whether staged runs work here, and how they are started. */
export type OverlaySupport =
  | { effects: "overlay"; tools: OverlayTools }
  | { effects: "direct"; effectsReason: string };

/** The host programs a staged run uses (absolute paths). */
export interface OverlayTools {
  unshare: string;
  mount: string;
  timeout: string;
  find: string;
  /** Whether a user namespace is needed to mount (the caller is not root). */
  userns: boolean;
}

/**
 * The mount options of every staged overlay: no metadata-only entries, no index, and directory
 * redirects neither created nor followed (`nofollow`: a redirect attribute in the workspace
 * cannot make the view show other content; `off` would still follow them, and conflicts with
 * the `userxattr` a non-root caller's user namespace needs).
 */
const OVERLAY_OPTIONS = "redirect_dir=nofollow,metacopy=off,index=off,xino=off";

// `/bin/sh -c SCRIPT hookscope-effects WS STAGE SECONDS OPTS MOUNT TIMEOUT FIND -- PROGRAM...`
// runs PROGRAM (bwrap) against the overlay, killed with SIGKILL after SECONDS, then lists
// opaque directories into STAGE/opaque and marks the listing complete with STAGE/done.
const OPAQUE_SCRIPT = [
  'l=$1; m=$2; shift 2; for d; do [ -d "$l/$d" ] && [ ! -L "$l/$d" ] || continue',
  'for c in "$l/$d"/* "$l/$d"/.[!.]* "$l/$d"/..?*; do { [ -e "$c" ] || [ -L "$c" ]; } || continue',
  'n=${c##*/}; { [ -e "./$d/$n" ] || [ -L "./$d/$n" ]; } && continue',
  `{ [ -e "$m/$d/$n" ] || [ -L "$m/$d/$n" ]; } || printf '%s\\0' "$d"; break; done; done`,
].join("\n");

const WRAPPER = [
  "ws=$1; st=$2; secs=$3; opts=$4; mnt=$5; tmo=$6; fnd=$7; shift 8",
  '"$mnt" --bind "$ws" "$st/lower" || { echo "hookscope-effects: cannot bind the workspace" >&2; exit 125; }',
  `"$mnt" -t overlay overlay -o "lowerdir=$st/lower,upperdir=$st/upper,workdir=$st/work,$opts" "$ws" || { echo "hookscope-effects: cannot mount the overlay" >&2; exit 125; }`,
  ': > "$st/started"',
  '"$tmo" --foreground -s KILL "$secs" "$@"; rc=$?',
  `cd "$st/upper" && "$fnd" . -type d -exec /bin/sh -c '${
    OPAQUE_SCRIPT.replaceAll("'", "'\\''")
  }' hookscope-opaque "$st/lower" "$ws" {} + > "$st/opaque" && : > "$st/done"`,
  "exit $rc",
].join("\n");

/** One staged run's directory: `upper`, `work`, `lower` (a mount point) and markers. */
export interface Stage {
  /** The stage directory (outside the workspace). */
  readonly dir: string;
  /** Where the program's writes are. */
  readonly upper: string;
}

/** Makes a fresh stage directory under `base`. */
export async function makeStage(base: string): Promise<Stage> {
  await mkdir(base, { recursive: true, mode: 0o700 });
  // The pid in the name lets a later process remove the stages of one that was killed.
  const dir = await mkdtemp(`${base}/run-${process.pid}-`);
  for (const name of ["upper", "work", "lower"]) await mkdir(`${dir}/${name}`, { mode: 0o755 });
  return { dir, upper: `${dir}/upper` };
}

/** Removes a stage directory (see {@linkcode removeStageDir}). */
export async function removeStage(stage: Stage): Promise<void> {
  await removeStageDir(stage.dir);
}

/**
 * Removes the stage directory `dir`, never throwing. Overlayfs leaves its work directory
 * (`work/work`) with mode 000 and, after a deletion, an entry in it: root removes it anyway, a
 * non-root caller (the owner, through its user namespace) must first give itself access.
 */
export async function removeStageDir(dir: string): Promise<void> {
  const remove = () => rm(dir, { recursive: true, force: true, maxRetries: 3 });
  try {
    await remove();
  } catch {
    await chmod(`${dir}/work/work`, 0o700).catch(() => {});
    await remove().catch(() => {});
  }
}

/** The argv that runs `program` (a bwrap argv) against an overlay of `workspace`. */
export function stagedArgv(
  tools: OverlayTools,
  workspace: string,
  stage: Stage,
  timeoutMs: number,
  program: readonly string[],
): string[] {
  const seconds = (Math.max(1, timeoutMs) / 1000).toFixed(3);
  const options = tools.userns ? `${OVERLAY_OPTIONS},userxattr` : OVERLAY_OPTIONS;
  return [
    tools.unshare,
    ...(tools.userns ? ["--user", "--map-root-user"] : []),
    "--mount",
    "--propagation",
    "private",
    "--",
    "/bin/sh",
    "-c",
    WRAPPER,
    "hookscope-effects",
    workspace,
    stage.dir,
    seconds,
    options,
    tools.mount,
    tools.timeout,
    tools.find,
    "--",
    ...program,
  ];
}

/** How a staged run ended, besides the program's own result. */
export interface StagedRunResult {
  /** The program's result (`timedOut` when its deadline killed it). */
  run: RunProcessResult;
  /** Whether the overlay was mounted (else nothing ran). */
  started: boolean;
  /**
   * The upper directories (stage-relative, `./a/b` as `find` prints them) that hide their lower
   * directory, or `undefined` when the listing did not finish (the change set is then unknown).
   */
  opaque?: ReadonlySet<string>;
}

/**
 * Runs `options.argv` (a bwrap argv) against an overlay of `workspace` whose writes land in
 * `stage`. The program's deadline is `options.timeoutMs`; the whole run (with the listing
 * after it) gets 15 s more before its process group is killed.
 */
export async function runStaged(
  tools: OverlayTools,
  workspace: string,
  stage: Stage,
  options: RunProcessOptions,
): Promise<StagedRunResult> {
  const started = Date.now();
  const run = await runProcess({
    ...options,
    argv: stagedArgv(tools, workspace, stage, options.timeoutMs, options.argv),
    timeoutMs: options.timeoutMs + 15_000,
  });
  const mounted = await exists(`${stage.dir}/started`);
  if (!mounted) return { run, started: false };
  const result: StagedRunResult = {
    // timeout(1) exits 137 (128 + SIGKILL) when it killed the program at its deadline.
    run: (run.code === 124 || run.code === 137) && !run.timedOut &&
        Date.now() - started >= options.timeoutMs
      ? { ...run, timedOut: true, code: null }
      : run,
    started: true,
  };
  if (await exists(`${stage.dir}/done`)) {
    const text = await readFile(`${stage.dir}/opaque`, "utf8");
    result.opaque = new Set(text.split("\0").filter((entry) => entry !== ""));
  }
  return result;
}

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch {
    return false;
  }
}

let support: Promise<OverlaySupport> | undefined;

function callerUid(): number {
  try {
    return typeof process.getuid === "function" ? process.getuid() ?? 0 : 0;
  } catch {
    return 0;
  }
}

/**
 * Whether staged runs work with the sandbox at `bwrap` (found once per process, then cached):
 * Linux, `unshare`, `mount`, `timeout` and `find`, and a probe that mounts an overlay, writes
 * through it inside bubblewrap and finds the write in the upper dir and not in the lower one.
 */
export function overlaySupport(
  bwrap: string,
  probeArgs: readonly string[],
): Promise<OverlaySupport> {
  support ??= probe(bwrap, probeArgs);
  return support;
}

async function probe(bwrap: string, probeArgs: readonly string[]): Promise<OverlaySupport> {
  const direct = (effectsReason: string): OverlaySupport => ({ effects: "direct", effectsReason });
  if (process.platform !== "linux") {
    return direct(`overlayfs is Linux only (this is ${process.platform})`);
  }
  const found: Record<string, string> = {};
  for (const name of ["unshare", "mount", "timeout", "find"]) {
    const path = await findProgram(name);
    if (path === undefined) return direct(`${name} not found (util-linux, coreutils, findutils)`);
    found[name] = path;
  }
  const tools: OverlayTools = {
    unshare: found.unshare,
    mount: found.mount,
    timeout: found.timeout,
    find: found.find,
    userns: callerUid() !== 0,
  };
  const { tmpdir } = await import("node:os");
  let base: string;
  let stage: Stage | undefined;
  try {
    base = await mkdtemp(`${tmpdir()}/hookscope-overlay-probe-`);
  } catch (error) {
    return direct(`cannot make a probe directory: ${(error as Error).message}`);
  }
  try {
    const ws = `${base}/ws`;
    await mkdir(ws);
    await writeFile(`${ws}/kept`, "kept\n");
    stage = await makeStage(`${base}/stages`);
    const program = [
      bwrap,
      ...probeArgs,
      "--bind",
      ws,
      ws,
      "--chdir",
      ws,
      "/bin/sh",
      "-c",
      "echo new > written && rm kept",
    ];
    const result = await runStaged(tools, ws, stage, {
      argv: program,
      timeoutMs: 10_000,
      maxBytes: 4096,
      env: { PATH: "/usr/local/bin:/usr/bin:/bin" },
    });
    if (!result.started || result.run.code !== 0) {
      const why = result.run.spawnError?.message ??
        (result.run.stderr.trim() || `exit code ${result.run.code}`);
      return direct(`overlayfs cannot be mounted for a staged run: ${why}`);
    }
    const upper = await readFile(`${stage.upper}/written`, "utf8").catch(() => "");
    const lowerKept = await readFile(`${ws}/kept`, "utf8").catch(() => "");
    const lowerWritten = await exists(`${ws}/written`);
    if (upper !== "new\n" || lowerKept !== "kept\n" || lowerWritten || !result.opaque) {
      return direct("the overlay probe did not stage its writes");
    }
    return { effects: "overlay", tools };
  } catch (error) {
    return direct(`the overlay probe failed: ${(error as Error).message}`);
  } finally {
    if (stage !== undefined) await removeStage(stage);
    await rm(base, { recursive: true, force: true }).catch(() => {});
  }
}

/** Whether `dir` can hold stages for `workspace` (not inside it, and it not inside `dir`). */
export function stageBaseFits(dir: string, workspace: string): boolean {
  return !isInside(workspace, dir) && !isInside(dir, workspace);
}
