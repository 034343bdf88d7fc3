/**
 * File rules: deletes (`rm` in every spelling and abbreviation, `find -delete` / `-exec` /
 * `-execdir` / `-ok`), moves that take data out of the workspace (`mv x ..`, absolute
 * targets), writes over devices and system files (`cp`, `tee`, `install`, `ln`), archives
 * that delete (`tar --remove-files`) or run programs, `dd of=`, `rsync --delete`,
 * recursive permission changes, and truncating redirections.
 *
 * @module
 */

import type { ShellWord } from "./_shell_parse.ts";
import {
  abbreviates,
  destructive,
  flagsOf,
  HARMLESS_DEVICES,
  hasLong,
  type Judging,
  opaque,
  type Rule,
  type ShellFinding,
  SYSTEM_PATHS,
  unknown,
  writesSystemTarget,
} from "./_rules_common.ts";

/** A redirection that writes to a device, a system file, or truncates a file. */
export function judgeRedirect(
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

/** Operands of `rm` that name a whole tree. */
const WHOLE_TREES = ["/", "~", "*", "/*", "~/", "~/*", "./*", ".", "..", ".*", "*.*"];

function judgeRm({ args, words, bulk }: Judging): ShellFinding | undefined {
  const flags = flagsOf(args);
  if (flags.short.has("r") || flags.short.has("R") || hasLong(flags.long, "--recursive")) {
    return destructive(words, "recursive delete");
  }
  if (hasLong(flags.long, "--no-preserve-root")) return destructive(words, "rm --no-preserve-root");
  if (flags.unknown) return destructive(words, "rm with arguments computed at run time");
  if (bulk) return destructive(words, "rm deletes every file it is given");
  if (flags.operands.some((op) => WHOLE_TREES.includes(op.value))) {
    return destructive(words, "rm of a whole tree");
  }
  return undefined;
}

function judgeFind(judging: Judging): ShellFinding | undefined {
  const { args, words } = judging;
  for (let i = 0; i < args.length; i++) {
    const value = args[i].value;
    if (args[i].splittable) return opaque(words, "find expression computed at run time");
    if (value === "-delete") return destructive(words, "find -delete");
    if (["-exec", "-execdir", "-ok", "-okdir"].includes(value)) {
      let end = i + 1;
      while (end < args.length && args[end].value !== ";" && args[end].value !== "+") end++;
      const command = args.slice(i + 1, end);
      if (command.length === 0) return opaque(words, `find ${value} without a command`);
      const found = judging.nested(command, true);
      if (found) return { kind: found.kind, reason: `${found.reason} (run by find ${value})` };
      i = end;
    }
    if (["-fprint", "-fprint0", "-fprintf", "-fls"].includes(value) && args[i + 1]) {
      // These create or truncate their file whatever the expression finds.
      return destructive(words, `find ${value} truncates ${args[i + 1].value}`);
    }
  }
  return undefined;
}

/**
 * Whether a path (as `mv` would see it, from the working directory) leaves the workspace:
 * absolute, the home directory, or climbing above the working directory with `..`.
 */
function leavesWorkspace(value: string): boolean {
  if (value.startsWith("/") || value.startsWith("~")) return true;
  let depth = 0;
  for (const part of value.split("/")) {
    if (part === "..") depth--;
    else if (part !== "." && part !== "") depth++;
    if (depth < 0) return true;
  }
  return false;
}

function judgeCopy(judging: Judging): ShellFinding | undefined {
  const { name, args, words } = judging;
  const flags = flagsOf(args, { withValue: ["t", "S", "m", "o", "g"] });
  const operands = flags.operands;
  const targetDir = args.findIndex((arg) =>
    arg.value === "-t" || /^-[A-Za-z]*t$/.test(arg.value) ||
    abbreviates(arg.value, "--target-directory")
  );
  const explicitTarget = targetDir >= 0
    ? args[targetDir].value.includes("=")
      ? { ...args[targetDir], value: args[targetDir].value.split("=").slice(1).join("=") }
      : args[targetDir + 1]
    : undefined;
  const target = name === "tee" ? operands : explicitTarget ? [explicitTarget] : operands.slice(-1);
  if (target.some((op) => writesSystemTarget(op.value))) {
    return destructive(words, `${name} writes over a device or system file`);
  }
  if (
    name === "tee" && !judging.input &&
    !flags.short.has("a") && !hasLong(flags.long, "--append") &&
    operands.some((op) => !HARMLESS_DEVICES.test(op.value) && op.value !== "-")
  ) {
    // With no input given on the line it reads the caller's (empty): like `: > file`.
    return destructive(words, "tee with no input truncates its files");
  }
  if (
    name === "cp" && operands.length >= 2 &&
    operands.slice(0, -1).some((op) => op.value === "/dev/null" || op.value === "/dev/zero")
  ) {
    return destructive(words, "cp from /dev/null or /dev/zero overwrites the target");
  }
  if (name !== "mv") return undefined;
  if (target.some((op) => op.value.startsWith("/dev/"))) {
    return destructive(words, "mv into a device deletes the source");
  }
  if (operands.some((op) => ["/", "~", "."].includes(op.value))) {
    return destructive(words, "mv moves a whole tree away");
  }
  if (flags.unknown || operands.some((op) => unknown(op))) {
    return destructive(words, "mv with operands computed at run time");
  }
  const all = explicitTarget ? [...operands, explicitTarget] : operands;
  if (all.some((op) => leavesWorkspace(op.value))) {
    return destructive(words, "mv moves files out of (or in from outside) the workspace");
  }
  return undefined;
}

/** tar options that run a program. */
const TAR_RUNNERS = [
  "--to-command",
  "--use-compress-program",
  "--checkpoint-action",
  "--info-script",
  "--new-volume-script",
  "--rmt-command",
  "--rsh-command",
];

function judgeTar({ args, words }: Judging): ShellFinding | undefined {
  for (let i = 0; i < args.length; i++) {
    const value = args[i].value;
    if (unknown(args[i])) return opaque(words, "tar options computed at run time");
    if (value.startsWith("--")) {
      if (abbreviates(value, "--remove-files")) {
        return destructive(words, "tar --remove-files deletes the archived files");
      }
      if (abbreviates(value, "--recursive-unlink")) {
        return destructive(words, "tar --recursive-unlink deletes directories before extracting");
      }
      if (TAR_RUNNERS.some((option) => abbreviates(value, option))) {
        return opaque(words, "tar option runs a program");
      }
      continue;
    }
    // -I PROG / -F SCRIPT (short forms of --use-compress-program / --info-script).
    if (/^-[A-Za-z]*[IF]/.test(value)) return opaque(words, "tar option runs a program");
  }
  return undefined;
}

function judgeRsync(judging: Judging): ShellFinding | undefined {
  const { args, words } = judging;
  const flags = flagsOf(args, { withValue: ["e", "f", "B", "T"] });
  if (
    [...flags.long].some((flag) =>
      flag.startsWith("--delete") || abbreviates(flag, "--delete") ||
      abbreviates(flag, "--remove-source-files") || flag === "--del"
    )
  ) {
    return destructive(words, "rsync deletes files");
  }
  for (let i = 0; i < args.length; i++) {
    const value = args[i].value;
    const eq = value.indexOf("=");
    if (
      value === "-e" || /^-[A-Za-z]*e$/.test(value) || abbreviates(value, "--rsh") ||
      abbreviates(value, "--rsync-path")
    ) {
      const given = eq > 0 ? { ...args[i], value: value.slice(eq + 1) } : args[i + 1];
      if (given) {
        const found = judging.reparse(given, "rsync remote shell");
        if (found) return found;
      }
    } else if (/^-[A-Za-z]*e./.test(value) && !value.startsWith("--")) {
      const found = judging.reparse(
        { ...args[i], value: value.slice(value.indexOf("e") + 1) },
        "rsync -e",
      );
      if (found) return found;
    }
  }
  return undefined;
}

function judgeDd({ args, words }: Judging): ShellFinding | undefined {
  if (args.some((arg) => arg.value.startsWith("of=") || unknown(arg))) {
    return destructive(words, "dd writes over its output file");
  }
  return undefined;
}

function judgePermissions({ name, args, words }: Judging): ShellFinding | undefined {
  const flags = flagsOf(args);
  if (flags.short.has("R") || hasLong(flags.long, "--recursive") || flags.unknown) {
    return destructive(words, `${name} changes a whole tree`);
  }
  if (flags.operands.some((op) => op.value === "/" || SYSTEM_PATHS.test(op.value))) {
    return destructive(words, `${name} changes system files`);
  }
  return undefined;
}

/** File rules by program name. */
export const FILE_RULES: Record<string, Rule> = {
  rm: judgeRm,
  unlink: ({ words, bulk }) =>
    bulk ? destructive(words, "deletes every file it is given") : undefined,
  find: judgeFind,
  mv: judgeCopy,
  cp: judgeCopy,
  tee: judgeCopy,
  install: judgeCopy,
  ln: judgeCopy,
  tar: judgeTar,
  gtar: judgeTar,
  bsdtar: judgeTar,
  rsync: judgeRsync,
  dd: judgeDd,
  chmod: judgePermissions,
  chown: judgePermissions,
  chgrp: judgePermissions,
  setfacl: judgePermissions,
};
