// Private: turning `SandboxOptions` into a ready sandbox (what `detectSandbox` found, the
// bubblewrap features, staged runs or not, the limits) or the reason there is none. Apart from
// _bwrap.ts, which runs programs in a resolved sandbox, so that neither it nor sandbox.ts imports
// the other's values.

import { realpath } from "node:fs/promises";
import {
  bwrapFeatures,
  DEFAULT_MAX_MEMORY_BYTES,
  DEFAULT_TMP_SIZE_BYTES,
  probeArgs,
  type ResolvedSandbox,
} from "./_bwrap.ts";
import { type OverlaySupport, overlaySupport } from "./_overlay.ts";
import { DEFAULT_MAX_PROCESSES, detectSandbox, type SandboxOptions } from "./sandbox.ts";

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
  const features = await bwrapFeatures(info.path);
  let effects: OverlaySupport;
  if (options.effects === "direct") {
    effects = { effects: "direct", effectsReason: 'sandbox.effects is "direct"' };
  } else {
    effects = await overlaySupport(info.path, probeArgs(features.disableUserns));
    if (options.effects === "overlay" && effects.effects === "direct") {
      return {
        kind: "unavailable",
        reason:
          `sandbox.effects is "overlay" but staged runs do not work here: ${effects.effectsReason}`,
      };
    }
  }
  return {
    kind: "bubblewrap",
    bwrap: info.path,
    ...(info.version ? { version: info.version } : {}),
    processLimit: info.processLimit ?? "none",
    memoryLimit: info.memoryLimit ?? "rlimit",
    network: options.network === true,
    writable: await Promise.all((options.writable ?? []).map(realOrSame)),
    readable: await Promise.all((options.readable ?? []).map(realOrSame)),
    maxProcesses: options.maxProcesses ?? DEFAULT_MAX_PROCESSES,
    maxMemoryBytes: options.maxMemoryBytes ?? DEFAULT_MAX_MEMORY_BYTES,
    tmpSizeBytes: options.tmpSizeBytes ?? DEFAULT_TMP_SIZE_BYTES,
    ...features,
    effects,
  };
}
