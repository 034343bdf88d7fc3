/**
 * Wrapper rules: programs that run another program (`sudo`, `env`, `timeout`, `prlimit`,
 * `flock`, `script -c`, `sg`, `xargs`, `busybox`, …). Each wrapper gives every reading of its
 * arguments the judge cannot rule out — the command may start after any option whose value it
 * cannot be sure of — and the judge judges each reading.
 *
 * @module
 */

import type { ShellWord } from "./_shell_parse.ts";
import {
  abbreviates,
  commandStarts,
  DYNAMIC,
  joined,
  literal,
  type OptionSpec,
} from "./_rules_common.ts";

/** One way a wrapper's arguments may be read: a command (argv) or a command string. */
export type Reading =
  | { readonly rest: readonly ShellWord[]; readonly bulk?: boolean }
  | { readonly script: ShellWord };

/** What a wrapper runs: readings to judge, or a verdict without one. */
export type Unwrapped =
  | { readonly readings: readonly Reading[] }
  | { readonly finding: "none" | "opaque" | "destructive"; readonly why: string };

/** Options of the wrappers read by {@linkcode commandStarts}. */
const SPECS: Record<string, OptionSpec> = {
  nohup: {},
  time: {
    values: "fo",
    flags: "pavqV",
    longValues: ["--format", "--output"],
    longFlags: ["--append", "--verbose", "--portability", "--quiet"],
  },
  coproc: {},
  builtin: {},
  setsid: { flags: "cfw", longFlags: ["--ctty", "--fork", "--wait"] },
  unbuffer: { flags: "p" },
  chronic: { flags: "ev" },
  caffeinate: { values: "tw", flags: "dimsu" },
  fakeroot: { values: "lsib", flags: "uh", longValues: ["--lib", "--faked"] },
  catchsegv: {},
  entr: { flags: "acdnprsz" },
  exec: { values: "a", flags: "cl" },
  command: { flags: "p" },
  nice: { values: "n", longValues: ["--adjustment"], numeric: true },
  ionice: {
    values: "cnpPu",
    flags: "th",
    longValues: ["--class", "--classdata", "--pid", "--pgid", "--uid"],
    longFlags: ["--ignore"],
  },
  stdbuf: { values: "ioe", longValues: ["--input", "--output", "--error"] },
  taskset: { flags: "acp", longFlags: ["--all-tasks", "--cpu-list", "--pid"], positionals: [1] },
  chrt: {
    values: "TPD",
    flags: "abdfiormpRve",
    longValues: ["--sched-runtime", "--sched-period", "--sched-deadline"],
    longFlags: [
      "--all-tasks",
      "--batch",
      "--deadline",
      "--fifo",
      "--idle",
      "--other",
      "--rr",
      "--max",
      "--pid",
      "--reset-on-fork",
      "--verbose",
      "--ext",
    ],
    positionals: [0, 1],
  },
  strace: { values: "oepsuEIabOPSX", flags: "fFcCdhiqrtTvVwxyzkDnZ" },
  ltrace: { values: "oepsunal", flags: "fhiLrStTVbcCDF" },
  valgrind: {},
  prlimit: {
    values: "po",
    optional: "ACdefilmnqrstuvxy",
    longValues: ["--pid", "--output"],
    longFlags: [
      "--noheadings",
      "--raw",
      "--verbose",
      "--as",
      "--core",
      "--cpu",
      "--data",
      "--fsize",
      "--locks",
      "--memlock",
      "--msgqueue",
      "--nice",
      "--nofile",
      "--nproc",
      "--rss",
      "--rtprio",
      "--rttime",
      "--sigpending",
      "--stack",
    ],
  },
  cpulimit: { values: "lpe", flags: "zivqkr", longValues: ["--limit", "--pid", "--exe"] },
  unshare: {
    values: "SGRwt",
    flags: "mupinUCTrfca",
    longValues: ["--setuid", "--setgid", "--root", "--wd", "--propagation"],
  },
  firejail: {},
  "systemd-run": {
    values: "puEMHsD",
    flags: "qGtPSr",
    longValues: [
      "--property",
      "--unit",
      "--setenv",
      "--machine",
      "--host",
      "--uid",
      "--gid",
      "--nice",
      "--slice",
      "--description",
      "--working-directory",
      "--service-type",
      "--on-calendar",
    ],
  },
  chroot: { longValues: ["--userspec", "--groups"], longFlags: ["--skip-chdir"], positionals: [1] },
  timeout: {
    values: "sk",
    flags: "fpv",
    longValues: ["--signal", "--kill-after"],
    longFlags: ["--foreground", "--preserve-status", "--verbose"],
    positionals: [1],
  },
  flock: {
    values: "wE",
    flags: "sxeunoFv",
    longValues: ["--timeout", "--wait", "--conflict-exit-code"],
    longFlags: [
      "--shared",
      "--exclusive",
      "--unlock",
      "--nonblock",
      "--nb",
      "--close",
      "--no-fork",
      "--verbose",
    ],
    positionals: [1],
  },
  busybox: {},
  toybox: {},
  xargs: {
    values: "aEdILnPs",
    optional: "eil",
    flags: "0oprtx",
    longValues: [
      "--arg-file",
      "--delimiter",
      "--max-args",
      "--max-procs",
      "--max-chars",
      "--process-slot-var",
    ],
    longFlags: [
      "--null",
      "--no-run-if-empty",
      "--interactive",
      "--verbose",
      "--exit",
      "--open-tty",
      "--show-limits",
      "--eof",
      "--replace",
      "--max-lines",
    ],
  },
  watch: {
    values: "nq",
    optional: "d",
    flags: "bceghptwx",
    longValues: ["--interval", "--equexit"],
    longFlags: [
      "--beep",
      "--color",
      "--no-color",
      "--differences",
      "--errexit",
      "--chgexit",
      "--exec",
      "--no-title",
      "--precise",
      "--no-wrap",
      "--no-rerun",
    ],
  },
  parallel: {
    values: "jSNnLlaCdI",
    longValues: ["--jobs", "--sshlogin", "--arg-file", "--delimiter", "--colsep"],
  },
};

/** Environment variables whose value some program runs as a command line. */
const COMMAND_VARIABLES =
  /^(GIT_PAGER|PAGER|MANPAGER|GIT_EDITOR|EDITOR|VISUAL|GIT_SEQUENCE_EDITOR|GIT_SSH_COMMAND|GIT_SSH|GIT_ASKPASS|SSH_ASKPASS|SUDO_ASKPASS|GIT_EXTERNAL_DIFF|GIT_PROXY_COMMAND|PROMPT_COMMAND|LESSOPEN|LESSCLOSE|RSYNC_RSH|BROWSER)$/;
/** Environment variables that load code or configuration the guard cannot see. */
const CODE_VARIABLES =
  /^(LD_PRELOAD|LD_LIBRARY_PATH|LD_AUDIT|BASH_ENV|ENV|ZDOTDIR|GIT_CONFIG_PARAMETERS|GIT_CONFIG_COUNT|GIT_CONFIG_KEY_\d+|GIT_CONFIG_VALUE_\d+|GIT_CONFIG|GIT_CONFIG_GLOBAL|GIT_CONFIG_SYSTEM|GIT_EXEC_PATH|GIT_TEMPLATE_DIR|NODE_OPTIONS|PERL5OPT|PERL5LIB|PYTHONSTARTUP|PYTHONPATH|RUBYOPT|BASH_FUNC_.*|SHELLOPTS|BASHOPTS|PS4)$/;

/** Readings of a wrapper's command from every possible start index. */
function fromStarts(
  name: string,
  args: readonly ShellWord[],
  spec: OptionSpec,
  bulk?: boolean,
): Unwrapped {
  const starts = commandStarts(args, spec);
  if (!starts) return { finding: "opaque", why: `${name} options computed at run time` };
  const readings: Reading[] = starts.map((start) => ({ rest: args.slice(start), bulk }));
  return { readings };
}

/** Whether `value` is the short option `letter` bundled with others (`-qc`). */
function clusterWith(value: string, letter: string): boolean {
  return /^-[A-Za-z0-9]+$/.test(value) && value.slice(1).includes(letter);
}

/** Harmless files a wrapper's log may go to. */
const HARMLESS_LOGS = /^\/dev\/(null|stdout|stderr|tty|fd\/[12])$/;

/**
 * `time -o FILE`, `strace -o FILE`, `ltrace -o FILE` (without `-a`/`--append`) create or
 * truncate FILE before the command runs.
 */
function truncatedLog(name: string, args: readonly ShellWord[]): string | undefined {
  if (name !== "time" && name !== "strace" && name !== "ltrace") return undefined;
  const starts = commandStarts(args, SPECS[name]) ?? [args.length];
  const options = args.slice(0, Math.max(...starts));
  if (
    name === "time" &&
    options.some((w) => /^-[a-zA-Z]*a/.test(w.value) || abbreviates(w.value, "--append"))
  ) {
    return undefined;
  }
  if (name === "strace" && options.some((w) => /^-[a-zA-Z]*A/.test(w.value))) return undefined;
  for (let i = 0; i < options.length; i++) {
    const value = options[i].value;
    let file: string | undefined;
    if (value.startsWith("--")) {
      if (abbreviates(value, "--output")) {
        file = value.includes("=") ? value.slice(value.indexOf("=") + 1) : options[i + 1]?.value;
      }
    } else if (/^-[a-zA-Z]*o/.test(value)) {
      const rest = value.slice(value.indexOf("o") + 1);
      file = rest || options[i + 1]?.value;
    }
    if (file !== undefined && !HARMLESS_LOGS.test(file)) return file;
  }
  return undefined;
}

/** The command a wrapper runs, or `undefined` when `name` is not a wrapper. */
export function unwrap(name: string, args: readonly ShellWord[]): Unwrapped | undefined {
  const log = truncatedLog(name, args);
  if (log !== undefined) {
    return { finding: "destructive", why: `${name} truncates its log file ${log}` };
  }
  if (/^(busybox|toybox)([.-].*)?$/.test(name)) return fromStarts(name, args, SPECS.busybox);
  switch (name) {
    case "sudo":
    case "doas":
      return unwrapSudo(name, args);
    case "su":
    case "runuser":
      return unwrapSu(name, args);
    case "env":
      return unwrapEnv(args);
    case "command":
      if (args.some((arg) => /^-[pvV]*[vV]/.test(arg.value))) return { finding: "none", why: "" };
      return fromStarts(name, args, SPECS.command);
    case "flock":
      return unwrapFlock(args);
    case "script":
      return unwrapScript(args);
    case "sg":
    case "newgrp":
      return unwrapSg(name, args);
    case "watch": {
      const starts = commandStarts(args, SPECS.watch);
      if (!starts) return { finding: "opaque", why: "watch options computed at run time" };
      // watch runs its words through `sh -c` (unless -x): judge both readings.
      const readings: Reading[] = [];
      for (const start of starts) {
        const rest = args.slice(start);
        if (!rest.length) continue;
        readings.push({ rest }, { script: joined(rest) });
      }
      return readings.length ? { readings } : { finding: "none", why: "" };
    }
    case "xargs": {
      const starts = commandStarts(args, SPECS.xargs);
      if (!starts) return { finding: "opaque", why: "xargs options computed at run time" };
      // xargs without a command runs echo; its input becomes extra arguments.
      return {
        readings: starts.map((start) => {
          const rest = args.slice(start);
          return { rest: rest.length ? rest : literal(["echo"]), bulk: true };
        }),
      };
    }
    case "parallel": {
      const starts = commandStarts(args, SPECS.parallel);
      if (!starts) return { finding: "opaque", why: "parallel options computed at run time" };
      const readings: Reading[] = [];
      for (const start of starts) {
        const rest = args.slice(start);
        const end = rest.findIndex((w) => /^::::?\+?$/.test(w.value));
        const command = end >= 0 ? rest.slice(0, end) : rest;
        if (!command.length) continue;
        readings.push({ rest: command, bulk: true }, { script: joined(command) });
      }
      return readings.length ? { readings } : { finding: "none", why: "" };
    }
  }
  if (!Object.hasOwn(SPECS, name)) return undefined;
  const unwrapped = fromStarts(name, args, SPECS[name]);
  if ("readings" in unwrapped) {
    const readings = unwrapped.readings.filter((r) => !("rest" in r) || r.rest.length > 0);
    return readings.length ? { readings } : { finding: "none", why: "" };
  }
  return unwrapped;
}

function unwrapSudo(name: string, args: readonly ShellWord[]): Unwrapped {
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
      if (abbreviates(option, "--shell") || abbreviates(option, "--login")) shell = true;
      if (["--edit", "--list", "--validate"].some((o) => option === o)) {
        return { finding: "none", why: "" };
      }
      if (
        !value.includes("=") &&
        [
          "--user",
          "--group",
          "--prompt",
          "--chdir",
          "--host",
          "--role",
          "--type",
          "--close-from",
          "--other-user",
          "--chroot",
          "--command-timeout",
        ].some((o) => abbreviates(option, o))
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
  if (!shell) return { readings: [{ rest }] };
  if (rest.length === 0) return { finding: "opaque", why: `${name} starts a shell` };
  return { readings: [{ script: joined(rest) }] };
}

function unwrapSu(name: string, args: readonly ShellWord[]): Unwrapped {
  const readings: Reading[] = [];
  for (let i = 0; i < args.length; i++) {
    const value = args[i].value;
    if (args[i].splittable) {
      return { finding: "opaque", why: `${name} options computed at run time` };
    }
    if (value === "--") {
      if (name === "runuser" && args[i + 1]) readings.push({ rest: args.slice(i + 1) });
      break;
    }
    const eq = value.indexOf("=");
    if (
      value.startsWith("--") &&
      (abbreviates(value, "--command") || abbreviates(value, "--session-command"))
    ) {
      if (eq > 0) readings.push({ script: { ...args[i], value: value.slice(eq + 1) } });
      else if (args[i + 1]) readings.push({ script: args[i + 1] });
      continue;
    }
    if (/^-[A-Za-z]+$/.test(value) && value.includes("c")) {
      const attached = value.slice(value.indexOf("c") + 1);
      if (attached) readings.push({ script: { ...args[i], value: attached } });
      if (args[i + 1]) readings.push({ script: args[i + 1] });
    }
  }
  if (readings.length) return { readings };
  return { finding: "opaque", why: `${name} starts a shell` };
}

function unwrapEnv(args: readonly ShellWord[]): Unwrapped {
  const readings: Reading[] = [];
  let i = 0;
  for (; i < args.length; i++) {
    const word = args[i];
    const value = word.value;
    if (word.splittable || value.startsWith(DYNAMIC)) {
      return { finding: "opaque", why: "env arguments computed at run time" };
    }
    if (value === "--") {
      i++;
      break;
    }
    if (value === "-" || !value.startsWith("-")) break;
    if (value.startsWith("--")) {
      const eq = value.indexOf("=");
      if (abbreviates(value, "--split-string") && value.length >= 4) {
        const inline = eq > 0 ? value.slice(eq + 1) : args[i + 1]?.value;
        if (inline === undefined) return { finding: "opaque", why: "env -S without a string" };
        const rest = args.slice(eq > 0 ? i + 1 : i + 2);
        return { readings: [{ script: joined([...literal([inline]), ...rest]) }] };
      }
      if (eq < 0 && (abbreviates(value, "--unset") || abbreviates(value, "--chdir"))) i++;
      continue;
    }
    const s = value.indexOf("S");
    const u = value.search(/[uC]/);
    if (s > 0 && (u < 0 || s < u)) {
      // -S STRING (or -iS STRING, -S'…'): the string is split into a command (judged as one).
      const inline = s < value.length - 1 ? value.slice(s + 1) : args[i + 1]?.value;
      if (inline === undefined) return { finding: "opaque", why: "env -S without a string" };
      const rest = args.slice(s < value.length - 1 ? i + 1 : i + 2);
      return { readings: [{ script: joined([...literal([inline]), ...rest]) }] };
    }
    if (u > 0 && u === value.length - 1) i++;
  }
  for (; i < args.length; i++) {
    const match = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(args[i].value);
    if (!match) break;
    if (CODE_VARIABLES.test(match[1])) {
      return { finding: "opaque", why: `env sets ${match[1]}, which loads code` };
    }
    if (COMMAND_VARIABLES.test(match[1]) && match[2] !== "") {
      readings.push({ script: { ...args[i], value: match[2] } });
    }
  }
  readings.push({ rest: args.slice(i) });
  return { readings: readings.filter((r) => !("rest" in r) || r.rest.length > 0) };
}

function unwrapFlock(args: readonly ShellWord[]): Unwrapped {
  const unwrapped = fromStarts("flock", args, SPECS.flock);
  if (!("readings" in unwrapped)) return unwrapped;
  const readings: Reading[] = [];
  for (const reading of unwrapped.readings) {
    if (!("rest" in reading) || reading.rest.length === 0) continue;
    const head = reading.rest[0].value;
    if (head === "-c" || (head.startsWith("--") && abbreviates(head, "--command"))) {
      const eq = head.indexOf("=");
      const script = eq > 0 ? { ...reading.rest[0], value: head.slice(eq + 1) } : reading.rest[1];
      if (script) readings.push({ script });
      continue;
    }
    readings.push(reading);
  }
  // `-c` anywhere (before or after the lock file) runs its string through a shell.
  args.forEach((arg, i) => {
    if (arg.value === "-c" && args[i + 1]) readings.push({ script: args[i + 1] });
  });
  return readings.length ? { readings } : { finding: "none", why: "" };
}

function unwrapScript(args: readonly ShellWord[]): Unwrapped {
  // util-linux script permutes its options: -c may come after the log file.
  const readings: Reading[] = [];
  for (let i = 0; i < args.length; i++) {
    const word = args[i];
    const value = word.value;
    if (value === "--") break;
    if (word.splittable) return { finding: "opaque", why: "script options computed at run time" };
    if (value.startsWith("--")) {
      if (abbreviates(value, "--command") && value.length >= 4) {
        const eq = value.indexOf("=");
        const script = eq > 0 ? { ...word, value: value.slice(eq + 1) } : args[i + 1];
        if (script) readings.push({ script });
      }
      continue;
    }
    if (clusterWith(value, "c")) {
      const attached = value.slice(value.indexOf("c") + 1);
      if (attached) readings.push({ script: { ...word, value: attached } });
      if (args[i + 1]) readings.push({ script: args[i + 1] });
    }
  }
  if (!args.some((w) => /^-[a-zA-Z]*a/.test(w.value) || abbreviates(w.value, "--append"))) {
    // The log file (first operand that is no option's value; ./typescript without one) is
    // truncated before anything runs.
    const logFile = scriptLogFile(args);
    if (!HARMLESS_LOGS.test(logFile)) {
      return { finding: "destructive", why: `script truncates its log file ${logFile}` };
    }
  }
  if (readings.length) return { readings };
  return { finding: "opaque", why: "script without -c runs a shell on its input" };
}

/** The log file `script` writes (`typescript` when none is named). */
function scriptLogFile(args: readonly ShellWord[]): string {
  for (let i = 0; i < args.length; i++) {
    const value = args[i].value;
    if (value === "--") return args[i + 1]?.value ?? "typescript";
    if (value.startsWith("--")) {
      if (
        !value.includes("=") &&
        [
          "--command",
          "--log-in",
          "--log-out",
          "--log-io",
          "--log-timing",
          "--logging-format",
          "--echo",
          "--output-limit",
          "--timing",
        ].some((o) => abbreviates(value, o))
      ) i++;
      continue;
    }
    if (value.startsWith("-") && value !== "-") {
      // -c CMD, -B/-I/-O/-T FILE, -E WHEN, -m TYPE, -o SIZE take a value (attached or next).
      const letter = value.slice(1).search(/[cBIOTEmo]/);
      if (letter >= 0 && letter === value.length - 2) i++;
      continue;
    }
    return value;
  }
  return "typescript";
}

function unwrapSg(name: string, args: readonly ShellWord[]): Unwrapped {
  // sg [-] [group [-c] command]: the command (all remaining words) runs through /bin/sh -c.
  let rest = args;
  if (rest[0]?.value === "-") rest = rest.slice(1);
  rest = rest.slice(1); // the group
  if (rest[0]?.value === "-c") rest = rest.slice(1);
  if (rest.length === 0) return { finding: "opaque", why: `${name} starts a shell` };
  if (rest.some((w) => w.dynamic)) {
    return { finding: "opaque", why: `${name} command computed at run time` };
  }
  return { readings: [{ script: joined(rest) }, { rest }] };
}
