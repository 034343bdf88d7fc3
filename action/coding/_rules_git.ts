/**
 * git rules: config injection (`-c core.pager=…`, `-c alias.x='!…'`, `core.sshCommand`,
 * `core.fsmonitor`, `protocol.*.allow`, `--config-env`, `git config`), `ext::`/`fd::` URLs,
 * options that run programs (`--upload-pack`, `rebase --exec`, `bisect run`, `submodule
 * foreach`), and subcommands that discard work (`clean -f`, `checkout -- paths`, `reset
 * --hard`, `restore`, force pushes, branch and tag deletion), long options in any abbreviation.
 *
 * @module
 */

import type { ShellWord } from "./_shell_parse.ts";
import {
  abbreviates,
  destructive,
  flagsOf,
  hasLong,
  joined,
  type Judging,
  opaque,
  type ShellFinding,
  unknown,
} from "./_rules_common.ts";

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
  /(^alias\.|pager|editor|sshcommand|fsmonitor|hookspath|askpass|command$|\.cmd$|textconv|\.process$|\.clean$|\.smudge$|difftool|mergetool|credential\.helper|program$|sequence\.editor|uploadpack|receivepack|proxy|^protocol\.|^url\.|^include\.|^includeif\.|\.driver$|external$|^core\.worktree$|^remote\..*\.vcs$)/i;

/** `git` (with its global options, `-c` settings, subcommands and URLs). */
export function judgeGit(judging: Judging): ShellFinding | undefined {
  const { args, words } = judging;
  // ext:: and fd:: transports run a command (`ext::sh -c …`); git may allow them by config.
  const transport = args.find((arg) => /(^|\s|=)(ext|fd)::/i.test(arg.value));
  if (transport) return opaque(words, "git ext:: / fd:: URL runs a command");
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
    else if (option === "--config-env") {
      setting = value.includes("=") ? value.slice(value.indexOf("=") + 1) : args[i + 1]?.value;
      if (setting !== undefined && GIT_COMMAND_KEYS.test(setting.split("=")[0])) {
        return opaque(words, "git --config-env sets a program git runs");
      }
    }
    if (setting !== undefined && args[i + 1]?.dynamic && value === "-c") {
      return opaque(words, "git -c setting computed at run time");
    }
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
  const runs = judgeGitRunners(judging, sub, rest);
  if (runs) return runs;
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
  // Long options count in any abbreviation (`--forc`, `--ha`): git takes unambiguous prefixes.
  const has = (...names: string[]) =>
    names.some((n) => (n.startsWith("--") ? hasLong(flags.long, n) : flags.short.has(n.slice(1))));
  const dry = flags.short.has("n") || flags.long.has("--dry-run");
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
      // `git checkout TREE PATH…` overwrites the paths (without -b/-B/--orphan, which take one).
      if (flags.operands.length >= 2 && !has("-b", "-B", "--orphan")) {
        return destructive(words, "git checkout of paths from a commit discards changes");
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
      return hasLong(flags.long, "--prune")
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

/** Subcommand options that run a program or a command line. */
function judgeGitRunners(
  judging: Judging,
  sub: string,
  rest: readonly ShellWord[],
): ShellFinding | undefined {
  const { words } = judging;
  for (let i = 0; i < rest.length; i++) {
    const value = rest[i].value;
    const eq = value.indexOf("=");
    const option = eq > 0 ? value.slice(0, eq) : value;
    const given = eq > 0 ? { ...rest[i], value: value.slice(eq + 1) } : rest[i + 1];
    if (
      option.startsWith("--") &&
      ["--upload-pack", "--receive-pack", "--exec", "--extcmd", "--tool", "--open-files-in-pager"]
        .some((o) => abbreviates(option, o))
    ) {
      if (option.startsWith("--exec") && sub === "rebase" && given) {
        const found = judging.reparse(given, "git rebase --exec");
        if (found) return found;
        continue;
      }
      return opaque(words, `git ${sub} ${option} runs a program`);
    }
    if (
      (value === "-u" && ["clone", "fetch", "ls-remote", "pull", "archive"].includes(sub)) ||
      (/^-[A-Za-z]*x/.test(value) && (sub === "rebase" || sub === "difftool")) ||
      (/^-O/.test(value) && sub === "grep")
    ) {
      if (sub === "rebase" && rest[i + 1]) {
        const found = judging.reparse(rest[i + 1], "git rebase -x");
        if (found) return found;
        continue;
      }
      return opaque(words, `git ${sub} ${value} runs a program`);
    }
    if ((value === "-c" || option === "--config") && sub === "clone") {
      const setting = value === "-c" || eq < 0 ? rest[i + 1]?.value ?? "" : given?.value ?? "";
      if (GIT_COMMAND_KEYS.test(setting.split("=")[0]) || setting.includes("=!")) {
        return opaque(words, "git clone --config sets a program git runs");
      }
    }
  }
  const operands = rest.filter((w) => !w.value.startsWith("-"));
  if (sub === "bisect" && operands[0]?.value === "run") {
    return judging.nested(rest.slice(rest.findIndex((w) => w.value === "run") + 1));
  }
  if (sub === "submodule" && operands[0]?.value === "foreach") {
    const after = rest.slice(rest.findIndex((w) => w.value === "foreach") + 1)
      .filter((w) => !w.value.startsWith("--"));
    if (after.length) return judging.reparse(joined(after), "git submodule foreach");
  }
  return undefined;
}
