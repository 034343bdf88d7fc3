/**
 * Private: applying change sets to the workspace safely, keeping checkpoints and undoing them.
 *
 * A commit (or an undo) is journaled: the plan is written to a journal outside the workspace,
 * every new entry is staged next to its destination under a temporary name
 * (`.hookscope-ID-N.new`), the journal is marked `commit`, and only then are the entries moved
 * into place by `rename` (an old entry that must go first is renamed to `.hookscope-ID-N.old`,
 * removed at the end). Every step of the `commit` phase can be repeated, so a process killed at
 * any point leaves a journal that {@linkcode recoverEffects} completes (phase `commit` or
 * later) or rolls back (phase `staging`): the workspace is as before, or fully committed.
 *
 * Nothing is written through a symlink: every path's parent components are checked to be real
 * directories inside the workspace before anything is staged, entries are created, never
 * written into (a hard-linked file is replaced by a new inode, so the other link keeps its
 * bytes), and a directory's mode is the only thing set in place.
 *
 * @module
 */

import { createHash } from "node:crypto";
import {
  chmod,
  copyFile,
  lstat,
  mkdir,
  open,
  readdir,
  readFile,
  readlink,
  rename,
  rm,
  symlink,
  unlink,
  writeFile,
} from "node:fs/promises";
import { constants } from "node:fs";
import process from "node:process";
import { fileSha256, lowerState, type PlanOp } from "./_changes.ts";
import type { FileChange } from "./file_change.ts";
import { EffectsCommitError } from "./effects_error.ts";
import { removeStageDir } from "./_overlay.ts";

export { EffectsCommitError };

/** The default cap on what one checkpoint keeps (bytes replaced or deleted): 256 MiB. */
export const DEFAULT_MAX_CHECKPOINT_BYTES: number = 256 * 1024 ** 2;
/** The default cap on all checkpoints of a workspace: 1 GiB (oldest go first). */
export const DEFAULT_MAX_CHECKPOINTS_BYTES: number = 1024 ** 3;

/** Where a workspace's journals, checkpoints and stages live. */
export interface EffectsStore {
  /** The real workspace root. */
  readonly workspace: string;
  /** This workspace's state directory (outside it). */
  readonly dir: string;
  /** The cap on one checkpoint, in bytes. */
  readonly maxCheckpointBytes: number;
  /** The cap on all checkpoints, in bytes. */
  readonly maxCheckpointsBytes: number;
}

/** The state directory of `workspace` under `base`. */
export function effectsStore(
  base: string,
  workspace: string,
  limits?: { maxCheckpointBytes?: number; maxCheckpointsBytes?: number },
): EffectsStore {
  const hash = createHash("sha256").update(workspace).digest("hex").slice(0, 16);
  return {
    workspace,
    dir: `${base}/${hash}`,
    maxCheckpointBytes: limits?.maxCheckpointBytes ?? DEFAULT_MAX_CHECKPOINT_BYTES,
    maxCheckpointsBytes: limits?.maxCheckpointsBytes ?? DEFAULT_MAX_CHECKPOINTS_BYTES,
  };
}

type Stats = Awaited<ReturnType<typeof lstat>>;

async function lstatOrNull(path: string): Promise<Stats | null> {
  try {
    return await lstat(path);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    throw error;
  }
}

function abs(store: EffectsStore, rel: string): string {
  return rel === "" ? store.workspace : `${store.workspace}/${rel}`;
}

function parentOf(path: string): string {
  return path.slice(0, path.lastIndexOf("/"));
}

function checkRel(rel: string): void {
  if (
    typeof rel !== "string" || rel === "" || rel.startsWith("/") || rel.includes("\0") ||
    rel.split("/").some((part) => part === "" || part === "." || part === "..")
  ) {
    throw new EffectsCommitError("escape", `Refusing a change outside the workspace: ${rel}`);
  }
}

/** Checks that every parent component of `rel` is a real directory inside the workspace. */
async function checkParents(store: EffectsStore, rel: string): Promise<void> {
  checkRel(rel);
  const parts = rel.split("/");
  let at = store.workspace;
  for (const part of parts.slice(0, -1)) {
    at = `${at}/${part}`;
    const info = await lstatOrNull(at);
    if (!info || !info.isDirectory()) {
      throw new EffectsCommitError(
        "escape",
        `Refusing to write through ${
          info?.isSymbolicLink() ? "a symlink" : "a missing directory"
        }: ${at.slice(store.workspace.length + 1)}`,
      );
    }
  }
}

/** Writes a file durably: a temporary file, fsync, rename, fsync of the directory. */
async function writeDurable(path: string, text: string): Promise<void> {
  const temp = `${path}.${crypto.randomUUID().slice(0, 8)}.tmp`;
  const handle = await open(temp, "w", 0o600);
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temp, path);
  await syncDir(parentOf(path));
}

async function syncDir(dir: string): Promise<void> {
  try {
    const handle = await open(dir, "r");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // a runtime or file system without directory fsync
  }
}

/** Copies a tree without following symlinks; FIFOs, sockets, devices and whiteouts are left out. */
async function copyTree(source: string, dest: string): Promise<void> {
  const info = await lstat(source);
  if (info.isSymbolicLink()) {
    await symlink(await readlink(source), dest);
  } else if (info.isFile()) {
    await copyFile(source, dest, constants.COPYFILE_EXCL | constants.COPYFILE_FICLONE);
    await chmod(dest, Number(info.mode) & 0o7777);
  } else if (info.isDirectory()) {
    await mkdir(dest, { mode: 0o700 });
    for (const name of await readdir(source)) {
      await copyTree(`${source}/${name}`, `${dest}/${name}`);
    }
    await chmod(dest, Number(info.mode) & 0o7777);
  }
}

/** Clears the set-user-ID and set-group-ID bits of every regular file in a tree. */
async function clearSetIds(path: string): Promise<void> {
  const info = await lstat(path);
  if (info.isFile()) {
    const mode = Number(info.mode) & 0o7777;
    if ((mode & 0o6000) !== 0) await chmod(path, mode & ~0o6000);
  } else if (info.isDirectory()) {
    for (const name of await readdir(path)) await clearSetIds(`${path}/${name}`);
  }
}

async function moveOrCopy(source: string, dest: string, move: boolean): Promise<void> {
  if (move) {
    try {
      await rename(source, dest);
      return;
    } catch (error) {
      if ((error as { code?: string }).code !== "EXDEV") throw error;
    }
  }
  await copyTree(source, dest);
}

async function treeBytes(path: string): Promise<number> {
  const info = await lstatOrNull(path);
  if (!info) return 0;
  if (info.isFile()) return Number(info.size);
  if (!info.isDirectory()) return 0;
  let total = 0;
  for (const name of await readdir(path)) total += await treeBytes(`${path}/${name}`);
  return total;
}

/** One step of a journal. */
interface JournalOp {
  kind: "put" | "remove" | "chmod";
  path: string;
  temp?: string;
  trash?: string;
  mode?: number;
}

interface Journal {
  id: string;
  workspace: string;
  pid: number;
  state: "staging" | "commit" | "cleanup";
  checkpoint?: string;
  ops: JournalOp[];
}

/** A fingerprint of one committed entry, to tell later whether it changed. */
interface Fingerprint {
  path: string;
  type: "file" | "directory" | "symlink" | "other";
  size: number;
  mode: number;
  /** A file's SHA-256 (hex). */
  sha256?: string;
  target?: string;
}

/** What a checkpoint keeps of one path before the commit. */
interface Before {
  path: string;
  /** `none`: the path did not exist; `copy`: a copy at `copy`; `mode`: only a directory mode. */
  type: "none" | "copy" | "mode";
  copy?: string;
  mode?: number;
}

/** A checkpoint's manifest. */
export interface CheckpointManifest {
  id: string;
  pid: number;
  callId: string;
  toolName: string;
  /** The session the call ran in, when known (an undo is recorded there). */
  sessionId?: string;
  workspace: string;
  createdAt: number;
  state: "preparing" | "committed" | "undone";
  bytes: number;
  changes: FileChange[];
  before: Before[];
  after: Fingerprint[];
}

async function fingerprints(store: EffectsStore, rel: string, out: Fingerprint[]): Promise<void> {
  const path = abs(store, rel);
  const info = await lstatOrNull(path);
  if (!info) return;
  const type = info.isFile()
    ? "file"
    : info.isDirectory()
    ? "directory"
    : info.isSymbolicLink()
    ? "symlink"
    : "other";
  const entry: Fingerprint = {
    path: rel,
    type,
    size: type === "directory" ? 0 : Number(info.size),
    mode: Number(info.mode) & 0o7777,
  };
  if (type === "symlink") entry.target = await readlink(path);
  if (type === "file") entry.sha256 = await fileSha256(path);
  out.push(entry);
  if (type === "directory") {
    for (const name of (await readdir(path)).sort()) {
      if (name.startsWith(".hookscope-")) continue;
      await fingerprints(store, `${rel}/${name}`, out);
    }
  }
}

function sameFingerprint(a: Fingerprint, b: Fingerprint): boolean {
  return a.type === b.type && a.size === b.size && a.mode === b.mode && a.target === b.target &&
    a.sha256 === b.sha256;
}

async function writeJournal(store: EffectsStore, journal: Journal): Promise<void> {
  await writeDurable(`${store.dir}/journal/${journal.id}.json`, JSON.stringify(journal));
}

async function writeManifest(store: EffectsStore, manifest: CheckpointManifest): Promise<void> {
  await writeDurable(
    `${store.dir}/checkpoints/${manifest.id}/manifest.json`,
    JSON.stringify(manifest),
  );
}

/** The state directories, made on first use. */
async function ensureDirs(store: EffectsStore): Promise<void> {
  for (const sub of ["journal", "checkpoints", "stage", "pending"]) {
    await mkdir(`${store.dir}/${sub}`, { recursive: true, mode: 0o700 });
  }
  await writeFile(`${store.dir}/workspace`, store.workspace, { mode: 0o600 });
}

/** Repeats one commit-phase step; doing it twice is doing it once. */
async function execute(store: EffectsStore, op: JournalOp): Promise<void> {
  const path = abs(store, op.path);
  if (op.kind === "chmod") {
    const info = await lstatOrNull(path);
    if (info?.isDirectory()) await chmod(path, op.mode!);
    return;
  }
  const trash = op.trash ? abs(store, op.trash) : undefined;
  if (op.kind === "remove") {
    if (trash && !(await lstatOrNull(trash)) && (await lstatOrNull(path))) {
      await rename(path, trash);
    }
    return;
  }
  const temp = abs(store, op.temp!);
  const staged = await lstatOrNull(temp);
  if (!staged) return; // moved into place already
  const current = await lstatOrNull(path);
  if (current && (current.isDirectory() || staged.isDirectory()) && trash) {
    if (!(await lstatOrNull(trash))) await rename(path, trash);
  }
  await rename(temp, path);
}

async function cleanup(store: EffectsStore, journal: Journal): Promise<void> {
  for (const op of journal.ops) {
    if (op.trash) await rm(abs(store, op.trash), { recursive: true, force: true });
  }
}

/** A planned step with where its entry comes from (`move`: it may be renamed from there). */
interface ApplyOp {
  kind: "put" | "remove" | "chmod";
  path: string;
  source?: string;
  move?: boolean;
  mode?: number;
}

/** Whether a process (a commit or a pending run elsewhere) is alive. */
export function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: string }).code === "EPERM";
  }
}

/** Test hook: called with each phase name as the commit reaches it. */
export const commitProbe: { onPhase?: (phase: string) => void } = {};

/** Applies `ops` through a journal (see the module notes). */
async function applyJournaled(
  store: EffectsStore,
  ops: readonly ApplyOp[],
  checkpoint?: string,
): Promise<void> {
  const id = crypto.randomUUID().slice(0, 12);
  const journal: Journal = {
    id,
    workspace: store.workspace,
    pid: process.pid,
    state: "staging",
    ...(checkpoint ? { checkpoint } : {}),
    ops: ops.map((op, index) => {
      const base = op.path.includes("/") ? `${parentOf(op.path)}/` : "";
      const out: JournalOp = { kind: op.kind, path: op.path };
      if (op.kind === "put") out.temp = `${base}.hookscope-${id}-${index}.new`;
      if (op.kind !== "chmod") out.trash = `${base}.hookscope-${id}-${index}.old`;
      if (op.mode !== undefined) out.mode = op.mode;
      return out;
    }),
  };
  for (const op of ops) await checkParents(store, op.path);
  await writeJournal(store, journal);
  commitProbe.onPhase?.("staging");
  try {
    for (const [index, op] of ops.entries()) {
      if (op.kind !== "put") continue;
      await moveOrCopy(op.source!, abs(store, journal.ops[index].temp!), op.move === true);
      // A program's new files never keep set-user-ID or set-group-ID bits: for a root caller
      // they would be set-root programs in the workspace. (Restoring a checkpoint keeps them.)
      if (op.move === true) await clearSetIds(abs(store, journal.ops[index].temp!));
    }
  } catch (error) {
    await rollback(store, journal);
    throw new EffectsCommitError(
      "failed",
      `Could not stage the change set (nothing was applied): ${(error as Error).message}`,
    );
  }
  journal.state = "commit";
  await writeJournal(store, journal);
  commitProbe.onPhase?.("commit");
  for (const op of journal.ops) await execute(store, op);
  journal.state = "cleanup";
  await writeJournal(store, journal);
  commitProbe.onPhase?.("cleanup");
  await cleanup(store, journal);
  await unlink(`${store.dir}/journal/${id}.json`);
}

async function rollback(store: EffectsStore, journal: Journal): Promise<void> {
  for (const op of journal.ops) {
    if (op.temp) await rm(abs(store, op.temp), { recursive: true, force: true });
  }
  await unlink(`${store.dir}/journal/${journal.id}.json`).catch(() => {});
}

async function readManifest(
  store: EffectsStore,
  id: string,
): Promise<CheckpointManifest | undefined> {
  try {
    return JSON.parse(
      await readFile(`${store.dir}/checkpoints/${id}/manifest.json`, "utf8"),
    ) as CheckpointManifest;
  } catch {
    return undefined;
  }
}

async function finishCheckpoint(store: EffectsStore, id: string): Promise<void> {
  const manifest = await readManifest(store, id);
  if (!manifest || manifest.state !== "preparing") return;
  const after: Fingerprint[] = [];
  for (const entry of manifest.before) await fingerprints(store, entry.path, after);
  manifest.after = after;
  manifest.state = "committed";
  await writeManifest(store, manifest);
}

/**
 * Completes or rolls back every journal a killed process left for this workspace, and removes
 * checkpoints that never committed. Run before the first staged run of a toolkit and by
 * `hookscope undo`.
 */
export async function recoverEffects(store: EffectsStore): Promise<number> {
  const names = await readdir(`${store.dir}/journal`).catch(() => [] as string[]);
  let recovered = 0;
  for (const name of names.sort()) {
    if (!name.endsWith(".json")) {
      await rm(`${store.dir}/journal/${name}`, { force: true });
      continue;
    }
    let journal: Journal;
    try {
      journal = JSON.parse(await readFile(`${store.dir}/journal/${name}`, "utf8")) as Journal;
    } catch {
      continue;
    }
    if (journal.workspace !== store.workspace || alive(journal.pid)) continue;
    recovered++;
    if (journal.state === "staging") {
      await rollback(store, journal);
      if (journal.checkpoint) {
        await rm(`${store.dir}/checkpoints/${journal.checkpoint}`, {
          recursive: true,
          force: true,
        });
      }
      continue;
    }
    for (const op of journal.ops) await execute(store, op);
    journal.state = "cleanup";
    await writeJournal(store, journal);
    await cleanup(store, journal);
    if (journal.checkpoint) await finishCheckpoint(store, journal.checkpoint);
    await unlink(`${store.dir}/journal/${name}`);
  }
  // Stages (overlay upper layers) of processes that were killed mid-run.
  for (const name of await readdir(`${store.dir}/stage`).catch(() => [] as string[])) {
    const match = /^run-([0-9]+)-/.exec(name);
    if (match && !alive(Number(match[1]))) {
      await removeStageDir(`${store.dir}/stage/${name}`);
    }
  }
  // Checkpoints without a journal that never committed.
  const journals = new Set<string>();
  for (const name of await readdir(`${store.dir}/journal`).catch(() => [] as string[])) {
    journals.add(name);
  }
  for (const id of await readdir(`${store.dir}/checkpoints`).catch(() => [] as string[])) {
    const manifest = await readManifest(store, id);
    if (!manifest || manifest.state === "preparing") {
      if (journals.size === 0 && !(manifest && alive(manifest.pid))) {
        await rm(`${store.dir}/checkpoints/${id}`, { recursive: true, force: true });
      }
    }
  }
  return recovered;
}

/** What {@linkcode commitChanges} needs. */
export interface CommitRequest {
  callId: string;
  toolName: string;
  changes: readonly FileChange[];
  plan: readonly PlanOp[];
  /**
   * The workspace state the change set was read against (`lowerState`): when the workspace
   * differs now, nothing is applied (`EffectsCommitError`, `changed`).
   */
  lower?: readonly string[];
  /** The session the call ran in (kept in the checkpoint). */
  sessionId?: string;
}

function changedPaths(before: readonly string[], now: readonly string[]): string[] {
  const seen = new Set(now);
  const was = new Set(before);
  const paths = new Set<string>();
  for (const entry of before) if (!seen.has(entry)) paths.add(entry.split("\0")[0]);
  for (const entry of now) if (!was.has(entry)) paths.add(entry.split("\0")[0]);
  return [...paths];
}

/**
 * Keeps a checkpoint of what the plan replaces or deletes, then applies the plan journaled.
 * Resolves to the checkpoint id.
 *
 * @throws {EffectsCommitError} `too_large` when the checkpoint would exceed the cap, `escape`
 * for a path through a symlink, `failed` when staging failed (nothing was applied).
 */
export async function commitChanges(store: EffectsStore, request: CommitRequest): Promise<string> {
  await ensureDirs(store);
  for (const op of request.plan) await checkParents(store, op.path);
  if (request.lower !== undefined) {
    const changed = changedPaths(request.lower, await lowerState(store.workspace, request.plan));
    if (changed.length) {
      throw new EffectsCommitError(
        "changed",
        `The workspace changed since the program ran (${changed.slice(0, 5).join(", ")}${
          changed.length > 5 ? ` and ${changed.length - 5} more` : ""
        }), so its change set was not applied over it; run it again`,
      );
    }
  }
  let bytes = 0;
  for (const op of request.plan) {
    if (op.kind !== "chmod") bytes += await treeBytes(abs(store, op.path));
  }
  if (bytes > store.maxCheckpointBytes) {
    throw new EffectsCommitError(
      "too_large",
      `The change set replaces or deletes ${bytes} bytes, more than the ${store.maxCheckpointBytes} bytes a checkpoint may keep (maxCheckpointBytes), so it could not be undone; nothing was applied`,
    );
  }
  const id = `${Date.now().toString(36)}-${crypto.randomUUID().slice(0, 8)}`;
  const dir = `${store.dir}/checkpoints/${id}`;
  await mkdir(`${dir}/before`, { recursive: true, mode: 0o700 });
  const before: Before[] = [];
  try {
    for (const [index, op] of request.plan.entries()) {
      const path = abs(store, op.path);
      const info = await lstatOrNull(path);
      if (op.kind === "chmod") {
        before.push({ path: op.path, type: "mode", mode: Number(info?.mode ?? 0) & 0o7777 });
      } else if (!info) {
        before.push({ path: op.path, type: "none" });
      } else {
        await copyTree(path, `${dir}/before/${index}`);
        before.push({ path: op.path, type: "copy", copy: `before/${index}` });
      }
    }
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw new EffectsCommitError(
      "failed",
      `Could not keep a checkpoint (nothing was applied): ${(error as Error).message}`,
    );
  }
  await writeManifest(store, {
    id,
    pid: process.pid,
    callId: request.callId,
    toolName: request.toolName,
    ...(request.sessionId !== undefined ? { sessionId: request.sessionId } : {}),
    workspace: store.workspace,
    createdAt: Date.now(),
    state: "preparing",
    bytes,
    changes: [...request.changes],
    before,
    after: [],
  });
  try {
    await applyJournaled(
      store,
      request.plan.map((op) =>
        op.kind === "put" ? { ...op, move: true } : op.kind === "chmod" ? op : { ...op }
      ),
      id,
    );
  } catch (error) {
    if (error instanceof EffectsCommitError) {
      await rm(dir, { recursive: true, force: true });
    }
    throw error;
  }
  await finishCheckpoint(store, id);
  await prune(store);
  return id;
}

/** Every checkpoint of the workspace, oldest first. */
export async function listCheckpoints(store: EffectsStore): Promise<CheckpointManifest[]> {
  const out: CheckpointManifest[] = [];
  for (const id of await readdir(`${store.dir}/checkpoints`).catch(() => [] as string[])) {
    const manifest = await readManifest(store, id);
    if (manifest) out.push(manifest);
  }
  return out.sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id));
}

async function prune(store: EffectsStore): Promise<void> {
  const all = (await listCheckpoints(store)).filter((m) => m.state === "committed");
  let total = all.reduce((sum, m) => sum + m.bytes, 0);
  for (const manifest of all) {
    if (total <= store.maxCheckpointsBytes) break;
    total -= manifest.bytes;
    await rm(`${store.dir}/checkpoints/${manifest.id}`, { recursive: true, force: true });
  }
}

function overlaps(a: string, b: string): boolean {
  return a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);
}

/**
 * Restores the workspace as it was before the committed change set of `callId`. Refuses
 * (`conflict`) when a later committed change set touched the same paths, or (`changed`) when
 * the committed entries changed since, unless `force`. Resolves to the changes the undo made.
 */
export async function undoChanges(
  store: EffectsStore,
  callId: string,
  options?: { force?: boolean },
): Promise<FileChange[]> {
  await recoverEffects(store);
  const all = await listCheckpoints(store);
  const manifest = [...all].reverse().find((m) => m.callId === callId && m.state === "committed");
  if (!manifest) {
    const undone = all.find((m) => m.callId === callId);
    throw new EffectsCommitError(
      "unknown_call",
      undone
        ? `The change set of call ${callId} was undone already`
        : `No checkpoint for call ${callId} in ${store.workspace} (nothing committed, or it was pruned)`,
    );
  }
  const force = options?.force === true;
  const paths = manifest.before.map((entry) => entry.path);
  if (!force) {
    // Every later call that changed these paths, newest first: the first can be undone first.
    const later: CheckpointManifest[] = [];
    const touched = new Set<string>();
    for (const other of [...all].reverse()) {
      if (other.state !== "committed" || other.createdAt < manifest.createdAt) continue;
      if (other.id === manifest.id) continue;
      const hit = other.before.map((entry) => entry.path).filter((p) =>
        paths.some((q) => overlaps(p, q))
      );
      if (hit.length === 0) continue;
      later.push(other);
      for (const path of hit) touched.add(path);
    }
    if (later.length > 0) {
      const shown = [...touched].slice(0, 20);
      const ids = later.map((m) => m.callId);
      throw new EffectsCommitError(
        "conflict",
        `${
          ids.length === 1
            ? `A later call (${ids[0]})`
            : `Later calls (${ids.join(", ")}; newest first)`
        } changed the same paths (${shown.slice(0, 5).join(", ")}); undo ${
          ids.length === 1 ? "it" : "them"
        } first or pass force`,
        {
          later: later.map((m) => ({
            callId: m.callId,
            toolName: m.toolName,
            ...(m.sessionId !== undefined ? { sessionId: m.sessionId } : {}),
          })),
          paths: shown,
        },
      );
    }
    const now: Fingerprint[] = [];
    for (const path of paths) await fingerprints(store, path, now);
    const byPath = new Map(now.map((f) => [f.path, f]));
    const changed = manifest.after.filter((f) => {
      const current = byPath.get(f.path);
      return !current || !sameFingerprint(current, f);
    }).map((f) => f.path);
    const afterPaths = new Set(manifest.after.map((f) => f.path));
    for (const f of now) if (!afterPaths.has(f.path)) changed.push(f.path);
    if (changed.length) {
      throw new EffectsCommitError(
        "changed",
        `Paths changed since call ${callId} committed (${
          changed.slice(0, 5).join(", ")
        }); pass force to restore them anyway`,
        { paths: changed.slice(0, 20) },
      );
    }
  }
  const dir = `${store.dir}/checkpoints/${manifest.id}`;
  const ops: ApplyOp[] = [];
  const changes: FileChange[] = [];
  for (const entry of [...manifest.before].reverse()) {
    if (entry.type === "mode") {
      ops.push({ kind: "chmod", path: entry.path, mode: entry.mode! });
      changes.push({ path: entry.path, kind: "mode", type: "directory" });
    } else if (entry.type === "none") {
      if (await lstatOrNull(abs(store, entry.path))) {
        ops.push({ kind: "remove", path: entry.path });
        changes.push({ path: entry.path, kind: "deleted" });
      }
    } else {
      // What the undo does to the workspace: an entry the call had deleted comes back (created).
      const now = await lstatOrNull(abs(store, entry.path));
      ops.push({ kind: "put", path: entry.path, source: `${dir}/${entry.copy}`, move: false });
      changes.push({ path: entry.path, kind: now ? "modified" : "created" });
    }
  }
  await applyJournaled(store, ops);
  manifest.state = "undone";
  await writeManifest(store, manifest);
  await rm(`${dir}/before`, { recursive: true, force: true });
  return changes;
}
