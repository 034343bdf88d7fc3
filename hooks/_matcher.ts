// The `match` option of a tool-point hook: a glob or a RegExp tested on the payload's
// `toolName`. Private to the hooks folder.

import { globMatcher } from "../core/_glob.ts";

/**
 * A test of `payload.toolName` (chosen by the model) against a glob, in O(glob × name) time with
 * no backtracking (see `core/_glob.ts`), or against the caller's own RegExp.
 */
export function toolNameMatcher(
  match: string | RegExp,
): (payload: Record<string, unknown>) => boolean {
  if (typeof match === "string") {
    const test = globMatcher(match);
    return (payload) => {
      const name = payload.toolName;
      return typeof name === "string" && test(name);
    };
  }
  const re = match;
  return (payload) => {
    const name = payload.toolName;
    re.lastIndex = 0;
    return typeof name === "string" && re.test(name);
  };
}
