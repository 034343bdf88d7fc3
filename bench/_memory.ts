/**
 * What the memory checks (`bench/memory.ts`, `bench/memory_agent.ts`) share: a forced full GC,
 * the heap and RSS readings and the runtime's name, on Deno, Node and Bun.
 *
 * @module
 */

interface Runtime {
  gc?: () => void;
  Bun?: { gc(force: boolean): void; version: string };
  Deno?: {
    memoryUsage(): { heapUsed: number; rss: number };
    version: { deno: string };
  };
  process?: {
    memoryUsage(): { heapUsed: number; rss: number };
    versions: Record<string, string>;
  };
}
const g = globalThis as unknown as Runtime;

/** Runs a full GC; `false` when the runtime exposes none (start it with `--expose-gc`). */
export function collect(): boolean {
  if (g.Bun) {
    g.Bun.gc(true);
    return true;
  }
  if (typeof g.gc === "function") {
    g.gc();
    g.gc();
    return true;
  }
  return false;
}

/** The heap in use and the resident set size, in bytes. */
export function usage(): { heapUsed: number; rss: number } {
  return g.Deno ? g.Deno.memoryUsage() : g.process!.memoryUsage();
}

/** Bytes as MiB with two decimals. */
export function mb(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(2)} MiB`;
}

/** `Deno 2.x`, `Bun 1.x` or `Node 24.x`. */
export function runtimeName(): string {
  if (g.Bun) return `Bun ${g.Bun.version}`;
  if (g.Deno) return `Deno ${g.Deno.version.deno}`;
  return `Node ${g.process?.versions.node}`;
}
