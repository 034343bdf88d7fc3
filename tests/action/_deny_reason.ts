// A guard's verdict as its deny reason: guards return `{ decision: "deny", reason }` or nothing
// (the one hook shape), so tests assert on the reason.

import assert from "node:assert/strict";

/** The reason of the guard's deny, or `undefined` when it lets the call go on (it must not reject). */
export async function reasonOf(verdict: unknown): Promise<string | undefined> {
  const out = await verdict as { decision?: unknown; reason?: unknown } | undefined;
  if (out === undefined) return undefined;
  assert.equal(out.decision, "deny");
  assert.equal(typeof out.reason, "string");
  return out.reason as string;
}
