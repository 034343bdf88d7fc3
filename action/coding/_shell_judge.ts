/**
 * The semantics of the command guard: given the parsed simple commands of a command line, find
 * the first that destroys data or cannot be judged. Each construct is judged at its most
 * dangerous reading: wrappers give every reading of their options (`_rules_wrappers.ts`),
 * shell and `eval` strings are parsed again to a bounded depth, and each program is judged by
 * its family's rules: files (`_rules_files.ts`), git (`_rules_git.ts`), interpreters
 * (`_rules_interpreters.ts`) and the system (`_rules_system.ts`).
 *
 * @module
 */

import type { ParsedShell, ShellParser, ShellWord } from "./_shell_parse.ts";
import { ShellParseError } from "./_shell_parse.ts";
import {
  destructive,
  DYNAMIC,
  type Judging,
  literal,
  opaque,
  programName,
  type ShellFinding,
  STDIN_FILES,
} from "./_rules_common.ts";
import { unwrap } from "./_rules_wrappers.ts";
import { FILE_RULES, judgeRedirect } from "./_rules_files.ts";
import { judgeGit } from "./_rules_git.ts";
import {
  interpreterOf,
  judgeAwk,
  judgeEditor,
  judgeInterpreter,
  judgeSed,
  judgeShellProgram,
  SHELLS,
} from "./_rules_interpreters.ts";
import { DESTRUCTIVE_SQL, judgeSystem, SQL_CLIENTS } from "./_rules_system.ts";

export type { ShellFinding } from "./_rules_common.ts";

/** How deep `sh -c` strings, `eval` and wrappers may nest before the guard gives up. */
export const MAX_SHELL_DEPTH = 8;

interface Context {
  readonly parse: ShellParser;
  readonly depth: number;
  /** The program receives more arguments from its input (xargs, find -exec … +). */
  readonly bulk: boolean;
  /** Standard input is given by the command line (else: the caller's, empty for a tool). */
  readonly input: boolean;
}

/** Judges a whole command line; `undefined` when nothing destructive or opaque was found. */
export function judgeShell(
  parse: ShellParser,
  source: string,
  depth = 0,
): ShellFinding | undefined {
  if (depth > MAX_SHELL_DEPTH) {
    return { kind: "opaque", reason: `commands nested more than ${MAX_SHELL_DEPTH} levels deep` };
  }
  let parsed: ParsedShell;
  try {
    parsed = parse(source);
  } catch (error) {
    const message = error instanceof ShellParseError ? error.message : String(error);
    return { kind: "unparseable", reason: `cannot parse the command: ${message}` };
  }
  for (const name of parsed.recursiveFunctions) {
    return { kind: "destructive", reason: `function ${name} calls itself (a fork bomb)` };
  }
  for (const body of parsed.expandedBodies) {
    // An unquoted here-document expands like a double-quoted string (`"` is literal in it).
    const found = judgeShell(parse, `: "${body.replaceAll('"', '\\"')}"`, depth + 1);
    if (found) return { kind: found.kind, reason: `${found.reason} (in a here-document)` };
  }
  for (const redirect of parsed.redirects) {
    const finding = judgeRedirect(redirect.op, redirect.target, redirect.truncates);
    if (finding) return finding;
  }
  for (const command of parsed.commands) {
    const context: Context = { parse, depth, bulk: false, input: command.input === true };
    const finding = judgeWords(command.words, context) ??
      // `GIT_PAGER=… git log` is judged as `env GIT_PAGER=… git log` is.
      (command.assignments?.length
        ? judgeWords([...literal(["env"]), ...command.assignments, ...command.words], context)
        : undefined);
    if (finding) return finding;
  }
  return undefined;
}

/** Reserved words seen as a program name: the grammar misread a compound command. */
const GRAMMAR_WORDS = new Set(["{", "}", "(", ")", "do", "done", "then", "fi", "esac", "in"]);

/** Editors whose arguments may run editor (and so shell) commands. */
const EDITORS = new Set(["vi", "vim", "nvim", "ex", "view", "gvim", "vimdiff", "rvim"]);

function judgeWords(words: readonly ShellWord[], context: Context): ShellFinding | undefined {
  if (words.length === 0) return undefined;
  if (context.depth > MAX_SHELL_DEPTH) {
    return opaque(words, `nested more than ${MAX_SHELL_DEPTH} levels deep`);
  }
  const head = words[0];
  if (head.dynamic || head.splittable) {
    return opaque(words, "the program name is computed at run time");
  }
  if (head.pattern && head.value !== "[" && head.value !== "[[") {
    return opaque(words, "the program name is a pattern the shell expands");
  }
  const name = programName(head.value);
  const args = words.slice(1);
  if (GRAMMAR_WORDS.has(head.value)) {
    return opaque(words, "a compound command the grammar read as words");
  }
  if (name === "coproc" && args.some((arg) => arg.value === "{" || arg.value === "(")) {
    return opaque(words, "coproc with a compound command");
  }
  if (
    (SQL_CLIENTS.has(name) || name === "drop") &&
    DESTRUCTIVE_SQL.test(words.map((word) => word.value).join(" "))
  ) {
    return {
      kind: "destructive",
      reason: `destructive SQL: ${
        words.map((w) => w.value.replaceAll(DYNAMIC, "$…")).join(" ").slice(0, 120)
      }`,
    };
  }
  const judging: Judging = {
    words,
    name,
    args,
    bulk: context.bulk,
    input: context.input,
    nested: (rest, bulk = context.bulk) =>
      rest.length ? judgeWords(rest, { ...context, depth: context.depth + 1, bulk }) : undefined,
    reparse: (source, why) => {
      if (source.dynamic) return opaque(words, `${why} computed at run time`);
      const found = judgeShell(context.parse, source.value, context.depth + 1);
      return found ? { kind: found.kind, reason: `${found.reason} (inside ${name})` } : undefined;
    },
  };

  // Wrappers: judge every reading of the program they run.
  const wrapped = unwrap(name, args);
  if (wrapped) {
    if ("finding" in wrapped) {
      if (wrapped.finding === "destructive") return destructive(words, wrapped.why);
      return wrapped.finding === "opaque" ? opaque(words, wrapped.why) : undefined;
    }
    for (const reading of wrapped.readings) {
      const found = "script" in reading
        ? judging.reparse(reading.script, `${name} runs a command string`)
        : judging.nested(reading.rest, reading.bulk ?? context.bulk);
      if (found) return found;
    }
    return undefined;
  }

  if (SHELLS.has(name)) return judgeShellProgram(judging);
  if (name === "eval") {
    if (args.some((arg) => arg.dynamic)) return opaque(words, "eval of text computed at run time");
    return judging.reparse(literal([args.map((arg) => arg.value).join(" ")])[0], "eval");
  }
  if (name === "source" || name === ".") {
    const file = args[0];
    if (!file) return undefined;
    if (file.dynamic || file.splittable || STDIN_FILES.test(file.value)) {
      return opaque(words, `${name} runs code from its input or from text computed at run time`);
    }
    return undefined; // a script file
  }
  if (name === "alias") {
    // An alias body runs later as a command (bash -c with expand_aliases).
    for (const arg of args) {
      const eq = arg.value.indexOf("=");
      if (eq <= 0) continue;
      const found = judging.reparse({ ...arg, value: arg.value.slice(eq + 1) }, "alias body");
      if (found) return found;
    }
    return undefined;
  }
  if (name === "trap") {
    const action = args.find((arg) => !arg.value.startsWith("-"));
    return action ? judging.reparse(action, "trap action") : undefined;
  }
  const interpreter = interpreterOf(name);
  if (interpreter) return judgeInterpreter(interpreter, name, args, words);
  if (Object.hasOwn(FILE_RULES, name)) return FILE_RULES[name](judging);
  switch (name) {
    case "git":
      return judgeGit(judging);
    case "awk":
    case "gawk":
    case "mawk":
    case "nawk":
    case "busybox-awk":
      return judgeAwk(args, words);
    case "sed":
    case "gsed":
      return judgeSed(judging);
  }
  if (EDITORS.has(name)) return judgeEditor(judging);
  return judgeSystem(judging);
}
