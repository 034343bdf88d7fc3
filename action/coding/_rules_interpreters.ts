/**
 * Interpreter rules: shells (`bash -c` with every option spelling before the string), inline
 * code of script interpreters (`python -c`, `node -e`, …), `awk` programs, `sed` scripts (the
 * `e` command, the `e` and `w` flags, `-i`) and editors that run commands (`vim -c`).
 *
 * @module
 */

import type { ShellWord } from "./_shell_parse.ts";
import {
  abbreviates,
  destructive,
  flagsOf,
  type Judging,
  opaque,
  type ShellFinding,
  STDIN_FILES,
  unknown,
} from "./_rules_common.ts";

/** Shells whose `-c` string is parsed again; without one they read code from input. */
export const SHELLS: ReadonlySet<string> = new Set([
  "sh",
  "bash",
  "dash",
  "zsh",
  "ksh",
  "mksh",
  "ash",
  "fish",
  "busybox-sh",
  "rbash",
  "yash",
  "posh",
  "tcsh",
  "csh",
]);

/** Interpreters: inline code (`-c`, `-e`, …) or code from standard input cannot be judged. */
export const INTERPRETERS: Record<
  string,
  { inline: readonly string[]; valueFlags?: readonly string[] }
> = {
  python: { inline: ["-c"], valueFlags: ["-m", "-W", "-X", "-Q"] },
  pypy: { inline: ["-c"], valueFlags: ["-m", "-W", "-X"] },
  node: {
    inline: ["-e", "--eval", "-p", "--print"],
    valueFlags: ["-r", "--require", "--import", "--loader", "--experimental-loader", "-C"],
  },
  nodejs: { inline: ["-e", "--eval", "-p", "--print"], valueFlags: ["-r", "--require"] },
  bun: { inline: ["-e", "--eval", "-p", "--print"] },
  deno: { inline: [] },
  perl: { inline: ["-e", "-E"], valueFlags: ["-I", "-M", "-m"] },
  ruby: { inline: ["-e"], valueFlags: ["-I", "-r"] },
  php: { inline: ["-r", "-R", "-B", "-E"] },
  lua: { inline: ["-e"], valueFlags: ["-l"] },
  luajit: { inline: ["-e"], valueFlags: ["-l"] },
  rscript: { inline: ["-e"] },
  r: { inline: ["-e"] },
  julia: { inline: ["-e", "--eval", "-E", "--print"] },
  osascript: { inline: ["-e"] },
  pwsh: { inline: ["-c", "-command", "-encodedcommand", "-ec"] },
  powershell: { inline: ["-c", "-command", "-encodedcommand", "-ec"] },
  tclsh: { inline: [] },
  groovy: { inline: ["-e"] },
  jshell: { inline: [] },
};

export function interpreterOf(name: string): (typeof INTERPRETERS)[string] | undefined {
  const base = name.replace(/(\d+(\.\d+)*)?$/, "").replace(/\.exe$/, "");
  return Object.hasOwn(INTERPRETERS, base) ? INTERPRETERS[base] : undefined;
}

export function judgeInterpreter(
  interpreter: (typeof INTERPRETERS)[string],
  name: string,
  args: readonly ShellWord[],
  words: readonly ShellWord[],
): ShellFinding | undefined {
  const base = name.replace(/(\d+(\.\d+)*)?$/, "");
  if (base === "deno" || base === "bun") {
    const sub = args[0]?.value ?? "";
    if (sub === "eval" || (base === "bun" && sub === "-e")) {
      return opaque(words, `${name} ${sub} runs inline code`);
    }
    if (base === "deno" && args.length === 0) {
      return opaque(words, "deno without a script is a REPL");
    }
    if (
      base === "bun" &&
      ["-e", "--eval", "-p", "--print"].some((f) => args.some((a) => a.value === f))
    ) {
      return opaque(words, `${name} runs inline code`);
    }
    return undefined;
  }
  for (let i = 0; i < args.length; i++) {
    const word = args[i];
    const value = word.value;
    const lower = value.toLowerCase();
    if (unknown(word)) return opaque(words, `${name} options computed at run time`);
    const flag = lower.split("=")[0];
    if (interpreter.inline.includes(flag) || interpreter.inline.includes(value)) {
      return opaque(words, `${name} runs inline code`);
    }
    // Bundled short flags with an inline-code flag, the code attached or next: `python3 -Bc
    // '…'`, `perl -ne '…'`, `perl -e'…'`, `python3 -c'…'`. Letters after a value-taking flag
    // (`-Wignore`) are its value.
    if (/^-[a-zA-Z]/.test(value) && !value.startsWith("--")) {
      for (const letter of value.slice(1)) {
        if (!/[a-zA-Z]/.test(letter)) break;
        if (interpreter.inline.some((f) => f.length === 2 && f[1] === letter)) {
          return opaque(words, `${name} runs inline code`);
        }
        if (interpreter.valueFlags?.some((f) => f.length === 2 && f[1] === letter)) break;
      }
    }
    if (value === "-") return opaque(words, `${name} reads code from its input`);
    if (
      value === "--version" || value === "-V" || value === "--help" || value === "-h" ||
      value === "-v"
    ) {
      return undefined;
    }
    if (value.startsWith("-")) {
      if (interpreter.valueFlags?.includes(flag) && !value.includes("=")) {
        // -m module: runs a named module with the rest as its arguments.
        if (flag === "-m") return undefined;
        i++;
      }
      continue;
    }
    if (STDIN_FILES.test(value)) return opaque(words, `${name} reads code from its input`);
    return undefined; // a script file
  }
  return opaque(words, `${name} reads code from its input`);
}

export function judgeAwk(
  args: readonly ShellWord[],
  words: readonly ShellWord[],
): ShellFinding | undefined {
  const flags = flagsOf(args, { withValue: ["F", "v", "f"], stopAtOperand: true });
  const program = flags.operands[0];
  if (!program) return undefined;
  if (flags.short.has("f")) return undefined;
  if (program.dynamic) return opaque(words, "awk program computed at run time");
  if (/\bsystem\s*\(|\|\s*(&|")|"\s*\|\s*getline|\|\s*[A-Za-z_]/.test(program.value)) {
    return opaque(words, "awk program runs commands");
  }
  return undefined;
}

/**
 * A shell program: with `-c` anywhere among its options (`bash -c`, `-lc`, `-ec`, `-o x -c`,
 * `-c -- '…'`, `-c -e '…'`), both the word after the `-c` word (how fish reads it) and the
 * first operand after all options (how bash, dash and zsh read it) are judged as command lines;
 * without `-c`, a shell reading its input cannot be judged and a script file is not read.
 */
export function judgeShellProgram(judging: Judging): ShellFinding | undefined {
  const { name, args, words } = judging;
  let inline = false;
  const candidates: ShellWord[] = [];
  let operand: number | undefined;
  let stdin = false;
  for (let i = 0; i < args.length; i++) {
    const word = args[i];
    const value = word.value;
    if (unknown(word)) return opaque(words, `${name} options computed at run time`);
    if (value === "--" || value === "-") {
      operand = i + 1;
      if (value === "-" && !inline) stdin = true;
      break;
    }
    if (value.startsWith("--")) {
      const option = value.split("=")[0];
      if (option === "--command" || (name === "fish" && abbreviates(option, "--command"))) {
        inline = true;
        const eq = value.indexOf("=");
        if (eq > 0) candidates.push({ ...word, value: value.slice(eq + 1) });
        else if (args[i + 1]) candidates.push(args[i + 1]);
        continue;
      }
      if (value === "--version" || value === "--help") return undefined;
      if (!value.includes("=") && ["--rcfile", "--init-file", "--init-command"].includes(option)) {
        i++;
      }
      continue;
    }
    if (/^[-+][A-Za-z]+$/.test(value)) {
      const letters = value.slice(1);
      if (value.startsWith("-") && letters.includes("c")) {
        inline = true;
        if (args[i + 1]) candidates.push(args[i + 1]);
      }
      if (value.startsWith("-") && letters.includes("s") && !letters.includes("c")) stdin = true;
      // -o NAME / +O NAME: each o or O takes a word.
      i += [...letters].filter((letter) => letter === "o" || letter === "O").length;
      continue;
    }
    operand = i;
    break;
  }
  if (inline) {
    const first = operand === undefined ? undefined : args[operand];
    if (first) candidates.push(first);
    if (candidates.length === 0) return opaque(words, `${name} -c without a command`);
    for (const candidate of candidates) {
      const found = judging.reparse(candidate, `${name} -c`);
      if (found) return found;
    }
    return undefined;
  }
  if (stdin) return opaque(words, `${name} reads commands from its input`);
  const script = operand === undefined ? undefined : args[operand];
  if (!script) return opaque(words, `${name} reads commands from its input`);
  if (script.dynamic || STDIN_FILES.test(script.value)) {
    return opaque(words, `${name} reads commands from its input`);
  }
  // A script file: its contents cannot be judged here (see docs/guards.md).
  return undefined;
}

/** GNU sed options that take a value. */
const SED_VALUES = "efl";
const SED_LONG_VALUES = ["--expression", "--file", "--line-length"];

/**
 * `sed`: in-place editing (`-i`, `--in-place`, any abbreviation) rewrites files; a script with
 * the `e` command or the `e` flag of `s` runs commands; `w`/`W` and the `w` flag write files;
 * a script the guard cannot read (`-f file`, computed) is opaque. GNU sed permutes options, so
 * every word is read as an option wherever it sits.
 */
export function judgeSed(judging: Judging): ShellFinding | undefined {
  const { args, words } = judging;
  const scripts: ShellWord[] = [];
  const operands: ShellWord[] = [];
  let inPlace = false;
  let sandboxed = false;
  let fromFile = false;
  let ended = false;
  for (let i = 0; i < args.length; i++) {
    const word = args[i];
    const value = word.value;
    if (!ended && unknown(word)) return opaque(words, "sed options computed at run time");
    if (ended || value === "-" || !value.startsWith("-")) {
      operands.push(word);
      continue;
    }
    if (value === "--") {
      ended = true;
      continue;
    }
    if (value.startsWith("--")) {
      const eq = value.indexOf("=");
      const option = eq > 0 ? value.slice(0, eq) : value;
      if (abbreviates(option, "--in-place")) inPlace = true;
      if (option === "--sandbox") sandboxed = true;
      const valued = SED_LONG_VALUES.find((o) => abbreviates(option, o));
      if (valued) {
        const given = eq > 0 ? { ...word, value: value.slice(eq + 1) } : args[++i];
        if (valued === "--expression" && given) scripts.push(given);
        if (valued === "--file") fromFile = true;
      }
      continue;
    }
    for (let j = 1; j < value.length; j++) {
      const letter = value[j];
      if (letter === "i") {
        inPlace = true;
        break; // -i[SUFFIX]: the rest is the backup suffix
      }
      if (SED_VALUES.includes(letter)) {
        const rest = value.slice(j + 1);
        const given = rest ? { ...word, value: rest } : args[++i];
        if (letter === "e" && given) scripts.push(given);
        if (letter === "f") fromFile = true;
        break;
      }
    }
  }
  if (scripts.length === 0 && !fromFile && operands.length) scripts.push(operands.shift()!);
  if (inPlace && operands.length) return destructive(words, "sed -i rewrites files in place");
  if (fromFile && !sandboxed) return opaque(words, "sed script from a file the guard cannot read");
  for (const script of scripts) {
    if (script.dynamic) return opaque(words, "sed script computed at run time");
    const effect = sedEffect(script.value);
    if (effect === "runs" && !sandboxed) return opaque(words, "sed script runs commands");
    if (effect === "writes" && !sandboxed) return destructive(words, "sed script writes files");
    if (effect === "unreadable") return opaque(words, "sed script the guard cannot read");
  }
  return undefined;
}

/**
 * What a sed script does beyond printing: runs commands (`e`, `s///e`), writes files (`w`,
 * `W`, `s///w`), or `unreadable` when the judge's reader cannot follow it.
 */
export function sedEffect(script: string): "runs" | "writes" | "unreadable" | undefined {
  let i = 0;
  let writes = false;
  const n = script.length;
  const skipSpace = () => {
    while (i < n && /[ \t]/.test(script[i])) i++;
  };
  const toLineEnd = () => {
    while (i < n && script[i] !== "\n") i++;
  };
  const delimited = (delim: string): boolean => {
    while (i < n && script[i] !== delim) {
      if (script[i] === "\\") i++;
      else if (script[i] === "\n" && delim !== "\n") return false;
      i++;
    }
    if (i >= n) return false;
    i++;
    return true;
  };
  const address = (): boolean => {
    skipSpace();
    if (script[i] === "/" || script[i] === "\\") {
      const delim = script[i] === "\\" ? script[i + 1] : "/";
      i += script[i] === "\\" ? 2 : 1;
      if (!delimited(delim)) return false;
      while (/[IM]/.test(script[i] ?? "")) i++;
    } else if (/[0-9$]/.test(script[i] ?? "")) {
      while (/[0-9$~]/.test(script[i] ?? "")) i++;
    } else if (script[i] === "+" || script[i] === "~") {
      i++;
      while (/[0-9]/.test(script[i] ?? "")) i++;
    }
    return true;
  };
  while (i < n) {
    while (i < n && /[\s;{}]/.test(script[i])) i++;
    if (i >= n) break;
    if (!address()) return "unreadable";
    skipSpace();
    if (script[i] === ",") {
      i++;
      if (!address()) return "unreadable";
      skipSpace();
    }
    while (script[i] === "!" || script[i] === " ") i++;
    const command = script[i++];
    if (command === undefined) break;
    switch (command) {
      case "{":
      case "}":
      case ";":
        continue;
      case "#":
        toLineEnd();
        continue;
      case "e":
        return "runs";
      case "w":
      case "W": {
        skipSpace();
        const start = i;
        toLineEnd();
        if (!/^\/dev\/(stdout|stderr)\s*$/.test(script.slice(start, i))) writes = true;
        continue;
      }
      case "r":
      case "R":
      case "a":
      case "i":
      case "c":
      case ":":
      case "b":
      case "t":
      case "T": {
        // Text or a label to the end of the line (GNU one-liners); `a\` continues on lines
        // ending in a backslash. Labels end at `;` too.
        if (":btT".includes(command)) {
          while (i < n && script[i] !== "\n" && script[i] !== ";") i++;
          continue;
        }
        while (i < n) {
          if (script[i] === "\\" && i + 1 < n) {
            i += 2;
            continue;
          }
          if (script[i] === "\n") break;
          i++;
        }
        continue;
      }
      case "s": {
        const delim = script[i++];
        if (delim === undefined || delim === "\n" || delim === "\\") return "unreadable";
        if (!delimited(delim) || !delimited(delim)) return "unreadable";
        const start = i;
        while (i < n && /[gpiImMe0-9]/.test(script[i])) i++;
        const flags = script.slice(start, i);
        if (flags.includes("e")) return "runs";
        if (script[i] === "w") {
          i++;
          skipSpace();
          const target = i;
          toLineEnd();
          if (!/^\/dev\/(stdout|stderr)\s*$/.test(script.slice(target, i))) writes = true;
        }
        continue;
      }
      case "y": {
        const delim = script[i++];
        if (delim === undefined || delim === "\n" || delim === "\\") return "unreadable";
        if (!delimited(delim) || !delimited(delim)) return "unreadable";
        continue;
      }
      case "q":
      case "Q":
      case "l":
      case "L":
        while (/[0-9 ]/.test(script[i] ?? "")) i++;
        continue;
      default:
        if ("=dDgGhHnNpPxzFv".includes(command)) continue;
        return "unreadable";
    }
  }
  return writes ? "writes" : undefined;
}

/** Editors whose arguments run editor commands (`:!rm -rf x`). */
export function judgeEditor(judging: Judging): ShellFinding | undefined {
  const { name, args, words } = judging;
  for (const arg of args) {
    const value = arg.value;
    if (
      value === "-c" || value === "--cmd" || value === "-S" || value.startsWith("+") ||
      value === "-s" || value === "-e" || value === "-E" || value === "-u" || value === "-y"
    ) {
      return opaque(words, `${name} runs editor commands from its arguments or a script`);
    }
    if (arg.dynamic) return opaque(words, `${name} arguments computed at run time`);
  }
  return undefined;
}
