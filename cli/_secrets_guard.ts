/**
 * The secrets guard of `hookscope run`/`resume`: a session `tool.pre` handler that refuses any
 * tool call that could read (or write) a protected file (`.env*`, SSH keys, `*.pem`, … — the
 * library's `isProtectedBasename`). It decides on the call's real arguments:
 *
 * - a `command` is parsed with the library's shell parser (`tree-sitter-bash`) and judged at
 *   every nesting level: every simple command, every redirection, here-documents, and every
 *   word that itself reads as a command line (`sh -c '…'`, `ssh host '…'`, `find -exec sh -c`)
 *   parsed again; a command the library's judge cannot see into (inline interpreter code, a
 *   program name computed at run time) or cannot parse is refused;
 * - the most dangerous reading wins: a glob that could match a protected name, and a word
 *   computed at run time (`$x`, `$(…)`, words fed by `xargs`), count as naming one, unless the
 *   program only prints or lists names (`echo`, `printf`, `ls`, `test`);
 * - recursive readers (`grep -r`, `rg`, `tar`, `zip`, `cp -r`, `rsync`, `scp -r`, `diff -r`,
 *   `find -exec`; `cpio -o` archives any name on its input)
 *   read everything below their operands: the real tree is walked, and a protected file (or a
 *   symlink to one) anywhere in it refuses the call; a tree too large to walk is refused too;
 * - every other string argument without whitespace is checked with the library's path guard
 *   (`guardPaths` with the host file system, rooted in the workspace: symlinks, protected
 *   names, hard links) and resolved, so a symlink with an innocent name is caught.
 *
 * @module
 */

import { lstat, readdir, realpath, stat } from "node:fs/promises";
import { isProtectedBasename } from "../action/mod.ts";
import { guardPaths } from "../action/guards.ts";
import { baseName, globMatcher, resolvePath } from "../action/_path.ts";
import { nodeFileSystem } from "../action/coding/file_system.ts";
import {
  loadShellParser,
  type ParsedShell,
  type ShellParser,
} from "../action/coding/_shell_parse.ts";
import { judgeShell, MAX_SHELL_DEPTH } from "../action/coding/_shell_judge.ts";

/** What the secrets guard reads of a `tool.pre` payload. */
export interface SecretsGuardPayload {
  /** The called tool. */
  toolName: string;
  /** The rendering for logs; used only when the payload carries no `args`. */
  argsSummary?: string;
  /** The call's real arguments. */
  args?: Readonly<Record<string, unknown>>;
}

/** Names a glob is tried against: one of each protected name and pattern. */
const SECRET_SAMPLES = [
  ".env",
  ".env.local",
  ".env.production",
  "prod.env",
  ".envrc",
  ".netrc",
  "_netrc",
  ".pgpass",
  ".npmrc",
  ".pypirc",
  ".htpasswd",
  ".git-credentials",
  ".my.cnf",
  "id_rsa",
  "id_dsa",
  "id_ecdsa",
  "id_ed25519",
  "id_rsa.bak",
  "server.pem",
  "server.key",
  "cert.p12",
  "cert.pfx",
  "store.jks",
  "app.keystore",
  "putty.ppk",
  "secret.asc",
  "secret.gpg",
  "vault.kdbx",
];

/** Programs that only print, compare or list their arguments: globs and `$x` are harmless. */
const NAMES_ONLY = new Set([
  "echo",
  "printf",
  "test",
  "[",
  "[[",
  "true",
  "false",
  ":",
  "ls",
  "pwd",
  "date",
  "sleep",
  "exit",
  "return",
  "shift",
  "let",
]);

/**
 * Programs that run a later word of their command as a command line (`sh -c '…'`,
 * `ssh host '…'`, `eval`, `su -c`, `watch`, `xargs sh -c`, `find -exec sh -c`): the words after
 * one are parsed again and judged as strictly as the line itself.
 */
const RUNNERS = new Set([
  "sh",
  "bash",
  "dash",
  "zsh",
  "ksh",
  "mksh",
  "ash",
  "fish",
  "busybox",
  "eval",
  "ssh",
  "su",
  "runuser",
  "script",
  "watch",
  "flock",
  "trap",
  "alias",
  "env",
  "sudo",
  "doas",
  "xargs",
  "parallel",
  "nohup",
  "setsid",
  "timeout",
]);

/** Characters that make a word worth parsing again as a command line. */
const SHELL_SYNTAX = /[\s;|&<>()$`]/;

/** A walk of a tree read recursively stops (and refuses) after this many entries. */
const MAX_WALK = 50_000;

/** Why a call is refused. */
class Refusal {
  readonly reason: string;
  constructor(reason: string) {
    this.reason = reason;
  }
}

interface Context {
  readonly parse: ShellParser;
  readonly workspace: string;
  /** Directories relative names may be resolved in (the workspace and every `cd` target). */
  readonly cwds: string[];
}

function programName(value: string): string {
  return baseName(value);
}

function hasGlob(value: string): boolean {
  return /[*?[{]/.test(value);
}

/** Why a literal name, read in any of `cwds`, is (or resolves to, or may match) a secret. */
async function nameSecret(
  value: string,
  context: Context,
  globs: boolean,
): Promise<string | null> {
  if (value === "" || value.length > 4096) return null;
  // The whole word, its `key=value`/`a:b`/`a,b` parts, and every name-like piece of it.
  const parts = new Set([
    value,
    ...value.split(/[=:,]/),
    ...value.split(/[^A-Za-z0-9._~/*?[\]{}!-]+/),
  ]);
  for (const part of parts) {
    if (part === "") continue;
    const name = baseName(part);
    if (isProtectedBasename(name)) return name;
    if (globs && hasGlob(name)) {
      const found = await globSecret(part, context);
      if (found) return found;
    }
  }
  // The name may be innocent while the file it resolves to is not (`notes.txt -> .env`), or
  // another name of the same file (a hard link: refused, as the path guard does).
  for (const part of parts) {
    if (part === "" || part.includes("\0")) continue;
    for (const cwd of context.cwds) {
      try {
        const real = await realpath(resolvePath(cwd, part));
        if (isProtectedBasename(baseName(real))) return `${part} -> ${baseName(real)}`;
        const info = await stat(real);
        if (info.isFile() && info.nlink > 1) return `${part} is a hard-linked file`;
      } catch {
        // missing: nothing to resolve
      }
    }
  }
  return null;
}

/** Whether the glob's last component could match a protected name (samples and real files). */
async function globSecret(glob: string, context: Context): Promise<string | null> {
  const name = baseName(glob);
  let matches: (name: string) => boolean;
  try {
    matches = globMatcher(name);
  } catch {
    return `${glob} (a pattern too large to judge)`;
  }
  const sample = SECRET_SAMPLES.find((candidate) => matches(candidate));
  if (sample) return `${glob} (could match ${sample})`;
  const slash = glob.lastIndexOf("/");
  const dir = slash < 0 ? "." : glob.slice(0, slash) || "/";
  if (hasGlob(dir)) return null;
  for (const cwd of context.cwds) {
    try {
      for (const entry of await readdir(resolvePath(cwd, dir))) {
        if (isProtectedBasename(entry) && matches(entry)) return `${glob} (matches ${entry})`;
      }
    } catch {
      // no such directory
    }
  }
  return null;
}

/**
 * The first protected file below `path` (itself included), following symlinks once each; a
 * refusal when the tree is larger than {@linkcode MAX_WALK} entries.
 */
async function treeSecret(path: string): Promise<string | null> {
  const seen = new Set<string>();
  const queue = [path];
  let count = 0;
  while (queue.length > 0) {
    const current = queue.pop() as string;
    if (++count > MAX_WALK) return `${path} (more than ${MAX_WALK} files to check)`;
    let info;
    try {
      info = await lstat(current);
    } catch {
      continue;
    }
    if (isProtectedBasename(baseName(current))) return current;
    if (info.isFile() && info.nlink > 1) return `${current} (a hard-linked file)`;
    let real = current;
    if (info.isSymbolicLink()) {
      try {
        real = await realpath(current);
        info = await stat(real);
      } catch {
        continue;
      }
      if (isProtectedBasename(baseName(real))) return `${current} -> ${baseName(real)}`;
    }
    if (!info.isDirectory()) continue;
    const key = info.isSymbolicLink() ? real : await realpath(current).catch(() => current);
    if (seen.has(key)) continue;
    seen.add(key);
    let entries: string[];
    try {
      entries = await readdir(current);
    } catch {
      continue;
    }
    for (const entry of entries) queue.push(`${current.replace(/\/+$/, "")}/${entry}`);
  }
  return null;
}

/** Reads every tree named in `operands` (relative to each cwd); refuses on a secret. */
async function readTrees(
  program: string,
  operands: readonly string[],
  context: Context,
): Promise<void> {
  for (const operand of operands) {
    if (operand === "-" || operand.includes("\0")) continue;
    for (const cwd of context.cwds) {
      const found = await treeSecret(resolvePath(cwd, operand));
      if (found) {
        throw new Refusal(
          `${program} reads ${JSON.stringify(operand)} recursively, which holds ${
            found.startsWith(cwd + "/") ? found.slice(cwd.length + 1) : found
          }`,
        );
      }
    }
  }
}

function flagLetters(words: readonly string[]): Set<string> {
  const out = new Set<string>();
  for (const word of words) {
    if (/^-[A-Za-z0-9]+$/.test(word)) { for (const letter of word.slice(1)) out.add(letter); }
  }
  return out;
}

/** grep options that take the next word as their value. */
const GREP_VALUE_OPTIONS = new Set([
  "-e",
  "-f",
  "-m",
  "-A",
  "-B",
  "-C",
  "-d",
  "-D",
  "--regexp",
  "--file",
  "--max-count",
  "--after-context",
  "--before-context",
  "--context",
  "--directories",
  "--devices",
  "--include",
  "--exclude",
  "--exclude-dir",
  "--label",
  "-g",
  "--glob",
  "-t",
  "--type",
  "-T",
  "--type-not",
]);

/** Operands of a grep-like command: the pattern dropped unless given by -e/-f. */
function grepOperands(args: readonly string[]): string[] {
  const operands: string[] = [];
  let patternGiven = false;
  for (let i = 0; i < args.length; i++) {
    const word = args[i];
    if (word === "--") {
      operands.push(...args.slice(i + 1));
      break;
    }
    if (GREP_VALUE_OPTIONS.has(word)) {
      if (["-e", "-f", "--regexp", "--file"].includes(word)) patternGiven = true;
      i++;
      continue;
    }
    if (/^(-e|-f|--regexp=|--file=)/.test(word)) patternGiven = true;
    if (word.startsWith("-") && word !== "-") continue;
    operands.push(word);
  }
  return patternGiven ? operands : operands.slice(1);
}

/**
 * Judges `words[0..]` as a recursive reader, if it is one: the trees it reads must hold no
 * secret.
 */
async function judgeRecursive(words: readonly string[], context: Context): Promise<void> {
  const program = programName(words[0]);
  const args = words.slice(1);
  const letters = flagLetters(args);
  const long = (name: string) => args.some((arg) => arg === name || arg.startsWith(`${name}=`));
  const operands = args.filter((arg) => !arg.startsWith("-"));
  switch (program) {
    case "grep":
    case "egrep":
    case "fgrep":
    case "zgrep": {
      const recursive = letters.has("r") || letters.has("R") || long("--recursive") ||
        long("--dereference-recursive") || args.includes("recurse") ||
        args.includes("--directories=recurse");
      if (!recursive) return;
      const trees = grepOperands(args);
      return await readTrees(program, trees.length ? trees : ["."], context);
    }
    case "rg":
    case "ag":
    case "ack":
    case "ack-grep":
    case "pt":
    case "ugrep": {
      const trees = grepOperands(args);
      return await readTrees(program, trees.length ? trees : ["."], context);
    }
    case "tar":
    case "bsdtar":
    case "gtar":
    case "zip":
    case "7z":
    case "7za":
    case "jar":
    case "rsync":
    case "rclone":
    case "duplicity":
    case "restic":
      return await readTrees(program, operands.length ? operands : ["."], context);
    case "cp":
    case "scp":
    case "gcp": {
      const recursive = letters.has("r") || letters.has("R") || letters.has("a") ||
        long("--recursive") || long("--archive");
      if (recursive) await readTrees(program, operands, context);
      return;
    }
    case "diff":
    case "colordiff": {
      if (letters.has("r") || long("--recursive")) await readTrees(program, operands, context);
      return;
    }
    case "cpio":
    case "afio":
    case "pax":
      // Archives the names on its input: any file at all.
      if (letters.has("o") || letters.has("p") || long("--create") || long("--pass-through")) {
        throw new Refusal(`${program} archives names from its input, which could name a secret`);
      }
      return;
    case "find":
    case "bfs": {
      const runs = args.some((arg) => /^-(exec|execdir|ok|okdir|fprint|fprint0|fls)$/.test(arg));
      if (!runs) return;
      const start: string[] = [];
      for (const arg of args) {
        if (/^[-(!]/.test(arg) || arg === ")") break;
        start.push(arg);
      }
      return await readTrees(program, start.length ? start : ["."], context);
    }
    case "fd":
    case "fdfind": {
      if (!args.some((arg) => /^(-x|-X|--exec|--exec-batch)$/.test(arg))) return;
      const trees = grepOperands(args);
      return await readTrees(program, trees.length ? trees : ["."], context);
    }
  }
}

/** Programs fed words computed at run time from their input. */
const FEEDERS = new Set(["xargs", "parallel"]);
const FEEDER_VALUE_OPTIONS = new Set([
  "-I",
  "-i",
  "-n",
  "-P",
  "-d",
  "-E",
  "-e",
  "-L",
  "-l",
  "-s",
  "-a",
  "--arg-file",
  "--delimiter",
  "--max-args",
  "--max-procs",
  "--max-lines",
  "--replace",
  "--eof",
  "-j",
  "--jobs",
]);

/** The program `xargs …` runs, or `undefined` for its default (`echo`). */
function fedProgram(args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const word = args[i];
    if (FEEDER_VALUE_OPTIONS.has(word)) {
      i++;
      continue;
    }
    if (word === "--") return args[i + 1];
    if (word.startsWith("-")) continue;
    return word;
  }
  return undefined;
}

/** Judges one parsed command line at `depth`; throws a {@linkcode Refusal}. */
async function judgeParsed(parsed: ParsedShell, context: Context, depth: number): Promise<void> {
  // `cd` targets: a relative name later in the line may be read there.
  for (const command of parsed.commands) {
    const [head, target] = command.words;
    if ((head?.value === "cd" || head?.value === "pushd") && target && !target.dynamic) {
      for (const cwd of [...context.cwds]) {
        const dir = resolvePath(cwd, target.value);
        if (!context.cwds.includes(dir)) context.cwds.push(dir);
      }
    }
  }
  for (const redirect of parsed.redirects) {
    const target = redirect.target;
    if (!target || /^\d+-?$|^-$/.test(target.value)) continue;
    if (target.dynamic) {
      throw new Refusal(`a redirection to a file named at run time (${redirect.op})`);
    }
    const found = await nameSecret(target.value, context, target.pattern);
    if (found) throw new Refusal(`${redirect.op} ${found}`);
  }
  for (const body of parsed.expandedBodies) {
    await judgeLine(`: "${body.replaceAll('"', '\\"')}"`, context, depth + 1);
  }
  for (const command of parsed.commands) {
    const words = command.words;
    const program = words[0]?.dynamic ? "" : programName(words[0]?.value ?? "");
    const namesOnly = NAMES_ONLY.has(program);
    const runnerAt = words.findIndex((word) =>
      !word.dynamic && RUNNERS.has(programName(word.value))
    );
    for (let i = 0; i < words.length; i++) {
      const word = words[i];
      if (word.dynamic || word.value.includes("\0")) {
        if (!namesOnly) {
          throw new Refusal(
            `${JSON.stringify(command.text)} passes a word computed at run time, which could ` +
              "name a secret",
          );
        }
        continue;
      }
      const found = await nameSecret(word.value, context, !namesOnly);
      if (found) throw new Refusal(found);
      if (runnerAt >= 0 && i > runnerAt && SHELL_SYNTAX.test(word.value)) {
        // A word after `sh -c`, `ssh host`, `eval`, … is run as a command line: judged as one.
        await judgeLine(word.value, context, depth + 1);
      }
    }
    const values = words.map((word) => word.value);
    for (let i = 0; i < values.length; i++) {
      const name = programName(values[i]);
      if (FEEDERS.has(name)) {
        const fed = fedProgram(values.slice(i + 1));
        if (fed !== undefined && !NAMES_ONLY.has(programName(fed))) {
          throw new Refusal(
            `${name} runs ${fed} on names computed at run time, which could name a secret`,
          );
        }
      }
      // Wrappers (`sudo`, `timeout`, `nice`, `env`) run a later word as the program: every
      // position is tried as the start of a recursive reader.
      await judgeRecursive(values.slice(i), context);
    }
  }
}

async function judgeLine(source: string, context: Context, depth: number): Promise<void> {
  if (depth > MAX_SHELL_DEPTH) {
    throw new Refusal(`commands nested more than ${MAX_SHELL_DEPTH} levels deep`);
  }
  let parsed: ParsedShell;
  try {
    parsed = context.parse(source);
  } catch (error) {
    throw new Refusal(`cannot parse the command: ${(error as Error).message}`);
  }
  await judgeParsed(parsed, context, depth);
}

/** Why `command` could touch a secret, or `null`. */
async function commandSecret(command: string, workspace: string): Promise<string | null> {
  let parse: ShellParser;
  try {
    parse = await loadShellParser();
  } catch (error) {
    return `the shell parser could not be loaded, so no command can be judged: ${
      (error as Error)?.message ?? String(error)
    }`;
  }
  // The library's judge: a command it cannot see into could read anything.
  const finding = judgeShell(parse, command);
  if (finding && finding.kind !== "destructive") return finding.reason;
  try {
    await judgeLine(command, { parse, workspace, cwds: [workspace] }, 0);
  } catch (error) {
    if (error instanceof Refusal) return error.reason;
    throw error;
  }
  return null;
}

/** Every string in `value` with the key it sits under (arguments may nest), at most 1 000. */
function stringsIn(
  value: unknown,
  key = "",
  out: [string, string][] = [],
  depth = 0,
): [string, string][] {
  if (out.length >= 1000 || depth > 8) return out;
  if (typeof value === "string") out.push([key, value]);
  else if (Array.isArray(value)) { for (const item of value) stringsIn(item, key, out, depth + 1); }
  else if (value !== null && typeof value === "object") {
    for (const [name, item] of Object.entries(value)) stringsIn(item, name, out, depth + 1);
  }
  return out;
}

async function pathSecret(text: string, workspace: string): Promise<string | null> {
  if (text.length > 4096) return null; // content, not a path
  const context: Context = {
    parse: () => {
      throw new Error("unused");
    },
    workspace,
    cwds: [workspace],
  };
  const named = await nameSecret(text, context, true);
  if (named) return named;
  // The library's path guard, rooted in the workspace: symlinks, protected names, hard links.
  const guard = guardPaths({ fs: { ...nodeFileSystem, cwd: () => workspace } });
  let message: string;
  try {
    const verdict = await guard({ args: { path: text } });
    if (verdict === undefined) return null;
    message = verdict.reason;
  } catch (error) {
    message = (error as Error).message;
  }
  return /symlink|protected|hard-linked|NUL/.test(message) ? message : null;
}

async function checkSecrets(payload: SecretsGuardPayload, workspace: string): Promise<void> {
  const { toolName, argsSummary, args } = payload;
  if (!args || typeof args !== "object") {
    // No real arguments: every name-like piece of the summary is checked as a path.
    for (const piece of String(argsSummary ?? "").split(/[\s'"`;|&<>(){}\[\],]+/)) {
      const found = piece === "" ? null : await pathSecret(piece, workspace);
      if (found) throw new Error(`${toolName} may not touch secrets (${found})`);
    }
    return;
  }
  const strings = stringsIn(args);
  for (const [key, text] of strings) {
    // A command is judged on its parse; a path-like value as a path; free text (file content,
    // messages) is not a path and is left alone.
    const found = key === "command"
      ? await commandSecret(text, workspace)
      : /\s/.test(text) || text === ""
      ? null
      : await pathSecret(text, workspace);
    if (found) throw new Error(`${toolName} may not touch secrets (${found})`);
  }
}

/**
 * Blocks any tool call whose real arguments could touch a secrets file (a session `tool.pre`
 * guard), resolving relative paths in the process's working directory; see the module doc.
 * Falls back to the argument summary (every name-like piece checked as a path) when the payload
 * carries no arguments.
 */
export function secretsGuard(payload: SecretsGuardPayload): Promise<void> {
  return checkSecrets(payload, nodeFileSystem.cwd());
}

/** {@linkcode secretsGuard} resolving relative paths in `workspace` (the agent run's). */
export function secretsGuardIn(workspace: string): (payload: SecretsGuardPayload) => Promise<void> {
  return (payload) => checkSecrets(payload, workspace);
}
