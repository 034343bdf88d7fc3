/**
 * Private: where a workspace's effects state lives (journals, checkpoints, stages, kept layers):
 * a directory outside the workspace, opened once per process and workspace with the journals a
 * killed process left completed or rolled back. Shared by the toolkit and `autoFormat`.
 *
 * @module
 */

import process from "node:process";
import { tmpdir } from "node:os";
import { type EffectsStore, effectsStore, recoverEffects } from "./_commit.ts";
import { stageBaseFits } from "./_overlay.ts";
import { prunePending } from "./_pending.ts";

/**
 * The default base directory of effects state (see {@linkcode CodingToolkitOptions.effectsDir}).
 *
 * @example
 * ```ts
 * import { defaultEffectsDir } from "@hookscope/core/coding";
 * import assert from "node:assert/strict";
 *
 * assert.match(defaultEffectsDir(), /hookscope.effects$/);
 * ```
 */
export function defaultEffectsDir(): string {
  const state = process.env.XDG_STATE_HOME;
  if (state && state.startsWith("/")) return `${state}/hookscope/effects`;
  const home = process.env.HOME;
  if (home && home.startsWith("/") && home !== "/") return `${home}/.local/state/hookscope/effects`;
  return `${tmpdir()}/hookscope-effects`;
}

/** The effects store of `root` under `dir` (default {@linkcode defaultEffectsDir}), recovered. */
export async function openEffectsStore(
  dir: string | undefined,
  root: string,
  limits?: { maxCheckpointBytes?: number; maxCheckpointsBytes?: number },
): Promise<EffectsStore | { unavailable: string }> {
  const candidates = dir !== undefined
    ? [dir]
    : [defaultEffectsDir(), `${tmpdir()}/hookscope-effects`];
  const base = candidates.find((candidate) => stageBaseFits(candidate, root));
  if (base === undefined) {
    return {
      unavailable: `the effects directory (${candidates[0]}) overlaps the workspace ${root}`,
    };
  }
  const store = effectsStore(base, root, limits);
  await recoverEffects(store);
  // Layers kept for answers whose approval has expired.
  await prunePending(store, Infinity);
  return store;
}
