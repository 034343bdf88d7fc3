/**
 * Private: staged layers kept for a later answer. When a `tool.effects` hook asks and the call
 * stops as a pending approval (nobody answers inline), the run's upper layer is moved out of its
 * stage into `STATE/pending/KEY/upper` (KEY: a hash of the session, run and call ids) with a
 * manifest: the call,
 * the hash of its arguments, the opaque-directory listing, the program's output and an expiry. A
 * layer belongs to one call of one run of one session: a call id the model reuses elsewhere never
 * finds it.
 * When the call is resumed with an approval, the tool finds the layer here and commits it instead
 * of running the program again. Kept layers are bounded in total size (the oldest go first) and
 * expire; an expired or missing layer means the program runs again, and its new change set is
 * committed only if its hash is the approved one. A layer nobody can commit any more (its
 * rejection is recorded, or an approval of another change set) is removed when that answer is
 * recorded (`dropKept`), not left to expire.
 *
 * @module
 */

import { createHash } from "node:crypto";
import { lstat, mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import process from "node:process";
import { alive, type EffectsStore } from "./_commit.ts";

/** The default time a kept layer waits for an answer: 24 hours. */
export const DEFAULT_PENDING_TTL_MS: number = 24 * 60 * 60 * 1000;
/** The default cap on all kept layers of a workspace: 1 GiB. */
export const DEFAULT_MAX_PENDING_BYTES: number = 1024 ** 3;

/** What a kept layer remembers of its run. */
export interface PendingManifest {
  callId: string;
  toolName: string;
  /** The session and run the call belongs to (a layer is found only for the same call of them). */
  sessionId?: string;
  runId?: string;
  /** The hash of the arguments the program ran with (`argsHash`). */
  argsHash: string;
  /** The hash of the change set a person was asked about (`ApprovalEffects.hash`). */
  effectsHash?: string;
  /** The opaque upper directories the wrapper listed (`./a/b`). */
  opaque: string[];
  /** The program's result as the model was to see it (output, exit code). */
  result: Record<string, unknown>;
  createdAt: number;
  expiresAt: number;
  bytes: number;
  pid: number;
}

/** A kept layer found for a call. */
export interface PendingLayer {
  readonly dir: string;
  readonly upper: string;
  readonly manifest: PendingManifest;
}

/** Which call a kept layer belongs to: its id, and the session and run it is part of. */
export interface PendingCall {
  readonly callId: string;
  readonly sessionId?: string;
  readonly runId?: string;
}

function keyOf(call: PendingCall): string {
  return createHash("sha256")
    .update(`${call.sessionId ?? ""}\0${call.runId ?? ""}\0${call.callId}`)
    .digest("hex")
    .slice(0, 32);
}

function dirOf(store: EffectsStore, call: PendingCall): string {
  return `${store.dir}/pending/${keyOf(call)}`;
}

function sameCall(manifest: PendingManifest, call: PendingCall): boolean {
  return manifest.callId === call.callId && manifest.sessionId === call.sessionId &&
    manifest.runId === call.runId;
}

/** The bytes a tree holds (files only, symlinks and directories count nothing). */
export async function layerBytes(path: string): Promise<number> {
  let info;
  try {
    info = await lstat(path);
  } catch {
    return 0;
  }
  if (info.isFile()) return Number(info.size);
  if (!info.isDirectory()) return 0;
  let total = 0;
  for (const name of await readdir(path)) total += await layerBytes(`${path}/${name}`);
  return total;
}

async function readManifest(dir: string): Promise<PendingManifest | undefined> {
  try {
    return JSON.parse(await readFile(`${dir}/manifest.json`, "utf8")) as PendingManifest;
  } catch {
    return undefined;
  }
}

/** Every kept layer of the workspace, oldest first (unreadable ones are removed). */
async function listPending(store: EffectsStore): Promise<PendingLayer[]> {
  const out: PendingLayer[] = [];
  for (const name of await readdir(`${store.dir}/pending`).catch(() => [] as string[])) {
    const dir = `${store.dir}/pending/${name}`;
    const manifest = await readManifest(dir);
    if (manifest === undefined) {
      // A layer being moved in by a live process has no manifest yet.
      const match = /\.([0-9]+)\.partial$/.exec(name);
      if (!match || !alive(Number(match[1]))) await rm(dir, { recursive: true, force: true });
      continue;
    }
    out.push({ dir, upper: `${dir}/upper`, manifest });
  }
  return out.sort((a, b) => a.manifest.createdAt - b.manifest.createdAt);
}

/** Removes expired layers, then the oldest until `room` more bytes fit under `maxBytes`. */
export async function prunePending(
  store: EffectsStore,
  maxBytes: number,
  room = 0,
  now: number = Date.now(),
): Promise<void> {
  const layers = await listPending(store);
  let total = 0;
  const kept: PendingLayer[] = [];
  for (const layer of layers) {
    if (layer.manifest.expiresAt <= now) await removePending(layer);
    else {
      kept.push(layer);
      total += layer.manifest.bytes;
    }
  }
  for (const layer of kept) {
    if (total + room <= maxBytes) break;
    total -= layer.manifest.bytes;
    await removePending(layer);
  }
}

/**
 * Keeps `upper` (a stage's upper layer, on the same file system) for a later answer to
 * `manifest.callId`: moves it to the call's pending directory and writes the manifest. A layer
 * kept earlier for the same call is replaced.
 */
export async function keepPending(
  store: EffectsStore,
  upper: string,
  manifest: PendingManifest,
  maxBytes: number,
): Promise<void> {
  await mkdir(`${store.dir}/pending`, { recursive: true, mode: 0o700 });
  // Which workspace this state is of: what finds the layer without the toolkit (`hookscope
  // reject`, the console) reads it, as it does for checkpoints.
  await writeFile(`${store.dir}/workspace`, store.workspace, { mode: 0o600 });
  await prunePending(store, maxBytes, manifest.bytes);
  const dir = dirOf(store, manifest);
  const partial = `${dir}.${process.pid}.partial`;
  await rm(partial, { recursive: true, force: true });
  await mkdir(partial, { mode: 0o700 });
  await rename(upper, `${partial}/upper`);
  await writeFile(`${partial}/manifest.json`, JSON.stringify(manifest), { mode: 0o600 });
  await rm(dir, { recursive: true, force: true });
  await rename(partial, dir);
}

/** The layer kept for `call` (the same id in the same session and run), if there is one. */
export async function findPending(
  store: EffectsStore,
  call: PendingCall,
): Promise<PendingLayer | undefined> {
  const dir = dirOf(store, call);
  const manifest = await readManifest(dir);
  if (manifest === undefined || !sameCall(manifest, call)) return undefined;
  return { dir, upper: `${dir}/upper`, manifest };
}

/**
 * Removes the layer kept for `call` that `answer` rules out: any, for a rejection; one kept for
 * another change set than the approved `effectsHash`, for an approval. Resolves to whether a
 * layer was removed.
 */
export async function dropKept(
  store: EffectsStore,
  call: PendingCall,
  answer: { readonly approve: boolean; readonly effectsHash?: string },
): Promise<boolean> {
  const layer = await findPending(store, call);
  if (layer === undefined) return false;
  if (answer.approve) {
    const kept = layer.manifest.effectsHash;
    if (answer.effectsHash === undefined || kept === undefined || kept === answer.effectsHash) {
      return false;
    }
  }
  await removePending(layer);
  return true;
}

/** Removes a kept layer. */
export async function removePending(layer: Pick<PendingLayer, "dir">): Promise<void> {
  await rm(layer.dir, { recursive: true, force: true, maxRetries: 3 }).catch(() => {});
}
