/**
 * Private: which specs run their bash calls staged. A toolkit registers a probe for its spec;
 * the coding preset's command guard asks it, and stays blocking where there is none.
 *
 * @module
 */

import type { AgentSpec } from "../spec.ts";

const probes = new WeakMap<AgentSpec, Set<() => Promise<boolean>>>();

/** Registers a probe: resolves `true` when this spec's bash calls run staged. */
export function registerStagedProbe(spec: AgentSpec, probe: () => Promise<boolean>): void {
  let set = probes.get(spec);
  if (!set) probes.set(spec, set = new Set());
  set.add(probe);
}

/** Whether every toolkit using `spec` stages its bash calls (`false` when none registered). */
export async function stagedFor(spec: AgentSpec): Promise<boolean> {
  const set = probes.get(spec);
  if (!set || set.size === 0) return false;
  for (const probe of set) if (!(await probe().catch(() => false))) return false;
  return true;
}
