// Staged runs (effects: "overlay"): real bubblewrap, real overlayfs. Every bash call writes
// into a copy-on-write layer; its change set reaches the tool.effects hooks and only an allow
// (or no opinion) commits it. Needs `bwrap` and overlayfs in a new mount namespace.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  chmodSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import process from "node:process";
import { ActionManager, AgentSpec } from "../../../action/mod.ts";
import {
  codingSpec,
  CodingToolkit,
  detectSandbox,
  EffectsCommitError,
  type FileChange,
  keepDataPolicy,
  type ToolEffectsDecision,
} from "../../../action/coding/mod.ts";
import { DESTRUCTIVE_COMMANDS } from "../../fixtures/command_corpus.ts";
import { main } from "../../../cli/main.ts";
import { Session, WouldDeny } from "../../../session/mod.ts";
import { ApprovalRequiredError } from "../../../core/mod.ts";
import { commitChanges, effectsStore } from "../../../action/coding/_commit.ts";
import { lowerState, readChangeSet } from "../../../action/coding/_changes.ts";
import { openOrCreateDb } from "../../../cli/_db.ts";
import { makeSandbox, type Result, type Sandbox, snapshot, treeHash } from "./_helpers.ts";

function fill(ws: string): void {
  mkdirSync(join(ws, "victim", "sub"), { recursive: true });
  writeFileSync(join(ws, "victim", "file"), "precious\n".repeat(20));
  writeFileSync(join(ws, "victim", "sub", "deep.txt"), "precious too\n");
  writeFileSync(join(ws, "list.txt"), "victim\n");
  writeFileSync(join(ws, "notes.md"), "# notes\n" + "line\n".repeat(50));
  chmodSync(join(ws, "notes.md"), 0o640);
  symlinkSync("notes.md", join(ws, "link"));
}

const git = (ws: string, ...args: string[]) =>
  execFileSync("git", ["-C", ws, "-c", "user.name=t", "-c", "user.email=t@t", ...args], {
    stdio: "pipe",
  });

function toolkitWith(
  ws: string,
  spec: AgentSpec,
  state: string,
  extra?: Record<string, unknown>,
): { manager: ActionManager; toolkit: CodingToolkit } {
  const manager = new ActionManager();
  const toolkit = new CodingToolkit({
    workspaceRoot: ws,
    spec,
    tools: ["bash"],
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: "/tmp/home" },
    sandbox: { maxProcesses: 64 },
    effectsDir: state,
    ...extra,
  });
  toolkit.bind(manager);
  return { manager, toolkit };
}

async function bash(manager: ActionManager, command: string, id?: string): Promise<Result> {
  const call = await manager.invoke(
    { function: "bash", arguments: { command } },
    { suppressErrors: true, ...(id ? { callId: id } : {}) },
  );
  return call.response as Result;
}

// Long-option abbreviations, moves out of the workspace, truncation through redirection,
// find -delete, interpreters, archivers and git: every one destroys victim/ or notes.md when it
// runs, and none is judged here (the judge is off).
const MORE_DESTRUCTIVE = [
  "rm --recur --force victim",
  "rm --rec victim",
  "rm --recursiv victim",
  "rm -r --forc victim",
  "tar --remove-files -cf /tmp/x.tar victim",
  "tar --remove-fi -cf /tmp/x.tar victim",
  "tar -c --remove-files -f - victim > /dev/null",
  "mv victim ..",
  "mv victim /tmp/",
  "mv victim/file /tmp/x && mv victim/sub /tmp/y",
  "mv notes.md victim/",
  ": > notes.md",
  "> notes.md",
  "echo x > notes.md",
  "truncate -s 0 notes.md",
  "cp /dev/null notes.md",
  "dd if=/dev/null of=notes.md",
  "printf '' | tee notes.md",
  "sed -i d notes.md",
  "sed -n 1e'rm -r victim' list.txt",
  "find victim -delete",
  "find . -name '*.md' -delete",
  "find victim -type f -exec rm {} +",
  "find . -name deep.txt -execdir rm {} \\;",
  "xargs rm -r < list.txt",
  "cat list.txt | xargs rm -rf",
  "node -e \"require('fs').rmSync('victim',{recursive:true})\"",
  "node -e \"require('fs').writeFileSync('notes.md','')\"",
  "python3 -c \"import shutil; shutil.rmtree('victim')\"",
  "perl -e 'use File::Path; rmtree(\"victim\")'",
  "sh -c 'rm -r victim'",
  "bash -c 'rm -rf victim'",
  "eval 'rm -r victim'",
  "prlimit --nofile=64 rm -r victim",
  "flock /tmp/lock -c 'rm -r victim'",
  "busybox rm -r victim",
  "unlink notes.md",
  "rm link notes.md",
  "ln -sf /etc/passwd notes.md",
  "chmod 000 notes.md && rm -f notes.md",
  "rsync -a --delete /var/empty/ victim/ 2>/dev/null || rm -r victim",
  "git clean -fdx",
  "git checkout -- notes.md && echo gone > notes.md",
  "git reset --hard HEAD~0 && rm -r victim",
  "git rm -rq victim",
  "git -c core.hooksPath=/dev/null clean -ffdx",
  "git stash -u",
  "cd victim && rm -r ../victim",
  "rm -r victim # comment read differently",
  "R=rm; $R -r victim",
  "$(printf rm) -r victim",
  "echo cm0gLXIgdmljdGlt | base64 -d | sh",
];

describe("staged runs (effects: overlay) with real bubblewrap and overlayfs", () => {
  let box: Sandbox;
  let state: string;
  before(async () => {
    const info = await detectSandbox();
    assert.equal(info.kind, "bubblewrap", `bubblewrap must be installed: ${info.reason}`);
    assert.equal(info.effects, "overlay", `overlayfs must mount: ${info.effectsReason}`);
    box = makeSandbox();
    state = join(box.base, "state");
  });
  after(() => box?.cleanup());

  it("harmless commands, pipelines and inline code run through a real shell and commit", async () => {
    const { manager, toolkit } = toolkitWith(box.ws, codingSpec({ cwd: box.ws }), state);
    assert.equal((await toolkit.sandboxStatus() as { effects: string }).effects, "overlay");
    const inline = await bash(manager, `node -e "console.log(6*7)"`);
    assert.equal(inline.stdout, "42\n", JSON.stringify(inline));
    assert.deepEqual(inline.changes, []);
    const piped = await bash(manager, "echo a b c | tr ' ' '\\n' > out.txt && wc -l < out.txt");
    assert.equal(piped.success, true, JSON.stringify(piped));
    assert.equal(String(piped.stdout).trim(), "3");
    assert.equal(piped.applied, true);
    assert.equal(readFileSync(join(box.ws, "out.txt"), "utf8"), "a\nb\nc\n");
    const code = await bash(
      manager,
      `python3 -c "open('py.txt','w').write(str(6*7))" && node -e "require('fs').mkdirSync('gen/deep',{recursive:true}); require('fs').writeFileSync('gen/deep/x.json','{}')"`,
    );
    assert.equal(code.success, true, JSON.stringify(code));
    assert.equal(readFileSync(join(box.ws, "py.txt"), "utf8"), "42");
    assert.equal(readFileSync(join(box.ws, "gen", "deep", "x.json"), "utf8"), "{}");
  });

  it("the change set names created, modified, deleted, mode and symlink entries", async () => {
    const ws = join(box.base, "kinds");
    mkdirSync(ws);
    fill(ws);
    const seen: FileChange[][] = [];
    const spec = new AgentSpec().effects("bash", ({ changes }) => {
      seen.push([...changes]);
      return { decision: "deny", reason: "just looking" };
    });
    const { manager } = toolkitWith(ws, spec, state);
    const before = treeHash(ws);
    const result = await bash(
      manager,
      "echo new > new.txt; echo more >> notes.md; rm victim/file; chmod 600 list.txt; ln -sfn /etc victim/sub/etc",
    );
    assert.equal(result.applied, false);
    assert.match(String(result.error), /not applied: just looking\. The workspace is unchanged/);
    assert.equal(treeHash(ws), before);
    const byPath = Object.fromEntries(seen[0].map((c) => [c.path, c]));
    assert.deepEqual(byPath["new.txt"], {
      path: "new.txt",
      kind: "created",
      type: "file",
      bytesAfter: 4,
    });
    assert.equal(byPath["notes.md"].kind, "modified");
    assert.equal(byPath["notes.md"].bytesAfter, (byPath["notes.md"].bytesBefore ?? 0) + 5);
    assert.equal(byPath["victim/file"].kind, "deleted");
    assert.equal(byPath["list.txt"].kind, "mode");
    assert.equal(byPath["victim/sub/etc"].kind, "symlink");
    assert.equal(byPath["victim/sub/etc"].target, "/etc");
  });

  it("a destructive corpus with the judge off: each one leaves the workspace byte-identical, or a hook allowed its change set (and it lost nothing)", async () => {
    const ws = join(box.base, "corpus-default");
    mkdirSync(ws);
    fill(ws);
    git(ws, "init", "-q");
    git(ws, "add", "-A");
    git(ws, "commit", "-qm", "init");
    const corpus = [
      ...MORE_DESTRUCTIVE,
      ...DESTRUCTIVE_COMMANDS.filter((entry) => entry.local).map((entry) => entry.command),
    ];
    assert.ok(corpus.length >= 150, String(corpus.length));
    // The judge is off (secure: false); the preset's keepDataPolicy decides, seen through a hook
    // that records each verdict, and an ask has no one to answer.
    const policy = keepDataPolicy();
    const verdicts = new Map<string, { decision?: string; changes: number }>();
    const spec = new AgentSpec().effects("bash", async (payload) => {
      const verdict = await policy(payload);
      verdicts.set(payload.callId, {
        decision: verdict?.decision,
        changes: payload.changes.length,
      });
      return verdict;
    });
    const { manager, toolkit } = toolkitWith(ws, spec, state);
    const outsideBefore = snapshot(box.outside);
    const initial = treeHash(ws, false);
    let strict = treeHash(ws);
    const files = new Map<string, number>();
    const walk = (dir: string, rel: string) => {
      for (const name of readdirSync(dir)) {
        const info = lstatSync(join(dir, name));
        const path = rel ? `${rel}/${name}` : name;
        if (info.isDirectory()) walk(join(dir, name), path);
        else files.set(path, info.isFile() ? info.size : -1);
      }
    };
    walk(ws, "");
    const problems: string[] = [];
    let committed = 0;
    let reached = 0;
    for (const [index, command] of corpus.entries()) {
      const callId = `d${index}`;
      const result = await bash(manager, command, callId);
      const verdict = verdicts.get(callId);
      if (verdict !== undefined && verdict.changes > 0) reached++;
      if (result.applied !== true || (verdict?.changes ?? 0) === 0) {
        // Not committed (or nothing to commit): byte-identical, modification times included.
        if (treeHash(ws) !== strict) problems.push(`${command}: changed the workspace`);
        continue;
      }
      if (verdict?.decision !== "allow") {
        problems.push(`${command}: committed without a hook allowing it`);
      }
      committed++;
      // What was committed kept every file that existed, as what it was and at least half of it.
      for (const [path, size] of files) {
        const info = lstatSync(join(ws, path), { throwIfNoEntry: false });
        if (!info) problems.push(`${command}: ${path} is gone`);
        else if (size < 0 ? !info.isSymbolicLink() : !info.isFile()) {
          problems.push(`${command}: ${path} changed type`);
        } else if (size > 0 && info.size < size / 2 && size - info.size >= 64) {
          problems.push(`${command}: ${path} cut from ${size} to ${info.size} bytes`);
        }
      }
      // Back to the start for the next command: undo what the allowed change set did.
      await toolkit.undo(callId);
      if (treeHash(ws, false) !== initial) problems.push(`${command}: undo did not restore it`);
      strict = treeHash(ws); // restored files have new modification times
    }
    assert.deepEqual(problems, []);
    assert.deepEqual(snapshot(box.outside), outsideBefore);
    // Most of them did destroy something in their staged view: their change sets reached the hook.
    assert.ok(reached >= 150, `${reached} of ${corpus.length} reached the hook`);
    console.log(
      `corpus: ${corpus.length} commands, ${reached} change sets reached the hook, ${committed} committed (allowed, nothing lost, then undone)`,
    );
  });

  it("a hard link or a symlink in the change set cannot make a commit write outside the workspace", async () => {
    const ws = join(box.base, "links");
    mkdirSync(ws);
    fill(ws);
    const secret = join(box.outside, "secret.txt");
    linkSync(secret, join(ws, "hard"));
    const outsideBefore = snapshot(box.outside);
    const { manager } = toolkitWith(
      ws,
      new AgentSpec().effects("bash", () => ({ decision: "allow" })),
      state,
    );
    // Overwriting a hard-linked file commits a new inode: the other name keeps its bytes.
    const hard = await bash(manager, "echo changed > hard && echo more >> hard");
    assert.equal(hard.applied, true, JSON.stringify(hard));
    assert.equal(readFileSync(join(ws, "hard"), "utf8"), "changed\nmore\n");
    // A symlink pointing out (its target is not even visible in the sandbox) is committed as a
    // symlink; nothing is written through it.
    const links = await bash(
      manager,
      `ln -s ${box.outside} out && (echo x > out/pwn || true) && mkdir -p d && ln -s ${secret} d/s && (echo y > d/s || true)`,
    );
    assert.equal(links.applied, true, JSON.stringify(links));
    assert.equal(lstatSync(join(ws, "out")).isSymbolicLink(), true);
    assert.deepEqual(snapshot(box.outside), outsideBefore);
    // A directory swapped for a symlink between the run and the commit: refused, nothing written.
    const upper = join(box.base, "links-upper");
    mkdirSync(join(upper, "victim"), { recursive: true });
    writeFileSync(join(upper, "victim", "planted"), "through the link\n");
    const store = effectsStore(join(box.base, "links-state"), ws);
    const set = await readChangeSet(upper, ws, new Set());
    const lower = await lowerState(ws, set.plan);
    renameSync(join(ws, "victim"), join(ws, "victim.real"));
    symlinkSync(box.outside, join(ws, "victim"));
    await assert.rejects(
      commitChanges(store, { callId: "swap", toolName: "bash", ...set, lower }),
      (error: unknown) => error instanceof EffectsCommitError && error.why === "escape",
    );
    assert.deepEqual(snapshot(box.outside), outsideBefore);
    assert.equal(existsSync(join(box.outside, "planted")), false);
  });

  it("committed files never keep set-user-ID or set-group-ID bits (a set-root program for a root caller)", async () => {
    const ws = join(box.base, "setid");
    mkdirSync(ws);
    const { manager } = toolkitWith(
      ws,
      new AgentSpec().effects("bash", () => ({ decision: "allow" })),
      state,
    );
    const result = await bash(
      manager,
      "cp /bin/sh sh && chmod 6755 sh && mkdir g && chmod 2775 g && cp /bin/true g/t && chmod 4711 g/t && stat -c %a sh g/t",
    );
    assert.equal(result.applied, true, JSON.stringify(result));
    // Inside the staged view the bits were set; in the workspace they are not.
    assert.equal(String(result.stdout), "6755\n4711\n");
    assert.equal(lstatSync(join(ws, "sh")).mode & 0o7777, 0o755);
    assert.equal(lstatSync(join(ws, "g", "t")).mode & 0o7777, 0o711);
    // A directory's set-group-ID bit (group inheritance) is kept.
    assert.equal(lstatSync(join(ws, "g")).mode & 0o7777, 0o2775);
  });

  it("a change set is not committed over workspace entries that changed after the run", async () => {
    const ws = join(box.base, "changed-after");
    mkdirSync(ws);
    fill(ws);
    const upper = join(box.base, "changed-after-upper");
    mkdirSync(upper);
    writeFileSync(join(upper, "notes.md"), "the program's version\n");
    const store = effectsStore(join(box.base, "changed-after-state"), ws);
    const set = await readChangeSet(upper, ws, new Set());
    const lower = await lowerState(ws, set.plan);
    writeFileSync(join(ws, "notes.md"), "a person's edit meanwhile\n");
    await assert.rejects(
      commitChanges(store, { callId: "stale", toolName: "bash", ...set, lower }),
      (error: unknown) => error instanceof EffectsCommitError && error.why === "changed",
    );
    assert.equal(readFileSync(join(ws, "notes.md"), "utf8"), "a person's edit meanwhile\n");
  });

  it("the same corpus commits where a hook allows it (the control: it really destroys)", async () => {
    const ws = join(box.base, "control");
    mkdirSync(ws);
    fill(ws);
    const { manager } = toolkitWith(
      ws,
      new AgentSpec().effects("bash", () => ({ decision: "allow" })),
      state,
    );
    for (const command of ["rm --recur --force victim", "mv list.txt ..", ": > notes.md"]) {
      const result = await bash(manager, command);
      assert.equal(result.applied, true, `${command}: ${JSON.stringify(result)}`);
    }
    assert.equal(existsSync(join(ws, "victim")), false);
    assert.equal(existsSync(join(ws, "list.txt")), false);
    assert.equal(readFileSync(join(ws, "notes.md"), "utf8"), "");
  });

  it("the coding preset asks before deleting or truncating; a failing hook discards", async () => {
    const ws = join(box.base, "preset");
    mkdirSync(ws);
    fill(ws);
    const before = treeHash(ws);
    const spec = codingSpec({ cwd: ws });
    const asked: string[] = [];
    let answer = false;
    const { manager } = toolkitWith(ws, spec, state, {
      approveEffects: ({ reason }: { reason?: string }) => {
        asked.push(reason ?? "");
        return answer;
      },
    });
    const refused = await bash(manager, "rm --recur --force victim");
    assert.equal(refused.applied, false);
    assert.match(
      String(refused.error),
      /a person rejected them \(asked because: The command deletes 2 existing/,
    );
    const truncate = await bash(manager, "> notes.md");
    assert.equal(truncate.applied, false);
    assert.match(asked[1], /truncates 1 existing file\(s\): notes\.md/);
    const secret = await bash(manager, "echo KEY=1 > .env");
    assert.equal(secret.applied, false);
    assert.match(asked[2], /protected files: \.env/);
    assert.equal(treeHash(ws), before);
    answer = true;
    const approved = await bash(manager, "rm -r victim");
    assert.equal(approved.applied, true, JSON.stringify(approved));
    assert.equal(existsSync(join(ws, "victim")), false);
    // A hook that throws discards the change set.
    const failing = new AgentSpec().effects("bash", () => {
      throw new Error("policy crashed");
    });
    const crashed = toolkitWith(ws, failing, state).manager;
    const hashed = treeHash(ws);
    const result = await bash(crashed, "echo x > y.txt");
    assert.equal(result.applied, false);
    assert.match(String(result.error), /policy crashed/);
    assert.equal(treeHash(ws), hashed);
  });

  it("builds that write many files commit: git init && git commit, npm install of a local tarball", async () => {
    const ws = join(box.base, "build");
    mkdirSync(join(ws, "pkg"), { recursive: true });
    writeFileSync(
      join(ws, "pkg", "package.json"),
      JSON.stringify({ name: "tiny-local", version: "1.0.0", main: "index.js" }),
    );
    writeFileSync(join(ws, "pkg", "index.js"), "module.exports = 42;\n");
    const { manager } = toolkitWith(
      ws,
      new AgentSpec().effects("bash", () => ({ decision: "allow" })),
      state,
    );
    const gitRun = await bash(
      manager,
      "git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm one && git log --oneline | wc -l",
    );
    assert.equal(gitRun.applied, true, JSON.stringify(gitRun));
    assert.equal(String(gitRun.stdout).trim(), "1");
    assert.equal(git(ws, "log", "--oneline").toString().trim().split("\n").length, 1);
    assert.equal(git(ws, "status", "--porcelain").toString(), "");
    const npm = await bash(
      manager,
      "cd pkg && npm pack --silent > /dev/null && cd .. && mkdir app && cd app && echo '{}' > package.json && npm install --offline --no-audit --no-fund --silent ../pkg/tiny-local-1.0.0.tgz && node -e \"console.log(require('tiny-local'))\"",
    );
    assert.equal(npm.applied, true, JSON.stringify(npm));
    assert.equal(String(npm.stdout).trim(), "42");
    assert.equal(
      readFileSync(join(ws, "app", "node_modules", "tiny-local", "index.js"), "utf8"),
      "module.exports = 42;\n",
    );
    assert.ok((npm.changes as FileChange[]).length >= 5);
  });

  it("undo restores byte-identical trees after creates, edits, deletes, renames, modes and symlinks", async () => {
    const ws = join(box.base, "undo");
    mkdirSync(ws);
    fill(ws);
    const allow = new AgentSpec().effects(
      "bash",
      (): ToolEffectsDecision => ({ decision: "allow" }),
    );
    const { manager, toolkit } = toolkitWith(ws, allow, state);
    const before = treeHash(ws, false);
    const commands: [string, string][] = [
      ["c1", "echo new > new.txt && mkdir -p made/deep && echo x > made/deep/x"],
      ["c2", "echo more >> notes.md && chmod 755 notes.md"],
      ["c3", "rm -r victim && mv list.txt renamed.txt"],
      ["c4", "ln -sfn new.txt link && ln -s /etc out && chmod 700 made"],
      ["c5", "rm -r made && echo file > made"],
    ];
    const hashes = [before];
    for (const [id, command] of commands) {
      const result = await bash(manager, command, id);
      assert.equal(result.applied, true, `${command}: ${JSON.stringify(result)}`);
      hashes.push(treeHash(ws, false));
    }
    assert.equal((await toolkit.checkpoints()).filter((c) => c.state === "committed").length, 5);
    // Undoing an earlier call whose paths a later call changed is refused without force.
    await assert.rejects(toolkit.undo("c1"), (error: unknown) => {
      assert.ok(error instanceof EffectsCommitError);
      assert.equal(error.why, "conflict");
      return true;
    });
    for (let index = commands.length - 1; index >= 0; index--) {
      await toolkit.undo(commands[index][0]);
      assert.equal(treeHash(ws, false), hashes[index], `after undoing ${commands[index][0]}`);
    }
    // byte-identical with the original: content, modes and symlinks (restored files have
    // new mtimes)
    assert.equal(treeHash(ws, false), before);
    await assert.rejects(toolkit.undo("c1"), /undone already/);
    // A change made outside the toolkit since the commit is refused unless forced.
    await bash(manager, "echo one > edited.txt", "c6");
    writeFileSync(join(ws, "edited.txt"), "changed by hand\n");
    await assert.rejects(toolkit.undo("c6"), /changed since/);
    await toolkit.undo("c6", { force: true });
    assert.equal(existsSync(join(ws, "edited.txt")), false);
  });

  it("hookscope undo DB CALL_ID restores a committed call (and refuses an unknown one)", async () => {
    const ws = join(box.base, "cli-undo");
    mkdirSync(ws);
    fill(ws);
    const before = treeHash(ws, false);
    const dir = join(box.base, "cli-state");
    const { manager } = toolkitWith(
      ws,
      new AgentSpec().effects("bash", () => ({ decision: "allow" })),
      dir,
    );
    const result = await bash(manager, "rm -r victim && echo x > notes.md", "cli-1");
    assert.equal(result.applied, true, JSON.stringify(result));
    const db = join(box.base, "cli.db");
    await (await openOrCreateDb(db)).close();
    const out: string[] = [];
    const io = { out: (t: string) => out.push(t), err: (t: string) => out.push(t) };
    assert.equal(await main(["undo", db, "cli-1", "--effects-dir", dir], io), 0, out.join("\n"));
    assert.match(out[0], /Undid call cli-1/);
    // Listed as what the undo did: the deleted folder comes back, the written file is put back.
    assert.ok(out.includes("  created victim"), out.join("\n"));
    assert.ok(out.includes("  modified notes.md"), out.join("\n"));
    assert.equal(treeHash(ws, false), before);
    assert.equal(await main(["undo", db, "nope", "--effects-dir", dir], io), 1);
    assert.equal(out.at(-1), `hookscope undo: no checkpoint for call nope (in ${dir})`);
    // Undone already: said once, with the command named once.
    assert.equal(await main(["undo", db, "cli-1", "--effects-dir", dir], io), 1);
    assert.equal(out.at(-1), "hookscope undo: The change set of call cli-1 was undone already");
    // A refusal names the CLI's flag, not the library's option.
    await bash(manager, "echo a > notes.md", "cli-2");
    await bash(manager, "echo b > notes.md", "cli-3");
    assert.equal(await main(["undo", db, "cli-2", "--effects-dir", dir], io), 1);
    assert.equal(
      out.at(-1),
      `hookscope undo: A later call (cli-3) changed the same paths (notes.md); undo it first ` +
        `(hookscope undo ${db} cli-3) or give --force`,
    );
    writeFileSync(join(ws, "notes.md"), "changed by hand\n");
    assert.equal(await main(["undo", db, "cli-3", "--effects-dir", dir], io), 1);
    assert.equal(
      out.at(-1),
      "hookscope undo: Paths changed since call cli-3 committed (notes.md); give --force to " +
        "restore them anyway",
    );
    assert.equal(await main(["undo", db, "cli-3", "--effects-dir", dir, "--force"], io), 0);
    assert.equal(readFileSync(join(ws, "notes.md"), "utf8"), "a\n");
  });

  it("a session's tool.effects handlers decide too when the tools are bound to a branch", async () => {
    const ws = join(box.base, "session");
    mkdirSync(ws);
    fill(ws);
    const before = treeHash(ws);
    const session = new Session();
    const seen: string[] = [];
    session.hooks.on("tool.effects", ({ toolName, changes }) => {
      seen.push(`${toolName} ${changes.map((c) => `${c.kind} ${c.path}`).join(", ")}`);
      return { decision: "deny", reason: "the session says no" };
    });
    const branch = session.newBranch();
    new CodingToolkit({
      workspaceRoot: ws,
      tools: ["bash"],
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      effectsDir: state,
    }).bind(branch);
    const result = await branch.act({ function: "bash", arguments: { command: "rm list.txt" } });
    const output = result.output as Result;
    assert.equal(output.applied, false, JSON.stringify(output));
    assert.match(String(output.error), /the session says no/);
    assert.deepEqual(seen, ["bash deleted list.txt"]);
    assert.equal(treeHash(ws), before);
  });

  it("a shadow-mode tool.effects handler is recorded as WouldDeny and applies nothing", async () => {
    const ws = join(box.base, "shadow");
    mkdirSync(ws);
    fill(ws);
    const session = new Session();
    session.hooks.on(
      "tool.effects",
      ({ changes }) =>
        changes.some((c) => c.kind === "deleted")
          ? { decision: "deny", reason: "deletions are about to be refused" }
          : undefined,
      { mode: "shadow", name: "no-deletions" },
    );
    const wouldDeny: unknown[] = [];
    session.observe({ type: WouldDeny }, (signal) => void wouldDeny.push(signal.data));
    const branch = session.newBranch();
    new CodingToolkit({
      workspaceRoot: ws,
      tools: ["bash"],
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      effectsDir: state,
    }).bind(branch);
    const result = await branch.act(
      { function: "bash", arguments: { command: "rm list.txt" } },
      { callId: "shadow-1" },
    );
    const output = result.output as Result;
    assert.equal(output.effects, "overlay", JSON.stringify(output));
    assert.equal(output.applied, true, JSON.stringify(output));
    assert.equal(existsSync(join(ws, "list.txt")), false, "nothing else objected: it committed");
    await session.drainSignals();
    assert.deepEqual(wouldDeny, [{
      callId: "shadow-1",
      toolName: "bash",
      reason: "deletions are about to be refused",
      hook: "no-deletions",
      shadow: true,
      point: "tool.effects",
    }]);
  });

  it("the next toolkit start removes the stages of a killed process", async () => {
    const ws = join(box.base, "stale");
    mkdirSync(ws);
    const dir = join(box.base, "stale-state");
    // pid 2^22 + 1 is above the kernel's pid_max: never alive
    const stale = join(effectsStore(dir, ws).dir, "stage", "run-4194305-abc", "upper");
    mkdirSync(stale, { recursive: true });
    writeFileSync(join(stale, "big"), "left behind\n");
    const { manager } = toolkitWith(ws, new AgentSpec(), dir);
    const result = await bash(manager, "echo ok");
    assert.equal(result.stdout, "ok\n");
    assert.equal(existsSync(stale), false);
  });

  it("the coding preset as a branch's agent spec: its effects policy decides, its judge advises", async () => {
    const ws = join(box.base, "agent");
    mkdirSync(ws);
    fill(ws);
    const before = treeHash(ws);
    const session = new Session();
    const agent = session.newBranch({ spec: codingSpec({ cwd: ws }) });
    new CodingToolkit({
      workspaceRoot: ws,
      tools: ["bash"],
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      effectsDir: state,
    }).bind(agent);
    // Without an approver, act() stops for approval as for a tool.pre ask; the staged layer is
    // kept, and acting again on the same call with an approval commits it.
    const removal = { function: "bash", arguments: { command: "rm -rf victim" } };
    await assert.rejects(agent.act(removal, { callId: "r1" }), (error: unknown) => {
      assert.ok(error instanceof ApprovalRequiredError);
      assert.match(String(error.approval.reason), /deletes 2 existing file/);
      assert.equal(error.approval.effects?.count, 4);
      return true;
    });
    assert.equal(treeHash(ws), before);
    const rejected = await agent.act(removal, { callId: "r1", approve: () => false });
    const output = rejected.output as Result;
    assert.equal(output.applied, false, JSON.stringify(output));
    assert.match(String(output.advice), /recursive delete/);
    assert.equal(treeHash(ws), before);
    const approved = await agent.act(removal, { callId: "r2", approve: () => true });
    assert.equal((approved.output as Result).applied, true);
    assert.equal(existsSync(join(ws, "victim")), false);
    const inline = await agent.act({
      function: "bash",
      arguments: { command: `node -e "console.log(6*7)"` },
    });
    assert.equal((inline.output as Result).stdout, "42\n");
  });
});
