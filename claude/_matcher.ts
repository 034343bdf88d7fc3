/**
 * Claude Code matchers: absent, empty or `*` match every tool; a string of letters, digits, `_`
 * and `|` is an exact name or a `|` list; anything else is a regular expression tested against
 * the Claude tool name (RE2 syntax through `re2js`: linear time, whatever the name).
 *
 * @module
 */

import { RE2JS } from "re2js";
import { ClaudeHookConfigError } from "./settings.ts";

/** Compiles a matcher to a predicate on Claude tool names. */
export function compileMatcher(matcher: string, at: string): (name: string) => boolean {
  if (matcher === "" || matcher === "*") return () => true;
  if (/^[A-Za-z0-9_|]+$/.test(matcher)) {
    const names = new Set(matcher.split("|").filter((n) => n !== ""));
    return (name) => names.has(name);
  }
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(matcher);
  } catch (error) {
    throw new ClaudeHookConfigError(
      at,
      `matcher ${
        JSON.stringify(matcher)
      } is not a regular expression hookscope can run (RE2 syntax): ${
        (error as Error)?.message ?? error
      }`,
    );
  }
  return (name) => compiled.matcher(name).find();
}
