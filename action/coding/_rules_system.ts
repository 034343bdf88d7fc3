/**
 * System rules: programs that destroy data whatever their arguments (`mkfs*`, `wipefs`,
 * `shred`, `truncate`, `shutdown`, …), killing every process, run levels, `crontab -r`,
 * container pruning, dropping SQL, and the remote or package runners that run another command
 * (`ssh HOST CMD`, `ssh -o ProxyCommand=…`, `npx`, `npm exec`).
 *
 * @module
 */

import {
  destructive,
  flagsOf,
  type Judging,
  literal,
  opaque,
  type ShellFinding,
  skipOptions,
  unknown,
} from "./_rules_common.ts";

/** Programs that destroy data whatever their arguments (disks, file contents, the machine). */
export const ALWAYS_DESTRUCTIVE: Record<string, string> = {
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
export const SQL_CLIENTS = new Set([
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
export const DESTRUCTIVE_SQL =
  /\b(drop\s+(table|database|schema|index|view|user)|truncate\s+table)\b/i;

/** ssh options whose value runs a local command. */
const SSH_LOCAL_COMMANDS = /^(proxycommand|localcommand|knownhostscommand|permitlocalcommand)\b/i;

/** System rules for one command (`undefined` for a program these rules do not know). */
export function judgeSystem(judging: Judging): ShellFinding | undefined {
  const { name, args, words } = judging;
  const nested = (rest: readonly import("./_shell_parse.ts").ShellWord[]) =>
    rest.length ? judging.nested(rest) : undefined;
  const reparse = judging.reparse;
  if (/^(mkfs|mkfs\..+|mke2fs|mkdosfs|mkntfs)$/.test(name)) {
    return destructive(words, "formats a file system");
  }
  if (Object.hasOwn(ALWAYS_DESTRUCTIVE, name)) return destructive(words, ALWAYS_DESTRUCTIVE[name]);
  switch (name) {
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
    case "docker":
    case "podman":
      if (
        args.some((arg) => arg.value === "prune") ||
        (args[0]?.value === "volume" && args[1]?.value === "rm")
      ) {
        return destructive(words, `${name} deletes data`);
      }
      return undefined;
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
      for (let i = 0; i < args.length; i++) {
        const value = args[i].value;
        const option = value === "-o"
          ? args[i + 1]?.value ?? ""
          : value.startsWith("-o")
          ? value.slice(2)
          : "";
        if (SSH_LOCAL_COMMANDS.test(option.trim())) {
          return opaque(words, "ssh option runs a local command");
        }
        if (value === "-o" && args[i + 1]?.dynamic) {
          return opaque(words, "ssh option computed at run time");
        }
      }
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
