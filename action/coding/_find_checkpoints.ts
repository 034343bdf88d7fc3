// Finding kept checkpoints by call id across effects directories, for the tools that undo a call
// without the toolkit that made it (`hookscope undo`, the web console). A checkpoint lives with its
// workspace's effects state (`<base>/<hash of the workspace>/checkpoints`), not in the session
// store: the store's tool results name it (`checkpoint` in a staged bash result).

import { readdir, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import {
  type CheckpointManifest,
  type EffectsStore,
  effectsStore,
  listCheckpoints,
} from "./_commit.ts";
import { defaultEffectsDir } from "./_effects_home.ts";
import { dropKept, type PendingCall } from "./_pending.ts";

/** A checkpoint and the effects state it belongs to. */
export interface FoundCheckpoint {
  /** The workspace's effects state (what `undoChanges` takes). */
  readonly store: EffectsStore;
  /** The checkpoint. */
  readonly manifest: CheckpointManifest;
}

/** Where to look: `dir` when given, else the toolkit's default and the temporary fallback. */
export function effectsBases(dir?: string): string[] {
  return dir !== undefined ? [dir] : [defaultEffectsDir(), `${tmpdir()}/hookscope-effects`];
}

/**
 * Every checkpoint under `bases` (of calls in `callIds`, when given), oldest first, in any state
 * (`preparing` ones belong to a commit a killed process left; `undoChanges` recovers them first).
 * A workspace state directory is taken only when its recorded workspace hashes back to it.
 */
export async function findCheckpoints(
  bases: readonly string[],
  callIds?: ReadonlySet<string>,
): Promise<FoundCheckpoint[]> {
  const out: FoundCheckpoint[] = [];
  for (const store of await workspaceStates(bases)) {
    for (const manifest of await listCheckpoints(store)) {
      if (callIds !== undefined && !callIds.has(manifest.callId)) continue;
      out.push({ store, manifest });
    }
  }
  return out.sort((a, b) => a.manifest.createdAt - b.manifest.createdAt);
}

/**
 * The effects state of every workspace under `bases`, each once; a state directory is taken only
 * when its recorded workspace hashes back to it.
 */
export async function workspaceStates(bases: readonly string[]): Promise<EffectsStore[]> {
  const out: EffectsStore[] = [];
  const seen = new Set<string>();
  for (const base of bases) {
    for (const hash of await readdir(base).catch(() => [] as string[])) {
      let workspace: string;
      try {
        workspace = await readFile(`${base}/${hash}/workspace`, "utf8");
      } catch {
        continue;
      }
      const store = effectsStore(base, workspace);
      if (store.dir !== `${base}/${hash}` || seen.has(store.dir)) continue;
      seen.add(store.dir);
      out.push(store);
    }
  }
  return out;
}

/**
 * Removes the staged layers kept under `bases` for `call` that the recorded `answer` rules out
 * (see `dropKept`): for the tools that record answers without the toolkit that kept them
 * (`hookscope approve`/`reject`, the web console). Resolves to how many were removed.
 */
export async function dropKeptLayers(
  bases: readonly string[],
  call: PendingCall,
  answer: { readonly approve: boolean; readonly effectsHash?: string },
): Promise<number> {
  let dropped = 0;
  for (const store of await workspaceStates(bases)) {
    if (await dropKept(store, call, answer)) dropped++;
  }
  return dropped;
}
