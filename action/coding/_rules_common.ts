/**
 * What the command judge's rule families share: the finding type, the view of one command a
 * rule gets, and helpers to read words and options at their most dangerous reading.
 *
 * @module
 */

import type { ShellWord } from "./_shell_parse.ts";

/** What the judge found: a destructive command, or one it cannot see into. */
export interface ShellFinding {
  /** `destructive`: destroys data; `opaque`: runs code the guard cannot see; `unparseable`. */
  readonly kind: "destructive" | "opaque" | "unparseable";
  /** Why, naming the command. */
  readonly reason: string;
}

/** One simple command as a rule sees it, with the ways back into the judge. */
export interface Judging {
  /** The whole command (program first). */
  readonly words: readonly ShellWord[];
  /** The program name as compared: basename, lower case. */
  readonly name: string;
  /** The arguments. */
  readonly args: readonly ShellWord[];
  /** The program receives more arguments from its input (xargs, find -exec … +). */
  readonly bulk: boolean;
  /** Its standard input is given by the command line (a pipe or an input redirection). */
  readonly input: boolean;
  /** Judges words as a command run by this one (one level deeper). */
  nested(rest: readonly ShellWord[], bulk?: boolean): ShellFinding | undefined;
  /** Parses `source` as a shell command line and judges it (one level deeper). */
  reparse(source: ShellWord, why: string): ShellFinding | undefined;
}

/** A rule for one program: a finding, or `undefined` when it objects to nothing. */
export type Rule = (judging: Judging) => ShellFinding | undefined;

/** A part of a word computed at run time. */
export const DYNAMIC = "\u0000";

/** Device files a redirection may write to. */
export const HARMLESS_DEVICES = /^\/dev\/(null|stdout|stderr|tty|zero|fd\/\d+|shm\/.*)$/;
/** System trees a redirection (or `tee`, `cp`, `mv`) must not write into. */
export const SYSTEM_PATHS =
  /^\/(etc|boot|bin|sbin|usr|lib|lib32|lib64|libx32|sys|proc|root|var\/lib|var\/spool)(\/|$)/;
/** Paths that are the standard input (code read from them is code the guard cannot see). */
export const STDIN_FILES = /^(\/dev\/stdin|\/dev\/fd\/\d+|\/proc\/(self|\d+)\/fd\/\d+|-)$/;

/** A device (not a harmless one) or a system file. */
export function writesSystemTarget(value: string): boolean {
  return (value.startsWith("/dev/") && !HARMLESS_DEVICES.test(value)) ||
    SYSTEM_PATHS.test(value);
}

/** The program name as the judge compares it: basename, lower case, version suffix kept. */
export function programName(value: string): string {
  return value.slice(value.lastIndexOf("/") + 1).toLowerCase();
}

/** Words from literal strings. */
export function literal(values: readonly string[]): ShellWord[] {
  return values.map((value) => ({ value, dynamic: false, splittable: false, pattern: false }));
}

/** Words joined into one command string (dynamic when any part is). */
export function joined(words: readonly ShellWord[]): ShellWord {
  return {
    value: words.map((w) => w.value).join(" "),
    dynamic: words.some((w) => w.dynamic),
    splittable: false,
    pattern: false,
  };
}

/**
 * A word that could turn out to be (or hide) a flag: computed, split, or a glob that could
 * expand to a name made of option letters (`*`, `?r`, `[-]*`; not `*.o`, `src/*`).
 */
export function unknown(word: ShellWord): boolean {
  if (word.splittable || word.value.startsWith(DYNAMIC)) return true;
  return word.pattern && !word.dynamic && /^([*?[-]|\{)/.test(word.value) &&
    !/^\*\.[A-Za-z0-9]+$/.test(word.value);
}

/** The words for a reason, cut to 120 characters. */
export function show(words: readonly ShellWord[]): string {
  const text = words.map((word) => word.value.replaceAll(DYNAMIC, "$…")).join(" ");
  return text.length > 120 ? `${text.slice(0, 120)}…` : text;
}

/** A destructive finding naming the command. */
export function destructive(words: readonly ShellWord[], why: string): ShellFinding {
  return { kind: "destructive", reason: `${why}: ${show(words)}` };
}

/** An opaque finding naming the command. */
export function opaque(words: readonly ShellWord[], why: string): ShellFinding {
  return { kind: "opaque", reason: `${why}: ${show(words)}` };
}

/**
 * Whether a long flag as written names `option`: GNU getopt and git accept any unambiguous
 * prefix (`--recur` is `--recursive`); the judge takes every prefix of at least one letter
 * (an ambiguous one only makes the program refuse to start).
 */
export function abbreviates(flag: string, option: string): boolean {
  const name = flag.split("=")[0].toLowerCase();
  return name.length >= 3 && name.startsWith("--") && option.startsWith(name);
}

/** Whether any flag in `long` names one of `options` (abbreviations included). */
export function hasLong(long: Iterable<string>, ...options: string[]): boolean {
  for (const flag of long) if (options.some((option) => abbreviates(flag, option))) return true;
  return false;
}

/** Flags and operands of a command's arguments, as {@linkcode flagsOf} reads them. */
export interface Flags {
  /** Short option letters (`-rf` gives `r` and `f`). */
  readonly short: Set<string>;
  /** Long options without a value (`--delete=x` gives `--delete`), lower case. */
  readonly long: Set<string>;
  /** Operands, in order. */
  readonly operands: ShellWord[];
  /** Some option word is computed at run time or a glob that could be one. */
  readonly unknown: boolean;
}

/**
 * Short and long flags of `args` up to `--` (or the first operand when `stopAtOperand`):
 * `-rf` gives `r` and `f`, `--force` gives `--force`, `--delete=x` gives `--delete`.
 */
export function flagsOf(
  args: readonly ShellWord[],
  options: { withValue?: readonly string[]; stopAtOperand?: boolean } = {},
): Flags {
  const short = new Set<string>();
  const long = new Set<string>();
  const operands: ShellWord[] = [];
  let unknownFlags = false;
  let ended = false;
  for (let i = 0; i < args.length; i++) {
    const word = args[i];
    const value = word.value;
    if (!ended && unknown(word)) unknownFlags = true;
    if (ended || value === "-" || !value.startsWith("-")) {
      operands.push(word);
      if (options.stopAtOperand) ended = true;
      continue;
    }
    if (value === "--") {
      ended = true;
      continue;
    }
    if (value.startsWith("--")) {
      long.add(value.split("=")[0].toLowerCase());
      continue;
    }
    for (let j = 1; j < value.length; j++) {
      const letter = value[j];
      short.add(letter);
      if (options.withValue?.includes(letter)) {
        if (j === value.length - 1) i++;
        break;
      }
    }
  }
  return { short, long, operands, unknown: unknownFlags };
}

/** Skips leading options (`withValue` ones take the next word) up to the first operand. */
export function skipOptions(args: readonly ShellWord[], withValue: readonly string[]): ShellWord[] {
  let i = 0;
  for (; i < args.length; i++) {
    const value = args[i].value;
    if (value === "--") return args.slice(i + 1);
    if (!value.startsWith("-")) break;
    if (withValue.includes(value)) i++;
  }
  return args.slice(i);
}

/** The options a program takes, for {@linkcode commandStarts}. */
export interface OptionSpec {
  /** Short letters that take a value (attached, or the next word). */
  readonly values?: string;
  /** Short letters that take no value. */
  readonly flags?: string;
  /** Short letters whose optional value is only ever attached (`-i{}`). */
  readonly optional?: string;
  /** Long options that take a value (`--opt=v` or `--opt v`). */
  readonly longValues?: readonly string[];
  /** Long options that take none (or only an attached `=value`). */
  readonly longFlags?: readonly string[];
  /** `-10` is an option (nice). */
  readonly numeric?: boolean;
  /** How many words may sit between the options and the command (each count is a reading). */
  readonly positionals?: readonly number[];
}

/** Whether an option word takes the next word as its value: `yes`, `no` or `maybe`. */
export function takesValue(value: string, spec: OptionSpec): "yes" | "no" | "maybe" {
  if (value.startsWith("--")) {
    if (value.includes("=")) return "no";
    const name = value.toLowerCase();
    const withValue = (spec.longValues ?? []).filter((o) => abbreviates(name, o) || o === name);
    const without = (spec.longFlags ?? []).filter((o) => abbreviates(name, o) || o === name);
    if ((spec.longValues ?? []).includes(name)) return "yes";
    if ((spec.longFlags ?? []).includes(name)) return "no";
    if (withValue.length && !without.length) return "yes";
    if (without.length && !withValue.length) return "no";
    return "maybe";
  }
  if (spec.numeric && /^-\d+$/.test(value)) return "no";
  for (let j = 1; j < value.length; j++) {
    const letter = value[j];
    if (spec.values?.includes(letter)) return j === value.length - 1 ? "yes" : "no";
    if (spec.optional?.includes(letter)) return "no";
    if (spec.flags?.includes(letter)) continue;
    return "maybe";
  }
  return "no";
}

/**
 * Every index of `args` where the wrapped command may start, under every reading of options
 * whose value the judge cannot be sure of (an unknown option may or may not take the next
 * word): scanning stops at `--` or the first operand, then `positionals` words are skipped.
 * `null` when an option word is computed at run time.
 */
export function commandStarts(args: readonly ShellWord[], spec: OptionSpec): number[] | null {
  const starts = new Set<number>();
  const seen = new Set<number>();
  const stack = [0];
  while (stack.length) {
    const i = stack.pop() as number;
    if (seen.has(i)) continue;
    seen.add(i);
    if (i >= args.length) {
      starts.add(args.length);
      continue;
    }
    const word = args[i];
    if (word.splittable || word.value.startsWith(DYNAMIC)) return null;
    const value = word.value;
    if (value === "--") {
      starts.add(i + 1);
      continue;
    }
    if (!value.startsWith("-") || value === "-") {
      starts.add(i);
      continue;
    }
    const takes = takesValue(value, spec);
    if (takes !== "yes") stack.push(i + 1);
    if (takes !== "no") stack.push(i + 2);
  }
  const out = new Set<number>();
  for (const start of starts) {
    for (const skip of spec.positionals ?? [0]) out.add(Math.min(args.length, start + skip));
  }
  return [...out].sort((a, b) => a - b);
}
