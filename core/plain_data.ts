/**
 * `NotPlainDataError`: tool arguments (from a caller, a hook's `updatedArgs` or an approver's
 * `updatedArgs`) must be plain data — what a guard judges is then what the tool runs with.
 *
 * @module
 */

/** What made a value not plain data. */
export type NotPlainDataProblem =
  | "cycle"
  | "function"
  | "symbol"
  | "getter"
  | "not_plain_object"
  | "too_deep";

/**
 * A value that should be plain data (`null`, booleans, numbers, bigints, strings, `undefined`,
 * arrays and objects whose prototype is `Object.prototype` or `null`, holding own enumerable data
 * properties) is not: it has a cycle, a function, a symbol, a getter or setter, an object of
 * another class (a `Date`, a `Map`, a class instance), or is nested more than 256 levels deep.
 * `path` says where (`[]` is the value itself).
 *
 * @example
 * ```ts
 * import { NotPlainDataError } from "@hookscope/core/session";
 * import assert from "node:assert/strict";
 *
 * const error = new NotPlainDataError("Cannot act", ["arguments", "run"], "function");
 * assert.ok(error instanceof TypeError);
 * assert.equal(error.message, "Cannot act: arguments.run is a function, not plain data");
 * ```
 */
export class NotPlainDataError extends TypeError {
  /** Where in the value the problem is (keys and indices). */
  readonly path: readonly (string | number)[];
  /** What the problem is. */
  readonly problem: NotPlainDataProblem;
  /** Makes the error; `action` prefixes the message (`"Cannot act"`). */
  constructor(action: string, path: readonly (string | number)[], problem: NotPlainDataProblem) {
    super(`${action}: ${describePath(path)} ${PROBLEMS[problem]}, not plain data`);
    this.name = "NotPlainDataError";
    this.path = Object.freeze([...path]);
    this.problem = problem;
  }
}

const PROBLEMS: Readonly<Record<NotPlainDataProblem, string>> = Object.freeze({
  cycle: "refers back to itself (a cycle)",
  function: "is a function",
  symbol: "is or has a symbol",
  getter: "is a getter or setter",
  not_plain_object: "is an object of another class",
  too_deep: "is nested too deeply",
});

function describePath(path: readonly (string | number)[]): string {
  if (path.length === 0) return "the value";
  let out = "";
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(key)) out += out === "" ? key : `.${key}`;
    else out += `[${JSON.stringify(key)}]`;
  }
  return out;
}
