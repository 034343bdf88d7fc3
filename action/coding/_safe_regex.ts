/**
 * A static check that finds the regular expressions whose backtracking time can explode, for
 * the search tool: a pattern is evaluated synchronously, so one hostile pattern would
 * otherwise block the whole process. The search runs such patterns on its linear-time matcher
 * instead, and refuses the ones that matcher cannot run.
 *
 * @module
 */

interface Group {
  /** The group holds any quantifier (`*`, `+`, `?`, `{n,m}`): it can match in several ways. */
  variable: boolean;
  /** The group holds a top-level `|`. */
  alternates: boolean;
}

/** Repeat counts above this are treated like an unbounded quantifier. */
const LARGE_REPEAT = 16;
/** This many quantifiers that can match in several ways (`a?a?…a?aaa…`) is too many. */
const MANY_VARIABLE = 8;

/**
 * Why backtracking `pattern` could take exponential or high polynomial time, or `null` when
 * it is safe enough for `RegExp`: backreferences (`\1`, `\k<name>`); a group that is itself
 * repeated (`*`, `+`, `{n,}` or a `{n,m}` above 16) while it holds a quantifier (even `?`) or an
 * alternation — `(a+)+`, `(a|aa)*`, `(?:x*y)*`, `(a?){30}` (exponential); two or more
 * unbounded quantifiers — `.*.*x`, `a.*b.*c` (cubic or worse on a long line); eight or more
 * quantifiers that can match in several ways — `a?a?a?a?a?a?a?a?aaaaaaaa` (exponential).
 */
export function unsafeRegexReason(pattern: string): string | null {
  const stack: Group[] = [{ variable: false, alternates: false }];
  let inClass = false;
  let closed: Group | null = null;
  let unbounded = 0;
  let variable = 0;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "\\") {
      const next = pattern[i + 1] ?? "";
      if (!inClass && (/[1-9]/.test(next) || next === "k")) {
        return "backreferences";
      }
      i++;
      closed = null;
      continue;
    }
    if (inClass) {
      if (c === "]") inClass = false;
      continue;
    }
    const quantifier = readQuantifier(pattern, i);
    if (quantifier) {
      const isUnbounded = quantifier.max > LARGE_REPEAT;
      if (isUnbounded) unbounded++;
      if (quantifier.min !== quantifier.max) variable++;
      if (isUnbounded && closed && (closed.variable || closed.alternates)) {
        return "a repeated group holding a quantifier or an alternation";
      }
      stack[stack.length - 1].variable = true;
      i = (pattern[quantifier.end] === "?" ? quantifier.end + 1 : quantifier.end) - 1;
      closed = null;
      continue;
    }
    closed = null;
    if (c === "[") inClass = true;
    else if (c === "(") {
      stack.push({ variable: false, alternates: false });
      // `(?:`, `(?=`, `(?<name>`: that `?` is a group modifier, not a quantifier.
      if (pattern[i + 1] === "?") i++;
    } else if (c === "|") stack[stack.length - 1].alternates = true;
    else if (c === ")" && stack.length > 1) {
      const group = stack.pop() as Group;
      if (group.variable) stack[stack.length - 1].variable = true;
      closed = group;
    }
  }
  if (unbounded >= 2) return "several unbounded quantifiers";
  if (variable >= MANY_VARIABLE) return "many quantifiers";
  return null;
}

/**
 * The quantifier starting at `i` (`*`, `+`, `?`, `{n}`, `{n,}`, `{n,m}`; a `{` that does not
 * form one is a literal) as its bounds and the index after it, lazy `?` not included.
 */
export function readQuantifier(
  pattern: string,
  i: number,
): { min: number; max: number; end: number } | null {
  const c = pattern[i];
  if (c === "*") return { min: 0, max: Infinity, end: i + 1 };
  if (c === "+") return { min: 1, max: Infinity, end: i + 1 };
  if (c === "?") return { min: 0, max: 1, end: i + 1 };
  if (c !== "{") return null;
  const match = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i, i + 32));
  if (!match) return null;
  const min = Number(match[1]);
  const max = match[2] === undefined ? min : match[3] === "" ? Infinity : Number(match[3]);
  return { min, max, end: i + match[0].length };
}
