/**
 * The semantics of the command guard: given the parsed simple commands of a command line, find
 * the first that destroys data or cannot be judged. Wrappers (`sudo`, `env`, `xargs`,
 * `find -exec`, `timeout`, …) are unwrapped to the program they run, shell and `eval` strings
 * are parsed again (to a bounded depth), and each program is judged on its flags.
 *
 * @module
 */

import type { ParsedShell, ShellParser, ShellWord } from "./_shell_parse.ts";
import { ShellParseError } from "./_shell_parse.ts";

/** What the judge found: a destructive command, or one it cannot see into. */
export interface ShellFinding {
  /** `destructive`: destroys data; `opaque`: runs code the guard cannot see; `unparseable`. */
  readonly kind: "destructive" | "opaque" | "unparseable";
  /** Why, naming the command. */
  readonly reason: string;
}

/** How deep `sh -c` strings, `eval` and wrappers may nest before the guard gives up. */
export const MAX_SHELL_DEPTH = 8;

const DYNAMIC = "\u0000";

interface Context {
  readonly parse: ShellParser;
  readonly depth: number;
  /** The program receives more arguments from its input (xargs, find -exec … +). */
  readonly bulk: boolean;
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
  const context: Context = { parse, depth, bulk: false };
  for (const command of parsed.commands) {
    const finding = judgeWords(command.words, context);
    if (finding) return finding;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Redirections

/** Device files a redirection may write to. */
const HARMLESS_DEVICES = /^\/dev\/(null|stdout|stderr|tty|zero|fd\/\d+|shm\/.*)$/;
/** System trees a redirection (or `tee`, `cp`, `mv`) must not write into. */
const SYSTEM_PATHS =
  /^\/(etc|boot|bin|sbin|usr|lib|lib32|lib64|libx32|sys|proc|root|var\/lib|var\/spool)(\/|$)/;

function judgeRedirect(
  op: string,
  target: ShellWord | null,
  truncates: boolean,
): ShellFinding | undefined {
  if (!/>/.test(op) || !target) return undefined;
  const value = target.value;
  if (value.startsWith("/dev/") && !HARMLESS_DEVICES.test(value)) {
    return { kind: "destructive", reason: `redirection ${op} ${value} writes to a device` };
  }
  if (SYSTEM_PATHS.test(value)) {
    return { kind: "destructive", reason: `redirection ${op} ${value} writes to a system file` };
  }
  if (HARMLESS_DEVICES.test(value)) return undefined;
  if (truncates && /^\d*$/.test(value) === false) {
    return { kind: "destructive", reason: `redirection ${op} ${value} truncates the file` };
  }
  return undefined;
}

function writesSystemTarget(value: string): boolean {
  return (value.startsWith("/dev/") && !HARMLESS_DEVICES.test(value)) ||
    SYSTEM_PATHS.test(value);
}

// ---------------------------------------------------------------------------------------------
// Words

/** The program name as the judge compares it: basename, lower case, version suffix kept. */
function programName(value: string): string {
  return value.slice(value.lastIndexOf("/") + 1).toLowerCase();
}

function literal(values: readonly string[]): ShellWord[] {
  return values.map((value) => ({ value, dynamic: false, splittable: false, pattern: false }));
}

/**
 * A word that could turn out to be (or hide) a flag: computed, split, or a glob that could
 * expand to a name made of option letters (`*`, `?r`, `[-]*`; not `*.o`, `src/*`).
 */
function unknown(word: ShellWord): boolean {
  if (word.splittable || word.value.startsWith(DYNAMIC)) return true;
  return word.pattern && !word.dynamic && /^([*?[-]|\{)/.test(word.value) &&
    !/^\*\.[A-Za-z0-9]+$/.test(word.value);
}

function show(words: readonly ShellWord[]): string {
  const text = words.map((word) => word.value.replaceAll(DYNAMIC, "$…")).join(" ");
  return text.length > 120 ? `${text.slice(0, 120)}…` : text;
}

function destructive(words: readonly ShellWord[], why: string): ShellFinding {
  return { kind: "destructive", reason: `${why}: ${show(words)}` };
}

function opaque(words: readonly ShellWord[], why: string): ShellFinding {
  return { kind: "opaque", reason: `${why}: ${show(words)}` };
}

/**
 * Short and long flags of `args` up to `--` (or the first operand when `stopAtOperand`):
 * `-rf` gives `r` and `f`, `--force` gives `--force`, `--delete=x` gives `--delete`.
 */
function flagsOf(
  args: readonly ShellWord[],
  options: { withValue?: readonly string[]; stopAtOperand?: boolean } = {},
): { short: Set<string>; long: Set<string>; operands: ShellWord[]; unknown: boolean } {
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

// ---------------------------------------------------------------------------------------------
// Programs

/** Reserved words seen as a program name: the grammar misread a compound command. */
const GRAMMAR_WORDS = new Set(["{", "}", "(", ")", "do", "done", "then", "fi", "esac", "in"]);

/** Paths that are the standard input (code read from them is code the guard cannot see). */
const STDIN_FILES = /^(\/dev\/stdin|\/dev\/fd\/\d+|\/proc\/(self|\d+)\/fd\/\d+|-)$/;

/** Shells whose `-c` string is parsed again; without one they read code from input. */
const SHELLS = new Set(["sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "busybox-sh"]);

/** Interpreters: inline code (`-c`, `-e`, …) or code from standard input cannot be judged. */
const INTERPRETERS: Record<string, { inline: readonly string[]; valueFlags?: readonly string[] }> =
  {
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

/** Programs that destroy data whatever their arguments (disks, file contents, the machine). */
const ALWAYS_DESTRUCTIVE: Record<string, string> = {
  mkfs: "formats a file system",
  mke2fs: "formats a file system",
  mkswap: "formats a swap area",
  wipefs: "erases file-system signatures",
  fdisk: "rewrites a partition table",
  sfdisk: "rewrites a partition table",
  gdisk: "rewrites a partition table",
  sgdisk: "rewrites a partition table",
  cfdisk: "rewrites a partition table",
  parted: "rewrites a partition table",
  blkdiscard: "discards a whole device",
  shred: "overwrites files",
  srm: "securely deletes files",
  wipe: "wipes files",
  truncate: "truncates files",
  shutdown: "stops the machine",
  reboot: "restarts the machine",
  halt: "stops the machine",
  poweroff: "stops the machine",
  kexec: "replaces the running kernel",
  rimraf: "deletes directories recursively",
  "del-cli": "deletes files",
  userdel: "deletes a user",
  deluser: "deletes a user",
  groupdel: "deletes a group",
  killall: "kills processes by name",
  pkill: "kills processes by pattern",
  killall5: "kills every process",
  fsck: "repairs (and may rewrite) a file system",
  "e2fsck": "repairs (and may rewrite) a file system",
  "debugfs": "edits a file system",
  "zpool": "manages storage pools",
};

/** Database clients whose arguments may carry SQL. */
const SQL_CLIENTS = new Set([
  "psql",
  "mysql",
  "mariadb",
  "sqlite3",
  "sqlite",
  "duckdb",
  "sqlcmd",
  "clickhouse-client",
  "clickhouse",
  "cockroach",
  "usql",
  "pgcli",
  "mycli",
  "litecli",
  "snowsql",
  "bq",
  "cqlsh",
]);

/** SQL that drops or empties tables, in the arguments of a database client. */
const DESTRUCTIVE_SQL = /\b(drop\s+(table|database|schema|index|view|user)|truncate\s+table)\b/i;

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
    return destructive(words, "destructive SQL");
  }
  const next: Context = { ...context, depth: context.depth + 1 };
  const nested = (rest: readonly ShellWord[], bulk = context.bulk) =>
    rest.length ? judgeWords(rest, { ...next, bulk }) : undefined;
  const reparse = (source: ShellWord, why: string): ShellFinding | undefined => {
    if (source.dynamic) return opaque(words, `${why} computed at run time`);
    const found = judgeShell(context.parse, source.value, context.depth + 1);
    return found ? { kind: found.kind, reason: `${found.reason} (inside ${name})` } : undefined;
  };

  // Wrappers: judge the program they run.
  const wrapped = unwrap(name, args);
  if (wrapped) {
    if ("finding" in wrapped) {
      return wrapped.finding === "opaque" ? opaque(words, wrapped.why) : undefined;
    }
    if ("script" in wrapped) return reparse(wrapped.script, `${name} runs a command string`);
    return nested(wrapped.rest, wrapped.bulk ?? context.bulk);
  }

  if (SHELLS.has(name)) return judgeShellProgram(name, args, words, reparse);
  if (name === "eval") {
    if (args.some((arg) => arg.dynamic)) return opaque(words, "eval of text computed at run time");
    return reparse(literal([args.map((arg) => arg.value).join(" ")])[0], "eval");
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
      const found = reparse({ ...arg, value: arg.value.slice(eq + 1) }, "alias body");
      if (found) return found;
    }
    return undefined;
  }
  if (name === "trap") {
    const action = args.find((arg) => !arg.value.startsWith("-"));
    return action ? reparse(action, "trap action") : undefined;
  }
  const interpreter = interpreterOf(name);
  if (interpreter) return judgeInterpreter(interpreter, name, args, words);
  if (/^(mkfs|mkfs\..+|mke2fs|mkdosfs|mkntfs)$/.test(name)) {
    return destructive(words, "formats a file system");
  }
  if (name in ALWAYS_DESTRUCTIVE) return destructive(words, ALWAYS_DESTRUCTIVE[name]);
  switch (name) {
    case "rm":
      return judgeRm(args, words, context);
    case "unlink":
      return context.bulk ? destructive(words, "deletes every file it is given") : undefined;
    case "find":
      return judgeFind(args, words, next);
    case "git":
      return judgeGit(args, words);
    case "dd":
      if (args.some((arg) => arg.value.startsWith("of=") || unknown(arg))) {
        return destructive(words, "dd writes over its output file");
      }
      return undefined;
    case "chmod":
    case "chown":
    case "chgrp":
    case "setfacl": {
      const flags = flagsOf(args);
      if (flags.short.has("R") || flags.long.has("--recursive") || flags.unknown) {
        return destructive(words, `${name} changes a whole tree`);
      }
      if (flags.operands.some((op) => op.value === "/" || SYSTEM_PATHS.test(op.value))) {
        return destructive(words, `${name} changes system files`);
      }
      return undefined;
    }
    case "kill": {
      const targets = args.filter((arg) =>
        !/^-[A-Za-z0-9]+$/.test(arg.value) || arg.value === "-1"
      );
      if (args.some((arg) => unknown(arg))) {
        return opaque(words, "kill targets computed at run time");
      }
      if (targets.some((arg) => ["-1", "0", "1", "-0"].includes(arg.value))) {
        return destructive(words, "kills every process (or init)");
      }
      return undefined;
    }
    case "init":
    case "telinit":
      return args.some((arg) => ["0", "6", "1", "s", "S"].includes(arg.value))
        ? destructive(words, "changes the run level")
        : undefined;
    case "systemctl":
      return args.some((arg) =>
          ["poweroff", "reboot", "halt", "kexec", "emergency", "rescue", "soft-reboot"].includes(
            arg.value,
          )
        )
        ? destructive(words, "stops or restarts the machine")
        : undefined;
    case "crontab": {
      const flags = flagsOf(args, { withValue: ["u"] });
      if (flags.short.has("r") || flags.unknown) return destructive(words, "removes the crontab");
      if (flags.operands.length && !flags.short.has("l")) {
        return destructive(words, "replaces the crontab");
      }
      return undefined;
    }
    case "rsync": {
      const flags = flagsOf(args);
      if (
        [...flags.long].some((flag) =>
          flag.startsWith("--delete") || flag === "--remove-source-files"
        )
      ) {
        return destructive(words, "rsync deletes files");
      }
      return undefined;
    }
    case "mv":
    case "cp":
    case "tee":
    case "install":
    case "ln": {
      const operands = flagsOf(args, { withValue: ["t", "S", "m", "o", "g"] }).operands;
      const target = name === "tee" ? operands : operands.slice(-1);
      if (target.some((op) => writesSystemTarget(op.value))) {
        return destructive(words, `${name} writes over a device or system file`);
      }
      if (
        name === "cp" && operands.length >= 2 &&
        operands.slice(0, -1).some((op) => op.value === "/dev/null" || op.value === "/dev/zero")
      ) {
        return destructive(words, "cp from /dev/null or /dev/zero overwrites the target");
      }
      if (name === "mv" && target.some((op) => op.value.startsWith("/dev/"))) {
        return destructive(words, "mv into a device deletes the source");
      }
      if (name === "mv" && operands.some((op) => ["/", "~", "."].includes(op.value))) {
        return destructive(words, "mv moves a whole tree away");
      }
      return undefined;
    }
    case "docker":
    case "podman":
      if (
        args.some((arg) => arg.value === "prune") ||
        (args[0]?.value === "volume" && args[1]?.value === "rm")
      ) {
        return destructive(words, `${name} deletes data`);
      }
      return undefined;
    case "awk":
    case "gawk":
    case "mawk":
    case "nawk":
    case "busybox-awk":
      return judgeAwk(args, words);
    case "sed":
    case "gsed":
      return judgeSed(args, words);
    case "npx":
    case "bunx":
    case "pnpx":
      return nested(skipOptions(args, ["-p", "--package", "-c", "--call"]));
    case "npm":
    case "pnpm":
    case "yarn":
      if (["exec", "dlx", "x"].includes(args[0]?.value ?? "")) {
        return nested(skipOptions(args.slice(1), ["-p", "--package", "-c", "--call"]));
      }
      return undefined;
    case "ssh": {
      const rest = skipOptions(args, [
        "-b",
        "-c",
        "-D",
        "-E",
        "-e",
        "-F",
        "-I",
        "-i",
        "-J",
        "-L",
        "-l",
        "-m",
        "-O",
        "-o",
        "-p",
        "-Q",
        "-R",
        "-S",
        "-W",
        "-w",
        "-B",
        "-P",
      ]);
      const remote = rest.slice(1);
      if (remote.length === 0) return undefined;
      if (remote.some((word) => word.dynamic)) {
        return opaque(words, "remote command computed at run time");
      }
      return reparse(
        literal([remote.map((w) => w.value).join(" ")])[0],
        "ssh runs a remote command",
      );
    }
  }
  return undefined;
}

function judgeShellProgram(
  name: string,
  args: readonly ShellWord[],
  words: readonly ShellWord[],
  reparse: (source: ShellWord, why: string) => ShellFinding | undefined,
): ShellFinding | undefined {
  for (let i = 0; i < args.length; i++) {
    const value = args[i].value;
    if (unknown(args[i])) return opaque(words, `${name} options computed at run time`);
    if (value === "--" || value === "-") {
      return args[i + 1] && value === "--"
        ? undefined
        : opaque(words, `${name} reads commands from its input`);
    }
    if (/^-[a-zA-Z]*c[a-zA-Z]*$/.test(value)) {
      const script = args[i + 1];
      if (!script) return opaque(words, `${name} -c without a command`);
      return reparse(script, `${name} -c`);
    }
    if (value === "-o" || value === "+o" || value === "-O" || value === "+O") {
      i++;
      continue;
    }
    if (/^[-+]/.test(value)) {
      if (/^-[a-zA-Z]*s/.test(value)) {
        return opaque(words, `${name} -s reads commands from its input`);
      }
      if (value === "--version" || value === "--help") return undefined;
      continue;
    }
    if (STDIN_FILES.test(value)) return opaque(words, `${name} reads commands from its input`);
    // A script file: its contents cannot be judged here (see docs/guards.md).
    return undefined;
  }
  return opaque(words, `${name} reads commands from its input`);
}

function interpreterOf(name: string): (typeof INTERPRETERS)[string] | undefined {
  const base = name.replace(/(\d+(\.\d+)*)?$/, "").replace(/\.exe$/, "");
  return Object.hasOwn(INTERPRETERS, base) ? INTERPRETERS[base] : undefined;
}

function judgeInterpreter(
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
    // Bundled short flags ending in an inline-code flag: `python3 -Bc '…'`, `perl -ne '…'`.
    if (
      /^-[a-zA-Z]+$/.test(value) &&
      interpreter.inline.some((f) => f.length === 2 && value.endsWith(f[1]))
    ) {
      return opaque(words, `${name} runs inline code`);
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

function judgeRm(
  args: readonly ShellWord[],
  words: readonly ShellWord[],
  context: Context,
): ShellFinding | undefined {
  const flags = flagsOf(args);
  if (flags.short.has("r") || flags.short.has("R") || flags.long.has("--recursive")) {
    return destructive(words, "recursive delete");
  }
  if (flags.long.has("--no-preserve-root")) return destructive(words, "rm --no-preserve-root");
  if (flags.unknown) return destructive(words, "rm with arguments computed at run time");
  if (context.bulk) return destructive(words, "rm deletes every file it is given");
  if (
    flags.operands.some((op) =>
      ["/", "~", "*", "/*", "~/", "~/*", "./*", ".", "..", ".*", "*.*"].includes(op.value)
    )
  ) {
    return destructive(words, "rm of a whole tree");
  }
  return undefined;
}

function judgeFind(
  args: readonly ShellWord[],
  words: readonly ShellWord[],
  next: Context,
): ShellFinding | undefined {
  for (let i = 0; i < args.length; i++) {
    const value = args[i].value;
    if (args[i].splittable) return opaque(words, "find expression computed at run time");
    if (value === "-delete") return destructive(words, "find -delete");
    if (["-exec", "-execdir", "-ok", "-okdir"].includes(value)) {
      let end = i + 1;
      while (end < args.length && args[end].value !== ";" && args[end].value !== "+") end++;
      const command = args.slice(i + 1, end);
      const found = judgeWords(command, { ...next, bulk: true });
      if (found) return { kind: found.kind, reason: `${found.reason} (run by find ${value})` };
      i = end;
    }
    if (["-fprint", "-fprint0", "-fprintf", "-fls"].includes(value) && args[i + 1]) {
      if (writesSystemTarget(args[i + 1].value)) {
        return destructive(words, "find writes a system file");
      }
    }
  }
  return undefined;
}

/** git options that take a value as the next word. */
const GIT_VALUE_OPTIONS = new Set([
  "-C",
  "-c",
  "--git-dir",
  "--work-tree",
  "--namespace",
  "--exec-path",
  "--config-env",
  "--super-prefix",
  "--list-cmds",
]);

/** `git -c` keys whose value runs a program. */
const GIT_COMMAND_KEYS =
  /(^alias\.|pager|editor|sshcommand|fsmonitor|hookspath|askpass|\.command$|\.cmd$|textconv|\.process$|\.clean$|\.smudge$|difftool|mergetool|credential\.helper|gpg\.program|sequence\.editor|uploadpack|receivepack|proxy)/i;

function judgeGit(
  args: readonly ShellWord[],
  words: readonly ShellWord[],
): ShellFinding | undefined {
  let i = 0;
  for (; i < args.length; i++) {
    const word = args[i];
    const value = word.value;
    if (unknown(word)) return opaque(words, "git arguments computed at run time");
    if (!value.startsWith("-")) break;
    const option = value.split("=")[0];
    let setting: string | undefined;
    if (value === "-c") setting = args[i + 1]?.value;
    else if (value.startsWith("-c") && value.length > 2) setting = value.slice(2);
    if (
      setting !== undefined &&
      (GIT_COMMAND_KEYS.test(setting.split("=")[0]) || setting.includes("=!"))
    ) {
      return opaque(words, "git -c sets a program git runs");
    }
    if (GIT_VALUE_OPTIONS.has(option) && !value.includes("=")) i++;
  }
  const sub = args[i]?.value ?? "";
  const rest = args.slice(i + 1);
  if (sub === "config") {
    // A key git later runs as a program (alias "!…", pager, editor, ssh command, hooks path).
    const key = rest.find((word) => !word.value.startsWith("-"));
    if (
      key && (GIT_COMMAND_KEYS.test(key.value) || rest.some((word) => word.value.startsWith("!")))
    ) {
      return opaque(words, "git config sets a program git runs");
    }
    return undefined;
  }
  if (rest.some((word) => unknown(word))) {
    if (
      ["push", "clean", "reset", "checkout", "restore", "branch", "stash", "switch", "rm"].includes(
        sub,
      )
    ) {
      return opaque(words, `git ${sub} arguments computed at run time`);
    }
  }
  const flags = flagsOf(rest, { withValue: ["m", "C", "c", "b", "B", "e", "o", "s", "X"] });
  const has = (...names: string[]) =>
    names.some((n) => (n.startsWith("--") ? flags.long.has(n) : flags.short.has(n.slice(1))));
  const dry = has("-n", "--dry-run");
  switch (sub) {
    case "clean":
      if (!dry && (has("-f", "--force") || flags.unknown)) {
        return destructive(words, "git clean deletes untracked files");
      }
      return undefined;
    case "reset":
      if (has("--hard", "--merge", "--keep")) {
        return destructive(words, "git reset discards changes");
      }
      return undefined;
    case "checkout": {
      const dashdash = rest.findIndex((w) => w.value === "--");
      if (has("-f", "--force", "-p", "--patch", "--ours", "--theirs")) {
        return destructive(words, "git checkout discards changes");
      }
      if (dashdash >= 0 && dashdash < rest.length - 1) {
        return destructive(words, "git checkout -- paths discards changes");
      }
      if (flags.operands.some((op) => op.value === "." || op.value === ":/" || op.pattern)) {
        return destructive(words, "git checkout of paths discards changes");
      }
      return undefined;
    }
    case "restore":
      if (has("--staged", "-S") && !has("--worktree", "-W")) return undefined;
      return flags.operands.length || has("-p", "--patch")
        ? destructive(words, "git restore discards changes")
        : undefined;
    case "switch":
      return has("-f", "--force", "--discard-changes", "-C", "--force-create")
        ? destructive(words, "git switch discards changes")
        : undefined;
    case "push":
      if (
        has(
          "-f",
          "--force",
          "--force-with-lease",
          "--force-if-includes",
          "--mirror",
          "--delete",
          "-d",
          "--prune",
        )
      ) {
        return destructive(words, "git push rewrites or deletes remote history");
      }
      if (
        flags.operands.slice(1).some((op) => op.value.startsWith("+") || op.value.startsWith(":"))
      ) {
        return destructive(words, "git push rewrites or deletes remote history");
      }
      return undefined;
    case "branch":
      if (
        has("-D", "-M", "-C", "-f", "--force") || (has("-d", "--delete") && has("-f", "--force"))
      ) {
        return destructive(words, "git branch deletes or overwrites a branch");
      }
      if (has("-d", "--delete", "-r")) {
        return has("-d", "--delete")
          ? destructive(words, "git branch deletes a branch")
          : undefined;
      }
      return undefined;
    case "stash":
      return ["drop", "clear"].includes(flags.operands[0]?.value ?? "")
        ? destructive(words, `git stash ${flags.operands[0]?.value} deletes stashed changes`)
        : undefined;
    case "reflog":
      return ["expire", "delete"].includes(flags.operands[0]?.value ?? "")
        ? destructive(words, "git reflog drops history")
        : undefined;
    case "gc":
      return [...flags.long].some((f) => f === "--prune")
        ? destructive(words, "git gc --prune drops unreachable objects")
        : undefined;
    case "filter-branch":
    case "filter-repo":
      return destructive(words, `git ${sub} rewrites history`);
    case "update-ref":
      return has("-d") ? destructive(words, "git update-ref -d deletes a ref") : undefined;
    case "tag":
      return has("-d", "--delete", "-f", "--force")
        ? destructive(words, "git tag deletes or moves a tag")
        : undefined;
    case "rm":
      return has("-r", "-f", "--force") ? destructive(words, "git rm deletes files") : undefined;
    case "worktree":
      return flags.operands[0]?.value === "remove" && has("-f", "--force")
        ? destructive(words, "git worktree remove --force deletes a work tree")
        : undefined;
    case "submodule":
      return flags.operands[0]?.value === "deinit" && has("-f", "--force", "--all")
        ? destructive(words, "git submodule deinit deletes submodule work trees")
        : undefined;
  }
  return undefined;
}

function judgeAwk(
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

function judgeSed(
  args: readonly ShellWord[],
  words: readonly ShellWord[],
): ShellFinding | undefined {
  for (const arg of args) {
    // GNU sed's `e` command and `s///e` flag run shell commands.
    if (
      /(^|[;\n{}]\s*)e(\s|$)|\/[gpIiMm0-9]*e[gpIiMm0-9]*\s*($|;)/.test(arg.value) &&
      !arg.value.startsWith("-")
    ) {
      return opaque(words, "sed script runs commands");
    }
  }
  return undefined;
}

function skipOptions(args: readonly ShellWord[], withValue: readonly string[]): ShellWord[] {
  let i = 0;
  for (; i < args.length; i++) {
    const value = args[i].value;
    if (value === "--") return args.slice(i + 1);
    if (!value.startsWith("-")) break;
    if (withValue.includes(value)) i++;
  }
  return args.slice(i);
}

type Unwrapped =
  | { rest: readonly ShellWord[]; bulk?: boolean }
  | { script: ShellWord }
  | { finding: "none" | "opaque"; why: string };

/** The command a wrapper runs, or `undefined` when `name` is not a wrapper. */
function unwrap(name: string, args: readonly ShellWord[]): Unwrapped | undefined {
  switch (name) {
    case "sudo":
    case "doas": {
      // Options letter by letter: -u USER, -g GROUP, … take a value (attached or next);
      // -s / -i run the rest through a shell; -e / -l / -v / -k run no command.
      const valueLetters = name === "sudo" ? "ugpChDRrTtU" : "uC";
      let shell = false;
      let i = 0;
      for (; i < args.length; i++) {
        const value = args[i].value;
        if (args[i].splittable) {
          return { finding: "opaque", why: `${name} options computed at run time` };
        }
        if (value === "--") {
          i++;
          break;
        }
        if (!value.startsWith("-") || value === "-") break;
        if (value.startsWith("--")) {
          const option = value.split("=")[0];
          if (option === "--shell" || option === "--login") shell = true;
          if (option === "--edit" || option === "--list" || option === "--validate") {
            return { finding: "none", why: "" };
          }
          if (
            !value.includes("=") &&
            /^--(user|group|prompt|chdir|host|role|type|close-from|other-user|chroot|command-timeout)$/
              .test(option)
          ) i++;
          continue;
        }
        for (let j = 1; j < value.length; j++) {
          const letter = value[j];
          if (letter === "s" || letter === "i") shell = true;
          if ("elvkK".includes(letter) && name === "sudo") return { finding: "none", why: "" };
          if (valueLetters.includes(letter)) {
            if (j === value.length - 1) i++;
            break;
          }
        }
      }
      const rest = args.slice(i);
      if (!shell) return { rest };
      if (rest.length === 0) return { finding: "opaque", why: `${name} starts a shell` };
      return {
        script: {
          value: rest.map((w) => w.value).join(" "),
          dynamic: rest.some((w) => w.dynamic),
          splittable: false,
          pattern: false,
        },
      };
    }
    case "su":
    case "runuser": {
      for (let i = 0; i < args.length; i++) {
        const value = args[i].value;
        if (value === "-c" || value === "--command" || value === "--session-command") {
          const script = args[i + 1];
          return script ? { script } : { finding: "opaque", why: `${name} -c without a command` };
        }
        if (value === "--") return { rest: args.slice(i + 1) };
        if (value === "-u" || value === "-g" || value === "-s" || value === "--shell") i++;
      }
      return { finding: "opaque", why: `${name} starts a shell` };
    }
    case "env": {
      let i = 0;
      for (; i < args.length; i++) {
        const word = args[i];
        const value = word.value;
        if (word.splittable) {
          return { finding: "opaque", why: "env arguments computed at run time" };
        }
        if (value === "--") {
          i++;
          break;
        }
        if (
          value === "-S" || value === "--split-string" || value.startsWith("--split-string=") ||
          /^-[a-zA-Z]*S./.test(value)
        ) {
          const inline = value.startsWith("--split-string=")
            ? value.slice("--split-string=".length)
            : value.length > 2 && value.startsWith("-") && !value.startsWith("--")
            ? value.slice(value.indexOf("S") + 1)
            : args[i + 1]?.value;
          if (inline === undefined) return { finding: "opaque", why: "env -S without a string" };
          const rest = args.slice(
            inline === args[i + 1]?.value && !value.includes("=") && value.length <= 2
              ? i + 2
              : i + 1,
          );
          return {
            script: {
              value: [
                inline,
                ...rest.map((w) => w.value),
              ].join(" "),
              dynamic: false,
              splittable: false,
              pattern: false,
            },
          };
        }
        if (value === "-u" || value === "-C" || value === "--unset" || value === "--chdir") {
          i++;
          continue;
        }
        if (value.startsWith("-")) continue;
        if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(value)) continue;
        break;
      }
      return { rest: args.slice(i) };
    }
    case "nohup":
    case "time":
    case "coproc":
    case "builtin":
    case "setsid":
    case "unbuffer":
    case "chronic":
    case "caffeinate":
    case "fakeroot":
    case "catchsegv":
    case "entr":
    case "exec":
    case "command":
    case "nice":
    case "ionice":
    case "stdbuf":
    case "taskset":
    case "chrt":
    case "strace":
    case "ltrace":
    case "valgrind":
    case "prlimit":
    case "cpulimit":
    case "unshare":
    case "firejail":
    case "systemd-run":
    case "sg":
    case "flock":
    case "script":
    case "watch":
    case "timeout":
    case "chroot":
    case "busybox":
    case "toybox":
    case "parallel":
    case "xargs":
      return unwrapGeneric(name, args);
  }
  return undefined;
}

/** Options that take a value, per wrapper (short and long spellings). */
const WRAPPER_VALUE_OPTIONS: Record<string, readonly string[]> = {
  exec: ["-a"],
  nice: ["-n", "--adjustment"],
  ionice: ["-c", "-n", "-p", "-P", "-u", "--class", "--classdata"],
  stdbuf: ["-i", "-o", "-e", "--input", "--output", "--error"],
  strace: ["-o", "-e", "-p", "-s", "-u", "-E", "-I", "-a", "-b", "-O", "-P", "-S", "-X"],
  ltrace: ["-o", "-e", "-p", "-s", "-u", "-n", "-a", "-l"],
  timeout: ["-s", "-k", "--signal", "--kill-after"],
  xargs: [
    "-a",
    "-d",
    "-E",
    "-e",
    "-I",
    "-i",
    "-L",
    "-l",
    "-n",
    "-P",
    "-s",
    "--arg-file",
    "--delimiter",
    "--eof",
    "--replace",
    "--max-lines",
    "--max-args",
    "--max-procs",
    "--max-chars",
    "--process-slot-var",
  ],
  "systemd-run": [],
  prlimit: ["-p", "--pid"],
  cpulimit: ["-l", "-p", "-e", "--limit", "--pid", "--exe"],
  flock: ["-w", "-E", "--timeout", "--conflict-exit-code"],
  watch: ["-n", "-d", "-q", "--interval", "--differences"],
  parallel: [
    "-j",
    "-S",
    "--jobs",
    "--sshlogin",
    "-N",
    "-n",
    "-L",
    "-l",
    "-a",
    "--arg-file",
    "-d",
    "--delimiter",
    "-I",
    "--colsep",
    "-C",
  ],
  setsid: [],
  unshare: ["-S", "-G", "-R", "-w", "--setuid", "--setgid", "--root", "--wd"],
  firejail: [],
  sg: [],
  chrt: [],
  taskset: [],
};

function unwrapGeneric(name: string, args: readonly ShellWord[]): Unwrapped {
  const withValue = WRAPPER_VALUE_OPTIONS[name] ?? [];
  let i = 0;
  for (; i < args.length; i++) {
    const word = args[i];
    const value = word.value;
    if (word.splittable) {
      return { finding: "opaque", why: `${name} arguments computed at run time` };
    }
    if (value === "--") {
      i++;
      break;
    }
    if (!value.startsWith("-") || value === "-") break;
    if (name === "command" && /^-[pvV]*[vV]/.test(value)) return { finding: "none", why: "" };
    if (
      (name === "flock" || name === "script" || name === "sg") &&
      (value === "-c" || value === "--command")
    ) {
      const script = args[i + 1];
      return script ? { script } : { finding: "opaque", why: `${name} -c without a command` };
    }
    if (name === "nice" && /^-\d+$/.test(value)) continue;
    if (withValue.includes(value)) i++;
  }
  let rest = args.slice(i);
  switch (name) {
    case "timeout":
      rest = rest.slice(1); // the duration
      break;
    case "chroot":
    case "flock":
    case "taskset":
    case "sg":
    case "prlimit":
      rest = rest.slice(1); // the directory, lock file, mask or group
      break;
    case "chrt":
      rest = rest.slice(/^\d+$/.test(rest[0]?.value ?? "") ? 1 : 0);
      break;
    case "watch": {
      if (rest.some((w) => w.dynamic)) {
        return { finding: "opaque", why: "watch command computed at run time" };
      }
      return {
        script: {
          value: rest.map((w) => w.value).join(" "),
          dynamic: false,
          splittable: false,
          pattern: false,
        },
      };
    }
    case "xargs":
      // xargs without a command runs echo; its input becomes extra arguments.
      return { rest: rest.length ? rest : literal(["echo"]), bulk: true };
    case "parallel": {
      const end = rest.findIndex((w) =>
        w.value === ":::" || w.value === "::::" || w.value === ":::+"
      );
      const command = end >= 0 ? rest.slice(0, end) : rest;
      if (command.length === 1 && !command[0].dynamic && /\s/.test(command[0].value)) {
        return { script: command[0] };
      }
      return { rest: command, bulk: true };
    }
  }
  if (rest.length === 0) return { finding: "none", why: "" };
  return { rest };
}
