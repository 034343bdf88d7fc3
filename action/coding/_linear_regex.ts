/**
 * A linear-time matcher for the common subset of JavaScript regular expressions (Thompson NFA
 * simulation), so search grep cannot be stalled by backtracking: its cost is bounded by
 * (line length × pattern size) whatever the pattern and the line.
 *
 * Supported, with JavaScript's non-unicode semantics on UTF-16 code units: literals and
 * identity escapes, `.`, classes with ranges and negation, `\d \w \s \D \W \S`, `\t \n \r \v
 * \f \0 \xHH \uHHHH`, `^`, `$`, `\b`, `\B`, groups `(...)` and `(?:...)`, alternation and the
 * quantifiers `* + ? {n} {n,} {n,m}` (greedy or lazy — the same for a yes/no test). Anything
 * else (lookaround, backreferences, named groups, `\p{…}`, `\c`) is not compiled.
 *
 * @module
 */

import { readQuantifier } from "./_safe_regex.ts";

type Test = (code: number) => boolean;
type Node =
  | { t: "char"; test: Test }
  | { t: "cat"; items: Node[] }
  | { t: "alt"; options: Node[] }
  | { t: "rep"; node: Node; min: number; max: number }
  | { t: "assert"; kind: "^" | "$" | "b" | "B" };

/** Thrown inside the parser for syntax outside the subset; `compileLinearRegex` returns null. */
class Unsupported extends Error {}

/** The most NFA states a compiled pattern may have (counted repeats are expanded). */
const MAX_STATES = 2_000;

const isDigit: Test = (c) => c >= 48 && c <= 57;
const isWord: Test = (c) =>
  (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
const isSpace: Test = (c) =>
  (c >= 9 && c <= 13) || c === 32 || c === 0xa0 || c === 0x1680 ||
  (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f ||
  c === 0x205f || c === 0x3000 || c === 0xfeff;
const isDot: Test = (c) => c !== 10 && c !== 13 && c !== 0x2028 && c !== 0x2029;

const CLASS_ESCAPES: Record<string, Test> = {
  d: isDigit,
  D: (c) => !isDigit(c),
  w: isWord,
  W: (c) => !isWord(c),
  s: isSpace,
  S: (c) => !isSpace(c),
};
const CHAR_ESCAPES: Record<string, number> = { t: 9, n: 10, v: 11, f: 12, r: 13 };

function parse(pattern: string): Node {
  let i = 0;
  const hex = (length: number): number => {
    const digits = pattern.slice(i, i + length);
    if (!new RegExp(`^[0-9a-fA-F]{${length}}$`).test(digits)) throw new Unsupported();
    i += length;
    return parseInt(digits, 16);
  };
  /** An escape after `\` (already consumed) as a code unit or a class test. */
  const escape = (inClass: boolean): number | Test => {
    const c = pattern[i++];
    if (c === undefined) throw new Unsupported();
    if (c in CLASS_ESCAPES) return CLASS_ESCAPES[c];
    if (c in CHAR_ESCAPES) return CHAR_ESCAPES[c];
    if (c === "0" && !/[0-9]/.test(pattern[i] ?? "")) return 0;
    if (c === "x") return hex(2);
    if (c === "u") return hex(4);
    if (inClass && c === "b") return 8;
    if (/[A-Za-z0-9]/.test(c)) throw new Unsupported();
    return c.charCodeAt(0);
  };
  const classAtom = (): Test => {
    const negated = pattern[i] === "^";
    if (negated) i++;
    const tests: Test[] = [];
    for (;;) {
      if (i >= pattern.length) throw new Unsupported();
      if (pattern[i] === "]") {
        i++;
        break;
      }
      let low: number | Test;
      if (pattern[i] === "\\") {
        i++;
        low = escape(true);
      } else low = pattern.charCodeAt(i++);
      if (pattern[i] === "-" && pattern[i + 1] !== "]" && i + 1 < pattern.length) {
        i++;
        let high: number | Test;
        if (pattern[i] === "\\") {
          i++;
          high = escape(true);
        } else high = pattern.charCodeAt(i++);
        if (typeof low !== "number" || typeof high !== "number" || low > high) {
          throw new Unsupported();
        }
        const [from, to] = [low, high];
        tests.push((c) => c >= from && c <= to);
      } else if (typeof low === "number") {
        const code = low;
        tests.push((c) => c === code);
      } else tests.push(low);
    }
    return (c) => tests.some((test) => test(c)) !== negated;
  };
  const atom = (): Node => {
    const c = pattern[i];
    if (c === "(") {
      i++;
      if (pattern[i] === "?") {
        if (pattern[i + 1] !== ":") throw new Unsupported();
        i += 2;
      }
      const inner = alternation();
      if (pattern[i] !== ")") throw new Unsupported();
      i++;
      return inner;
    }
    if (c === "[") {
      i++;
      return { t: "char", test: classAtom() };
    }
    if (c === ".") {
      i++;
      return { t: "char", test: isDot };
    }
    if (c === "^" || c === "$") {
      i++;
      return { t: "assert", kind: c };
    }
    if (c === "\\") {
      i++;
      if (pattern[i] === "b" || pattern[i] === "B") {
        return { t: "assert", kind: pattern[i++] as "b" | "B" };
      }
      const escaped = escape(false);
      if (typeof escaped === "number") return { t: "char", test: (x) => x === escaped };
      return { t: "char", test: escaped };
    }
    if (c === "*" || c === "+" || c === "?" || (c === "{" && readQuantifier(pattern, i) !== null)) {
      throw new Unsupported();
    }
    i++;
    const code = c.charCodeAt(0);
    return { t: "char", test: (x) => x === code };
  };
  const sequence = (): Node => {
    const items: Node[] = [];
    while (i < pattern.length && pattern[i] !== "|" && pattern[i] !== ")") {
      let node = atom();
      const q = readQuantifier(pattern, i);
      if (q) {
        if (node.t === "assert" || q.min > q.max) throw new Unsupported();
        i = q.end;
        if (pattern[i] === "?") i++;
        if (readQuantifier(pattern, i)) throw new Unsupported();
        node = { t: "rep", node, min: q.min, max: q.max };
      }
      items.push(node);
    }
    return { t: "cat", items };
  };
  const alternation = (): Node => {
    const options = [sequence()];
    while (pattern[i] === "|") {
      i++;
      options.push(sequence());
    }
    return options.length === 1 ? options[0] : { t: "alt", options };
  };
  const tree = alternation();
  if (i !== pattern.length) throw new Unsupported();
  return tree;
}

const CHAR = 0;
const SPLIT = 1;
const ASSERT = 2;
const MATCH = 3;

interface Program {
  kind: number[];
  out: number[];
  out2: number[];
  test: (Test | null)[];
  assertion: (string | null)[];
}

function compile(tree: Node): { program: Program; start: number } {
  const program: Program = { kind: [], out: [], out2: [], test: [], assertion: [] };
  const add = (kind: number, out: number, out2 = -1, test: Test | null = null, a = ""): number => {
    if (program.kind.length >= MAX_STATES) throw new Unsupported();
    program.kind.push(kind);
    program.out.push(out);
    program.out2.push(out2);
    program.test.push(test);
    program.assertion.push(a || null);
    return program.kind.length - 1;
  };
  const emit = (node: Node, next: number): number => {
    switch (node.t) {
      case "char":
        return add(CHAR, next, -1, node.test);
      case "assert":
        return add(ASSERT, next, -1, null, node.kind);
      case "cat": {
        let start = next;
        for (let k = node.items.length - 1; k >= 0; k--) start = emit(node.items[k], start);
        return start;
      }
      case "alt": {
        const starts = node.options.map((option) => emit(option, next));
        let start = starts[starts.length - 1];
        for (let k = starts.length - 2; k >= 0; k--) start = add(SPLIT, starts[k], start);
        return start;
      }
      case "rep": {
        let start: number;
        if (node.max === Infinity) {
          const loop = add(SPLIT, -1, next);
          program.out[loop] = emit(node.node, loop);
          start = loop;
        } else {
          start = next;
          for (let k = 0; k < node.max - node.min; k++) {
            start = add(SPLIT, emit(node.node, start), next);
          }
        }
        for (let k = 0; k < node.min; k++) start = emit(node.node, start);
        return start;
      }
    }
  };
  const match = add(MATCH, -1);
  return { program, start: emit(tree, match) };
}

/**
 * Compiles `pattern` into a linear-time `test(line)`, or returns `null` when it uses syntax
 * outside the supported subset (or would need more than 2 000 states). Assumes the pattern is
 * a valid JavaScript regular expression (check with `new RegExp` first).
 */
export function compileLinearRegex(pattern: string): ((line: string) => boolean) | null {
  let compiled: { program: Program; start: number };
  try {
    compiled = compile(parse(pattern));
  } catch (error) {
    if (error instanceof Unsupported) return null;
    throw error;
  }
  const { program, start } = compiled;
  const size = program.kind.length;
  const mark = new Int32Array(size).fill(-1);
  const stack: number[] = [];
  let generation = 0;
  return (line: string): boolean => {
    if (generation > 0x3fffffff) {
      mark.fill(-1);
      generation = 0;
    }
    generation++;
    let current: number[] = [];
    let next: number[] = [];
    const wordAt = (pos: number) => pos >= 0 && pos < line.length && isWord(line.charCodeAt(pos));
    /** Adds `state` and its epsilon closure at `pos` to `list`; true when MATCH is reached. */
    const addClosure = (state: number, pos: number, list: number[]): boolean => {
      stack.push(state);
      while (stack.length) {
        const s = stack.pop() as number;
        if (mark[s] === generation) continue;
        mark[s] = generation;
        const kind = program.kind[s];
        if (kind === MATCH) {
          stack.length = 0;
          return true;
        }
        if (kind === SPLIT) {
          stack.push(program.out2[s], program.out[s]);
        } else if (kind === ASSERT) {
          const a = program.assertion[s];
          const ok = a === "^"
            ? pos === 0
            : a === "$"
            ? pos === line.length
            : (wordAt(pos - 1) !== wordAt(pos)) === (a === "b");
          if (ok) stack.push(program.out[s]);
        } else list.push(s);
      }
      return false;
    };
    for (let pos = 0;; pos++) {
      if (addClosure(start, pos, current)) return true;
      if (pos === line.length) return false;
      const code = line.charCodeAt(pos);
      generation++;
      for (const s of current) {
        if ((program.test[s] as Test)(code) && addClosure(program.out[s], pos + 1, next)) {
          return true;
        }
      }
      [current, next] = [next, current];
      next.length = 0;
    }
  };
}
