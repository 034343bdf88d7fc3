import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { guardPaths, PROTECTED_BASENAMES } from "../../action/mod.ts";
import { ToolDeniedError } from "../../core/mod.ts";
import {
  codingSpec,
  guardDestructive,
  guardHostPaths as hostGuardPaths,
  nodeFileSystem,
} from "../../action/coding/mod.ts";
import { linkSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { reasonOf } from "./_deny_reason.ts";

const SUFFIX = "\nIf you need this, explain why and ask the user to run it manually.";

describe("guardDestructive", () => {
  it("guardDestructive() blocks every destructive pattern with the reference message", async () => {
    const commands = [
      "rm -rf build",
      "RM -RF /",
      "rm -fr ~",
      "git push --force origin main",
      "git push origin main --force",
      "git reset --hard HEAD~1",
      "git clean -fd",
      "psql -c 'DROP TABLE users'",
      "drop database prod",
      "truncate table logs",
      "mkfs.ext4 /dev/sda1",
      "dd if=/dev/zero of=disk.img",
      "cat x > /dev/sda",
    ];
    for (const command of commands) {
      const reason = await reasonOf(guardDestructive({ args: { command } }));
      assert.ok(reason?.startsWith(`Blocked destructive command: ${command}\n`), command);
      assert.ok(reason?.endsWith(SUFFIX), command);
    }
  });

  it("guardDestructive() lets ordinary commands pass and refuses non-string commands", async () => {
    for (
      const command of [
        "ls -la",
        "git push origin main",
        "rm file.txt",
        "git reset --soft",
        "echo dropped tables",
        "grep -r mkfsx .",
      ]
    ) {
      assert.equal(await guardDestructive({ args: { command } }), undefined, command);
    }
    assert.equal(await guardDestructive({ args: {} }), undefined);
    assert.match(
      await reasonOf(guardDestructive({ args: { command: 42 } })) ?? "",
      /Command is not a string \(number\)/,
    );
  });
});

describe("guardPaths (lexical)", () => {
  const guard = guardPaths({ allowedPaths: ["/ws"], lexicalOnly: true });
  const call = (path: unknown) => guard({ args: { path } });

  it("guardPaths() allows paths inside the root, including src/weird;name.py", async () => {
    for (const path of ["src/weird;name.py", "a/b/../c.txt", "/ws/x", "/ws", ".", "./deep/./er"]) {
      assert.equal(await call(path), undefined, path);
    }
    assert.equal(await guard({ args: { filePath: "new.ts" } }), undefined);
  });

  it("guardPaths() refuses '..' chains, absolute paths outside and the prefix sibling", async () => {
    for (
      const path of [
        "../x",
        "a/../../x",
        "../../../../etc/passwd",
        "/etc/passwd",
        "/ws-evil/x",
        "/ws-evil",
        "/w",
        "/",
      ]
    ) {
      assert.equal(await reasonOf(call(path)), `Path not in allowed list: ${path}`);
    }
  });

  it("guardPaths() refuses NUL bytes and non-string paths", async () => {
    assert.equal(
      await reasonOf(call("a\0b")),
      'Refusing to access path containing a NUL byte: "a\\u0000b"',
    );
    assert.equal(await reasonOf(call(7)), "Refusing to access non-string path: (number)");
  });

  it("guardPaths() refuses protected basenames case-insensitively, even without roots", async () => {
    const open = guardPaths({ lexicalOnly: true });
    for (const name of PROTECTED_BASENAMES) {
      for (const variant of [name, name.toUpperCase()]) {
        assert.equal(
          await reasonOf(call(`config/${variant}`)),
          `Refusing to access protected path: '${variant}'`,
        );
        assert.notEqual(
          await reasonOf(open({ args: { path: `/anywhere/${variant}` } })),
          undefined,
        );
      }
    }
    for (const name of [".env.local", ".env.production", "prod.env", "server.pem", "id_rsa.bak"]) {
      assert.equal(
        await reasonOf(open({ args: { path: `/anywhere/${name}` } })),
        `Refusing to access protected path: '${name}'`,
      );
    }
    assert.equal(await open({ args: { path: "/anywhere/env.ts" } }), undefined);
  });

  it("guardPaths() applies absolute, glob and substring deny rules", async () => {
    const denying = guardPaths({
      allowedPaths: ["/ws"],
      deniedPaths: ["/ws/secrets", "*.crt", "node_modules", "token"],
      lexicalOnly: true,
    });
    const deny = (path: string) => denying({ args: { path } });
    for (
      const path of [
        "/ws/secrets",
        "secrets/a.txt",
        "keys/server.crt",
        "node_modules/x/index.js",
        "my-token.txt",
      ]
    ) {
      assert.equal(await reasonOf(deny(path)), `Path matches deny rule: ${path}`, path);
    }
    for (const path of ["/ws/secrets-public/a", "keys/server.crt.txt", "src/tok.ts"]) {
      assert.equal(await deny(path), undefined, path);
    }
  });

  it("guardPaths() passes arguments without a path and checks any of several roots", async () => {
    assert.equal(await guard({ args: { command: "ls" } }), undefined);
    const multi = guardPaths({ allowedPaths: ["/a", "/b"], lexicalOnly: true });
    assert.equal(await multi({ args: { path: "/b/file" } }), undefined);
    assert.equal(await multi({ args: { path: "rel" } }), undefined);
    assert.notEqual(await reasonOf(multi({ args: { path: "/c/file" } })), undefined);
  });

  it("guardPaths() fails closed for a relative root without a file system", async () => {
    const relative = guardPaths({ allowedPaths: ["."], lexicalOnly: true });
    assert.equal(
      await reasonOf(relative({ args: { path: "a.txt" } })),
      "Cannot resolve allowed path '.' without a file system; refusing 'a.txt'",
    );
    assert.throws(() => guardPaths({ allowedPaths: ["a\0"], lexicalOnly: true }), {
      name: "TypeError",
      message: /invalid path rule/,
    });
  });

  it("guardPaths() never allows a path that resolves outside the root (property)", async () => {
    const segment = fc.constantFrom("..", ".", "a", "ws", "ws-evil", "", "b;c", "..a", "/");
    await fc.assert(
      fc.asyncProperty(fc.array(segment, { maxLength: 8 }), fc.boolean(), async (parts, abs) => {
        const raw = (abs ? "/" : "") + parts.join("/");
        const allowed = (await call(raw)) === undefined;
        const stack: string[] = raw.startsWith("/") ? [] : ["ws"];
        for (const part of raw.split("/")) {
          if (part === "" || part === ".") continue;
          if (part === "..") stack.pop();
          else stack.push(part);
        }
        const inside = stack[0] === "ws";
        assert.equal(allowed, inside, raw);
      }),
      { numRuns: 500 },
    );
  });
});

describe("guardDestructive (quoting and split flags)", () => {
  it("guardDestructive() sees through quotes, escapes, sh -c and split or long flags", async () => {
    for (
      const command of [
        `"rm" -rf /`,
        `r'm' -rf /`,
        `r\\m -rf /`,
        `rm -r -f /`,
        `rm -f -r build`,
        `rm -R -f x`,
        `rm --recursive --force x`,
        `rm -r x --force`,
        `/bin/rm -r -f /`,
        `sudo rm -v -r -f /`,
        `sh -c 'rm -r -f /'`,
        `bash -c "\\"rm\\" -rf /"`,
        `git clean -f -d`,
        `git clean --force -d`,
        `"git" push -f`,
        `git 'reset' --hard`,
      ]
    ) {
      const reason = await reasonOf(guardDestructive({ args: { command } }));
      assert.ok(reason?.startsWith(`Blocked destructive command: ${command}\n`), command);
    }
  });

  it("guardDestructive() still lets near misses pass", async () => {
    for (
      const command of [
        "rm -f file.txt",
        "rm -- -rf",
        "git clean -n -d",
        "ls -rf",
        `echo "r" m -rf`,
        "grep -r 'rm -rf' .",
      ]
    ) {
      assert.equal(await guardDestructive({ args: { command } }), undefined, command);
    }
  });

  it("guardDestructive() now refuses what the text patterns let through", async () => {
    for (const command of ["rm -r build", "git clean -f", "rm 'unterminated"]) {
      assert.notEqual(await reasonOf(guardDestructive({ args: { command } })), undefined, command);
    }
  });
});

describe("guardPaths (every path key)", () => {
  it("guardPaths() checks path, filePath and file_path, not only the first one present", async () => {
    const guard = guardPaths({ allowedPaths: ["/ws"], lexicalOnly: true });
    for (
      const args of [
        { path: "ok.txt", filePath: "../../etc/passwd" },
        { path: "ok.txt", file_path: "/etc/passwd" },
        { filePath: "ok.txt", file_path: "../x" },
        { path: "ok.txt", filePath: "a/.env" },
      ]
    ) {
      assert.notEqual(await reasonOf(guard({ args: args })), undefined, JSON.stringify(args));
    }
    assert.equal(
      await guard({ args: { path: "a.txt", filePath: "b/c.txt", file_path: "/ws/d" } }),
      undefined,
    );
  });

  it("guardPaths() matches a backtracking-prone glob deny rule quickly and compiles it once", async () => {
    const guard = guardPaths({
      allowedPaths: ["/ws"],
      deniedPaths: ["*a*a*a*a*a*a*a*a*a*b"],
      lexicalOnly: true,
    });
    assert.equal(await guard({ args: { path: "a".repeat(200) } }), undefined);
    assert.equal(
      await reasonOf(guard({ args: { path: `${"a".repeat(20)}b` } })),
      `Path matches deny rule: ${"a".repeat(20)}b`,
    );
    assert.throws(
      () =>
        guardPaths({
          deniedPaths: ["*{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}"],
          lexicalOnly: true,
        }),
      { name: "TypeError", message: /brace alternatives/ },
    );
  });
});

describe("guardPaths (secure by default: the host file system)", () => {
  it("guardPaths() from ./action without fs or lexicalOnly throws TypeError when made", () => {
    for (const options of [undefined, {}, { allowedPaths: ["/ws"] }, { lexicalOnly: false }]) {
      assert.throws(() => guardPaths(options), {
        name: "TypeError",
        message:
          /^Cannot create path guard: pass fs \(for example nodeFileSystem from @hookscope\/core\/coding/,
      }, JSON.stringify(options));
    }
    assert.equal(typeof guardPaths({ fs: nodeFileSystem }), "function");
    assert.equal(typeof guardPaths({ lexicalOnly: true }), "function");
  });

  it("guardHostPaths() from ./coding without options resolves symlinks and refuses hard links and links to secrets", async () => {
    const box = mkdtempSync(join(tmpdir(), "hookscope-guard-"));
    try {
      const ws = join(box, "ws");
      const outside = join(box, "outside");
      mkdirSync(ws);
      mkdirSync(outside);
      writeFileSync(join(outside, "secret.txt"), "outside\n");
      writeFileSync(join(outside, "other.txt"), "outside\n");
      writeFileSync(join(ws, ".env"), "KEY=1\n");
      writeFileSync(join(ws, "ok.txt"), "ok\n");
      symlinkSync(outside, join(ws, "linkdir"));
      symlinkSync(join(ws, ".env"), join(ws, "notes.txt"));
      linkSync(join(outside, "secret.txt"), join(ws, "hard.txt"));
      const guard = hostGuardPaths({ allowedPaths: [ws] });
      const read = (path: string) => guard({ args: { path } });
      assert.equal(await read("ok.txt"), undefined);
      assert.equal(
        await reasonOf(read("linkdir/other.txt")),
        "Path not in allowed list: linkdir/other.txt",
      );
      assert.equal(
        await reasonOf(read("hard.txt")),
        "Refusing to access a hard-linked file: 'hard.txt' (2 links)",
      );
      assert.equal(await reasonOf(read("notes.txt")), "Refusing to access symlink: 'notes.txt'");
      // The lexical guard has to be asked for by name, and it cannot see any of this.
      const lexical = guardPaths({ allowedPaths: [ws], lexicalOnly: true });
      assert.equal(await lexical({ args: { path: "linkdir/other.txt" } }), undefined);
      assert.equal(await lexical({ args: { path: "hard.txt" } }), undefined);
      const hostLexical = hostGuardPaths({ allowedPaths: [ws], lexicalOnly: true });
      assert.equal(await hostLexical({ args: { path: "hard.txt" } }), undefined);
      assert.throws(() => guardPaths({ lexicalOnly: true, fs: nodeFileSystem }), TypeError);
      assert.throws(() => hostGuardPaths({ lexicalOnly: true, fs: nodeFileSystem }), TypeError);
    } finally {
      rmSync(box, { recursive: true, force: true });
    }
  });

  it("codingSpec({ cwd }) gets the file-system guard without an fs option", async () => {
    const box = mkdtempSync(join(tmpdir(), "hookscope-guard-"));
    try {
      const ws = join(box, "ws");
      mkdirSync(ws);
      mkdirSync(join(box, "outside"));
      symlinkSync(join(box, "outside"), join(ws, "escape"));
      const spec = codingSpec({ cwd: ws });
      const guard = spec.registered("securityPre", "reader")[0].handler as (
        context: { args: Record<string, unknown> },
      ) => Promise<unknown>;
      assert.notEqual(await reasonOf(guard({ args: { path: "escape/x.txt" } })), undefined);
    } finally {
      rmSync(box, { recursive: true, force: true });
    }
  });
});

describe("guards on a session's tool.pre", () => {
  it("guardDestructive as a tool.pre handler denies the call: act rejects with ToolDeniedError, ToolDenied, no run", async () => {
    const { Session, HookBlocked, ToolDenied } = await import("../../session/mod.ts");
    const { Tool } = await import("../../action/mod.ts");
    const session = new Session();
    const ran: string[] = [];
    const branch = session.newBranch({
      tools: [new Tool({ name: "bash", execute: ({ command }) => void ran.push(String(command)) })],
    });
    session.hooks.on("tool.pre", guardDestructive);
    await assert.rejects(
      branch.act({ function: "bash", arguments: { command: "rm -rf /" } }),
      (error) => {
        assert.ok(error instanceof ToolDeniedError);
        assert.equal(error.by, "hook");
        assert.equal(error.hook, "guardDestructive");
        assert.match(error.reason, /^Blocked destructive command: rm -rf \//);
        return true;
      },
    );
    await branch.act({ function: "bash", arguments: { command: "ls" } });
    await session.drainSignals();
    assert.deepEqual(ran, ["ls"]);
    assert.equal(session.observer.byType(ToolDenied).length, 1);
    assert.equal(session.observer.byType(HookBlocked).length, 0);
  });
});
