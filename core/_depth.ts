// The one nesting limit of values that cross the library (tool arguments, tool results, hook
// payloads): every recursive walker can rely on it instead of overflowing the stack.

/**
 * The deepest nesting accepted in tool arguments, tool results and hook payloads: 256 levels of
 * objects and arrays (`{}` is one level). The stores keep 64 levels and mark deeper rows as cut.
 *
 * @example The limit
 * ```ts
 * import { MAX_PAYLOAD_DEPTH } from "@hookscope/core/session";
 * import assert from "node:assert/strict";
 *
 * assert.equal(MAX_PAYLOAD_DEPTH, 256);
 * ```
 */
export const MAX_PAYLOAD_DEPTH = 256;

/**
 * A value nested deeper than {@linkcode MAX_PAYLOAD_DEPTH}: refused with this error instead of a
 * stack overflow (`RangeError: Maximum call stack size exceeded`) somewhere inside. The agent
 * loop hands it to the model as the tool's error and goes on.
 *
 * @example Telling it apart
 * ```ts
 * import { PayloadTooDeepError } from "@hookscope/core/session";
 * import assert from "node:assert/strict";
 *
 * const error = new PayloadTooDeepError(`tool "echo" result`);
 * assert.ok(error instanceof RangeError);
 * assert.equal(error.message, `Cannot accept tool "echo" result: nested deeper than 256 levels`);
 * ```
 */
export class PayloadTooDeepError extends RangeError {
  /** What was refused, e.g. `tool "echo" arguments`. */
  readonly what: string;
  /** The limit that was passed. */
  readonly limit: number;

  /** Makes the error. */
  constructor(what: string, limit: number = MAX_PAYLOAD_DEPTH) {
    super(`Cannot accept ${what}: nested deeper than ${limit} levels`);
    this.name = "PayloadTooDeepError";
    this.what = what;
    this.limit = limit;
  }
}

/**
 * Throws {@linkcode PayloadTooDeepError} when `value` nests objects or arrays deeper than
 * `limit`. Iterative (no recursion, so any depth is safe to check), linear in the size of the
 * value; an object reached twice is walked again only when reached deeper, so a cycle counts as
 * too deep.
 */
export function assertDepth(value: unknown, what: string, limit: number = MAX_PAYLOAD_DEPTH): void {
  if (value === null || typeof value !== "object") return;
  const deepest = new Map<object, number>();
  const stack: unknown[] = [value];
  const depths: number[] = [1];
  while (stack.length > 0) {
    const item = stack.pop() as object;
    const depth = depths.pop()!;
    if (depth > limit) throw new PayloadTooDeepError(what, limit);
    const known = deepest.get(item);
    if (known !== undefined && known >= depth) continue;
    deepest.set(item, depth);
    let children: unknown[];
    try {
      children = Array.isArray(item) ? item : Object.values(item);
    } catch {
      continue; // a hostile proxy: other checks refuse it
    }
    for (let i = 0; i < children.length; i++) {
      const child = children[i];
      if (child !== null && typeof child === "object") {
        stack.push(child);
        depths.push(depth + 1);
      }
    }
  }
}
