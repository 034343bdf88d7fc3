// Which errors a tool.pre guard threw, so the agent loop can tell a blocked tool call (answered to
// the model) from any other failure of Branch.act (which ends the loop).

const blocked = new WeakSet<object>();

/** Records that a tool.pre guard threw this error. */
export function markBlocked(error: unknown): void {
  if (error !== null && (typeof error === "object" || typeof error === "function")) {
    blocked.add(error);
  }
}

/**
 * Whether a tool.pre guard threw this error. A thrown primitive cannot be recorded, so it counts
 * as a block.
 */
export function isBlocked(error: unknown): boolean {
  if (error !== null && (typeof error === "object" || typeof error === "function")) {
    return blocked.has(error);
  }
  return true;
}
